/**
 * A virtual clock for the unit and contract tier: a `now` and the `sleep` the product takes beside it
 * (`lib/platform/sleep.ts`), where sleeping moves `now` to the sleeper's wake time and resolves on the
 * next turn of the event loop instead of waiting. Code that waits in-process (an admission slot, a live
 * retry's wait, a first call's answer) then runs at once, and what it waited for is still seen on its clock.
 */
import type { Sleep } from '../../lib/platform/sleep.js';

/** A clock whose time moves when something sleeps on it or the test moves it. */
export interface VirtualClock {
  /** The clock's time (a dependency's `now`). */
  now: () => Date;
  /** The clock's time in epoch ms (a dependency's `now` in ms). */
  nowMs: () => number;
  /**
   * Sleeps `ms` of clock time without waiting: the sleeper wakes on the next turn of the event loop
   * with the clock moved to its wake time, sleepers in the order of their wake times (one per turn, so
   * each runs on before the clock moves on for the next). Rejects with an `AbortError` when `signal`
   * aborts first, as the real sleep does.
   */
  sleep: Sleep;
  /** Moves the clock `ms` ahead: time that passes outside the code under test (a queue's delay, a provider's window). */
  advance(ms: number): void;
  /** The `ms` of every sleep on the clock, in the order they were asked for. */
  readonly slept: readonly number[];
  /**
   * Asks `predicate` until it holds, moving the clock `everyMs` (default 100) between two asks instead
   * of waiting; fails with `what` once `timeoutMs` (default 10 000) of clock time has passed.
   */
  until(what: string, predicate: () => boolean | Promise<boolean>, options?: { everyMs?: number; timeoutMs?: number }): Promise<void>;
}

/** A sleeper: when it wakes, and how to wake it. */
interface Sleeper {
  wakeAt: number;
  wake: () => void;
}

/** What the real sleep rejects with when its signal aborts. */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR', cause: signal.reason });
}

/**
 * A virtual clock. By default it runs with the real clock plus every sleep and advance (so timestamps
 * taken elsewhere in real time, a producer's `createdAt`, stay in its past); with `at` it stands at that
 * epoch ms and moves only when slept on or advanced.
 */
export function virtualClock(options: { at?: number } = {}): VirtualClock {
  const base = options.at;
  let ahead = 0;
  const slept: number[] = [];
  const sleepers: Sleeper[] = [];
  let waking = false;
  const nowMs = () => (base ?? Date.now()) + ahead;
  const advance = (ms: number) => {
    ahead += Math.max(0, ms);
  };
  /** Wakes the earliest sleeper, its clock time come, then the next one on the next turn. */
  const wakeNext = () => {
    const next = sleepers.sort((a, b) => a.wakeAt - b.wakeAt).shift();
    if (next) {
      advance(next.wakeAt - nowMs());
      next.wake();
    }
    waking = sleepers.length > 0;
    if (waking) setImmediate(wakeNext);
  };
  return {
    now: () => new Date(nowMs()),
    nowMs,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(abortError(signal));
        slept.push(ms);
        const sleeper: Sleeper = {
          wakeAt: nowMs() + Math.max(0, ms),
          wake: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = () => {
          sleepers.splice(sleepers.indexOf(sleeper), 1);
          reject(abortError(signal!));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        sleepers.push(sleeper);
        if (!waking) {
          waking = true;
          setImmediate(wakeNext);
        }
      }),
    advance,
    slept,
    async until(what, predicate, { everyMs = 100, timeoutMs = 10_000 } = {}) {
      const until = nowMs() + timeoutMs;
      while (!(await predicate())) {
        if (nowMs() > until) throw new Error(`${what}: not after ${timeoutMs} ms of clock time`);
        advance(everyMs);
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}
