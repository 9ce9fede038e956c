/**
 * What the policy is told about one SQS record: the job's scheduling fields, where and when it was
 * received, the backoff settings, and what happened to it ({@link RecordOutcome}).
 * Plain data only: the policy imports nothing from the rest of the project.
 */
import type { ProviderErrorClassification } from './classification.js';
import type { Instant } from './time.js';

/**
 * The scheduling fields of a job, as carried in its message body. Structurally a subset of the
 * job contract's `Job`, so a parsed job can be passed as it is.
 */
export interface JobScheduling {
  /** Real failures so far (5xx, timeouts, unknown). Throttles never increase it. */
  attempt: number;
  /** Throttle reschedules so far (provider throttles and admission denials; not hops). */
  deferrals: number;
  /** Not to be processed before this instant (ISO-8601). */
  eligibleAt: string;
  /** Optional: the job is worthless after this instant (ISO-8601). */
  deadline?: string | undefined;
  /** The region lane the job belongs to, fixed at intake. */
  region: string;
}

/**
 * Backoff settings of a lane. Structurally the lane config's `backoff` block, so it can be passed
 * as it is.
 */
export interface BackoffSettings {
  /** Base of the capped full-jitter backoff for throttles without a provider hint (seconds). */
  throttleBaseSeconds: number;
  /**
   * Cap of that backoff (seconds). Also the shortest wait for an exhausted quota and the
   * re-check interval of jobs waiting on a billing problem.
   */
  throttleCapSeconds: number;
  /** Base of the visibility backoff for real failures (seconds). */
  failureBaseSeconds: number;
  /** Cap of the visibility backoff for real failures (seconds; SQS allows at most 43200). */
  failureCapSeconds: number;
  /**
   * How long a billing / out-of-credit error cools its quota owner (seconds). Defaults to
   * {@link DEFAULT_BILLING_COOLDOWN_SECONDS}; a person can resume earlier.
   */
  billingCooldownSeconds?: number | undefined;
  /**
   * How long an invalid or revoked key (`auth`) cools (seconds). Defaults to
   * {@link DEFAULT_AUTH_COOLDOWN_SECONDS}; replacing the key's secret or a person's resume lifts it.
   */
  authCooldownSeconds?: number | undefined;
  /** The longest wait a rate limit may state and be believed (seconds); beyond it: the backoff. Default 3600. */
  maxRateLimitHintSeconds?: number | undefined;
  /** The longest wait an exhausted quota may state and be believed (seconds); beyond it: the floor. Default 32 days. */
  maxQuotaHintSeconds?: number | undefined;
}

/** Default ceiling of a rate limit's stated wait: an hour. */
export const DEFAULT_MAX_RATE_LIMIT_HINT_SECONDS = 3_600;

/** Default ceiling of an exhausted quota's stated wait: 32 days (monthly spend limits reset within a month). */
export const DEFAULT_MAX_QUOTA_HINT_SECONDS = 32 * 86_400;

/** Default auth cooldown: one day (the key's secret is replaced or a person resumes sooner; unattended, one probe a day). */
export const DEFAULT_AUTH_COOLDOWN_SECONDS = 24 * 60 * 60;

/** Default billing cooldown: one day (a person is alarmed and resumes sooner; unattended, one probe a day). */
export const DEFAULT_BILLING_COOLDOWN_SECONDS = 24 * 60 * 60;

/** Why a transport call failed without a provider verdict. */
type TransportFailureCause = 'timeout' | 'server_error' | 'network' | 'unknown';

/** The body was not a valid job (not JSON, or failing the contract). Terminal. */
interface InvalidBodyOutcome {
  kind: 'invalid_body';
  /** Which fields and why, for the ledger. */
  reason: string;
}

/** The body names a contract or schema version this consumer does not know. Terminal. */
interface UnknownVersionOutcome {
  kind: 'unknown_version';
  /** The version found, for the ledger. */
  version?: string | undefined;
}

/** The job's region is not this lane's. Terminal; the model is never called. */
interface RegionMismatchOutcome {
  kind: 'region_mismatch';
}

/** The job's `eligibleAt` is in the future: hop (re-send) without calling the model. */
interface NotYetEligibleOutcome {
  kind: 'not_yet_eligible';
}

/**
 * The lane's model endpoint is not approved for the lane's geography (`config/endpoints.ts`): no call
 * is made; the job waits (a deferral) until a person fixes the lane's config.
 */
interface EndpointNotApprovedOutcome {
  kind: 'endpoint_not_approved';
}

/** The job's deadline has passed (checked before calling). Terminal. */
interface DeadlinePassedOutcome {
  kind: 'deadline_passed';
}

/** Admission said no (no key free, bucket empty): defer until `retryAt`. */
interface AdmissionDeniedOutcome {
  kind: 'admission_denied';
  /** When a key or token is next due. */
  retryAt: Instant;
  /**
   * How long the job may wait in-process for its slot when it comes back (ms): the lane's booking
   * window at the start of an invocation. When the part of the wait past whole seconds fits in it,
   * the delay is rounded **down** (the job arrives up to a second early and waits in-process for
   * its slot) instead of up (it would arrive up to a second late). Absent or 0: rounded up.
   */
  mayWaitMs?: number | undefined;
}

/**
 * Another delivery of the job (or an identical request) holds the job's idempotency key and is calling
 * the model for it: defer until `retryAt` (when its hold ends at the latest), the retry budget and the
 * deferral count untouched — this copy failed nothing and was throttled by nobody.
 */
interface InProgressOutcome {
  kind: 'in_progress';
  /** When the holder's claim expires if it never finishes. */
  retryAt: Instant;
}

/** The provider answered with an error; the classifier's verdict says what it means. */
export interface ProviderErrorOutcome {
  kind: 'provider_error';
  classification: ProviderErrorClassification;
  /**
   * Optional, from admission: how many of the lane's keys stay usable once this one (or its quota
   * owner) cools. `0` with a quota or billing error also pauses the lane. Omit when unknown.
   */
  keysLeft?: number | undefined;
}

/** The call failed before a provider verdict (timeout, 5xx without a body, network): a real failure. */
interface TransportFailureOutcome {
  kind: 'transport_failure';
  cause: TransportFailureCause;
}

/** The model answered but the output failed parsing, its schema or domain rules. */
interface ValidationFailedOutcome {
  kind: 'validation_failed';
  /** Repair calls already spent on this output (0 for the first failure). */
  repairAttemptsUsed: number;
  /** The repair budget (0 disables repair). */
  maxRepairAttempts: number;
}

/**
 * The record's time (a Lambda invocation's, a request's deadline) cannot hold the next model call and
 * the settling after it: re-send it as a hop (no failure, no throttle) — at once, or after `waitMs`
 * when a step was cut off in the middle (the environment is slower than its time: coming back at once
 * would only loop).
 */
interface OutOfTimeOutcome {
  kind: 'out_of_time';
  /** How long to stay away (ms); absent: come back at once. */
  waitMs?: number | undefined;
}

/** The output is valid: commit it. */
interface ValidOutputOutcome {
  kind: 'valid_output';
}

/** Outcomes decided without a parsed job. */
type BodyOutcome = InvalidBodyOutcome | UnknownVersionOutcome;

/** Outcomes of a parsed job. */
export type JobOutcome =
  | RegionMismatchOutcome
  | EndpointNotApprovedOutcome
  | NotYetEligibleOutcome
  | DeadlinePassedOutcome
  | AdmissionDeniedOutcome
  | InProgressOutcome
  | ProviderErrorOutcome
  | TransportFailureOutcome
  | ValidationFailedOutcome
  | OutOfTimeOutcome
  | ValidOutputOutcome;

/** Everything known about one received record of a parsed job. */
interface RecordContext {
  /** The job's scheduling fields. */
  job: JobScheduling;
  /** This consumer's lane name (`us`, `eu`, …). */
  lane: string;
  /** SQS `ApproximateReceiveCount` of this record (1 on first receive). */
  approximateReceiveCount: number;
  /** The queue's redrive `maxReceiveCount`: SQS dead-letters the message after this many receives. */
  maxReceiveCount: number;
  /** The current instant (the handler reads the clock, not the policy). */
  now: Instant;
  /** The lane's backoff settings. */
  backoff: BackoffSettings;
  /** Uniform random numbers in [0, 1) for jitter (`Math.random` in production). */
  random: () => number;
}

/** Input of `decide` for a body that could not be parsed into a job: only the outcome is needed. */
export type BodyDecisionInput = { outcome: BodyOutcome } & Partial<RecordContext>;

/** Input of `decide` for a parsed job. */
export type JobDecisionInput = RecordContext & { outcome: JobOutcome };

/** Input of `decide`. */
export type DecisionInput = BodyDecisionInput | JobDecisionInput;
