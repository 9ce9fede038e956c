/**
 * An abort signal for every AWS call made within a scope. The consumer runs each record of an
 * invocation inside {@link withAbortSignal}; the clients of `clients.ts` send their requests through
 * {@link ScopedAbortHttpHandler}, which passes the scope's signal to the SDK's HTTP handler. So when
 * the invocation's time is up (or the Lambda stand-in stops it), every call it still has in flight —
 * or waiting for a socket — is aborted, as Lambda's timeout would end it, and nothing the invocation
 * started goes on after it returned.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { NodeHttpHandler } from '@smithy/node-http-handler';

const scope = new AsyncLocalStorage<AbortSignal>();

/** Runs `fn` with `signal` as the abort signal of every AWS call made within it (across awaits). */
export function withAbortSignal<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
  return scope.run(signal, fn);
}

/** The abort signal of the current scope, if any. */
export function currentAbortSignal(): AbortSignal | undefined {
  return scope.getStore();
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
