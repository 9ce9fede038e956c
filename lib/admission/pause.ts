/**
 * Pausing a lane: when every key is out until a long reset (daily quota) or a person (billing), the
 * lane stops pulling from its queue and resumes at the earliest reset. Messages stay in the queue.
 *
 * A {@link LanePauseController} does the stopping and the timed resume: locally the poller
 * ({@link LocalLanePauseController}), in AWS the event source mapping and an EventBridge Scheduler
 * schedule (`aws-pause.ts`). The {@link LanePauser} claims the pause in the rate-state table first,
 * so of all consumers that see the lane run out, one pauses it.
 */
import type { RateStateStore } from './rate-state.js';

/** Why a lane pauses. */
export type LanePauseReason = 'quota_exhausted' | 'billing';

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
  constructor(
    private readonly options: { store: RateStateStore; controller: LanePauseController; now?: () => number },
  ) {}

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

/** The poller side a local pause needs (the local event source poller has both). */
export interface PausablePoller {
  pause(): Promise<void>;
  resume(): void;
}

/** A lane's pause state as the local controller knows it. */
export interface LocalPauseState {
  paused: boolean;
  until: Date | undefined;
  reason: LanePauseReason | undefined;
  /** How many times the lane paused. */
  pauses: number;
}

/**
 * Pauses the local poller and resumes it with a timer at `until` (the local stand-in for disabling
 * the event source mapping and the one-time resume schedule).
 */
export class LocalLanePauseController implements LanePauseController {
  private timer: NodeJS.Timeout | undefined;
  readonly state: LocalPauseState = { paused: false, until: undefined, reason: undefined, pauses: 0 };

  constructor(
    private readonly poller: () => PausablePoller | undefined,
    private readonly options: { now?: () => number; onChange?: (state: LocalPauseState) => void } = {},
  ) {}

  async pause(until: Date, reason: LanePauseReason): Promise<void> {
    const poller = this.poller();
    if (!poller) return;
    void poller.pause().catch(() => undefined);
    if (this.timer) clearTimeout(this.timer);
    const delay = Math.max(0, until.getTime() - (this.options.now ?? Date.now)());
    this.timer = setTimeout(() => void this.resume(), delay);
    this.timer.unref?.();
    Object.assign(this.state, { paused: true, until, reason, pauses: this.state.pauses + 1 });
    this.options.onChange?.({ ...this.state });
  }

  async resume(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.poller()?.resume();
    if (!this.state.paused) return;
    Object.assign(this.state, { paused: false, until: undefined, reason: undefined });
    this.options.onChange?.({ ...this.state });
  }

  /** Cancels a pending resume (the stack is stopping). */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
