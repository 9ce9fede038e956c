/**
 * One Lambda invocation's time. Lambda stops a handler at its timeout and fails the whole batch, so
 * records that were already re-sent would come back a second time. The handler therefore keeps its
 * own deadline a little before Lambda's: it starts no model call that cannot finish before it (with a
 * margin to settle the record), aborts every call still in flight when it passes (or when a Lambda
 * stand-in says the invocation is over), and returns a partial batch response in time — failing only
 * the records that were not settled.
 */
import { setMaxListeners } from 'node:events';
import type { Context } from 'aws-lambda';
import { returnMarginMs } from '../../extraction/budget.js';
import { RatelaneError } from '../../platform/errors.js';
import { invocationAbortSignalOf } from '../../platform/invocation.js';

/** Why an invocation's work was stopped. */
export class InvocationDeadlineError extends RatelaneError {
  override name = 'InvocationDeadlineError';
  readonly kind = 'unavailable' as const;
  readonly retryable = true;
}

/** An invocation's clock and stop signals. */
export interface Invocation {
  /** Fires at {@link deadlineAt}, or when the Lambda stand-in ends the invocation: every call is aborted. */
  readonly signal: AbortSignal;
  /**
   * Fires a settle margin before {@link deadlineAt} (or with {@link signal}): the records' work stops
   * there, and a record not settled yet is sent back to come back at once, in the time left.
   */
  readonly stopWork: AbortSignal;
  /** Epoch ms by which every record must be settled (Lambda's end less the time kept to return: `returnMarginMs`). */
  readonly deadlineAt: number;
  /** Epoch ms the records' work stops at ({@link deadlineAt} less the settle margin): {@link stopWork} fires then. */
  readonly workUntil: number;
  /** Rejects (never resolves) when {@link signal} fires: a record still running then is not settled. */
  readonly stopped: Promise<never>;
  /** Clears the timers (the invocation returned). */
  dispose(): void;
}

/**
 * Starts the clock of one invocation from its Lambda context. A context without
 * `getRemainingTimeInMillis` (a test's hand-made one) has no deadline.
 *
 * @param settleMarginMs the time before the deadline at which work stops, so what is left can still be
 *   sent back: a number, or a function of the invocation's time
 */
export function startInvocation(
  context: Pick<Context, 'getRemainingTimeInMillis'> & object,
  now: () => number = Date.now,
  settleMargin: number | ((invocationMs: number) => number) = 0,
): Invocation {
  const remaining = typeof context.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : Number.POSITIVE_INFINITY;
  const untilDeadline = Math.max(0, remaining - returnMarginMs(remaining));
  const settleMarginMs = typeof settleMargin === 'function' ? settleMargin(untilDeadline) : settleMargin;
  const deadlineAt = now() + untilDeadline;
  const controller = new AbortController();
  const work = new AbortController();
  // Every SDK request of the invocation listens to these signals: more than Node's default of 10 listeners.
  setMaxListeners(0, controller.signal, work.signal);
  const stopAll = (reason: InvocationDeadlineError) => {
    work.abort(reason);
    controller.abort(reason);
  };
  const standIn = invocationAbortSignalOf(context);
  const onStandInAbort = () => stopAll(new InvocationDeadlineError('the invocation was stopped by its Lambda stand-in'));
  if (standIn?.aborted) onStandInAbort();
  else standIn?.addEventListener('abort', onStandInAbort, { once: true });
  const timers = Number.isFinite(untilDeadline)
    ? [
        setTimeout(
          () => work.abort(new InvocationDeadlineError(`the invocation's work stops ${settleMarginMs} ms before its end`)),
          Math.max(0, untilDeadline - settleMarginMs),
        ),
        setTimeout(() => stopAll(new InvocationDeadlineError(`the invocation's time is up (${Math.round(remaining)} ms at its start)`)), untilDeadline),
      ]
    : [];
  for (const timer of timers) timer.unref?.();
  const stopped = new Promise<never>((_, reject) => {
    const fire = () => reject(controller.signal.reason);
    if (controller.signal.aborted) fire();
    else controller.signal.addEventListener('abort', fire, { once: true });
  });
  stopped.catch(() => undefined);
  return {
    signal: controller.signal,
    stopWork: work.signal,
    deadlineAt,
    workUntil: deadlineAt - settleMarginMs,
    stopped,
    dispose: () => {
      for (const timer of timers) clearTimeout(timer);
      standIn?.removeEventListener('abort', onStandInAbort);
    },
  };
}
