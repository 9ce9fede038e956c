/**
 * Whether a record's remaining time can hold one more model call. A call may take up to the lane's
 * provider timeout; after it the record must still be settled (the commit, or a re-send and its ledger
 * line), which takes the settle margin. A record without a deadline always has time.
 */
import { INVOCATION_MARGIN_SECONDS, type LaneConfig } from '../config/lanes.js';

/**
 * Longest settle margin (ms): the commit or a re-send, and a ledger write, on a slow day — the margin
 * the lane config's deploy check keeps in the function's timeout beside its model calls.
 */
export const MAX_SETTLE_MARGIN_MS = INVOCATION_MARGIN_SECONDS * 1_000;

/**
 * The time kept after a model call to settle the record (ms): a tenth of the function's timeout, at
 * most {@link MAX_SETTLE_MARGIN_MS}.
 */
export function settleMarginMs(lane: Pick<LaneConfig, 'consumer'>): number {
  return Math.min(MAX_SETTLE_MARGIN_MS, lane.consumer.timeoutSeconds * 100);
}

/** The time one model call needs from a record's remaining time (ms): the provider timeout plus the settle margin. */
export function modelCallBudgetMs(lane: Pick<LaneConfig, 'consumer' | 'provider'>): number {
  return lane.provider.timeoutMs + settleMarginMs(lane);
}

/** Whether a model call started at `nowMs` can end, and its record be settled, by `deadlineAt`. */
export function modelCallFits(lane: Pick<LaneConfig, 'consumer' | 'provider'>, nowMs: number, deadlineAt: number | undefined): boolean {
  return deadlineAt === undefined || nowMs + modelCallBudgetMs(lane) <= deadlineAt;
}
