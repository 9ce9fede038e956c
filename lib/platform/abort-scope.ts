/**
 * An abort signal — and, where it is known, a deadline — for every AWS call made within a scope. The
 * consumer runs each record of an invocation inside {@link withAbortSignal}; the clients of
 * `clients.ts` send their requests through {@link ScopedAbortHttpHandler}, which passes the scope's
 * signal to the SDK's HTTP handler, and retry through `retry.ts`, which retries only while the scope
 * has time left. So when the invocation's time is up (or the Lambda stand-in stops it), every call it
 * still has in flight — or waiting for a socket, or for a retry — is aborted, as Lambda's timeout would
 * end it, and nothing the invocation started goes on after it returned.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { NodeHttpHandler } from '@smithy/node-http-handler';

interface AbortScope {
  signal: AbortSignal;
  deadlineAt: number | undefined;
}

const scope = new AsyncLocalStorage<AbortScope>();

/**
 * Runs `fn` with `signal` as the abort signal of every AWS call made within it (across awaits).
 *
 * @param deadlineAt epoch ms by which the scope's calls must end, when known: an SDK retry never
 *   waits past it (`retry.ts`)
 */
export function withAbortSignal<T>(signal: AbortSignal, fn: () => Promise<T>, deadlineAt?: number): Promise<T> {
  return scope.run({ signal, deadlineAt }, fn);
}

/** A signal that aborts after a time, as `AbortSignal.timeout`'s does, and a way to drop its timer. */
export interface TimeoutSignal {
  signal: AbortSignal;
  /** Clears the timer: a bound that was not reached leaves none behind (an `AbortSignal.timeout` cannot be cleared). */
  clear(): void;
}

/** A signal that aborts with a `TimeoutError` (as `AbortSignal.timeout`'s) after `ms`, unless cleared first. */
export function timeoutSignal(ms: number): TimeoutSignal {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/**
 * Runs `fn` as {@link withAbortSignal} does, with a signal that aborts after `ms` (a `TimeoutError`, as
 * `AbortSignal.timeout`'s) and the deadline `ms` from now; the timer is cleared once `fn` settles, so a
 * bound that was not reached leaves no timer behind.
 */
export async function withTimeLimit<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const limit = timeoutSignal(ms);
  try {
    return await withAbortSignal(limit.signal, fn, Date.now() + ms);
  } finally {
    limit.clear();
  }
}

/** The abort signal of the current scope, if any. */
export function currentAbortSignal(): AbortSignal | undefined {
  return scope.getStore()?.signal;
}

/**
 * How long the current scope has left (ms, at `now`): 0 once its signal fired, `undefined` without a
 * scope or a known deadline while the signal has not fired.
 */
export function scopeTimeLeftMs(now: number): number | undefined {
  const current = scope.getStore();
  if (!current) return undefined;
  if (current.signal.aborted) return 0;
  return current.deadlineAt === undefined ? undefined : Math.max(0, current.deadlineAt - now);
}

/** The SDK's Node HTTP handler, aborting each request with the current scope's signal as well as its own. */
export class ScopedAbortHttpHandler extends NodeHttpHandler {
  override handle(...[request, options]: Parameters<NodeHttpHandler['handle']>): ReturnType<NodeHttpHandler['handle']> {
    const scoped = currentAbortSignal();
    if (!scoped) return super.handle(request, options);
    const own = options?.abortSignal as AbortSignal | undefined;
    const abortSignal = own ? AbortSignal.any([own, scoped]) : scoped;
    return super.handle(request, { ...options, abortSignal });
  }
}
