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
  /** Another delivery held the job's idempotency key (it is calling the model): this copy waits, no call. */
  'KeyInProgress',
  /** A model output failed parsing, its schema or domain rules. */
  'ValidationFailed',
  /** A job's output stayed invalid after the repair budget. */
  'NeedsReview',
  /** A job was rejected for good (with a ledger reason). */
  'Rejected',
  /** A job reached a lane that is not its own. */
  'RegionMismatch',
  /** A job was not sent to the model: the lane's model endpoint is not approved for its geography (it waits). */
  'EndpointMismatch',
  /** A job of an erased source was stopped (at receive or at its commit): nothing of it is kept but its erased marker. */
  'Erased',
  /** A cancelled job was stopped (at receive, before a call, or at its commit): no further call, never committed. */
  'Cancelled',
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
  /** A key answered as invalid, revoked or without permission: a person must replace it. */
  'AuthAlarm',
  /**
   * 1 while the lane waits for a person (every key out for billing or auth, or the provider secret
   * unset or malformed), else 0; emitted by every invocation. Missing data keeps an alarm's state:
   * while the lane is paused nothing is emitted, so the alarm stays in ALARM until the lane runs again.
   */
  'LaneWaitingForPerson',
  /** The provider secret is unset or malformed: the lane pauses (reason `configuration`). */
  'ConfigurationError',
  /** A record failed and comes back (any reason: see {@link RECORD_FAILURE_REASONS}), and per reason below. */
  'RecordFailed',
  'RecordFailedRetry',
  'RecordFailedResend',
  'RecordFailedDeadLetter',
  'RecordFailedLedger',
  'RecordFailedResults',
  'RecordFailedRateState',
  'RecordFailedDeadline',
  'RecordFailedUnexpected',
  /** Age of the oldest job (from its `createdAt`, across re-sends) among the records of one invocation (ms). */
  'OldestJobAgeMs',
  /** A committed job's age at its commit, from its `createdAt` (ms). */
  'JobAgeAtCompletionMs',
  /** The invocation had no time left for a model call: the job was re-sent to come back at once. */
  'InvocationDeadlineDeferred',
  /** A provider stated a wait beyond the lane's ceiling for its kind: not believed, the backoff used instead. */
  'StatedWaitIgnored',
  /** Admission had no key for the call: deferred without calling the provider. */
  'AdmissionDenied',
  /**
   * An answer stated lower per-minute limits than the lane's config (`x-ratelimit-limit-*`,
   * `anthropic-ratelimit-*-limit`): admission keeps to the provider's figures, the mapping is sized from the config.
   */
  'ProviderLimitsBelowConfig',
  /**
   * A rate limit came again within a few windows of the last on a quota owner: admission cut the owner's
   * rates (`rateLimitedUpdate` in `admission/bucket/token-bucket.ts` says by how much and how they recover).
   */
  'RateCut',
  /** A key or quota owner was cooled (any reason), and per reason below. */
  'KeyCooldown',
  'KeyCooldownRateLimit',
  'KeyCooldownQuotaExhausted',
  'KeyCooldownBilling',
  'KeyCooldownAuth',
  /** This consumer paused the lane (every key out). */
  'LanePaused',
  /** This consumer limited the lane's concurrency to the share of quota owners left (some out for a long reset). */
  'LaneLimited',
] as const;

/** One of {@link CONSUMER_METRICS}. */
export type ConsumerMetricName = (typeof CONSUMER_METRICS)[number];

/** The per-reason cooldown metric of each cooldown reason. */
export const COOLDOWN_METRICS = {
  rate_limit: 'KeyCooldownRateLimit',
  quota_exhausted: 'KeyCooldownQuotaExhausted',
  billing: 'KeyCooldownBilling',
  auth: 'KeyCooldownAuth',
} as const satisfies Record<'rate_limit' | 'quota_exhausted' | 'billing' | 'auth', ConsumerMetricName>;

/** The Powertools service name of a lane's consumer (`POWERTOOLS_SERVICE_NAME`, a metric dimension). */
export function consumerServiceName(lane: { name: string }): string {
  return `ratelane-consumer-${lane.name}`;
}

/** The dimensions every consumer metric carries: Powertools' `service` plus the lane and its region. */
export function consumerDimensions(lane: { name: string; region: string }): Record<'service' | 'lane' | 'region', string> {
  return { service: consumerServiceName(lane), lane: lane.name, region: lane.region };
}

/**
 * The EMF metrics a lane's live function emits beside the extraction core's ({@link CONSUMER_METRICS},
 * under the live service name): one answer per request, by state.
 */
export const LIVE_METRICS = [
  /** A live request was answered (any status). */
  'LiveRequests',
  /** Answered 200 committed (a new commit or one found in the results table). */
  'LiveCommitted',
  /** Answered 202 pending: the job was handed over to the queue lane. */
  'LivePending',
  /** Answered 200 needs_review. */
  'LiveNeedsReview',
  /** Answered 4xx for the request or the document (no model call), including another region's request. */
  'LiveRejected',
  /** Answered 5xx: the job could not be answered nor handed over. */
  'LiveServerError',
  /** A retry made inside the request because its wait fit the time left. */
  'LiveInRequestRetries',
  /** From the request's arrival to its answer (ms). */
  'LiveLatencyMs',
  /** An answer later than the request's deadline plus the stated slack. */
  'LiveOverDeadline',
  /** A job's state was read (`GET /v1/extractions/{jobId}`). */
  'LiveStatusReads',
] as const;

/** One of {@link LIVE_METRICS}. */
export type LiveMetricName = (typeof LIVE_METRICS)[number];

/** The Powertools service name of a lane's live function (a metric dimension). */
export function liveServiceName(lane: { name: string }): string {
  return `ratelane-live-${lane.name}`;
}

/** The dimensions every live-function metric carries. */
export function liveDimensions(lane: { name: string; region: string }): Record<'service' | 'lane' | 'region', string> {
  return { service: liveServiceName(lane), lane: lane.name, region: lane.region };
}

/** Why a record failed (the `reason` dimension of `RecordFailed`, and the `reason` of its log line). */
export const RECORD_FAILURE_REASONS = [
  /** A real failure the policy decided on (5xx, timeout, overload): it comes back after a visibility backoff. */
  'retry',
  /** The re-send of a deferral failed: the original comes back instead. */
  'resend_failed',
  /** Moving a spent job to the DLQ failed. */
  'dead_letter_failed',
  /** A ledger write failed. */
  'ledger_unavailable',
  /** The results table failed (other than during the commit the policy retries). */
  'results_unavailable',
  /** The rate-state table failed. */
  'rate_state_unavailable',
  /** The invocation ran out of time before the record was settled. */
  'invocation_deadline',
  /** Anything else (a bug: see the log line's error name). */
  'unexpected',
] as const;

/** One of {@link RECORD_FAILURE_REASONS}. */
export type RecordFailureReason = (typeof RECORD_FAILURE_REASONS)[number];

/** The per-reason metric of each record failure reason (beside the total, `RecordFailed`). */
export const RECORD_FAILED_METRICS = {
  retry: 'RecordFailedRetry',
  resend_failed: 'RecordFailedResend',
  dead_letter_failed: 'RecordFailedDeadLetter',
  ledger_unavailable: 'RecordFailedLedger',
  results_unavailable: 'RecordFailedResults',
  rate_state_unavailable: 'RecordFailedRateState',
  invocation_deadline: 'RecordFailedDeadline',
  unexpected: 'RecordFailedUnexpected',
} as const satisfies Record<RecordFailureReason, ConsumerMetricName>;

/** The `outcome` field of a record's log lines. */
const LOG_OUTCOMES = [
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
  'lane_limited',
  'configuration',
] as const;

/** One of {@link LOG_OUTCOMES}. */
type LogOutcome = (typeof LOG_OUTCOMES)[number];

/**
 * The fields a record's log lines may carry. Never document text or model output: references, ids,
 * counts, sizes, versions, reasons and error names only.
 */
export interface RecordLogFields {
  lane?: string;
  jobId?: string;
  messageId?: string;
  /** The X-Ray trace id the job's message carried. */
  traceId?: string;
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
  /** A model endpoint's host (never a URL's path or query). */
  host?: string;
  cooldown?: { until: string; scope: string; reason: string };
  until?: string;
  /** The share of a lane's quota owners still usable (a lane limit). */
  share?: number;
  committedBy?: string;
  modelCalls?: number;
  inputTokens?: number;
  outputTokens?: number;
  parseStatus?: string;
  error?: string | undefined;
}

/** Why a job was rejected for good (the ledger's `reason` of a `rejected` entry). */
const REJECTION_REASONS = [
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
  /** The document is not UTF-8 text, or binary. */
  'not_text',
  /** The job's `eligibleAt` or `deadline` lies beyond the lane's horizon. */
  'beyond_horizon',
  /** The job's idempotency key is not the one its source id, content hash and versions give. */
  'idempotency_key_mismatch',
  /** The job's id belongs to another job (another idempotency key). */
  'job_id_reused',
  /** The job's source was erased (`ratelane erase`): its records are removed and it is never committed. */
  'erased',
  /** The job was cancelled (`ratelane cancel`): no further model call, never committed. */
  'cancelled',
  /** The job states a tenant its sender may not state (the lane's `producers` grant it none). */
  'tenant_not_allowed',
  /** The job states a priority class its sender may not state (the lane's `producers` grant it none). */
  'priority_not_allowed',
] as const;

/** Why a valid output still needs a person (the reason of a `needs_review` entry besides the validation reasons). */
const REVIEW_REASONS = [
  /** The validated result is larger than a results item can hold (DynamoDB's 400 KB) or has values it cannot store. */
  'result_unstorable',
] as const;

/** One of {@link REVIEW_REASONS}. */
export type ReviewReason = (typeof REVIEW_REASONS)[number];

/** One of {@link REJECTION_REASONS}. */
export type RejectionReason = (typeof REJECTION_REASONS)[number];
