/**
 * One abort signal per model call: the adapter's own timeout or the caller's signal, whichever comes
 * first, and whether the timeout fired (so a timeout is told apart from a caller's abort).
 */

/** A running call deadline. */
export interface Deadline {
  signal: AbortSignal;
  expired(): boolean;
  dispose(): void;
}

/** Starts a deadline of `timeoutMs`, also aborted when `outer` aborts. */
export function startDeadline(timeoutMs: number, outer: AbortSignal | undefined): Deadline {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new Error(`timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  const onOuterAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onOuterAbort();
  else outer?.addEventListener('abort', onOuterAbort, { once: true });
  return {
    signal: controller.signal,
    expired: () => expired,
    dispose: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    },
  };
}
