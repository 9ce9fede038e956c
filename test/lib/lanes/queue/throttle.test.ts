/**
 * The consumer under throttling, driven by the eval harness (test/helpers/consumer-harness.ts): real
 * queues, stores and handler on the run's fauxqs and DynamoDB Local, a scripted model adapter.
 * A throttle is "not now": the job is re-sent for later with its retry budget intact, the record is
 * acknowledged, and the handler never sleeps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SendMessageCommandInput } from '@aws-sdk/client-sqs';
import { sha256Hex, type Job } from '../../../../lib/contract/job.js';
import {
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
  trackedLanes,
} from '../../../helpers/consumer-harness.js';
import { expireVisibility, inspectQueue, skipDelays, visibilityLeft } from '../../../helpers/queue-time.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';

const newLane = trackedLanes();

describe('consumer: throttles are rescheduled, never failed', () => {
  it('eval harness: a 429 on one job of a batch re-sends it for later, commits the others, and returns at once', async () => {
    // Prepare: five ready jobs; the model answers 429 "retry in 30 s" for the third one (far longer than a slow machine's invocation)
    const t = await newLane();
    const docs = englishDocuments(5);
    const submitted = await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#${t.lane.resources.queueName}` })),
    );
    const throttledSha = sha256Hex(docs[2]!.text);
    const retryAfterMs = 30_000;
    const model = scriptedModel((call) => (call.sha === throttledSha ? throttle({ kind: 'rate_limit', retryAfterMs }) : undefined));
    const { handler, sink } = testConsumer(t, model);
    const messages = await receive(t, { max: 5 });
    assert.equal(messages.length, 5);
    const original = messages.find((m) => jobOf(m).input.contentSha256 === throttledSha)!;
    const originalJob = jobOf(original);

    // Act
    const invokedAt = Date.now();
    const { response, elapsedMs } = await invoke(t, handler, messages);

    // Assess: the handler did not wait for the throttle
    assert.ok(elapsedMs < retryAfterMs / 3, `handler took ${elapsedMs} ms for a ${retryAfterMs} ms throttle`);
    // every record acknowledged, the throttled one included
    assert.deepEqual(response.batchItemFailures, []);
    // the other four committed; none for the throttled job
    for (const [i, item] of submitted.entries()) {
      const result = await t.results.get(item.idempotencyKey);
      if (i === 2) assert.equal(result, undefined, 'no result for the throttled job');
      else assert.equal(result?.jobId, item.jobId, `job ${i} committed`);
    }
    assert.equal(await t.results.count(), 4);
    // it waits in the queue as a delayed message, not receivable now
    const counts = await queueCounts(t);
    assert.deepEqual(counts, { visible: 0, notVisible: 0, delayed: 1 });
    assert.deepEqual(await receive(t), [], 'not receivable right away');
    // ...until the delay is over, as a new message with the updated job (as fauxqs holds it: the delay is not waited out)
    const [again] = (await inspectQueue(t.queueUrl)).delayed;
    assert.ok(again, 'the deferred job waits in the queue');
    assert.equal(again.delayUntil! - again.sentTimestamp, retryAfterMs, 'delayed by the stated wait');
    assert.notEqual(again.messageId, original.MessageId);
    assert.equal(again.approximateReceiveCount, 0, 'never received: its first receive counts 1');
    const deferred = JSON.parse(again.body) as Job;
    assert.equal(deferred.jobId, originalJob.jobId);
    assert.equal(deferred.deferrals, originalJob.deferrals + 1);
    assert.equal(deferred.attempt, originalJob.attempt);
    const eligibleAt = Date.parse(deferred.eligibleAt);
    assert.ok(eligibleAt >= invokedAt + retryAfterMs, `eligibleAt ${deferred.eligibleAt} is at least the stated wait after the call`);
    assert.ok(eligibleAt <= invokedAt + retryAfterMs + retryAfterMs / 3, `eligibleAt ${deferred.eligibleAt} is not far beyond it`);
    assert.equal(again.messageAttributes.deferrals?.StringValue, '1');
    // metrics and ledger
    assert.equal(sink.totals.total.Completed, 4);
    assert.equal(sink.totals.total.RateLimited, 1);
    assert.equal(sink.totals.total.Deferred, 1);
    assert.equal(sink.totals.total.ModelCalls, 5);
    const ledger = await t.ledger.entriesFor(originalJob.jobId);
    assert.deepEqual(
      ledger.map((e) => [e.kind, e.reason, e.attempt, e.deferrals]),
      [['deferred', 'rate_limit', 0, 1]],
    );
    assert.equal(sink.unstructuredLines, 0);
    // the deferral's log line carries the scheduling facts
    const line = sink.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.message === 'deferred');
    assert.ok(line, 'a "deferred" log line');
    assert.equal(line.lane, 'us');
    assert.equal(line.jobId, originalJob.jobId);
    assert.equal(line.attempt, 0);
    assert.equal(line.deferrals, 1);
    assert.equal(line.delaySeconds, 30);
    assert.equal(line.outcome, 'deferred');
    assert.equal(typeof line.queueAgeMs, 'number');
  });

  it('a daily-quota 429 moves eligibility to the reset, acknowledges the record and takes nothing towards the DLQ', async () => {
    // Prepare: the quota resets in 3 hours; the deps' SQS client records what it sends
    const t = await newLane({ queue: { maxReceiveCount: 2 } });
    const [doc] = englishDocuments(1);
    await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#quota` }]);
    const resetAt = new Date(Date.now() + 3 * 3600_000);
    const model = scriptedModel(() => throttle({ kind: 'quota_exhausted', resetAt }));
    const sqs = freshSqsClient(t);
    const sends: SendMessageCommandInput[] = [];
    sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'SendMessageCommand') sends.push(args.input as SendMessageCommandInput);
        return next(args);
      },
      { step: 'initialize', name: 'recordSends' },
    );
    const { handler, sink } = testConsumer(t, model, { sqs });
    const messages = await receive(t, { max: 1 });
    const original = jobOf(messages[0]!);

    // Act
    const { response } = await invoke(t, handler, messages);
    sqs.destroy();

    // Assess: acknowledged, re-sent once with the longest delay SQS allows and eligibility at the reset
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(sends.length, 1);
    const sent = sends[0]!;
    assert.equal(sent.QueueUrl, t.queueUrl, 'back onto the lane queue, not the DLQ');
    assert.equal(sent.DelaySeconds, 900);
    const next = JSON.parse(sent.MessageBody!) as Job;
    const eligibleAt = Date.parse(next.eligibleAt);
    assert.ok(eligibleAt >= resetAt.getTime() && eligibleAt <= resetAt.getTime() + 2000, `eligibleAt ${next.eligibleAt} ≈ reset ${resetAt.toISOString()}`);
    assert.equal(next.deferrals, original.deferrals + 1);
    assert.equal(next.attempt, original.attempt);
    // the message is hidden (delayed, new: the original was deleted, so no receive counts towards the DLQ)
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 1 });
    assert.deepEqual(await receive(t), []);
    assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
    assert.equal(model.calls.length, 1);
    assert.equal(sink.totals.total.RateLimited, 1);
    assert.equal(sink.totals.total.Deferred, 1);
    assert.equal(sink.totals.total.Failed, undefined);
    const ledger = await t.ledger.entriesFor(original.jobId);
    assert.deepEqual(
      ledger.map((e) => [e.kind, e.reason]),
      [['deferred', 'quota_exhausted']],
    );
  });

  it('a billing 429 (out of credit) waits the throttle cap, alarms, and never fails the record', async () => {
    // Prepare
    const t = await newLane({ backoff: { throttleCapSeconds: 120 } });
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#billing` }]);
    const model = scriptedModel(() => throttle({ kind: 'billing' }));
    const { handler, sink } = testConsumer(t, model);
    const messages = await receive(t, { max: 1 });

    // Act
    const invokedAt = Date.now();
    const { response } = await invoke(t, handler, messages);

    // Assess
    assert.deepEqual(response.batchItemFailures, []);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 1 });
    assert.equal(sink.totals.total.BillingAlarm, 1);
    assert.equal(sink.totals.total.Deferred, 1);
    const [entry] = await t.ledger.entriesFor(item!.jobId);
    assert.equal(entry?.kind, 'deferred');
    assert.equal(entry?.reason, 'billing');
    assert.equal(entry?.deferrals, 1);
    assert.match(entry?.details ?? '', /delay 120 s/);
    assert.ok(Date.now() - invokedAt < 120_000 / 3, 'the handler did not wait out the 120 s');
  });

  it('50 consecutive 429s never dead-letter a job; it commits once the provider answers', async () => {
    // Prepare: maxReceiveCount 2; every call is a 429 without a stated wait and jitter 0, so each
    // re-send is due at once (the loop runs fast; the budget logic is what is tested)
    const t = await newLane({ queue: { maxReceiveCount: 2 }, backoff: { throttleBaseSeconds: 1, throttleCapSeconds: 1 } });
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#fifty` }]);
    let throttling = true;
    const model = scriptedModel(() => (throttling ? throttle({ kind: 'rate_limit' }) : undefined));
    const { handler, sink } = testConsumer(t, model, { random: () => 0 });

    // Act
    for (let round = 0; round < 50; round++) {
      const messages = await receive(t, { max: 10, waitSeconds: 2 });
      assert.equal(messages.length, 1, `round ${round}: one message`);
      const job = jobOf(messages[0]!);
      assert.equal(job.deferrals, round, `round ${round}: deferrals`);
      assert.equal(job.attempt, 0, `round ${round}: attempt`);
      assert.equal(messages[0]!.Attributes?.ApproximateReceiveCount, '1', `round ${round}: a new message each time`);
      const { response } = await invoke(t, handler, messages);
      assert.deepEqual(response.batchItemFailures, [], `round ${round}: acknowledged`);
    }
    const afterThrottles = await receive(t, { max: 10, waitSeconds: 2 });
    const dlqAfterThrottles = await queueCounts(t, 'dlq');
    throttling = false;
    const { response } = await invoke(t, handler, afterThrottles);

    // Assess
    assert.deepEqual(dlqAfterThrottles, { visible: 0, notVisible: 0, delayed: 0 }, 'nothing dead-lettered');
    assert.equal(afterThrottles.length, 1);
    const job = jobOf(afterThrottles[0]!);
    assert.equal(job.deferrals, 50);
    assert.equal(job.attempt, 0);
    assert.deepEqual(response.batchItemFailures, []);
    const result = await t.results.get(item!.idempotencyKey);
    assert.equal(result?.jobId, item!.jobId);
    assert.equal(result?.deferrals, 50);
    assert.equal(result?.attempt, 0);
    assert.equal(model.calls.length, 51);
    assert.equal(sink.totals.total.RateLimited, 50);
    assert.equal(sink.totals.total.Deferred, 50);
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(sink.totals.total.Failed, undefined);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
  });

  it('a job whose deadline passes while it waits ends rejected with reason deadline, without another model call', async () => {
    // Prepare: a deadline 2.5 s out; the first call is a 429 "retry in 1 s"
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const deadline = new Date(Date.now() + 2500);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#deadline`, deadline }]);
    const model = scriptedModel(() => throttle({ kind: 'rate_limit', retryAfterMs: 1000 }));
    // (the consumer's clock is virtual; the re-send's delay is recorded and skipped)
    const clock = virtualClock();
    const sqs = freshSqsClient(t);
    const waits = skipDelays(sqs);
    const { handler, sink } = testConsumer(t, model, { sqs, now: clock.now, sleep: clock.sleep });
    const first = await receive(t, { max: 1 });
    const firstResponse = await invoke(t, handler, first);
    assert.deepEqual(firstResponse.response.batchItemFailures, []);
    assert.equal(model.calls.length, 1);
    assert.deepEqual(
      waits.delays.map((d) => d.delaySeconds),
      [1],
      're-sent for the stated 1 s',
    );

    // Act: the re-sent job is picked up only after the deadline
    clock.advance(Math.max(0, deadline.getTime() - clock.nowMs() + 100));
    const second = await receive(t, { max: 1 });
    sqs.destroy();
    assert.equal(second.length, 1);
    const { response } = await invoke(t, handler, second);

    // Assess
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(model.calls.length, 1, 'no model call after the deadline');
    assert.equal(await t.results.get(item!.idempotencyKey), undefined);
    const ledger = await t.ledger.entriesFor(item!.jobId);
    assert.deepEqual(
      ledger.map((e) => [e.kind, e.reason]),
      [
        ['deferred', 'rate_limit'],
        ['rejected', 'deadline'],
      ],
    );
    assert.equal(sink.totals.total.Rejected, 1);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });

  it('a 429 whose wait ends after the deadline rejects the job for deadline at once', async () => {
    // Prepare: deadline in 60 s, provider says retry in 2 minutes
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#late`, deadline: new Date(Date.now() + 60_000) }]);
    const model = scriptedModel(() => throttle({ kind: 'rate_limit', retryAfterMs: 120_000 }));
    const { handler } = testConsumer(t, model);

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 1 }));

    // Assess: terminal now, nothing re-sent
    assert.deepEqual(response.batchItemFailures, []);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    const ledger = await t.ledger.entriesFor(item!.jobId);
    assert.deepEqual(
      ledger.map((e) => [e.kind, e.reason]),
      [['rejected', 'deadline']],
    );
  });

  it('a failed re-send leaves the original to come back; then it is deferred and committed; nothing lost', async () => {
    // Prepare: the deps' SQS client rejects SendMessage while `sendsFail` is set
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#resend` }]);
    let sendsFail = true;
    const sqs = freshSqsClient(t);
    sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if (sendsFail && context.commandName === 'SendMessageCommand') {
          throw Object.assign(new Error('injected: SQS unavailable'), { name: 'ServiceUnavailable', $fault: 'server' });
        }
        return next(args);
      },
      { step: 'initialize', name: 'failSends' },
    );
    const model = scriptedModel((call) => (call.callNo <= 2 ? throttle({ kind: 'rate_limit', retryAfterMs: 1000 }) : undefined));
    // (the re-send's delay is recorded and passes at once, on the consumer's virtual clock)
    const waits = skipDelays(sqs);
    const clock = virtualClock();
    const { handler, sink } = testConsumer(t, model, { sqs, now: clock.now, sleep: clock.sleep });
    const first = await receive(t, { max: 1, visibilityTimeout: 2 });

    // Act 1: the throttle's re-send fails
    const one = await invoke(t, handler, first);
    const hiddenFor = await visibilityLeft(t, first[0]!);

    // Assess 1: reported failed, nothing committed or re-sent, the original comes back after its visibility timeout
    assert.deepEqual(one.response.batchItemFailures, [{ itemIdentifier: first[0]!.MessageId! }]);
    assert.equal(await t.results.get(item!.idempotencyKey), undefined);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 1, delayed: 0 });
    assert.deepEqual(waits.visibilities, [], 'its visibility left as the receive set it');
    assert.ok(hiddenFor > 500, `hidden ${hiddenFor} ms more: the rest of the receive's 2 s`);
    assert.deepEqual(await receive(t), [], 'hidden until its visibility timeout');
    await expireVisibility(t, first);
    const back = await receive(t, { max: 1 });
    assert.equal(back.length, 1, 'the original came back');
    assert.equal(back[0]!.MessageId, first[0]!.MessageId);
    assert.equal(back[0]!.Attributes?.ApproximateReceiveCount, '2');
    assert.deepEqual(jobOf(back[0]!), jobOf(first[0]!), 'unchanged');

    // Act 2: sends work again; the second 429 is re-sent
    sendsFail = false;
    const two = await invoke(t, handler, back);
    waits.letDelaysPass(clock);
    const deferred = await receive(t, { max: 1 });
    const three = await invoke(t, handler, deferred);
    sqs.destroy();

    // Assess 2
    assert.deepEqual(two.response.batchItemFailures, []);
    assert.equal(deferred.length, 1);
    const job = jobOf(deferred[0]!);
    assert.equal(job.deferrals, 1, 'the failed re-send did not count as a deferral');
    // The failed delivery was a real failure of that message (receive count 2): the policy carries it in `attempt`.
    assert.equal(job.attempt, 1);
    assert.deepEqual(three.response.batchItemFailures, []);
    const result = await t.results.get(item!.idempotencyKey);
    assert.equal(result?.jobId, item!.jobId);
    assert.equal(await t.results.count(), 1);
    assert.equal(model.calls.length, 3);
    assert.equal(sink.totals.total.Completed, 1);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
  });
});
