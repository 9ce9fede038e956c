/**
 * The consumer's delivery guarantees on the local stack: commit once (the same message twice, two
 * copies on two consumers at once), a real failure's visibility backoff and the DLQ at
 * maxReceiveCount, failures and throttles alternating, and the whole local stack (poller, consumer,
 * fake provider at a tiny rate limit) committing every job once. All but the last drive the real
 * handler through the eval harness (test/helpers/consumer-harness.ts). What the consumer refuses:
 * consumer-guards.test.ts; validation and no source text in logs: consumer-validation.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadCorpus } from '../../../../workbench/corpus/index.js';
import { resolveLanes } from '../../../../lib/config/lanes.js';
import { startLocalStack } from '../../../../workbench/local-stack/stack.js';
import { ProviderTransportError } from '../../../../lib/providers/model.js';
import {
  CapturingSink,
  englishDocuments,
  invoke,
  jobOf,
  queueCounts,
  receive,
  scriptedModel,
  sendRaw,
  submitTo,
  testConsumer,
  throttle,
  waitUntil,
  type TestLane,
  trackedLanes,
} from '../../../helpers/consumer-harness.js';
import { testEndpoints, uniqueLaneResources } from '../../../helpers/endpoints.js';

const newLane = trackedLanes();

describe('consumer: commit once', () => {
  it('the same message delivered twice in sequence commits once and suppresses one duplicate', async () => {
    // Prepare
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#twice` }]);
    const model = scriptedModel();
    const { handler, sink } = testConsumer(t, model);
    const messages = await receive(t, { max: 1 });

    // Act: the first delivery's delete is lost (no ack), the same record comes again
    const first = await invoke(t, handler, messages, { ack: false });
    const second = await invoke(t, handler, messages);

    // Assess
    assert.deepEqual(first.response.batchItemFailures, []);
    assert.deepEqual(second.response.batchItemFailures, []);
    assert.equal(await t.results.count(), 1);
    const result = await t.results.get(item!.idempotencyKey);
    assert.equal(result?.jobId, item!.jobId);
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(sink.totals.total.DuplicateSuppressed, 1);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });

  it('two copies of one job handled by two consumers at once commit once and suppress one duplicate', async () => {
    // Prepare: the job is enqueued twice (as a producer retry can do); two handler instances
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#race` }]);
    const [message] = await receive(t, { max: 1 });
    await sendRaw(t, message!.Body!);
    const [copy] = await receive(t, { max: 1, waitSeconds: 1 });
    assert.ok(copy && copy.MessageId !== message!.MessageId);
    const sink = new CapturingSink();
    const model = scriptedModel();
    const a = testConsumer(t, model, { sink });
    const b = testConsumer(t, model, { sink });

    // Act
    const [ra, rb] = await Promise.all([invoke(t, a.handler, [message!]), invoke(t, b.handler, [copy])]);

    // Assess
    assert.deepEqual(ra.response.batchItemFailures, []);
    assert.deepEqual(rb.response.batchItemFailures, []);
    assert.equal(model.calls.length, 2, 'both called the model');
    assert.equal(await t.results.count(), 1);
    assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId);
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(sink.totals.total.DuplicateSuppressed, 1);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });
});

describe('consumer: real failures', () => {
  it('a transport timeout is reported failed with a visibility backoff, and the DLQ takes it at maxReceiveCount with the reason in the ledger', async () => {
    // Prepare: queue visibility 30 s, maxReceiveCount 2; failure backoff base 2 s, jitter 0.5 → 1 s, then 2 s
    const t = await newLane({ queue: { maxReceiveCount: 2, visibilityTimeoutSeconds: 30 }, backoff: { failureBaseSeconds: 2, failureCapSeconds: 10 } });
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#timeout` }]);
    const model = scriptedModel(() => new ProviderTransportError('model call timed out', 'scripted', true));
    const { handler, sink } = testConsumer(t, model, { random: () => 0.5 });
    const first = await receive(t, { max: 1 });

    // Act 1: first receive fails
    const failedAt = Date.now();
    const one = await invoke(t, handler, first);

    // Assess 1: reported failed; back after ~1 s, not the queue's 30 s
    assert.deepEqual(one.response.batchItemFailures, [{ itemIdentifier: first[0]!.MessageId! }]);
    assert.equal(await t.results.get(item!.idempotencyKey), undefined);
    const second = await receive(t, { max: 1, waitSeconds: 5 });
    const backAfterMs = Date.now() - failedAt;
    assert.equal(second.length, 1, 'redelivered');
    assert.ok(backAfterMs >= 800 && backAfterMs < 4000, `back after ${backAfterMs} ms (policy backoff 1 s, queue default 30 s)`);
    assert.equal(second[0]!.Attributes?.ApproximateReceiveCount, '2');
    assert.equal(jobOf(second[0]!).attempt, 0, 'the body is not rewritten on a real failure');

    // Act 2: the last receive fails too
    const two = await invoke(t, handler, second);
    assert.deepEqual(two.response.batchItemFailures, [{ itemIdentifier: second[0]!.MessageId! }]);
    let dlqDepth = 0;
    await waitUntil(
      'the DLQ to take the message',
      async () => {
        await receive(t, { max: 1 }); // SQS's redrive acts on a receive past maxReceiveCount
        const dlq = await queueCounts(t, 'dlq');
        dlqDepth = dlq.visible + dlq.notVisible + dlq.delayed;
        return dlqDepth > 0;
      },
      8000,
      200,
    );

    // Assess 2
    assert.equal(dlqDepth, 1);
    const [dead] = await receive(t, { max: 1, queueUrl: t.dlqUrl });
    assert.equal(jobOf(dead!).jobId, item!.jobId);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    const ledger = await t.ledger.entriesFor(item!.jobId);
    assert.deepEqual(
      ledger.map((e) => [e.kind, e.reason, e.receiveCount]),
      [['dead_letter_pending', 'transport_failure', 2]],
    );
    assert.match(ledger[0]!.details ?? '', /timed out/);
    assert.equal(model.calls.length, 2);
    assert.equal(sink.totals.total.Failed, 2);
    assert.equal(sink.totals.total.Deferred, undefined, 'a real failure never takes the throttle path');
    assert.equal(await t.results.count(), 0);
  });
});

describe('consumer: real failures and throttles alternating', () => {
  it('a failure, a throttle, a failure: the re-sent job carries the failure, so the budget is spent and the consumer dead-letters it', async () => {
    // Prepare: maxReceiveCount 2; calls: timeout, 429 (no wait stated, jitter 0), timeout
    const t = await newLane({ queue: { maxReceiveCount: 2 }, backoff: { failureBaseSeconds: 1, failureCapSeconds: 1 } });
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#alternate` }]);
    const model = scriptedModel((call) =>
      call.callNo === 2 ? throttle({ kind: 'rate_limit' }) : new ProviderTransportError('connection reset', 'scripted', false),
    );
    const { handler, sink } = testConsumer(t, model, { random: () => 0 });

    // Act: failure (receive 1), throttle (receive 2: re-sent), failure (new message, receive 1)
    const one = await invoke(t, handler, await receive(t, { max: 1 }));
    const second = await receive(t, { max: 1, waitSeconds: 3 });
    const two = await invoke(t, handler, second);
    const third = await receive(t, { max: 1, waitSeconds: 3 });
    const three = await invoke(t, handler, third);

    // Assess
    assert.equal(one.failedIds.size, 1);
    assert.deepEqual(two.response.batchItemFailures, []);
    assert.equal(third.length, 1);
    const resent = jobOf(third[0]!);
    assert.equal(resent.attempt, 1, 'the first failure is carried in the body');
    assert.equal(resent.deferrals, 1);
    assert.equal(third[0]!.Attributes?.ApproximateReceiveCount, '1');
    assert.deepEqual(three.response.batchItemFailures, [], 'moved to the DLQ by the consumer: acknowledged');
    const [dead] = await receive(t, { max: 1, queueUrl: t.dlqUrl, waitSeconds: 1 });
    assert.equal(jobOf(dead!).jobId, item!.jobId);
    assert.equal(jobOf(dead!).attempt, 2);
    assert.match(dead!.MessageAttributes?.deadLetterReason?.StringValue ?? '', /transport_failure/);
    const ledger = await t.ledger.entriesFor(item!.jobId);
    assert.deepEqual(
      ledger.map((e) => [e.kind, e.reason]),
      [
        ['deferred', 'rate_limit'],
        ['dead_letter_pending', 'transport_failure'],
      ],
    );
    assert.equal(sink.totals.total.DeadLettered, 1);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });
});

describe('consumer on the full local stack', () => {
  it('30 jobs against a provider of 10 requests per 2 s "minute": all committed once, 429s deferred, DLQ empty', async () => {
    // Prepare: one lane (us) with scaled timings; the fake provider with one key at a tiny rpm
    // (30 jobs need at least three windows, so 429s are certain)
    const lane = resolveLanes({
      us: {
        resources: uniqueLaneResources(),
        queue: { visibilityTimeoutSeconds: 30, receiveWaitTimeSeconds: 1 },
        consumer: { timeoutSeconds: 5, maximumConcurrency: 5 },
        backoff: { throttleBaseSeconds: 1, throttleCapSeconds: 10, failureBaseSeconds: 1, failureCapSeconds: 30 },
        provider: { timeoutMs: 2000 },
      },
    }).us!;
    const stack = await startLocalStack({
      lanes: { us: lane },
      endpoints: testEndpoints(),
      provider: { limits: { requestsPerMinute: 10 }, minuteMs: 2000, seed: 7 },
    });
    try {
      const l = stack.lanes.us!;
      const t: TestLane = { ...l, destroy: () => undefined };
      const docs = loadCorpus().slice(0, 30);

      // Act
      const submitted = await submitTo(
        t,
        docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#stack` })),
      );
      await waitUntil('30 commits', async () => (await l.results.count()) >= 30, 45_000, 250);
      await sleep(500); // let in-flight duplicates (if any) land
      await l.poller?.stop();

      // Assess
      const results = await l.results.scanAll();
      assert.equal(results.length, 30);
      assert.deepEqual(new Set(results.map((r) => r.jobId)), new Set(submitted.map((s) => s.jobId)));
      const stats = stack.provider.stats();
      assert.ok(stats.rateLimited.rpm > 0, `429s from the provider: ${JSON.stringify(stats.rateLimited)}`);
      const m = stack.telemetry.totals.total;
      assert.equal(m.Completed, 30, 'no double commit');
      assert.equal(m.RateLimited, stats.rateLimited.rpm, 'every 429 was seen as a throttle');
      assert.ok((m.Deferred ?? 0) > 0, 'the 429s were deferred');
      assert.equal(m.Failed, undefined, 'no 429 took the failure path');
      assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
      assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    } finally {
      await stack.stop();
    }
  });
});
