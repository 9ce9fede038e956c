/**
 * The local stand-in for a lane pause: the poller stops pulling and a timer resumes it at the pause's
 * end (in AWS: the event source mapping is disabled and a one-time Scheduler schedule re-enables it,
 * see `lib/admission/pause/aws-controller.ts`); and for a lane limit: the poller runs fewer
 * invocations at once until a timer restores them all (in AWS: the mapping's maximum concurrency).
 */
import type { LaneLimitReason } from '../../lib/policy/index.js';
import type { LanePauseReason } from '../../lib/admission/model/store.js';
import type { LanePauseController } from '../../lib/admission/pause/lane-pause.js';

/** The poller side a local pause needs (the local event source poller has both). */
export interface PausablePoller {
  pause(): Promise<void>;
  resume(): void;
  /** Runs that share of its maximum concurrency (1: all of it). */
  limit(share: number): void;
}

/** A lane's pause state as the local controller knows it. */
export interface LocalPauseState {
  paused: boolean;
  until: Date | undefined;
  reason: LanePauseReason | undefined;
  /** How many times the lane paused. */
  pauses: number;
  /** The share of its concurrency the lane runs at (1: unlimited), and until when. */
  share: number;
  limitedUntil: Date | undefined;
  /** Why the lane is limited (while it is). */
  limitReason: LaneLimitReason | undefined;
  /** How many times the lane was limited. */
  limits: number;
  /** What changed last. */
  change: 'paused' | 'resumed' | 'limited' | 'restored' | undefined;
}

/** One line for an operator: what changed in `lane`'s pause or limit. */
export function laneChangeLine(lane: string, state: LocalPauseState): string {
  switch (state.change) {
    case 'paused':
      return `lane ${lane} PAUSED until ${state.until?.toISOString()} (${state.reason}): every key is out; messages stay in the queue`;
    case 'limited':
      return `lane ${lane} LIMITED to ${Math.round(state.share * 100)} % of its concurrency until ${state.limitedUntil?.toISOString()}: ${
        state.limitReason === 'booked_ahead' ? 'its slots are booked more than a provider minute ahead' : `some quota owners are out (${state.limitReason})`
      }`;
    case 'restored':
      return `lane ${lane} back to its whole concurrency`;
    default:
      return `lane ${lane} resumed`;
  }
}

/**
 * Pauses the local poller and resumes it with a timer at `until` (the local stand-in for disabling
 * the event source mapping and the one-time resume schedule).
 */
export class LocalLanePauseController implements LanePauseController {
  private timer: NodeJS.Timeout | undefined;
  private limitTimer: NodeJS.Timeout | undefined;
  readonly state: LocalPauseState = {
    paused: false,
    until: undefined,
    reason: undefined,
    pauses: 0,
    share: 1,
    limitedUntil: undefined,
    limitReason: undefined,
    limits: 0,
    change: undefined,
  };

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
    this.timer = setTimeout(() => this.endPause(), delay);
    this.timer.unref?.();
    Object.assign(this.state, { paused: true, until, reason, pauses: this.state.pauses + 1, change: 'paused' });
    this.options.onChange?.({ ...this.state });
  }

  /** Pulls again now, at the lane's whole concurrency (a person resumed it: a limit ends too). */
  async resume(): Promise<void> {
    this.restore();
    this.endPause();
  }

  /** The pause's end (its timer, as the resume schedule in AWS): pulling again, within a limit that still holds. */
  private endPause(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.poller()?.resume();
    if (!this.state.paused) return;
    Object.assign(this.state, { paused: false, until: undefined, reason: undefined, change: 'resumed' });
    this.options.onChange?.({ ...this.state });
  }

  async limit(share: number, until: Date, reason: LaneLimitReason): Promise<void> {
    const poller = this.poller();
    if (!poller) return;
    poller.limit(share);
    if (this.limitTimer) clearTimeout(this.limitTimer);
    this.limitTimer = setTimeout(() => this.restore(), Math.max(0, until.getTime() - (this.options.now ?? Date.now)()));
    this.limitTimer.unref?.();
    Object.assign(this.state, { share, limitedUntil: until, limitReason: reason, limits: this.state.limits + 1, change: 'limited' });
    this.options.onChange?.({ ...this.state });
  }

  /** Runs the lane at its whole concurrency again (the limit's end). */
  restore(): void {
    if (this.limitTimer) clearTimeout(this.limitTimer);
    this.limitTimer = undefined;
    this.poller()?.limit(1);
    if (this.state.share === 1) return;
    Object.assign(this.state, { share: 1, limitedUntil: undefined, limitReason: undefined, change: 'restored' });
    this.options.onChange?.({ ...this.state });
  }

  /** Cancels a pending resume or restore (the stack is stopping). */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.limitTimer) clearTimeout(this.limitTimer);
    this.timer = undefined;
    this.limitTimer = undefined;
  }
}
