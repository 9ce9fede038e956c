/**
 * Turning a wait into a deferral: the deadline check, the whole-second `eligibleAt`, and the
 * `DelaySeconds` SQS can hold. Shared by the gate (hops) and the decision (throttles, admission).
 */
import type { Cooldown, DeferAction, DeferReason, LanePause, PersonAlarm, RejectAction, WaitBasis } from './action.js';
import { ceilSeconds, toDelaySeconds } from './limits.js';
import type { JobScheduling } from './outcome.js';
import { isoAt, parseIsoMs } from './time.js';

/**
 * The real failures a job has had: those it carries (`attempt`) plus those of this message (every
 * receive before this one ended in a failure; a deferral or hop acknowledges the message, so earlier
 * receives of the same message can only have failed). A re-sent message starts again at receive
 * count 1, so the re-sent body carries this number: alternating throttles and failures can never
 * reset the retry budget. A deferral itself never adds to it.
 */
export function carriedAttempt(job: JobScheduling, receiveCount: number): number {
  return job.attempt + Math.max(0, Math.floor(receiveCount) - 1);
}

/** A deadline rejection with its ledger detail. */
export function rejectDeadline(detail: string): RejectAction {
  return { type: 'reject', reason: 'deadline', detail };
}

/** The job's deadline in epoch ms, or `null` when it has none. */
export function deadlineMs(job: JobScheduling): number | null {
  return job.deadline === undefined ? null : parseIsoMs(job.deadline, 'deadline');
}

/** What a deferral needs beyond the job and the current instant. */
export interface DeferPlan {
  reason: DeferReason;
  basis: WaitBasis;
  /** The wait from now, in ms (rounded up to whole seconds, unless {@link roundDownWithinMs} allows down). */
  waitMs: number;
  /**
   * The job waits in-process up to this long (ms) for what it was deferred for: a wait whose part past
   * whole seconds fits in it is rounded down (at least 1 s) — it arrives early and waits instead of
   * arriving late. Absent or 0: rounded up.
   */
  roundDownWithinMs?: number | undefined;
  /** `deferrals` of the new message. */
  deferrals: number;
  cooldown?: Cooldown | undefined;
  pauseLane?: LanePause | undefined;
  alarm?: PersonAlarm | undefined;
  ignoredHintMs?: number | undefined;
}

/**
 * A deferral of `plan.waitMs` from `nowMs`, or a `deadline` rejection when the job would become
 * eligible at or after its deadline (rejecting now spares the hops and the ledger says why).
 * The wait is rounded to whole seconds (up, or down as {@link DeferPlan.roundDownWithinMs} allows) so
 * `eligibleAt` and `DelaySeconds` agree.
 */
export function deferOrReject(job: JobScheduling, nowMs: number, plan: DeferPlan, receiveCount = 1): DeferAction | RejectAction {
  const waitSeconds = wholeSecondsOf(plan.waitMs, plan.roundDownWithinMs ?? 0);
  const eligibleAtMs = nowMs + waitSeconds * 1000;
  const deadline = deadlineMs(job);
  if (deadline !== null && eligibleAtMs >= deadline) {
    return rejectDeadline(`${plan.reason}: the wait of ${waitSeconds} s ends at ${isoAt(eligibleAtMs)}, not before the deadline ${job.deadline}`);
  }
  return {
    type: 'defer',
    reason: plan.reason,
    delaySeconds: toDelaySeconds(waitSeconds * 1000),
    waitSeconds,
    basis: plan.basis,
    eligibleAt: isoAt(eligibleAtMs),
    attempt: carriedAttempt(job, receiveCount),
    deferrals: plan.deferrals,
    ...(plan.cooldown ? { cooldown: plan.cooldown } : {}),
    ...(plan.pauseLane ? { pauseLane: plan.pauseLane } : {}),
    ...(plan.alarm ? { alarm: plan.alarm } : {}),
    ...(plan.ignoredHintMs !== undefined ? { ignoredHintMs: plan.ignoredHintMs } : {}),
  };
}

/** `waitMs` in whole seconds: down (at least 1) when what that leaves is at most `roundDownWithinMs`, else up. */
function wholeSecondsOf(waitMs: number, roundDownWithinMs: number): number {
  const down = Math.floor(waitMs / 1000);
  return down >= 1 && roundDownWithinMs > 0 && waitMs - down * 1000 <= roundDownWithinMs ? down : ceilSeconds(waitMs);
}

/**
 * A hop for a job not yet eligible: re-send with `DelaySeconds = min(900, remaining)` (at least 1 s),
 * `eligibleAt`, `attempt` and `deferrals` unchanged. Rejected for `deadline` when the job would only
 * become eligible at or after its deadline.
 */
export function hop(job: JobScheduling, nowMs: number, receiveCount = 1): DeferAction | RejectAction {
  const eligibleAtMs = parseIsoMs(job.eligibleAt, 'eligibleAt');
  const deadline = deadlineMs(job);
  if (deadline !== null && eligibleAtMs >= deadline) {
    return rejectDeadline(`not_yet_eligible: eligible at ${job.eligibleAt}, not before the deadline ${job.deadline}`);
  }
  const remainingMs = Math.max(0, eligibleAtMs - nowMs);
  return {
    type: 'defer',
    reason: 'not_yet_eligible',
    delaySeconds: Math.max(1, toDelaySeconds(remainingMs)),
    waitSeconds: Math.max(1, ceilSeconds(remainingMs)),
    basis: 'eligible_at',
    eligibleAt: job.eligibleAt,
    attempt: carriedAttempt(job, receiveCount),
    deferrals: job.deferrals,
  };
}
