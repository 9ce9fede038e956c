/**
 * Faults around one consumer on the local stack, driven through the eval harness: the consumer dies
 * between two steps, DynamoDB or SQS is unavailable for a call, one message reaches two consumers at
 * once. After each, every job ends in exactly one known state: nothing lost, nothing committed twice.
 * Faults on the full local stack (provider failures, garbage answers, a key out of credit):
 * test/e2e/run/faults.test.ts.
 *
 * Already covered elsewhere (not repeated here):
 * - the same message delivered twice in sequence; five copies of one job on five consumers at once,
 *   one model call (delivery.test.ts "consumer: commit once");
 * - a transport timeout → visibility backoff → DLQ at maxReceiveCount with the reason in the ledger
 *   (delivery.test.ts "consumer: real failures");
 * - garbage once then repaired; schema-invalid twice → needs_review (validation.test.ts "consumer: validation");
 * - a failed deferral re-send (SQS unavailable before the send): the original comes back, then is
 *   deferred and committed (throttle.test.ts);
 * - a billing 429 on the eval harness: deferred by the throttle cap with BillingAlarm (throttle.test.ts).
 *
 * A crash on the eval harness: the wrapped dependency never returns at the crash point (the record's
 * work stops there) and the invocation rejects (test/helpers/fault-injection.ts), so nothing is
 * acknowledged and SQS brings the whole batch back after its visibility timeout — as when a Lambda
 * execution environment dies. On the full stack a crash is a call that never returns, ended by the
 * poller's function timeout (workbench/drivers/soak/faults.ts, exercised by faults-soak.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '@aws-sdk/client-sqs';
import { createConsumerHandler } from '../../../../lib/lanes/queue/handler.js';
import { ProviderTransportError, type ExtractionRequest } from '../../../../lib/providers/model.js';
import {
  CapturingSink,
  englishDocuments,
  freshSqsClient,
  invoke,
  jobOf,
  queueCounts,
  receive,
  scriptedModel,
  submitTo,
  testConsumer,
  throttle,
  type TestLane,
  trackedLanes,
} from '../../../helpers/consumer-harness.js';
import {
  Crash,
  crashingHandler,
  failSqsCommands,
  SimulatedCrashError,
  unavailableCommits,
  withDepFaults,
  withOverrides,
} from '../../../helpers/fault-injection.js';
import { expireVisibility, skipDelays, visibilityLeft } from '../../../helpers/queue-time.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';

const newLane = trackedLanes();
/** Past any claim's hold of an idempotency key (lib/store/claims.ts: at most 16 min). */
const CLAIM_PASSED_MS = 17 * 60_000;

/** Receives until `count` messages are in hand (or `timeoutMs` passes). */
async function receiveAll(t: TestLane, count: number, timeoutMs = 2000): Promise<Message[]> {
  const got: Message[] = [];
  const until = Date.now() + timeoutMs;
  while (got.length < count && Date.now() < until) got.push(...(await receive(t, { max: count - got.length })));
  return got;
}

describe('faults: the consumer dies between two steps', () => {
  it('dies after the model call, before the commit: nothing acknowledged, nothing written; the redelivery commits once', async () => {
    // Prepare: the first receive hides the message for 1 s only (its "visibility timeout")
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#crash-before-commit` }]);
    const model = scriptedModel();
    const sink = new CapturingSink();
    const crash = new Crash('afterModelCall');
    const clock = virtualClock();
    const dying = testConsumer(t, model, { sink, now: clock.now });
    const handler = crashingHandler(createConsumerHandler(crash.deps(dying.deps)), crash);
    const first = await receive(t, { max: 1, visibilityTimeout: 1 });

    // Act 1
    await assert.rejects(invoke(t, handler, first), SimulatedCrashError);

    // Assess 1: the model answered, nothing was committed, the message is still on the queue
    assert.deepEqual(crash.at, ['afterModelCall']);
    assert.equal(model.calls.length, 1);
    assert.equal(await t.results.count(), 0);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 1, delayed: 0 });

    // Act 2: its visibility timeout runs out; SQS brings it back to a new execution environment. A lane's
    // visibility timeout outlasts its function timeout, so the dead holder's claim of the key has passed by then
    await expireVisibility(t, first);
    clock.advance(CLAIM_PASSED_MS);
    const back = await receive(t, { max: 1 });
    const fresh = testConsumer(t, model, { sink, now: clock.now });
    const { response } = await invoke(t, fresh.handler, back);

    // Assess 2
    assert.equal(back[0]?.MessageId, first[0]!.MessageId, 'the same message');
    assert.equal(back[0]!.Attributes?.ApproximateReceiveCount, '2');
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(model.calls.length, 2, 'the lost answer is asked for again');
    assert.equal(await t.results.count(), 1);
    assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId);
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(sink.totals.total.DuplicateSuppressed, undefined);
    assert.deepEqual(await t.ledger.entriesFor(item!.jobId), []);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });

  it('dies after the commit, before the acknowledgement: the redelivery suppresses a duplicate without a model call; one commit', async () => {
    // Prepare
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#crash-after-commit` }]);
    const model = scriptedModel();
    const sink = new CapturingSink();
    const crash = new Crash('afterCommit');
    const dying = testConsumer(t, model, { sink });
    const handler = crashingHandler(createConsumerHandler(crash.deps(dying.deps)), crash);
    const first = await receive(t, { max: 1, visibilityTimeout: 1 });

    // Act 1
    await assert.rejects(invoke(t, handler, first), SimulatedCrashError);
    const committed = await t.results.get(item!.idempotencyKey);

    // Act 2: its visibility timeout runs out
    await expireVisibility(t, first);
    const back = await receive(t, { max: 1 });
    const { response } = await invoke(t, testConsumer(t, model, { sink }).handler, back);

    // Assess
    assert.deepEqual(crash.at, ['afterCommit']);
    assert.equal(committed?.jobId, item!.jobId, 'committed before the crash');
    assert.equal(back[0]?.MessageId, first[0]!.MessageId);
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(model.calls.length, 1, 'a committed job costs a read, not a model call');
    assert.equal(await t.results.count(), 1);
    assert.deepEqual(await t.results.get(item!.idempotencyKey), committed, 'the item was not written again');
    assert.equal(sink.totals.total.DuplicateSuppressed, 1);
    assert.equal(sink.totals.total.Completed, undefined, "the dead invocation's metrics died with it");
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });

  it('dies mid-batch after one commit: the whole batch comes back and each job is committed exactly once', async () => {
    // Prepare: three jobs in one batch; the crash comes after the first commit, the others run on
    const t = await newLane();
    const docs = englishDocuments(3);
    const items = await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#crash-batch` })),
    );
    const model = scriptedModel();
    const sink = new CapturingSink();
    const commits = unavailableCommits(0);
    const crash = new Crash('afterCommit');
    const crashFaults = crash.faults();
    const dying = testConsumer(t, model, { sink });
    const handler = crashingHandler(createConsumerHandler(withDepFaults(dying.deps, { ...crashFaults, onCommit: commits.faults.onCommit! })), crash);
    const first = await receive(t, { max: 3, visibilityTimeout: 2 });
    assert.equal(first.length, 3);

    // Act
    await assert.rejects(invoke(t, handler, first), SimulatedCrashError);
    await expireVisibility(t, first);
    const back = await receiveAll(t, 3);
    const fresh = testConsumer(t, model, { sink });
    const { response } = await invoke(t, createConsumerHandler(withDepFaults(fresh.deps, commits.faults)), back);

    // Assess
    assert.deepEqual(new Set(back.map((m) => m.MessageId)), new Set(first.map((m) => m.MessageId)), 'the whole batch came back');
    assert.deepEqual(response.batchItemFailures, []);
    const results = await t.results.scanAll();
    assert.deepEqual(new Set(results.map((r) => r.jobId)), new Set(items.map((i) => i.jobId)));
    assert.equal(results.length, 3);
    assert.deepEqual([...commits.log.committed.values()], [1, 1, 1], 'each key committed once');
    assert.equal(sink.totals.total.DuplicateSuppressed, 3 - (sink.totals.total.Completed ?? 0));
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });
});

describe('faults: a service is unavailable', () => {
  it('DynamoDB unavailable for two commits of a batch of three: those two come back and are committed; the third is unaffected', async () => {
    // Prepare
    const t = await newLane();
    const docs = englishDocuments(3);
    const items = await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#ddb-down` })),
    );
    const model = scriptedModel();
    const { faults, log } = unavailableCommits(2);
    // (the visibility backoff the consumer sets is recorded; the test lets it run out at once)
    const sqs = freshSqsClient(t);
    const waits = skipDelays(sqs);
    const consumer = testConsumer(t, model, { sqs });
    const handler = createConsumerHandler(withDepFaults(consumer.deps, faults));
    const first = await receive(t, { max: 3, visibilityTimeout: 1 });

    // Act 1
    const one = await invoke(t, handler, first);

    // Assess 1: two reported failed (not acknowledged), one committed
    assert.equal(one.failedIds.size, 2);
    assert.equal(await t.results.count(), 1);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 2, delayed: 0 });

    assert.equal(waits.visibilities.length, 2, 'a visibility backoff for each');

    // Act 2: they come back after their visibility timeout; DynamoDB is back
    await expireVisibility(t, first);
    const back = await receiveAll(t, 2);
    const two = await invoke(t, handler, back);
    sqs.destroy();

    // Assess 2
    assert.deepEqual(new Set(back.map((m) => m.MessageId)), one.failedIds);
    assert.ok(back.every((m) => m.Attributes?.ApproximateReceiveCount === '2'));
    assert.deepEqual(two.response.batchItemFailures, []);
    const results = await t.results.scanAll();
    assert.deepEqual(new Set(results.map((r) => r.jobId)), new Set(items.map((i) => i.jobId)));
    assert.equal(log.unavailable, 2);
    assert.deepEqual([...log.committed.values()], [1, 1, 1]);
    assert.equal(log.duplicates, 0);
    assert.equal(model.calls.length, 5, 'an uncommitted answer is asked for again');
    assert.equal(consumer.sink.totals.total.Completed, 3);
    assert.equal(consumer.sink.totals.total.Failed, 2, 'a store outage takes the real-failure path: visibility backoff, counted');
    for (const item of items) assert.deepEqual(await t.ledger.entriesFor(item.jobId), []);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });

  it('SQS took the deferral re-send but its answer was lost: the original comes back beside the copy; one model call, one commit, the copy a duplicate', async () => {
    // Prepare: a 429 "retry in 1 s" on the first call; the re-send reaches SQS and then throws
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#lost-answer` }]);
    const model = scriptedModel((call) => (call.callNo === 1 ? throttle({ kind: 'rate_limit', retryAfterMs: 1000 }) : undefined));
    const sqs = freshSqsClient(t);
    const sends = failSqsCommands(sqs, { commands: ['SendMessageCommand'], times: 1, when: 'after' });
    // (the copy's delay is recorded and passes at once, on the consumer's virtual clock)
    const waits = skipDelays(sqs);
    const clock = virtualClock();
    const { handler, sink } = testConsumer(t, model, { sqs, now: clock.now, sleep: clock.sleep });
    const first = await receive(t, { max: 1, visibilityTimeout: 2 });

    // Act 1
    const one = await invoke(t, handler, first);

    // Assess 1: the record is not acknowledged (the consumer cannot know the copy exists), yet the copy exists
    assert.deepEqual(one.response.batchItemFailures, [{ itemIdentifier: first[0]!.MessageId! }]);
    assert.equal(sends.failed.SendMessageCommand, 1);
    assert.deepEqual(
      waits.delays.map((d) => [d.queueUrl, d.delaySeconds]),
      [[t.queueUrl, 1]],
      'the copy was sent with the stated 1 s wait',
    );
    assert.deepEqual(await queueCounts(t), { visible: 1, notVisible: 1, delayed: 0 }, 'the copy (its delay skipped) and the original, in flight');

    // Act 2: both arrive (the copy after its delay, the original after its visibility timeout), in one batch
    waits.letDelaysPass(clock);
    await expireVisibility(t, first);
    const both = await receiveAll(t, 2);
    const two = await invoke(t, handler, both);

    // Assess 2
    assert.equal(both.length, 2);
    assert.deepEqual(both.map((m) => jobOf(m).deferrals).sort(), [0, 1], 'the original and the deferred copy');
    assert.deepEqual(two.response.batchItemFailures, []);
    assert.equal(await t.results.count(), 1);
    assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId);
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(model.calls.length, 2, 'one 429, one call for the two copies');
    // The other copy either found the key held (it waits for the holder: re-sent, it comes back) or, when the
    // holder was quicker, found its result (a duplicate at once): both without a call.
    const waited = sink.totals.total.KeyInProgress ?? 0;
    assert.equal(waited + (sink.totals.total.DuplicateSuppressed ?? 0), 1, `the copy beside the holder: ${JSON.stringify(sink.totals.total)}`);

    // Act 3: a copy that waited comes back
    if (waited === 1) {
      waits.letDelaysPass(clock);
      const three = await invoke(t, handler, await receive(t, { max: 1 }));
      assert.deepEqual(three.response.batchItemFailures, []);
    }
    sqs.destroy();

    // Assess 3: a duplicate, without a call
    assert.equal(model.calls.length, 2);
    assert.equal(sink.totals.total.DuplicateSuppressed, 1);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
  });

  it('SQS unavailable for the visibility backoff of a real failure: still reported failed, comes back after its current visibility timeout, then commits', async () => {
    // Prepare: the policy would hide it ~10 s; ChangeMessageVisibility fails, so the receive's 2 s stands
    const t = await newLane({ backoff: { failureBaseSeconds: 20, failureCapSeconds: 20 } });
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#cmv-down` }]);
    const model = scriptedModel((call) => (call.callNo === 1 ? new ProviderTransportError('model call timed out', 'scripted', true) : undefined));
    const sqs = freshSqsClient(t);
    const visibility = failSqsCommands(sqs, { commands: ['ChangeMessageVisibilityCommand'], times: 1 });
    const waits = skipDelays(sqs);
    const { handler, sink } = testConsumer(t, model, { sqs, random: () => 0.5 });
    const first = await receive(t, { max: 1, visibilityTimeout: 2 });

    // Act: the failure; then the receive's visibility timeout runs out
    const one = await invoke(t, handler, first);
    const hiddenFor = await visibilityLeft(t, first[0]!);
    await expireVisibility(t, first);
    const back = await receive(t, { max: 1 });
    const two = await invoke(t, handler, back);
    sqs.destroy();

    // Assess
    assert.deepEqual(one.response.batchItemFailures, [{ itemIdentifier: first[0]!.MessageId! }]);
    assert.equal(visibility.failed.ChangeMessageVisibilityCommand, 1);
    const warning = sink.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.message === 'could not set the visibility backoff');
    assert.ok(warning, 'the lost backoff is logged');
    assert.deepEqual(waits.visibilities, [], 'no visibility change reached SQS');
    assert.ok(hiddenFor <= 2_000, `hidden for ${hiddenFor} ms more: the receive's 2 s stand, not the policy's ~10 s`);
    assert.equal(back[0]?.MessageId, first[0]!.MessageId);
    assert.deepEqual(two.response.batchItemFailures, []);
    assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId);
    assert.equal(sink.totals.total.Failed, 1);
    assert.equal(sink.totals.total.Completed, 1);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });
});

describe('faults: one message, two consumers at once', () => {
  it('the visibility timeout runs out while the first consumer waits on the model: the same message (same id) goes to a second, which finds the key held: one model call, one commit, the copy a duplicate', async () => {
    // Prepare: the first model call answers only once the second consumer is done, longer than the message's 1 s visibility
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#same-message` }]);
    const scripted = scriptedModel();
    let slowCalls = 0;
    let calling!: () => void;
    const slowCallStarted = new Promise<void>((resolve) => {
      calling = resolve;
    });
    let answer!: () => void;
    const answerSlowCall = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const model = withOverrides(scripted, {
      extract: async (request: ExtractionRequest) => {
        if (slowCalls++ === 0) {
          calling();
          await answerSlowCall;
        }
        return scripted.extract(request);
      },
    });
    const sink = new CapturingSink();
    const clock = virtualClock();
    const sqs = freshSqsClient(t);
    const waits = skipDelays(sqs);
    const a = testConsumer(t, model, { sink, sqs, now: clock.now, sleep: clock.sleep });
    const b = testConsumer(t, model, { sink, sqs, now: clock.now, sleep: clock.sleep });
    const [message] = await receive(t, { max: 1, visibilityTimeout: 1 });

    // Act: A starts and waits on the model; the message's visibility runs out, it reappears and B takes it while A still waits
    const first = invoke(t, a.handler, [message!], { ack: false });
    await slowCallStarted;
    await expireVisibility(t, [message!]);
    const [again] = await receive(t, { max: 1, visibilityTimeout: 30 });
    const second = await invoke(t, b.handler, [again!]);
    answer();
    const firstDone = await first;

    // Assess
    assert.equal(again?.MessageId, message!.MessageId, 'the same SQS message');
    assert.notEqual(again?.ReceiptHandle, message!.ReceiptHandle);
    assert.equal(again?.Attributes?.ApproximateReceiveCount, '2');
    assert.deepEqual(second.response.batchItemFailures, []);
    assert.deepEqual(firstDone.response.batchItemFailures, []);
    assert.equal(scripted.calls.length, 1, 'B made no call: A held the key');
    assert.equal(sink.totals.total.KeyInProgress, 1);
    assert.equal(waits.delays.length, 1, "B re-sent the job for when A's hold ends");
    assert.equal(await t.results.count(), 1);
    assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId);
    assert.equal(sink.totals.total.Completed, 1);

    // Act 2: B's copy comes back
    waits.letDelaysPass(clock);
    const copy = await receive(t, { max: 1 });
    const third = await invoke(t, b.handler, copy);
    sqs.destroy();

    // Assess 2: a duplicate of A's result, without a call
    assert.deepEqual(third.response.batchItemFailures, []);
    assert.equal(scripted.calls.length, 1);
    assert.equal(sink.totals.total.DuplicateSuppressed, 1);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });
});
