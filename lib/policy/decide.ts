/**
 * The decision table "What the consumer does with each outcome" (docs/architecture.md) as one pure
 * function: a throttle is "not now" (a deferral that keeps the retry budget), a real failure is
 * "this failed" (SQS redelivery with a visibility backoff, then the DLQ).
 */
import type { Action, DeferAction, FailAction, FailReason, RejectAction } from './action.js';
import { fullJitterBackoffMs } from './backoff.js';
import type { ProviderErrorClassification } from './classification.js';
import { toVisibilityTimeoutSeconds } from './limits.js';
import {
  type BodyDecisionInput,
  DEFAULT_AUTH_COOLDOWN_SECONDS,
  DEFAULT_BILLING_COOLDOWN_SECONDS,
  DEFAULT_MAX_QUOTA_HINT_SECONDS,
  DEFAULT_MAX_RATE_LIMIT_HINT_SECONDS,
  type DecisionInput,
  type JobDecisionInput,
  type ProviderErrorOutcome,
} from './outcome.js';
import { carriedAttempt, deadlineMs, deferOrReject, hop, rejectDeadline } from './schedule.js';
import { isoAt, toEpochMs } from './time.js';

/** Shortest re-send after an admission denial whose `retryAt` is already due (avoids a hot loop). */
const MIN_ADMISSION_WAIT_MS = 1000;

/**
 * The wait a provider error states, in ms from `nowMs`: the later of `retryAfterMs` and
 * `resetAt − now` among those present and positive; `null` when it states none (a zero, negative
 * or past hint counts as none: most likely clock skew, and trusting it would hot-loop).
 */
function statedWaitMs(classification: ProviderErrorClassification, nowMs: number): number | null {
  const hints: number[] = [];
  if (classification.retryAfterMs !== null && Number.isFinite(classification.retryAfterMs) && classification.retryAfterMs > 0) {
    hints.push(classification.retryAfterMs);
  }
  if (classification.resetAt !== null) {
    const untilReset = classification.resetAt.getTime() - nowMs;
    if (Number.isFinite(untilReset) && untilReset > 0) hints.push(untilReset);
  }
  return hints.length === 0 ? null : Math.max(...hints);
}

/** `ApproximateReceiveCount` as a whole number >= 1 (SQS starts at 1). */
function receiveCountOf(input: JobDecisionInput): number {
  return Math.max(1, Math.floor(input.approximateReceiveCount));
}

function isBodyInput(input: DecisionInput): input is BodyDecisionInput {
  return input.outcome.kind === 'invalid_body' || input.outcome.kind === 'unknown_version';
}

/**
 * Decides what the consumer does with one record.
 *
 * - `invalid_body`, `unknown_version`, `region_mismatch`, `deadline_passed` → `reject` (terminal).
 * - `not_yet_eligible` → `defer` hop: `DelaySeconds` = min(900, remaining), nothing else changes.
 * - `admission_denied` → `defer` until `retryAt` (at least 1 s; rounded down to whole seconds when the
 *   rest fits the job's in-process wait `mayWaitMs`, else up), `deferrals` + 1.
 * - provider `rate_limit` → `defer` by the provider's stated wait if any (it wins), else capped full
 *   jitter (throttle base/cap) with exponent `(ApproximateReceiveCount − 1) + deferrals`; cools the key.
 * - provider `quota_exhausted` → `defer` until the reset, but never less than the throttle cap: a
 *   quota that says "retry in 5 s" is not believed (it would burn calls relearning the same limit);
 *   cools the quota owner until then; pauses the lane when `keysLeft` is 0.
 * - provider `billing` → `defer` by the throttle cap (jobs wait, never dead-letter), `alarm: 'billing'`,
 *   cools the quota owner for the billing cooldown; pauses the lane when `keysLeft` is 0.
 * - provider `auth` (an invalid or revoked key) → `defer` by the throttle cap, `alarm: 'auth'`, cools
 *   that key (not its owner) for the auth cooldown; pauses the lane when `keysLeft` is 0.
 * - provider `overloaded` / `not_rate_limit`, `transport_failure` → `fail` with a visibility timeout of
 *   capped full jitter (failure base/cap, exponent `ApproximateReceiveCount − 1`, at most 43200 s);
 *   `lastReceive` says SQS dead-letters it next.
 * - `validation_failed` → `repair` while the repair budget lasts, then `needs_review`.
 * - `in_progress` (another delivery holds the job's idempotency key) → `defer` until its hold ends at the
 *   latest (at least 1 s), `deferrals` unchanged.
 * - `out_of_time` → `defer` at once (`DelaySeconds` 0), or after its `waitMs` when a step was cut off,
 *   `deferrals` unchanged: not a failure, not a throttle.
 * - `valid_output` → `commit`.
 *
 * Any wait (deferral or redelivery) that would end at or after the job's deadline becomes
 * `reject` `deadline` now. Deferrals never change `attempt`.
 */
export function decide(input: DecisionInput): Action {
  if (isBodyInput(input)) {
    const { outcome } = input;
    return outcome.kind === 'invalid_body'
      ? { type: 'reject', reason: 'invalid_body', detail: outcome.reason }
      : { type: 'reject', reason: 'unknown_version', detail: `unknown version${outcome.version === undefined ? '' : ` "${outcome.version}"`}` };
  }
  const { outcome, job, lane } = input;
  const nowMs = toEpochMs(input.now);
  switch (outcome.kind) {
    case 'region_mismatch':
      return { type: 'reject', reason: 'region_mismatch', detail: `job region "${job.region}" is not this lane "${lane}"` };
    case 'endpoint_not_approved':
      return deferOrReject(
        job,
        nowMs,
        { reason: 'endpoint_not_approved', basis: 'endpoint_cap', waitMs: input.backoff.throttleCapSeconds * 1000, deferrals: job.deferrals + 1 },
        receiveCountOf(input),
      );
    case 'deadline_passed':
      return rejectDeadline(`deadline ${job.deadline ?? '(none)'} passed (now ${isoAt(nowMs)})`);
    case 'not_yet_eligible':
      return hop(job, nowMs, receiveCountOf(input));
    case 'admission_denied':
      return deferOrReject(
        job,
        nowMs,
        {
          reason: 'admission_denied',
          basis: 'admission_retry_at',
          waitMs: Math.max(MIN_ADMISSION_WAIT_MS, toEpochMs(outcome.retryAt) - nowMs),
          deferrals: job.deferrals + 1,
          roundDownWithinMs: outcome.mayWaitMs,
        },
        receiveCountOf(input),
      );
    case 'provider_error':
      return decideProviderError(input, outcome, nowMs);
    case 'transport_failure':
      return failOrReject(input, nowMs, 'transport_failure', outcome.cause, null);
    case 'validation_failed': {
      const used = Math.max(0, Math.floor(outcome.repairAttemptsUsed));
      if (used < outcome.maxRepairAttempts) {
        return { type: 'repair', repairAttempt: used + 1, maxRepairAttempts: outcome.maxRepairAttempts };
      }
      return {
        type: 'needs_review',
        reason: 'validation_failed',
        detail: `output still invalid after ${used} of ${outcome.maxRepairAttempts} repair attempt(s)`,
      };
    }
    case 'in_progress':
      return deferOrReject(
        job,
        nowMs,
        { reason: 'in_progress', basis: 'in_progress', waitMs: Math.max(MIN_ADMISSION_WAIT_MS, toEpochMs(outcome.retryAt) - nowMs), deferrals: job.deferrals },
        receiveCountOf(input),
      );
    case 'out_of_time':
      return deferOrReject(
        job,
        nowMs,
        { reason: 'invocation_deadline', basis: 'invocation_deadline', waitMs: Math.max(0, outcome.waitMs ?? 0), deferrals: job.deferrals },
        receiveCountOf(input),
      );
    case 'valid_output':
      return { type: 'commit' };
  }
}

function decideProviderError(input: JobDecisionInput, outcome: ProviderErrorOutcome, nowMs: number): Action {
  const { job, backoff, random } = input;
  const { classification } = outcome;
  const stated = statedWaitMs(classification, nowMs);
  const ceilingMs =
    classification.kind === 'rate_limit'
      ? (backoff.maxRateLimitHintSeconds ?? DEFAULT_MAX_RATE_LIMIT_HINT_SECONDS) * 1000
      : (backoff.maxQuotaHintSeconds ?? DEFAULT_MAX_QUOTA_HINT_SECONDS) * 1000;
  // A stated wait beyond the ceiling (a hostile header, a proxy's milliseconds read as seconds) is no hint.
  const hintMs = stated !== null && stated <= ceilingMs ? stated : null;
  const ignored = stated !== null && hintMs === null ? { ignoredHintMs: stated } : {};
  const capMs = backoff.throttleCapSeconds * 1000;
  switch (classification.kind) {
    case 'rate_limit': {
      const waitMs =
        hintMs ??
        fullJitterBackoffMs({
          exponent: receiveCountOf(input) - 1 + job.deferrals,
          baseMs: backoff.throttleBaseSeconds * 1000,
          capMs,
          random,
        });
      return deferOrReject(
        job,
        nowMs,
        {
          reason: 'rate_limit',
          basis: hintMs === null ? 'backoff' : 'provider_hint',
          waitMs,
          deferrals: job.deferrals + 1,
          // The key's window is only known when the provider states it; otherwise cool it briefly
          // (the throttle base): being wrong about a short cooldown costs little.
          cooldown: { until: isoAt(nowMs + (hintMs ?? backoff.throttleBaseSeconds * 1000)), scope: 'key', reason: 'rate_limit' },
          ...ignored,
        },
        receiveCountOf(input),
      );
    }
    case 'quota_exhausted': {
      const credible = hintMs !== null && hintMs >= capMs;
      const action = deferOrReject(
        job,
        nowMs,
        {
          reason: 'quota_exhausted',
          basis: credible ? 'provider_hint' : 'quota_floor',
          waitMs: credible ? hintMs : capMs,
          deferrals: job.deferrals + 1,
          ...ignored,
        },
        receiveCountOf(input),
      );
      if (action.type === 'reject') return action;
      return withCooldown(action, { until: action.eligibleAt, scope: 'quota_owner', reason: 'quota_exhausted' }, outcome.keysLeft);
    }
    case 'billing': {
      const cooldownSeconds = backoff.billingCooldownSeconds ?? DEFAULT_BILLING_COOLDOWN_SECONDS;
      const action = deferOrReject(
        job,
        nowMs,
        {
          reason: 'billing',
          basis: 'billing_cap',
          waitMs: capMs,
          deferrals: job.deferrals + 1,
          alarm: 'billing',
        },
        receiveCountOf(input),
      );
      if (action.type === 'reject') return action;
      // Credit belongs to the account, so every key of the same quota owner is out.
      return withCooldown(action, { until: isoAt(nowMs + cooldownSeconds * 1000), scope: 'quota_owner', reason: 'billing' }, outcome.keysLeft);
    }
    case 'auth': {
      const cooldownSeconds = backoff.authCooldownSeconds ?? DEFAULT_AUTH_COOLDOWN_SECONDS;
      const action = deferOrReject(
        job,
        nowMs,
        {
          reason: 'auth',
          basis: 'auth_cap',
          waitMs: capMs,
          deferrals: job.deferrals + 1,
          alarm: 'auth',
        },
        receiveCountOf(input),
      );
      if (action.type === 'reject') return action;
      // The key is bad, not the account: only this key is out; the others carry on.
      return withCooldown(action, { until: isoAt(nowMs + cooldownSeconds * 1000), scope: 'key', reason: 'auth' }, outcome.keysLeft);
    }
    case 'overloaded':
      return failOrReject(input, nowMs, 'overloaded', 'provider overloaded', hintMs);
    case 'not_rate_limit':
      return failOrReject(input, nowMs, 'provider_error', 'provider error (not a rate limit)', null);
  }
}

/** Adds the cooldown, and a lane pause until the cooldown ends when no other key is left. */
function withCooldown(action: DeferAction, cooldown: NonNullable<DeferAction['cooldown']>, keysLeft: number | undefined): DeferAction {
  const reason = cooldown.reason === 'rate_limit' ? null : cooldown.reason;
  return {
    ...action,
    cooldown,
    ...(keysLeft === 0 && reason !== null ? { pauseLane: { until: cooldown.until, reason } } : {}),
  };
}

/**
 * A real failure: visibility = capped full jitter from `ApproximateReceiveCount` (a provider's stated
 * wait, when given for an overload, is a floor), at most 43200 s. Rejected for `deadline` instead
 * when the redelivery would come at or after the deadline.
 */
function failOrReject(input: JobDecisionInput, nowMs: number, reason: FailReason, detail: string, floorMs: number | null): FailAction | RejectAction {
  const { job, backoff, random, maxReceiveCount } = input;
  const receiveCount = receiveCountOf(input);
  const failuresBefore = carriedAttempt(job, receiveCount);
  const jitterMs = fullJitterBackoffMs({
    exponent: failuresBefore,
    baseMs: backoff.failureBaseSeconds * 1000,
    capMs: backoff.failureCapSeconds * 1000,
    random,
  });
  const visibilityTimeoutSeconds = toVisibilityTimeoutSeconds(Math.max(jitterMs, floorMs ?? 0));
  const deadline = deadlineMs(job);
  if (deadline !== null && nowMs + visibilityTimeoutSeconds * 1000 >= deadline) {
    return rejectDeadline(`${reason} (${detail}): redelivery in ${visibilityTimeoutSeconds} s would not come before the deadline ${job.deadline}`);
  }
  return {
    type: 'fail',
    reason,
    detail,
    visibilityTimeoutSeconds,
    receiveCount,
    maxReceiveCount,
    carriedAttempt: job.attempt,
    lastReceive: failuresBefore + 1 >= maxReceiveCount,
  };
}
