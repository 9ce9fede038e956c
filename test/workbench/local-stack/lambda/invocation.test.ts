/**
 * One Lambda-like invocation of the local stand-ins: its function timeout, which aborts the invocation's
 * signal, and the Lambda context it is given (pure).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { INVOCATION_ABORT_SIGNAL, invocationAbortSignalOf } from '../../../../lib/platform/invocation.js';
import { createLambdaContext, FunctionTimeoutError, InvocationAbortError, runWithTimeout } from '../../../../workbench/local-stack/lambda/invocation.js';

describe('runWithTimeout (the function timeout)', () => {
  it('aborts the invocation signal at the deadline with an AbortError naming the timeout, and rejects', async () => {
    // Prepare
    const controller = new AbortController();
    let abortedAt: number | undefined;
    controller.signal.addEventListener('abort', () => (abortedAt = Date.now()));
    const t0 = Date.now();
    // Act
    const outcome = runWithTimeout(() => new Promise<never>(() => undefined), t0 + 100, controller);
    // Assess (the message states the time left at the call, in hundredths of a second: less than 0.10 s when a
    // loaded machine lets some ms pass first — 0.08 s seen with twelve test processes on two CPUs)
    const statedSeconds = (e: Error) => Number(/Task timed out after (\d+\.\d\d) seconds/.exec(e.message)?.[1]);
    await assert.rejects(outcome, (e: unknown) => e instanceof FunctionTimeoutError && statedSeconds(e) >= 0.05 && statedSeconds(e) <= 0.1);
    assert.ok(abortedAt !== undefined && abortedAt - t0 >= 95, `aborted after ${abortedAt! - t0} ms`);
    const reason = controller.signal.reason as InvocationAbortError;
    assert.ok(reason instanceof InvocationAbortError);
    assert.equal(reason.name, 'AbortError');
    assert.equal(reason.abortCause, 'timeout');
    assert.match(reason.message, /timed out after 0\.\d\d seconds/);
  });

  it('leaves the signal alone when the handler returns in time', async () => {
    // Prepare
    const controller = new AbortController();
    // Act
    const value = await runWithTimeout(async () => 'done', Date.now() + 1000, controller);
    // Assess
    assert.equal(value, 'done');
    assert.equal(controller.signal.aborted, false);
  });
});

describe('createLambdaContext', () => {
  it('counts getRemainingTimeInMillis down to the deadline and carries the abort signal, not enumerable', () => {
    // Prepare
    let now = 1_000;
    const controller = new AbortController();
    // Act
    const context = createLambdaContext({
      functionName: 'f',
      awsRegion: 'us-east-1',
      accountId: '000000000000',
      memoryLimitInMB: 128,
      deadline: 4_000,
      now: () => now,
      abortSignal: controller.signal,
    });
    const atStart = context.getRemainingTimeInMillis();
    now = 3_500;
    const later = context.getRemainingTimeInMillis();
    now = 9_000;
    const after = context.getRemainingTimeInMillis();
    // Assess
    assert.deepEqual([atStart, later, after], [3_000, 500, 0]);
    assert.equal(invocationAbortSignalOf(context), controller.signal);
    assert.equal(Object.keys(context).includes(INVOCATION_ABORT_SIGNAL), false);
    assert.equal(JSON.stringify(context).includes('Abort'), false);
  });
});
