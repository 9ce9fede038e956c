/**
 * Pausing a lane: when every key is out until a long reset (daily quota) or a person (billing), the
 * lane stops pulling from its queue and resumes at the earliest reset. Messages stay in the queue.
 *
 * A {@link LanePauseController} does the stopping and the timed resume: locally the poller
 * (`workbench/local-stack/pause.ts`), in AWS the event source mapping and an EventBridge Scheduler
 * schedule (`aws-controller.ts`). The {@link LanePauser} claims the pause in the rate-state table first,
 * so of all consumers that see the lane run out, one pauses it.
 */
import type { LanePauseReason, RateStateStore } from '../model/store.js';

/** Stops and resumes one lane's consumption. */
export interface LanePauseController {
  /**
   * Stops pulling from the lane's queue and arranges the resume at `until`. Must not wait for work
   * in flight (it is called from inside a record being processed).
   */
  pause(until: Date, reason: LanePauseReason): Promise<void>;
  /** Starts pulling again now. */
  resume(): Promise<void>;
}

/** What a consumer uses to pause its lane. */
export interface LanePauseRequester {
  /** Pauses the lane until `until` unless it is already paused; `true` when this call paused it. */
  requestPause(until: Date, reason: LanePauseReason): Promise<boolean>;
}

/** Claims the pause in the rate-state table, then pauses through the controller. */
export class LanePauser implements LanePauseRequester {
  constructor(private readonly options: { store: RateStateStore; controller: LanePauseController; now?: () => number }) {}

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
