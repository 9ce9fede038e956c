/**
 * The pure scheduling policy: outcome of one record → action. No SDK, no clock, no env, no
 * randomness of its own; imports nothing from the rest of the project.
 */
export type {
  Action,
  Cooldown,
  CooldownReason,
  DeferAction,
  FailAction,
  LanePause,
  LaneLimitReason,
  LaneOutReason,
  NeedsReviewAction,
  RejectAction,
  RejectReason,
} from './action.js';
export { backoffCeilingMs, fullJitterBackoffMs } from './backoff.js';
export type { ProviderErrorClassification } from './classification.js';
export { decide } from './decide.js';
export { gateBeforeCall } from './gate.js';
export { SQS_MAX_DELAY_SECONDS, SQS_MAX_VISIBILITY_TIMEOUT_SECONDS } from './limits.js';
export {
  type BackoffSettings,
  DEFAULT_MAX_QUOTA_HINT_SECONDS,
  DEFAULT_MAX_RATE_LIMIT_HINT_SECONDS,
  type JobDecisionInput,
  type JobOutcome,
  type JobScheduling,
} from './outcome.js';
export { ANY_TENANT, mayStatePriority, mayStateTenant, SENDER_PRINCIPAL_PATTERN, senderPrincipalId } from './tenancy.js';
export { isoAt } from './time.js';
