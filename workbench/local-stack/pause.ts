/**
 * The local stand-in for a lane pause: the poller stops pulling and a timer resumes it at the pause's
 * end (in AWS: the event source mapping is disabled and a one-time Scheduler schedule re-enables it,
 * see `lib/admission/pause/aws-controller.ts`).
 */
import type { LanePauseReason } from '../../lib/admission/model/store.js';
import type { LanePauseController } from '../../lib/admission/pause/lane-pause.js';

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
