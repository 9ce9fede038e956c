/**
 * Waiting in-process, as a dependency beside the clock's `now`: the product sleeps only through a
 * {@link Sleep} it was given, so a test can run it on a virtual clock (one that moves `now` instead of
 * waiting). The default is the real wait.
 */
import { setTimeout as wait } from 'node:timers/promises';

/**
 * Resolves after `ms`; rejects (an `AbortError`) when `signal` aborts first, or has already aborted.
 * A clock's `now` and its `Sleep` go together: after the sleep, `now` is at least `ms` later.
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The real sleep: Node's timer, honouring the abort signal. */
export const realSleep: Sleep = async (ms, signal) => {
  await wait(ms, undefined, signal ? { signal } : undefined);
};
