/**
 * Whether a lane's event source mapping can hold more records than its quota could ever start: the
 * stack's synth-time sizing check (a warning, not a refusal: an over-sized mapping wastes re-sends and
 * billed waits, it loses nothing). The bound is generous on purpose — the lane's full request rate,
 * every call as long as the provider's timeout — so a warning always means records received only to
 * be deferred, whatever the calls' real latency.
 */
import { AWS_LIMITS, type LaneConfig, quotaOwnerCount } from '../config/lanes.js';
import { bookingWindowAtStartMs, laneCallsPerMs, recordsAdmissionCanStart } from './budget.js';

/** The provider's rate window in AWS (ms): limits are per minute. */
const AWS_WINDOW_MS = 60_000;

/** What the sizing check computed for one lane. */
export interface MappingSize {
  /** Records the mapping may hold at once: `maximumConcurrency` × `batchSize`. */
  readonly held: number;
  /**
   * The most records the lane's quota can keep busy: those it starts within a record's in-process wait
   * (`recordsAdmissionCanStart`) and those in their calls, each call lasting the provider's timeout.
   */
  readonly usable: number;
  /** The largest `maximumConcurrency` (at least AWS's 2) whose records stay within {@link usable}. */
  readonly suggestedMaximumConcurrency: number;
}

/** The mapping's capacity against what the quota can keep busy (see {@link MappingSize}). */
export function mappingSize(lane: Pick<LaneConfig, 'consumer' | 'provider' | 'queue'>): MappingSize {
  const inCalls = laneCallsPerMs(lane, AWS_WINDOW_MS) * lane.provider.timeoutMs;
  const usable = recordsAdmissionCanStart(lane, AWS_WINDOW_MS) + Math.ceil(inCalls);
  const held = lane.consumer.maximumConcurrency * lane.queue.batchSize;
  const suggested = Math.max(AWS_LIMITS.minMaximumConcurrency, Math.floor(usable / lane.queue.batchSize));
  return { held, usable, suggestedMaximumConcurrency: Math.min(AWS_LIMITS.maxMaximumConcurrency, suggested) };
}

/**
 * The sizing warning of a lane, or `undefined` when its mapping holds no more records than its quota
 * can keep busy. Names the numbers and what to change.
 */
export function mappingSizeWarning(lane: Pick<LaneConfig, 'name' | 'consumer' | 'provider' | 'queue'>): string | undefined {
  const size = mappingSize(lane);
  if (size.held <= size.usable) return undefined;
  const waitS = (bookingWindowAtStartMs(lane) / 1000).toFixed(1);
  const timeoutS = (lane.provider.timeoutMs / 1000).toFixed(1);
  return (
    `lane ${lane.name}: the event source mapping holds up to ${size.held} records (consumer.maximumConcurrency ` +
    `${lane.consumer.maximumConcurrency} x queue.batchSize ${lane.queue.batchSize}), but its quota ` +
    `(${quotaOwnerCount(lane)} quota owner(s) x ${lane.provider.limits.requestsPerMinute} requests per minute) keeps at most ` +
    `${size.usable} busy (those it starts within a record's ${waitS} s in-process wait, and those in calls as long ` +
    `as the provider timeout of ${timeoutS} s); the others are received only to be deferred, a re-send each. ` +
    `Lower consumer.maximumConcurrency to at most ${size.suggestedMaximumConcurrency}, or add quota owners`
  );
}
