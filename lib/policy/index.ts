/**
 * The pure scheduling policy: outcome of one record → action. No SDK, no clock, no env, no
 * randomness of its own; imports nothing from the rest of the project.
 */
export type {
  Action,
  CommitAction,
  Cooldown,
  CooldownReason,
  DeferAction,
  DeferReason,
  FailAction,
  FailReason,
  GateResult,
  LanePause,
  LaneOutReason,
  NeedsReviewAction,
  PersonAlarm,
  ProceedResult,
  RejectAction,
  RejectReason,
  RepairAction,
  WaitBasis,
} from './action.js';
export { backoffCeilingMs, type FullJitterBackoffOptions, fullJitterBackoffMs } from './backoff.js';
export type { ProviderErrorClassification, ThrottleKind } from './classification.js';
export { decide, MIN_ADMISSION_WAIT_MS, statedWaitMs } from './decide.js';
export { gateBeforeCall } from './gate.js';
export {
  ceilSeconds,
  SQS_MAX_DELAY_SECONDS,
  SQS_MAX_VISIBILITY_TIMEOUT_SECONDS,
  toDelaySeconds,
  toVisibilityTimeoutSeconds,
} from './limits.js';
export {
  type AdmissionDeniedOutcome,
  type BackoffSettings,
  type BodyDecisionInput,
  type BodyOutcome,
  type DeadlinePassedOutcome,
  type DecisionInput,
  DEFAULT_AUTH_COOLDOWN_SECONDS,
  DEFAULT_BILLING_COOLDOWN_SECONDS,
  DEFAULT_MAX_QUOTA_HINT_SECONDS,
  DEFAULT_MAX_RATE_LIMIT_HINT_SECONDS,
  type InvalidBodyOutcome,
  type JobDecisionInput,
  type JobOutcome,
  type JobScheduling,
  type NotYetEligibleOutcome,
  type OutOfTimeOutcome,
  type ProviderErrorOutcome,
  type RecordContext,
  type RecordOutcome,
  type RegionMismatchOutcome,
  type TransportFailureCause,
  type TransportFailureOutcome,
  type UnknownVersionOutcome,
  type ValidationFailedOutcome,
  type ValidOutputOutcome,
} from './outcome.js';
export { type Instant, isoAt, toEpochMs } from './time.js';
