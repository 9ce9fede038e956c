/**
 * The local Lambda SQS event source mapping stand-in (`EventSourcePoller`) on fauxqs, batch by batch:
 * what it deletes after a successful invocation, the records `batchItemFailures` keeps, the SQSEvent
 * and context it builds, whole-batch failures, its concurrency cap, the DLQ redrive at
 * maxReceiveCount, and the configurations AWS would reject. Pause, stop and the invocation abort
 * signal: `lifecycle.test.ts`. In the e2e tier: it long-polls fauxqs and waits out real visibility timeouts.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { EventSourcePoller } from '../../../../workbench/local-stack/poller/poller.js';
import { PollerConfigError } from '../../../../workbench/local-stack/poller/options.js';
import { counts, createQueue, REGION, send, sqs, startPoller, tracker, usePollerQueues, waitFor } from './support.js';

describe('EventSourcePoller (Lambda SQS event source mapping stand-in)', () => {
  usePollerQueues();

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
