/**
 * The local Lambda SQS event source mapping stand-in (`EventSourcePoller`) on fauxqs, over its life:
 * pause and resume without losing messages, a prompt stop during a long poll, and the invocation
 * abort signal Lambda gives a handler (live, aborted at the function timeout or when the poller
 * stops). What it does with each batch: `batches.test.ts`. In the e2e tier: it long-polls fauxqs and
 * waits out real visibility and function timeouts. How it reads a batch response: `test/workbench/local-stack/poller/response.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { InvocationAbortError } from '../../../../workbench/local-stack/lambda/invocation.js';
import { INVOCATION_ABORT_SIGNAL, invocationAbortSignalOf } from '../../../../lib/platform/invocation.js';
import { counts, createQueue, send, sqs, startPoller, tracker, usePollerQueues, waitFor } from './support.js';

describe('EventSourcePoller (Lambda SQS event source mapping stand-in)', () => {
  usePollerQueues();

  it('pauses without losing messages and resumes', async () => {
    // Prepare
    const queue = await createQueue();
    const seen = tracker();
    const { poller, events, started } = startPoller(queue, async (event) => {
      seen.record(event);
    });
    await started;
    // Act
    await poller.pause();
    await send(queue, ['while-paused']);
    await new Promise((r) => setTimeout(r, 1200));
    const whilePaused = await counts(queue.url);
    poller.resume();
    await waitFor('the message deleted', () => poller.stats.deleted === 1);
    await poller.stop();
    // Assess
    assert.deepEqual(whilePaused, { visible: 1, notVisible: 0, delayed: 0 });
    assert.deepEqual(seen.seen.get('while-paused'), [1]);
    assert.deepEqual(
      events.filter((e) => e.type === 'paused' || e.type === 'resumed').map((e) => e.type),
      ['paused', 'resumed'],
    );
  });

  it('start(when) checks the queue, then holds: nothing is received until `when`; stopped while held, it never polls; paused while held, it stays paused', async () => {
    // Prepare: three queues with a message each; one start signal for the first and the third
    const [queue, other, third] = [await createQueue(), await createQueue(), await createQueue()];
    await send(queue, ['held']);
    await send(other, ['never']);
    await send(third, ['paused']);
    const seen = tracker();
    let go!: () => void;
    const when = new Promise<void>((resolve) => {
      go = resolve;
    });
    const handler = async (event: SQSEvent): Promise<void> => seen.record(event);
    const first = startPoller(queue, handler, {}, when);
    const second = startPoller(other, handler, {}, new Promise(() => undefined));
    const paused = startPoller(third, handler, {}, when);
    // Act: all start held; the third is paused while held; the first and third are let go after a while,
    // the second stopped while held; the third resumed last
    await Promise.all([first.started, second.started, paused.started]);
    const states = [first.poller.state, second.poller.state, paused.poller.state];
    await paused.poller.pause();
    await sleep(1200);
    const whileHeld = await counts(queue.url);
    go();
    await waitFor('the held message deleted', () => first.poller.stats.deleted === 1);
    await second.poller.stop();
    await sleep(1200);
    const pausedAfterStart = { state: paused.poller.state, counts: await counts(third.url) };
    paused.poller.resume();
    await waitFor('the paused message deleted', () => paused.poller.stats.deleted === 1);
    // Assess
    assert.deepEqual(states, ['held', 'held', 'held']);
    assert.deepEqual(whileHeld, { visible: 1, notVisible: 0, delayed: 0 });
    assert.deepEqual(seen.seen.get('held'), [1]);
    assert.equal(seen.seen.get('never'), undefined);
    assert.deepEqual(await counts(other.url), { visible: 1, notVisible: 0, delayed: 0 });
    assert.equal(second.poller.state, 'stopped');
    assert.deepEqual(pausedAfterStart, { state: 'paused', counts: { visible: 1, notVisible: 0, delayed: 0 } });
    assert.deepEqual(seen.seen.get('paused'), [1]);
  });

  it('stop() resolves promptly while a long poll is pending', async () => {
    // Prepare
    const queue = await createQueue();
    const { poller, started } = startPoller(queue, async () => undefined, { waitTimeSeconds: 20 });
    await started;
    await new Promise((r) => setTimeout(r, 100));
    // Act
    const t0 = Date.now();
    await poller.stop();
    const elapsed = Date.now() - t0;
    // Assess
    assert.ok(elapsed < 500, `stop took ${elapsed} ms`);
    assert.equal(poller.state, 'stopped');
    assert.equal(poller.stats.receiveErrors, 0);
  });

  describe('stops what Lambda stops: the invocation abort signal', () => {
    it('puts a live signal on the context and counts getRemainingTimeInMillis down in real time from the call to the timeout', async () => {
      // Prepare
      const queue = await createQueue({ visibilityTimeout: 5 });
      await send(queue, ['one']);
      let seen: { signal: AbortSignal | undefined; keys: string[]; first: number; later: number; waitedMs: number; aborted: boolean } | undefined;
      // Act
      const { poller, started } = startPoller(
        queue,
        async (_event, context) => {
          const first = context.getRemainingTimeInMillis();
          const t0 = Date.now();
          await new Promise((r) => setTimeout(r, 300));
          const signal = invocationAbortSignalOf(context);
          seen = {
            signal,
            keys: Object.keys(context),
            first,
            later: context.getRemainingTimeInMillis(),
            waitedMs: Date.now() - t0,
            aborted: signal?.aborted ?? true,
          };
        },
        { functionTimeoutMs: 2000 },
      );
      await started;
      await waitFor('the message deleted', () => poller.stats.deleted === 1);
      await poller.stop();
      // Assess
      assert.ok(seen);
      assert.ok(seen.signal instanceof AbortSignal, 'the context carries an AbortSignal');
      assert.equal(seen.aborted, false, 'not aborted while the invocation has time left');
      assert.ok(!seen.keys.includes(INVOCATION_ABORT_SIGNAL), "the signal is not enumerable (the context serialises as Lambda's)");
      assert.ok(seen.first > 1900 && seen.first <= 2000, `remaining at the call ${seen.first} ms`);
      const counted = seen.first - seen.later;
      assert.ok(Math.abs(counted - seen.waitedMs) <= 30, `remaining went down ${counted} ms in ${seen.waitedMs} ms`);
      assert.equal(seen.signal.aborted, false, 'an invocation that returned in time is not aborted');
    });

    it("aborts the signal at the function timeout with a reason naming it; the handler's in-flight call stops and no call follows", async () => {
      // Prepare: a handler that keeps calling SQS with the invocation's signal, one call after another,
      // and never returns on its own.
      const queue = await createQueue({ visibilityTimeout: 2 });
      const sink = await createQueue({ visibilityTimeout: 5 });
      await send(queue, ['slow']);
      const calls: Array<{ startedAt: number; settled: 'ok' | 'aborted' | 'error' }> = [];
      let abortedAt: number | undefined;
      let reason: unknown;
      let remainingAtAbort: number | undefined;
      let handlerEnded: { at: number; error: unknown } | undefined;
      let invocations = 0;
      // Act
      const { poller, events, started } = startPoller(
        queue,
        async (_event, context) => {
          if (invocations++ > 0) return; // the redelivery ends the test
          const signal = invocationAbortSignalOf(context)!;
          signal.addEventListener('abort', () => {
            abortedAt = Date.now();
            reason = signal.reason;
            remainingAtAbort = context.getRemainingTimeInMillis();
          });
          try {
            for (;;) {
              const call = { startedAt: Date.now(), settled: 'ok' as 'ok' | 'aborted' | 'error' };
              calls.push(call);
              try {
                await sqs.send(new SendMessageCommand({ QueueUrl: sink.url, MessageBody: `call-${calls.length}` }), { abortSignal: signal });
              } catch (error) {
                call.settled = (error as Error).name === 'AbortError' ? 'aborted' : 'error';
                throw error;
              }
              await sleep(20, undefined, { signal }); // a pause that listens to the signal too
            }
          } catch (error) {
            handlerEnded = { at: Date.now(), error };
            throw error;
          }
        },
        { functionTimeoutMs: 1000, maximumConcurrency: 2 },
      );
      await started;
      await waitFor('the timed-out batch back and deleted', () => poller.stats.deleted === 1);
      await poller.stop();
      // Assess: the signal fired at the timeout, with a reason that says so
      assert.ok(abortedAt !== undefined, 'the signal was aborted');
      assert.ok(reason instanceof InvocationAbortError, String(reason));
      assert.equal((reason as InvocationAbortError).name, 'AbortError');
      assert.equal((reason as InvocationAbortError).abortCause, 'timeout');
      assert.match((reason as Error).message, /timed out after 1\.00 seconds/);
      assert.ok(remainingAtAbort !== undefined && remainingAtAbort <= 5, `remaining at the abort ${remainingAtAbort} ms`);
      // ...the whole batch failed by the timeout, as in Lambda
      const failed = events.filter((e) => e.type === 'batchFailed');
      assert.equal(failed.length, 1);
      assert.equal(failed[0]?.type === 'batchFailed' && failed[0].reason, 'timeout');
      // ...and the handler's work stopped: no call started after the abort, the last one was aborted
      assert.ok(calls.length >= 2, `calls ${calls.length}`);
      assert.ok(
        calls.every((c) => c.startedAt <= abortedAt!),
        'no call after the abort',
      );
      assert.ok(handlerEnded, 'the handler ended');
      assert.ok(handlerEnded.at - abortedAt < 500, `the handler ended ${handlerEnded.at - abortedAt} ms after the abort`);
      const sent = calls.filter((c) => c.settled === 'ok').length;
      await new Promise((r) => setTimeout(r, 200));
      const sinkDepth = await counts(sink.url);
      // The calls that completed reached SQS; the one in flight at the abort may have reached it too (its
      // request was on the wire), as with a Lambda stopped mid-request — but nothing after it.
      const inFlightAtAbort = calls.filter((c) => c.settled === 'aborted').length;
      assert.ok(inFlightAtAbort <= 1, `aborted calls ${inFlightAtAbort}`);
      assert.ok(
        sinkDepth.visible >= sent && sinkDepth.visible <= sent + inFlightAtAbort,
        `${sinkDepth.visible} message(s) in the sink, ${sent} call(s) completed`,
      );
    });

    it('still times out a handler that ignores the signal', async () => {
      // Prepare
      const queue = await createQueue({ visibilityTimeout: 1 });
      await send(queue, ['deaf']);
      let calls = 0;
      let signal: AbortSignal | undefined;
      // Act
      const { poller, events, started } = startPoller(
        queue,
        async (_event, context) => {
          signal = invocationAbortSignalOf(context);
          if (calls++ === 0) await new Promise((r) => setTimeout(r, 600));
        },
        { functionTimeoutMs: 200 },
      );
      await started;
      await waitFor('deleted on the second delivery', () => poller.stats.deleted === 1);
      await poller.stop();
      // Assess
      assert.equal(calls, 2);
      assert.deepEqual(
        events.filter((e) => e.type === 'batchFailed').map((e) => e.type === 'batchFailed' && e.reason),
        ['timeout'],
      );
      assert.ok(signal);
    });

    it('aborts running invocations when the poller is stopped; what the handler reports is still acted on', async () => {
      // Prepare
      const queue = await createQueue({ visibilityTimeout: 10 });
      await send(queue, ['keep', 'done']);
      let reason: unknown;
      let records = 0;
      // Act
      const { poller, events, started } = startPoller(
        queue,
        async (event, context) => {
          records += event.Records.length;
          const signal = invocationAbortSignalOf(context)!;
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          reason = signal.reason;
          // What an aborted handler reports: only what it did not finish.
          return { batchItemFailures: event.Records.filter((r) => r.body === 'keep').map((r) => ({ itemIdentifier: r.messageId })) };
        },
        { functionTimeoutMs: 8000, batchSize: 10, maximumBatchingWindowSeconds: 1 },
      );
      await started;
      await waitFor('both records in running invocations', () => records === 2);
      const t0 = Date.now();
      await poller.stop();
      const stopMs = Date.now() - t0;
      // Assess
      assert.ok(stopMs < 2000, `stop took ${stopMs} ms (the function timeout is 8 s)`);
      assert.ok(reason instanceof InvocationAbortError);
      assert.equal((reason as InvocationAbortError).abortCause, 'stopped');
      assert.equal(poller.stats.wholeBatchFailures, 0);
      const finished = events.filter((e) => e.type === 'invocationFinished');
      const deleted = finished.reduce((n, e) => n + (e.type === 'invocationFinished' ? e.deleted : 0), 0);
      const failedRecords = finished.reduce((n, e) => n + (e.type === 'invocationFinished' ? e.failed : 0), 0);
      assert.equal(deleted + failedRecords, 2);
      assert.equal(failedRecords >= 1, true);
      const depth = await counts(queue.url);
      assert.equal(depth.visible + depth.notVisible, failedRecords, 'the unfinished record stays in the queue');
    });
  });
});
