/**
 * The checks before any admission or model call: the right lane, the deadline, the eligibility time.
 */
import type { GateResult } from './action.js';
import type { JobScheduling } from './outcome.js';
import { deadlineMs, hop, rejectDeadline } from './schedule.js';
import { type Instant, isoAt, parseIsoMs, toEpochMs } from './time.js';

/**
 * Decides whether a parsed job may go on to admission and the model call, in this order:
 * 1. the job's region is not this lane → `reject` `region_mismatch` (count `RegionMismatch`);
 *    its `eligibleAt` or deadline lies more than `horizonMs` ahead → `reject` `beyond_horizon` (a job
 *    eligible in year 9999 would hop forever, invisible to the age alarm);
 * 2. its deadline is at or before `now` → `reject` `deadline`;
 * 3. its `eligibleAt` is after `now` → `defer` `not_yet_eligible` (a hop: `DelaySeconds` =
 *    min(900, remaining), `eligibleAt`, `attempt` and `deferrals` unchanged), or `reject` `deadline`
 *    when it only becomes eligible at or after its deadline;
 * 4. otherwise `proceed`.
 * @param job the job's scheduling fields
 * @param lane this consumer's lane name
 * @param now the current instant
 * @param approximateReceiveCount this record's receive count (a hop carries earlier failures in `attempt`)
 * @param horizonMs how far ahead `eligibleAt` and the deadline may lie (default: no limit)
 */
export function gateBeforeCall(job: JobScheduling, lane: string, now: Instant, approximateReceiveCount = 1, horizonMs = Number.POSITIVE_INFINITY): GateResult {
  const nowMs = toEpochMs(now);
  if (job.region !== lane) {
    return { type: 'reject', reason: 'region_mismatch', detail: `job region "${job.region}" is not this lane "${lane}"` };
  }
  const deadline = deadlineMs(job);
  const eligibleAt = parseIsoMs(job.eligibleAt, 'eligibleAt');
  if (eligibleAt - nowMs > horizonMs || (deadline !== null && deadline - nowMs > horizonMs)) {
    const which = eligibleAt - nowMs > horizonMs ? `eligibleAt ${job.eligibleAt}` : `deadline ${job.deadline}`;
    return { type: 'reject', reason: 'beyond_horizon', detail: `${which} is more than ${Math.round(horizonMs / 1000)} s ahead (the lane's horizon)` };
  }
  if (deadline !== null && nowMs >= deadline) {
    return rejectDeadline(`deadline ${job.deadline} passed (now ${isoAt(nowMs)})`);
  }
  if (eligibleAt > nowMs) return hop(job, nowMs, approximateReceiveCount);
  return { type: 'proceed' };
}
