/**
 * Pausing a lane: when every key is out until a long reset (daily quota) or a person (billing), the
 * lane stops pulling from its queue and resumes at the earliest reset. Messages stay in the queue.
 * Limiting it: while only some quota owners are out, it pulls in proportion to those left (the
 * mapping's maximum concurrency times their share), so it does not receive records only to defer
 * them; restored at the earliest return. The same when the slots admission gives lie more than a
 * provider minute ahead (`booked_ahead`): it pulls the share of its records the quota can start, for
 * 900 s (no longer than owners out the share was worked out without).
 *
 * A {@link LanePauseController} does the stopping and the timed resume: locally the poller
 * (`workbench/local-stack/pause.ts`), in AWS the event source mapping and an EventBridge Scheduler
 * schedule (`aws-controller.ts`). The {@link LanePauser} claims the pause in the rate-state table first,
 * so of all consumers that see the lane run out, one pauses it.
 */
import { AWS_LIMITS } from '../../config/lanes.js';
import type { LaneLimitReason } from '../../policy/index.js';
import type { LaneCapacityState } from '../keys/key-pool.js';
import { replacesLimit, type LanePauseReason, type RateStateStore } from '../model/store.js';

/** Stops and resumes one lane's consumption. */
export interface LanePauseController {
  /**
   * Stops pulling from the lane's queue and arranges the resume at `until`. Must not wait for work
   * in flight (it is called from inside a record being processed).
   */
  pause(until: Date, reason: LanePauseReason): Promise<void>;
  /** Starts pulling again now. */
  resume(): Promise<void>;
  /**
   * Pulls at `share` (0 < share < 1) of the lane's maximum concurrency ({@link limitedConcurrency})
   * until `until`, then at all of it (optional: a controller that cannot limit only pauses).
   */
  limit?(share: number, until: Date, reason: LaneLimitReason): Promise<void>;
}

/** What a consumer uses to pause or limit its lane. */
export interface LanePauseRequester {
  /** Pauses the lane until `until` unless it is already paused; `true` when this call paused it. */
  requestPause(until: Date, reason: LanePauseReason): Promise<boolean>;
  /**
   * Fits the lane to `capacity`: paused until its `until` at share 0, else limited to its share; what
   * this call did (`undefined`: nothing, another consumer did it or this one already had).
   */
  requestCapacity(capacity: LaneCapacityState): Promise<'paused' | 'limited' | undefined>;
}

/**
 * The maximum concurrency a mapping of `full` runs at with `share` of its quota owners usable: in
 * proportion, rounded up, never below AWS's minimum of 2 nor above `full`.
 */
export function limitedConcurrency(full: number, share: number): number {
  return Math.min(full, Math.max(AWS_LIMITS.minMaximumConcurrency, Math.ceil(full * share)));
}

/** Claims the pause (or limit) in the rate-state table, then pauses (or limits) through the controller. */
export class LanePauser implements LanePauseRequester {
  /** The last pause or limit this instance claimed or found claimed: the next equal one costs no write. */
  private known: { share: number; until: number; reason: LaneLimitReason } | undefined;

  constructor(private readonly options: { store: RateStateStore; controller: LanePauseController; now?: () => number }) {}

  async requestCapacity(capacity: LaneCapacityState): Promise<'paused' | 'limited' | undefined> {
    const now = (this.options.now ?? Date.now)();
    const until = capacity.until.getTime();
    if (!(until > now) || !(capacity.share < 1)) return undefined;
    const next = { share: capacity.share, until, reason: capacity.reason };
    if (!replacesLimit(this.known, next, now)) return undefined;
    this.known = next;
    try {
      if (capacity.share <= 0 && capacity.reason !== 'booked_ahead') return (await this.requestPause(capacity.until, capacity.reason)) ? 'paused' : undefined;
      return (await this.requestLimit(capacity, now)) ? 'limited' : undefined;
    } catch (error) {
      this.known = undefined;
      throw error;
    }
  }

  private async requestLimit(capacity: LaneCapacityState, now: number): Promise<boolean> {
    const { controller, store } = this.options;
    if (!controller.limit) return false;
    const claimed = await store.claimLimit({ share: capacity.share, until: capacity.until.getTime(), reason: capacity.reason, limitedAt: now }, now);
    if (!claimed) return false;
    try {
      await controller.limit(capacity.share, capacity.until, capacity.reason);
    } catch (error) {
      // Let the next consumer that sees the owners out try again.
      await store.clearLimit().catch(() => undefined);
      throw error;
    }
    return true;
  }

  async requestPause(until: Date, reason: LanePauseReason): Promise<boolean> {
    const now = (this.options.now ?? Date.now)();
    if (!(until.getTime() > now)) return false;
    const claimed = await this.options.store.claimPause({ until: until.getTime(), reason, pausedAt: now }, now);
    if (!claimed) return false;
    try {
      await this.options.controller.pause(until, reason);
    } catch (error) {
      // Let the next consumer that sees the lane out try again.
      await this.options.store.clearPause().catch(() => undefined);
      throw error;
    }
    return true;
  }
}
