/**
 * The consumer's delivery guarantees, driving the real handler through the eval harness
 * (test/helpers/consumer-harness.ts) on DynamoDB Local and fauxqs: commit once (the same message twice,
 * five copies on five consumers at once: one model call), a real failure's visibility backoff and the DLQ at
 * maxReceiveCount, failures and throttles alternating. The visibility the consumer sets and the delays
 * it asks for are recorded and pass at once (`queue-time.ts`). The whole local stack (poller, consumer,
 * fake provider at a tiny rate limit) committing every job once: `test/e2e/lanes/queue/delivery.test.ts`.
 * What the consumer refuses: guards.test.ts; validation and no source text in logs: validation.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProviderTransportError } from '../../../../lib/providers/model.js';
import {
  CapturingSink,
  englishDocuments,
  freshSqsClient,
  invoke,
  jobOf,
  queueCounts,
  receive,
  scriptedModel,
  sendRaw,
  submitTo,
  testConsumer,
  throttle,
  trackedLanes,
} from '../../../helpers/consumer-harness.js';
import { expireVisibility, skipDelays, visibilityLeft } from '../../../helpers/queue-time.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';

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
    const claim = await t.ledger.claimOf(item!.jobId);
    const sender = messages[0]!.Attributes?.SenderId;
    assert.ok(sender, 'SQS names the sender');
    assert.equal(claim?.submittedBy, sender, "the job records who sent it (the message's SenderId)");
  });

  it('five copies of one job delivered at once to five consumers make one model call; the copies that found the key held come back as duplicates', async () => {
    // Prepare: the job enqueued five times (as producer retries can do), five handler instances; the
    // model answers only once the other four invocations ended (or once all five reached it), so the
    // copies race while the first call is under way
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#race` }]);
    const [first] = await receive(t, { max: 1 });
    for (let i = 0; i < 4; i++) await sendRaw(t, first!.Body!);
    const copies = [first!, ...(await receive(t, { max: 4, waitSeconds: 1 }))];
    assert.equal(new Set(copies.map((m) => m.MessageId)).size, 5);
    const clock = virtualClock();
    const sqs = freshSqsClient(t);
    const waits = skipDelays(sqs);
    const sink = new CapturingSink();
    const model = scriptedModel();
    let entered = 0;
    let ended = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const answer = model.extract.bind(model);
    model.extract = async (request) => {
      if (++entered === copies.length) open();
      await gate;
      return answer(request);
    };
    const consumers = copies.map(() => testConsumer(t, model, { sink, sqs, now: clock.now, sleep: clock.sleep }));

    // Act
    const runs = await Promise.all(
      copies.map(async (message, i) => {
        const run = await invoke(t, consumers[i]!.handler, [message]);
        if (++ended === copies.length - 1) open();
        return run;
      }),
    );

    // Assess: one call; the four others deferred (re-sent for when the hold ends), not failed
    assert.deepEqual(
      runs.flatMap((r) => r.response.batchItemFailures),
      [],
    );
    assert.equal(model.calls.length, 1, 'one model call for five copies');
    assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId);
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(sink.totals.total.KeyInProgress, 4);
    assert.equal(waits.delays.length, 4, 'the four copies re-sent for later');

    // Act 2: their delays pass; the copies come back
    waits.letDelaysPass(clock);
    const back = await receive(t, { max: 10 });
    const again = await invoke(t, consumers[0]!.handler, back);
    sqs.destroy();

    // Assess 2: duplicates of the committed result, without a call
    assert.equal(back.length, 4);
    assert.deepEqual(again.response.batchItemFailures, []);
    assert.equal(model.calls.length, 1, 'still one model call');
    assert.equal(sink.totals.total.DuplicateSuppressed, 4);
    assert.equal(await t.results.count(), 1);
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
    // (the visibility the consumer sets is recorded; the test then lets it run out at once)
    const sqs = freshSqsClient(t);
    const waits = skipDelays(sqs);
    const { handler, sink } = testConsumer(t, model, { sqs, random: () => 0.5 });
    const first = await receive(t, { max: 1 });

    // Act 1: first receive fails
    const one = await invoke(t, handler, first);
    const hiddenFor = await visibilityLeft(t, first[0]!);

    // Assess 1: reported failed; hidden for ~1 s, not the queue's 30 s
    assert.deepEqual(one.response.batchItemFailures, [{ itemIdentifier: first[0]!.MessageId! }]);
    assert.equal(await t.results.get(item!.idempotencyKey), undefined);
    assert.deepEqual(waits.visibilities, [1], 'the policy backoff: 1 s (the queue default is 30 s)');
    assert.ok(hiddenFor <= 1_000, `fauxqs hides it for ${hiddenFor} ms more, not the queue's 30 s`);
    await expireVisibility(t, first);
    const second = await receive(t, { max: 1 });
    assert.equal(second.length, 1, 'redelivered');
    assert.equal(second[0]!.Attributes?.ApproximateReceiveCount, '2');
    assert.equal(jobOf(second[0]!).attempt, 0, 'the body is not rewritten on a real failure');

    // Act 2: the last receive fails too; its visibility runs out and SQS's redrive acts on the next receive
    const two = await invoke(t, handler, second);
    assert.deepEqual(two.response.batchItemFailures, [{ itemIdentifier: second[0]!.MessageId! }]);
    assert.deepEqual(waits.visibilities, [1, 2], 'then 2 s');
    await expireVisibility(t, second);
    assert.deepEqual(await receive(t, { max: 1 }), [], 'past maxReceiveCount: moved, not delivered');
    const dlq = await queueCounts(t, 'dlq');
    const dlqDepth = dlq.visible + dlq.notVisible + dlq.delayed;
    sqs.destroy();

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
