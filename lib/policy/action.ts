/**
 * What the consumer does with one record (discriminated by `type`). The policy only decides;
 * the consumer performs the SQS, DynamoDB and metrics calls each action implies.
 */

/** Why a record is rejected for good. */
export type RejectReason = 'invalid_body' | 'unknown_version' | 'region_mismatch' | 'deadline' | 'beyond_horizon';

/**
 * Terminal: write the reason to the ledger and delete the record (acknowledge it). The model is not
 * called (again). `region_mismatch` also counts the `RegionMismatch` metric.
 */
export interface RejectAction {
  type: 'reject';
  reason: RejectReason;
  /** Human-readable detail for the ledger (no source text). */
  detail: string;
}

/** Why a record is re-sent for later. */
export type DeferReason =
  | 'not_yet_eligible'
  | 'admission_denied'
  | 'rate_limit'
  | 'quota_exhausted'
  | 'billing'
  | 'auth'
  | 'invocation_deadline'
  | 'in_progress'
  | 'endpoint_not_approved';

/** Where a deferral's wait came from (for logs and metrics). */
export type WaitBasis =
  /** a hop: the job's own `eligibleAt` */
  | 'eligible_at'
  /** admission's `retryAt` */
  | 'admission_retry_at'
  /** the provider's stated wait (`Retry-After`, a reset time) */
  | 'provider_hint'
  /** capped full-jitter backoff */
  | 'backoff'
  /** an exhausted quota without a credible hint: the lane's throttle cap as the minimum */
  | 'quota_floor'
  /** a billing problem: re-check after the throttle cap */
  | 'billing_cap'
  /** an invalid or revoked key: re-check after the throttle cap (another key may take it) */
  | 'auth_cap'
  /** the invocation has no time left for the call: come back at once in a new message */
  | 'invocation_deadline'
  /** another delivery holds the job's idempotency key: come back when its hold ends at the latest */
  | 'in_progress'
  /** the lane's model endpoint is not approved for its geography: re-check after the throttle cap (a person fixes the config) */
  | 'endpoint_cap';

/** Why a key or quota owner cools: a short window, a spent quota, or something only a person fixes. */
export type CooldownReason = 'rate_limit' | 'quota_exhausted' | 'billing' | 'auth';

/** Why every key can be out for long: a spent quota (until its reset), or billing and auth (until a person acts). */
export type LaneOutReason = 'quota_exhausted' | 'billing' | 'auth';

/**
 * Why a lane runs at part of its concurrency: some quota owners are out (a {@link LaneOutReason}), or
 * `booked_ahead` — every owner usable, but the slots its records are given lie more than a provider
 * minute ahead, and the mapping holds more records than the quota can start.
 */
export type LaneLimitReason = LaneOutReason | 'booked_ahead';

/** Alarms a person must see. */
export type PersonAlarm = 'billing' | 'auth';

/** A cooldown the consumer records so no consumer spends a call to learn the same limit again. */
export interface Cooldown {
  /** Until when (ISO-8601). */
  until: string;
  /** The key that answered, or every key sharing its quota owner. */
  scope: 'key' | 'quota_owner';
  reason: CooldownReason;
}

/** Stop pulling from the lane's queue until `until` (every key is out). */
export interface LanePause {
  /** Until when (ISO-8601). */
  until: string;
  reason: LaneOutReason;
}

/**
 * Not now: re-send the job as a new message with `DelaySeconds = delaySeconds` and the scheduling
 * fields below (`attempt` unchanged), then acknowledge the original only if the send succeeded.
 * Waits longer than SQS's 900 s ride on `eligibleAt`; the message hops until due.
 */
export interface DeferAction {
  type: 'defer';
  reason: DeferReason;
  /** SQS `DelaySeconds` for the re-send: an integer in 0..900. */
  delaySeconds: number;
  /** The whole wait in seconds (integer; may exceed 900), for logs. */
  waitSeconds: number;
  /** Where the wait came from. */
  basis: WaitBasis;
  /** The new message's `eligibleAt` (ISO-8601; unchanged for a hop). */
  eligibleAt: string;
  /** The new message's `attempt`: always the job's own (a deferral is not a failure). */
  attempt: number;
  /** The new message's `deferrals`: +1 for a throttle or admission denial, unchanged for a hop. */
  deferrals: number;
  /** Cool a key or quota owner until a time. */
  cooldown?: Cooldown;
  /** Pause the whole lane until a time. */
  pauseLane?: LanePause;
  /** Alarm a person. */
  alarm?: PersonAlarm;
  /**
   * A wait the provider stated that was not believed (ms): over the lane's ceiling for its kind, so the
   * normal backoff (or the quota floor) was used instead. For logs and the `StatedWaitIgnored` metric.
   */
  ignoredHintMs?: number;
}

/** Why a record failed for real. */
export type FailReason = 'overloaded' | 'transport_failure' | 'provider_error';

/**
 * A real failure: set the record's visibility timeout (`ChangeMessageVisibility`) and report it as a
 * batch item failure; SQS redelivers it, and its redrive policy dead-letters it after
 * `maxReceiveCount` receives.
 */
export interface FailAction {
  type: 'fail';
  reason: FailReason;
  /** Detail for logs and the ledger (e.g. the transport cause). */
  detail: string;
  /** Visibility timeout for the redelivery: an integer in 0..43200. */
  visibilityTimeoutSeconds: number;
  /** This record's `ApproximateReceiveCount`. */
  receiveCount: number;
  /** The queue's `maxReceiveCount`. */
  maxReceiveCount: number;
  /** Real failures the job carried in its body from earlier messages (see `carriedAttempt`). */
  carriedAttempt: number;
  /**
   * `true` when the job's real failures (carried + this message's receives) reach `maxReceiveCount`:
   * the retry budget is spent. When `receiveCount` itself reached it, SQS's redrive dead-letters the
   * message next; otherwise (failures carried over from a re-sent message) the consumer moves it to
   * the DLQ itself. Either way the consumer writes the dead-letter reason to the ledger now.
   */
  lastReceive: boolean;
}

/** Make one bounded repair call that feeds the validation errors back to the model. */
interface RepairAction {
  type: 'repair';
  /** Which repair this is (1 for the first). */
  repairAttempt: number;
  maxRepairAttempts: number;
}

/** Terminal: the output stays invalid after the repair budget; a person reviews it. */
export interface NeedsReviewAction {
  type: 'needs_review';
  reason: 'validation_failed';
  detail: string;
}

/** Commit the valid output once (conditional write keyed by `idempotencyKey`), then acknowledge. */
interface CommitAction {
  type: 'commit';
}

/** The policy's decision for one record. */
export type Action = RejectAction | DeferAction | FailAction | RepairAction | NeedsReviewAction | CommitAction;

/** Go ahead: the job may be admitted and the model called. */
interface ProceedResult {
  type: 'proceed';
}

/** The pre-call gate's verdict: proceed, reject (region, deadline) or hop (not yet eligible). */
export type GateResult = ProceedResult | RejectAction | DeferAction;
