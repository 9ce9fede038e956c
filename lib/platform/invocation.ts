/**
 * How a Lambda stand-in tells a handler that its invocation is over. In AWS, Lambda stops a handler
 * at its timeout (the execution environment is frozen or torn down, and nothing it had in flight goes
 * on). The local poller (`workbench/local-stack/poller/poller.ts`) cannot stop a function in the same process, so
 * it hands the handler an `AbortSignal` on the Lambda context under {@link INVOCATION_ABORT_SIGNAL}
 * and aborts it when it times the invocation out; the consumer passes that signal (and its own,
 * fired shortly before `getRemainingTimeInMillis()` runs out) to every call it makes, so what Lambda
 * would have stopped stops locally too. In AWS the property is absent and only the handler's own
 * deadline applies.
 */

/** The Lambda context property carrying a stand-in's abort signal (absent in AWS). */
export const INVOCATION_ABORT_SIGNAL = 'ratelaneInvocationAbortSignal';

/** The abort signal a Lambda stand-in put on `context`, if any. */
export function invocationAbortSignalOf(context: object): AbortSignal | undefined {
  const value = (context as Record<string, unknown>)[INVOCATION_ABORT_SIGNAL];
  return value instanceof AbortSignal ? value : undefined;
}
