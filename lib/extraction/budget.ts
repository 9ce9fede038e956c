/**
 * Whether a record's remaining time can hold one more model call. The lane that drives the core gives
 * each record the time its work must end by (`Delivery.deadlineAt`), keeping after it a settle margin
 * of its own for the commit, or a re-send and its ledger line. A call may take up to the lane's
 * provider timeout, so it starts only when it can end by then. A record without a deadline always has time.
 */
import { INVOCATION_MARGIN_SECONDS, type LaneConfig, quotaOwnerCount } from '../config/lanes.js';
import { waitWorthMs } from './wait-cost.js';

/**
 * The settle margin the lane config's deploy check keeps in the function's timeout beside its model
 * calls (ms): the commit or a re-send, and a ledger write, on a slow day.
 */
export const MAX_SETTLE_MARGIN_MS = INVOCATION_MARGIN_SECONDS * 1_000;

/**
 * The least time kept after a record's work to settle it (ms): a tenth of the function's timeout, at
 * most {@link MAX_SETTLE_MARGIN_MS}. A lane may keep more when settling is slow (see the queue lane's
 * settle clock).
 */
export function settleMarginMs(lane: Pick<LaneConfig, 'consumer'>): number {
  return Math.min(MAX_SETTLE_MARGIN_MS, lane.consumer.timeoutSeconds * 100);
}

/** The most an invocation keeps for itself at its end to return its batch response (ms). */
const RETURN_MARGIN_MS = 750;

/**
 * The time an invocation of `invocationMs` keeps at its end to return its batch response (ms):
 * {@link RETURN_MARGIN_MS}, at most a tenth of the invocation. No record's work runs in it.
 */
export function returnMarginMs(invocationMs: number): number {
  return Math.min(RETURN_MARGIN_MS, invocationMs / 10);
}

/**
 * Whether a model call started at `nowMs` can end by `workUntil` (the time the record's work must end).
 * A call may take `callMs`: the provider timeout by default (a call may take that long before it is
 * cut), or a lane's measured expectation (the live lane's recent p95, its calls cut at `workUntil`).
 */
export function modelCallFits(lane: Pick<LaneConfig, 'provider'>, nowMs: number, workUntil: number | undefined, callMs = lane.provider.timeoutMs): boolean {
  return workUntil === undefined || nowMs + callMs <= workUntil;
}

/**
 * The longest a queue record waits in-process for a booked admission slot (ms): as long as the wait
 * costs its function no more than a re-send (`waitWorthMs`: about 540 ms at 512 MB), but at least
 * {@link MIN_ADMISSION_WAIT_MS}, and at most half the function's timeout (the other half holds the
 * call that follows; the booking window also keeps the provider's timeout before the record's
 * deadline: see `Delivery.admissionWaitMs`). A later slot is deferred: SQS holds the job for free,
 * where an invocation waiting for it is billed (`npm run sim` shows an over-provisioned fleet's waits
 * up to half the timeout costing more than the re-sends they save).
 */
export function admissionWaitMs(lane: Pick<LaneConfig, 'consumer'>): number {
  return Math.min(lane.consumer.timeoutSeconds * 500, Math.max(MIN_ADMISSION_WAIT_MS, waitWorthMs(lane.consumer.memoryMb)));
}

/**
 * The shortest in-process wait for a booked slot worth having (ms): a job deferred to its reserved
 * slot is delayed in whole seconds and told to come back up to half the booking window early (see
 * {@link returnWaitMs}); with less than two seconds, a return rounded up instead of down misses its
 * slot, which stays unused (a bench run with 1 s: 0.11 denials per completion, 0.003–0.02 with more).
 */
export const MIN_ADMISSION_WAIT_MS = 2_000;

/**
 * How far ahead a call of a record may be booked at `nowMs` (ms): the lane's in-process wait
 * (`Delivery.admissionWaitMs`), less what the call after it needs to end before the record's deadline.
 */
export function bookingWindowMs(
  lane: Pick<LaneConfig, 'provider'>,
  delivery: { admissionWaitMs?: number | undefined; deadlineAt?: number | undefined; expectedCallMs?: number | undefined },
  nowMs: number,
): number {
  const most = delivery.admissionWaitMs ?? 0;
  if (most <= 0 || delivery.deadlineAt === undefined) return Math.max(0, most);
  const callMs = delivery.expectedCallMs ?? lane.provider.timeoutMs;
  return Math.max(0, Math.min(most, delivery.deadlineAt - nowMs - callMs));
}

/**
 * How far ahead a record at the start of an invocation may book a slot (ms): the in-process wait
 * ({@link admissionWaitMs}), less the provider's timeout the call after it needs before the work's
 * end (the function's timeout less the time kept to return, {@link returnMarginMs}, and the settle
 * margin: the record's `Delivery.deadlineAt`).
 */
export function bookingWindowAtStartMs(lane: Pick<LaneConfig, 'consumer' | 'provider'>): number {
  const timeoutMs = lane.consumer.timeoutSeconds * 1000;
  const workMs = timeoutMs - returnMarginMs(timeoutMs) - settleMarginMs(lane);
  return Math.max(0, Math.min(admissionWaitMs(lane), workMs - lane.provider.timeoutMs));
}

/**
 * How early a job deferred for admission may come back and wait in-process for its slot (ms): half the
 * booking window it had, so a delay rounded down to whole seconds still lands inside the wait.
 */
export function returnWaitMs(bookingWindowMs: number): number {
  return bookingWindowMs / 2;
}

/**
 * How many records the lane's admission can start within their in-process wait: the lane's call rate
 * (its quota owners' requests per minute — or, given the tokens a call takes on average, the calls
 * its tokens per minute hold, when fewer — over `windowMs`: admission's safety margin trims the
 * burst, not the rate) times the booking window a record has at the start of its invocation. The
 * event source mapping should hold about this many records in flight (`maximumConcurrency` ×
 * `batchSize`) beside those in their calls (the rate times a call's time): more are received only to
 * be re-sent.
 */
export function recordsAdmissionCanStart(lane: Pick<LaneConfig, 'consumer' | 'provider'>, windowMs: number, tokensPerCall?: number): number {
  return Math.floor(laneCallsPerMs(lane, windowMs, tokensPerCall) * bookingWindowAtStartMs(lane));
}

/**
 * The lane's call rate per ms: its quota owners' requests per `windowMs`, or, given the tokens a call
 * takes on average, the calls their tokens per window hold, when fewer.
 */
export function laneCallsPerMs(lane: Pick<LaneConfig, 'provider'>, windowMs: number, tokensPerCall?: number): number {
  const { requestsPerMinute, tokensPerMinute } = lane.provider.limits;
  const callsPerWindow = tokensPerCall !== undefined && tokensPerCall > 0 ? Math.min(requestsPerMinute, tokensPerMinute / tokensPerCall) : requestsPerMinute;
  return (quotaOwnerCount(lane) * callsPerWindow) / windowMs;
}
