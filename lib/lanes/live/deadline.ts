/**
 * The live lane's deadline arithmetic, pure: one total deadline per request, inside which every retry
 * must fit, and a hand-over margin at its end so the job can still be given to the queue and "pending"
 * answered in time. No clock, no SDK: times are epoch ms passed in.
 */
import type { LiveSettings } from '../../config/live.js';

/** A request's time: when it arrived, when its answer is due, and when its work must end. */
export interface LiveBudget {
  /** When the request arrived (epoch ms). */
  arrivedAt: number;
  /** When the answer is due (epoch ms): arrival plus the request's deadline. */
  answerBy: number;
  /**
   * When the work (model calls, waits, the commit) must end (epoch ms): the answer's time less the
   * hand-over margin. A model call still running then is cut.
   */
  workUntil: number;
  /** The deadline the request got (ms), after the lane's bounds. */
  deadlineMs: number;
}

/**
 * The shortest deadline a request may state (ms): the hand-over margin plus a tenth of a second (a
 * shorter one could only ever answer "pending"). A request stating less is refused (`request.ts`).
 */
export function minDeadlineMs(live: Pick<LiveSettings, 'handoverMarginMs'>): number {
  return live.handoverMarginMs + 100;
}

/**
 * The deadline a request gets: the one it states, else the lane's default, at most the lane's
 * maximum and at least {@link minDeadlineMs}.
 */
export function effectiveDeadlineMs(
  requested: number | undefined,
  live: Pick<LiveSettings, 'defaultDeadlineMs' | 'maxDeadlineMs' | 'handoverMarginMs'>,
): number {
  const wanted = requested ?? live.defaultDeadlineMs;
  return Math.min(live.maxDeadlineMs, Math.max(minDeadlineMs(live), Math.floor(wanted)));
}

/**
 * The request's budget. `arrivedAt` is when the caller's request reached the API (API Gateway's
 * `timeEpoch`); a value from the future or older than the deadline itself is not believed, and the
 * function's own start (`startedAt`) is used instead.
 */
export function liveBudget(input: { arrivedAt: number | undefined; startedAt: number; deadlineMs: number; handoverMarginMs: number }): LiveBudget {
  const { startedAt, deadlineMs, handoverMarginMs } = input;
  const stated = input.arrivedAt;
  const arrivedAt = stated !== undefined && Number.isFinite(stated) && stated <= startedAt && startedAt - stated < deadlineMs ? stated : startedAt;
  const answerBy = arrivedAt + deadlineMs;
  return { arrivedAt, answerBy, workUntil: answerBy - handoverMarginMs, deadlineMs };
}

/** What one more try inside the request would cost (ms). */
export interface RetryCost {
  /** The wait before the try (a stated `retry-after`, an admission slot, a backoff). */
  waitMs: number;
  /** The model call's expected time (a recent p95). */
  callMs: number;
  /** The commit's expected time (a recent p95). */
  commitMs: number;
}

/**
 * Whether a try that starts after `waitMs` can make its model call and commit before the work must
 * end. When it cannot, the job is handed over to the queue lane at once (never held open because a
 * retry budget still has room).
 */
export function retryFits(budget: Pick<LiveBudget, 'workUntil'>, nowMs: number, cost: RetryCost): boolean {
  const wait = Math.max(0, cost.waitMs);
  return nowMs + wait + Math.max(0, cost.callMs) + Math.max(0, cost.commitMs) <= budget.workUntil;
}

/** Whether an answer at `answeredAt` came later than the deadline plus `slackMs`. */
export function overDeadline(budget: Pick<LiveBudget, 'answerBy'>, answeredAt: number, slackMs: number): boolean {
  return answeredAt > budget.answerBy + slackMs;
}
