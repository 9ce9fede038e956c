import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createAwsClients, type AwsClients } from '../../lib/aws/clients.js';
import { EventSourcePoller, InvocationAbortError, PollerConfigError, type EventSourcePollerOptions, type PollerEvent } from '../../lib/local/lambda/poller.js';
import { INVOCATION_ABORT_SIGNAL, invocationAbortSignalOf } from '../../lib/shared/invocation.js';
import { testEndpoints, uniqueName } from '../helpers/endpoints.js';

const REGION = 'us-east-1';
let clients: AwsClients;
let sqs: SQSClient;
const queues: string[] = [];
const pollers: EventSourcePoller[] = [];

interface TestQueue {
  url: string;
  arn: string;
}

interface QueueOptions {
  visibilityTimeout?: number;
  deadLetter?: { arn: string; maxReceiveCount: number };
}

async function createQueue(options: QueueOptions = {}): Promise<TestQueue> {
  const attributes: Record<string, string> = { VisibilityTimeout: String(options.visibilityTimeout ?? 1) };
  if (options.deadLetter) {
    const { arn, maxReceiveCount } = options.deadLetter;
    attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount });
  }
  const created = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('poller'), Attributes: attributes }));
  const url = created.QueueUrl!;
  queues.push(url);
  const got = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return { url, arn: got.Attributes!.QueueArn! };
}

async function send(queue: TestQueue, bodies: string[], attributes?: Record<string, MessageAttributeValue>): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    const out = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: bodies.slice(i, i + 10).map((body, j) => ({ Id: `m${i + j}`, MessageBody: body, MessageAttributes: attributes })),
      }),
    );
    assert.equal(out.Failed?.length ?? 0, 0);
  }
}

async function counts(url: string): Promise<{ visible: number; notVisible: number; delayed: number }> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  const a = out.Attributes ?? {};
  return {
    visible: Number(a.ApproximateNumberOfMessages),
    notVisible: Number(a.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed),
  };
}

async function waitFor(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 6000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void | null>;

function startPoller(queue: TestQueue, handler: Handler, options: Partial<EventSourcePollerOptions> = {}) {
  const events: PollerEvent[] = [];
  const poller = new EventSourcePoller({
    sqs,
    queueUrl: queue.url,
    queueArn: queue.arn,
    awsRegion: REGION,
    handler,
    waitTimeSeconds: 1,
    maximumConcurrency: 2,
    functionTimeoutMs: 1000,
    onEvent: (e) => events.push(e),
    ...options,
  });
  pollers.push(poller);
  return { poller, events, started: poller.start() };
}

/** Every receive count each body was handed over with, in order. */
function tracker() {
  const seen = new Map<string, number[]>();
  return {
    seen,
    record(event: SQSEvent) {
      for (const r of event.Records) seen.set(r.body, [...(seen.get(r.body) ?? []), Number(r.attributes.ApproximateReceiveCount)]);
    },
  };
}

describe('EventSourcePoller (Lambda SQS event source mapping stand-in)', () => {
  before(() => {
    clients = createAwsClients(REGION, testEndpoints());
    sqs = clients.sqs;
  });

  after(async () => {
    await Promise.all(pollers.map((p) => p.stop()));
    await Promise.allSettled(queues.map((url) => sqs.send(new DeleteQueueCommand({ QueueUrl: url }))));
    clients.destroy();
  });

  it('deletes every record of a successful invocation', async () => {
    // Prepare
    const queue = await createQueue();
    await send(
      queue,
      Array.from({ length: 25 }, (_, i) => `ok-${i}`),
    );
    const seen = tracker();
    const responses = [undefined, null, { batchItemFailures: [] }];
    let calls = 0;
    // Act
    const { poller, started } = startPoller(queue, async (event) => {
      seen.record(event);
      return responses[calls++ % responses.length] as SQSBatchResponse | null | undefined;
    });
    await started;
    await waitFor('25 deletes', () => poller.stats.deleted === 25);
    await poller.stop();
    // Assess
    assert.equal(seen.seen.size, 25);
    assert.ok([...seen.seen.values()].every((c) => c.length === 1 && c[0] === 1));
    assert.deepEqual(await counts(queue.url), { visible: 0, notVisible: 0, delayed: 0 });
    assert.equal(poller.stats.failedRecords, 0);
    assert.equal(poller.stats.records, 25);
    assert.equal(poller.state, 'stopped');
  });

  it('keeps only the records listed in batchItemFailures; they return after the visibility timeout', async () => {
    // Prepare
    const queue = await createQueue({ visibilityTimeout: 1 });
    await send(queue, ['ok-1', 'fail-1', 'ok-2', 'fail-2']);
    const seen = tracker();
    // Act
    const { poller, started } = startPoller(queue, async (event) => {
      seen.record(event);
      const failing = event.Records.filter((r) => r.body.startsWith('fail') && Number(r.attributes.ApproximateReceiveCount) < 3);
      return { batchItemFailures: failing.map((r) => ({ itemIdentifier: r.messageId })) };
    });
    await started;
    await waitFor('all 4 deleted', () => poller.stats.deleted === 4);
    await poller.stop();
    // Assess
    assert.deepEqual(seen.seen.get('ok-1'), [1]);
    assert.deepEqual(seen.seen.get('ok-2'), [1]);
    assert.deepEqual(seen.seen.get('fail-1'), [1, 2, 3]);
    assert.deepEqual(seen.seen.get('fail-2'), [1, 2, 3]);
    assert.equal(poller.stats.failedRecords, 4);
    assert.equal(poller.stats.wholeBatchFailures, 0);
    assert.deepEqual(await counts(queue.url), { visible: 0, notVisible: 0, delayed: 0 });
  });

  it('builds the SQSEvent and context as Lambda does', async () => {
    // Prepare
    const queue = await createQueue({ visibilityTimeout: 5 });
    await send(queue, ['{"a":1}'], {
      tenant: { DataType: 'String', StringValue: 'acme' },
      attempt: { DataType: 'Number', StringValue: '3' },
      blob: { DataType: 'Binary', BinaryValue: Buffer.from('1100') },
    });
    await send(queue, ['plain']);
    let captured: { event: SQSEvent; context: Context; remaining: number } | undefined;
    // Act
    const { poller, started } = startPoller(
      queue,
      async (event, context) => {
        captured ??= { event, context, remaining: context.getRemainingTimeInMillis() };
      },
      { batchSize: 10, maximumBatchingWindowSeconds: 1, functionTimeoutMs: 1000, functionName: 'consumer-test' },
    );
    await started;
    await waitFor('both deleted', () => poller.stats.deleted === 2);
    await poller.stop();
    // Assess
    assert.ok(captured);
    const { event, context, remaining } = captured;
    assert.equal(event.Records.length, 2, 'the batching window gathered both messages into one event');
    const withAttributes = event.Records.find((r) => r.body === '{"a":1}');
    const plain = event.Records.find((r) => r.body === 'plain');
    assert.ok(withAttributes && plain);
    assert.deepEqual(Object.keys(withAttributes).sort(), [
      'attributes',
      'awsRegion',
      'body',
      'eventSource',
      'eventSourceARN',
      'md5OfBody',
      'md5OfMessageAttributes',
      'messageAttributes',
      'messageId',
      'receiptHandle',
    ]);
    assert.equal(withAttributes.eventSource, 'aws:sqs');
    assert.equal(withAttributes.eventSourceARN, queue.arn);
    assert.equal(withAttributes.awsRegion, REGION);
    assert.equal(withAttributes.md5OfBody, createHash('md5').update('{"a":1}').digest('hex'));
    assert.match(withAttributes.md5OfMessageAttributes ?? '', /^[0-9a-f]{32}$/);
    for (const name of ['ApproximateReceiveCount', 'SentTimestamp', 'SenderId', 'ApproximateFirstReceiveTimestamp'] as const) {
      assert.equal(typeof withAttributes.attributes[name], 'string', name);
    }
    assert.equal(withAttributes.attributes.ApproximateReceiveCount, '1');
    assert.match(withAttributes.attributes.SentTimestamp, /^\d{13}$/);
    assert.deepEqual(withAttributes.messageAttributes, {
      tenant: { stringValue: 'acme', stringListValues: [], binaryListValues: [], dataType: 'String' },
      attempt: { stringValue: '3', stringListValues: [], binaryListValues: [], dataType: 'Number' },
      blob: { binaryValue: Buffer.from('1100').toString('base64'), stringListValues: [], binaryListValues: [], dataType: 'Binary' },
    });
    assert.deepEqual(plain.messageAttributes, {});
    assert.equal('md5OfMessageAttributes' in plain, false);
    assert.equal(context.functionName, 'consumer-test');
    assert.equal(context.functionVersion, '$LATEST');
    assert.match(context.invokedFunctionArn, /^arn:aws:lambda:us-east-1:\d{12}:function:consumer-test$/);
    assert.match(context.awsRequestId, /^[0-9a-f-]{36}$/);
    assert.equal(context.memoryLimitInMB, '128');
    assert.ok(remaining > 0 && remaining <= 1000, `remaining ${remaining}`);
  });

  describe('whole-batch failures return every record of the batch', () => {
    const cases: Array<{ name: string; reason: string; firstCall: (event: SQSEvent) => Promise<SQSBatchResponse> }> = [
      {
        name: 'handler throws',
        reason: 'handlerError',
        firstCall: async () => {
          throw new Error('boom');
        },
      },
      {
        name: 'itemIdentifier is not a message id of the batch',
        reason: 'invalidResponse',
        firstCall: async () => ({ batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] }),
      },
      {
        name: 'handler exceeds the function timeout',
        reason: 'timeout',
        firstCall: async () => {
          await new Promise((r) => setTimeout(r, 400));
          return { batchItemFailures: [] };
        },
      },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        // Prepare
        const queue = await createQueue({ visibilityTimeout: 1 });
        await send(queue, ['a', 'b', 'c']);
        const seen = tracker();
        let calls = 0;
        // Act
        const { poller, events, started } = startPoller(
          queue,
          async (event) => {
            seen.record(event);
            return calls++ === 0 ? c.firstCall(event) : { batchItemFailures: [] };
          },
          { functionTimeoutMs: 200 },
        );
        await started;
        await waitFor('all 3 deleted', () => poller.stats.deleted === 3);
        await poller.stop();
        // Assess
        for (const body of ['a', 'b', 'c']) assert.deepEqual(seen.seen.get(body), [1, 2], body);
        assert.equal(poller.stats.wholeBatchFailures, 1);
        assert.equal(poller.stats.failedRecords, 3);
        const failed = events.filter((e) => e.type === 'batchFailed');
        assert.equal(failed.length, 1);
        assert.equal(failed[0]?.type === 'batchFailed' && failed[0].reason, c.reason);
      });
    }
  });

  it('never runs more than maximumConcurrency invocations at once', async () => {
    // Prepare
    const queue = await createQueue({ visibilityTimeout: 5 });
    await send(
      queue,
      Array.from({ length: 60 }, (_, i) => `m-${i}`),
    );
    let running = 0;
    let maxRunning = 0;
    // Act
    const { poller, started } = startPoller(
      queue,
      async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((r) => setTimeout(r, 100));
        running--;
      },
      { batchSize: 2, maximumConcurrency: 3 },
    );
    await started;
    await waitFor('60 deletes', () => poller.stats.deleted === 60);
    await poller.stop();
    // Assess
    assert.ok(poller.stats.maxInFlightObserved <= 3, `observed ${poller.stats.maxInFlightObserved}`);
    assert.ok(poller.stats.maxInFlightObserved > 1, `observed ${poller.stats.maxInFlightObserved}`);
    assert.ok(maxRunning <= 3 && maxRunning > 1, `handler saw ${maxRunning}`);
    assert.equal(poller.stats.batches, 30);
  });

  it('lets SQS move an always-failing message to the DLQ after maxReceiveCount', async () => {
    // Prepare
    const dlq = await createQueue();
    const queue = await createQueue({ visibilityTimeout: 1, deadLetter: { arn: dlq.arn, maxReceiveCount: 2 } });
    await send(queue, ['poison'], { tenant: { DataType: 'String', StringValue: 'acme' } });
    const seen = tracker();
    // Act
    const { poller, started } = startPoller(queue, async (event) => {
      seen.record(event);
      return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
    });
    await started;
    await waitFor('the message in the DLQ', async () => (await counts(dlq.url)).visible === 1);
    await poller.stop();
    // Assess
    assert.deepEqual(seen.seen.get('poison'), [1, 2]);
    const moved = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq.url, MessageAttributeNames: ['All'], WaitTimeSeconds: 0 }));
    assert.equal(moved.Messages?.[0]?.Body, 'poison');
    assert.equal(moved.Messages?.[0]?.MessageAttributes?.tenant?.StringValue, 'acme');
    assert.equal(poller.stats.deleted, 0);
    assert.equal(poller.stats.failedRecords, 2);
  });

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

  it('rejects what AWS would reject', async () => {
    // Prepare
    const queue = await createQueue({ visibilityTimeout: 1 });
    const base = { sqs, queueUrl: queue.url, queueArn: queue.arn, awsRegion: REGION, handler: async () => undefined };
    // Act / Assess
    assert.throws(() => new EventSourcePoller({ ...base, maximumConcurrency: 1 }), PollerConfigError);
    assert.throws(() => new EventSourcePoller({ ...base, maximumConcurrency: 1001 }), PollerConfigError);
    assert.throws(() => new EventSourcePoller({ ...base, batchSize: 0 }), PollerConfigError);
    assert.throws(() => new EventSourcePoller({ ...base, batchSize: 11 }), /maximumBatchingWindowSeconds >= 1/);
    assert.throws(() => new EventSourcePoller({ ...base, maximumBatchingWindowSeconds: 301 }), PollerConfigError);
    assert.throws(() => new EventSourcePoller({ ...base, awsRegion: 'eu-central-1' }), /not in the mapping's region/);
    const tooSlow = new EventSourcePoller({ ...base, functionTimeoutMs: 2000 });
    await assert.rejects(tooSlow.start(), /Queue visibility timeout: 1 seconds is less than Function timeout: 2 seconds/);
  });
});
