/**
 * What ratelane says about its work, in one place: the metric namespace and names, the service name
 * and dimensions, the log outcomes and fields, and the reasons written to the ledger. The runtime
 * emits exactly these (its helpers take these types), and the stack's alarms and dashboard import
 * them, so an alarm can never watch a metric nobody emits. Plain data: no SDK, no CDK.
 */

/** The CloudWatch namespace of every ratelane metric (`POWERTOOLS_METRICS_NAMESPACE`). */
export const METRICS_NAMESPACE = 'ratelane';

/** The EMF metrics a lane's consumer emits (all counts unless the name ends in `Ms`). */
export const CONSUMER_METRICS = [
  /** A job's result was committed. */
  'Completed',
  /** A model call started. */
  'ModelCalls',
  /** A model call answered with a throttle (rate limit, quota, billing). */
  'RateLimited',
  /** A job was re-sent for later (throttle or admission). */
  'Deferred',
  /** A job not yet eligible was re-sent until it is (a hop). */
  'EligibilityHops',
  /** A result for the job's idempotency key was already committed. */
  'DuplicateSuppressed',
  /** A model output failed parsing, its schema or domain rules. */
  'ValidationFailed',
  /** A job's output stayed invalid after the repair budget. */
  'NeedsReview',
  /** A job was rejected for good (with a ledger reason). */
  'Rejected',
  /** A job reached a lane that is not its own. */
  'RegionMismatch',
  /** Time the message waited in the queue before this receive (ms). */
  'QueueAgeMs',
  /** Receives and deferrals a committed job took. */
  'AttemptsPerCompletion',
  /** A record failed for real and comes back after a visibility backoff. */
  'Failed',
  /** A job's retry budget was spent and the consumer moved it to the DLQ. */
  'DeadLettered',
  /** A billing (out of credit) throttle: a person must act. */
  'BillingAlarm',
  /** Admission had no key for the call: deferred without calling the provider. */
  'AdmissionDenied',
  /** A key or quota owner was cooled (any reason), and per reason below. */
  'KeyCooldown',
  'KeyCooldownRateLimit',
  'KeyCooldownQuotaExhausted',
  'KeyCooldownBilling',
  /** This consumer paused the lane (every key out). */
  'LanePaused',
] as const;

/** One of {@link CONSUMER_METRICS}. */
export type ConsumerMetricName = (typeof CONSUMER_METRICS)[number];

/** The per-reason cooldown metric of each cooldown reason. */
export const COOLDOWN_METRICS = {
  rate_limit: 'KeyCooldownRateLimit',
  quota_exhausted: 'KeyCooldownQuotaExhausted',
  billing: 'KeyCooldownBilling',
} as const satisfies Record<'rate_limit' | 'quota_exhausted' | 'billing', ConsumerMetricName>;

/** The Powertools service name of a lane's consumer (`POWERTOOLS_SERVICE_NAME`, a metric dimension). */
export function consumerServiceName(lane: { name: string }): string {
  return `ratelane-consumer-${lane.name}`;
}

/** The dimensions every consumer metric carries: Powertools' `service` plus the lane and its region. */
export function consumerDimensions(lane: { name: string; region: string }): Record<'service' | 'lane' | 'region', string> {
  return { service: consumerServiceName(lane), lane: lane.name, region: lane.region };
}

/** The `outcome` field of a record's log lines. */
export const LOG_OUTCOMES = [
  'committed',
  'duplicate',
  'rejected',
  'needs_review',
  'repair',
  'deferred',
  'hop',
  'failed',
  'dead_lettered',
  'lane_paused',
] as const;

/** One of {@link LOG_OUTCOMES}. */
export type LogOutcome = (typeof LOG_OUTCOMES)[number];

/**
 * The fields a record's log lines may carry. Never document text or model output: references, ids,
 * counts, sizes, versions, reasons and error names only.
 */
export interface RecordLogFields {
  lane?: string;
  jobId?: string;
  messageId?: string;
  receiveCount?: number;
  queueAgeMs?: number;
  attempt?: number;
  deferrals?: number;
  outcome?: LogOutcome;
  reason?: string;
  detail?: string;
  basis?: string;
  delaySeconds?: number;
  waitSeconds?: number;
  eligibleAt?: string;
  visibilityTimeoutSeconds?: number;
  keyId?: string;
  cooldown?: { until: string; scope: string; reason: string };
  until?: string;
  committedBy?: string;
  modelCalls?: number;
  inputTokens?: number;
  outputTokens?: number;
  parseStatus?: string;
  error?: string | undefined;
}

/** Why a job was rejected for good (the ledger's `reason` of a `rejected` entry). */
export const REJECTION_REASONS = [
  /** The body is not a valid job. */
  'invalid_body',
  /** The contract, schema or prompt version is not registered. */
  'unknown_version',
  /** The job belongs to another region lane. */
  'region_mismatch',
  /** The job's deadline passed, or would pass before it can run. */
  'deadline',
  /** The document the job points at does not exist. */
  'input_missing',
  /** The document's content does not match the job's hash. */
  'input_hash_mismatch',
  /** The document has no text. */
  'empty_document',
  /** The document is larger than the lane's budget for one call. */
  'too_large',
] as const;

/** One of {@link REJECTION_REASONS}. */
export type RejectionReason = (typeof REJECTION_REASONS)[number];

/** How far a model output got through validation (the reason of a `validation_failed` entry). */
export const VALIDATION_REASONS = ['not_json', 'schema_invalid', 'domain_invalid'] as const;

/** Why a job was re-sent for later (the reason of a `deferred` entry). */
export const DEFERRAL_REASONS = ['not_yet_eligible', 'admission_denied', 'rate_limit', 'quota_exhausted', 'billing'] as const;

/** Why a job failed for real (the reason of a `dead_letter_pending` entry). */
export const FAILURE_REASONS = ['overloaded', 'transport_failure', 'provider_error'] as const;

/** Every reason the ledger records. */
export type LedgerReason = RejectionReason | (typeof VALIDATION_REASONS)[number] | (typeof DEFERRAL_REASONS)[number] | (typeof FAILURE_REASONS)[number];
