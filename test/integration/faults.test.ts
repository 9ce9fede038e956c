/**
 * Faults on the local stack: the consumer dies between two steps, DynamoDB or SQS is unavailable
 * for a call, one message reaches two consumers at once, the provider fails or answers garbage, a
 * key runs out of credit. After each, every job ends in exactly one known state: nothing lost,
 * nothing committed twice.
 *
 * Already covered elsewhere (not repeated here):
 * - the same message delivered twice in sequence; two copies of one job on two consumers at once
 *   (consumer.test.ts "consumer: commit once");
 * - a transport timeout → visibility backoff → DLQ at maxReceiveCount with the reason in the ledger
 *   (consumer.test.ts "consumer: real failures");
 * - garbage once then repaired; schema-invalid twice → needs_review (consumer.test.ts "consumer: validation");
 * - a failed deferral re-send (SQS unavailable before the send): the original comes back, then is
 *   deferred and committed (consumer-throttle.test.ts);
 * - a billing 429 on the eval harness: deferred by the throttle cap with BillingAlarm (consumer-throttle.test.ts).
 *
 * A crash on the eval harness: the wrapped dependency never returns at the crash point (the record's
 * work stops there) and the invocation rejects (test/helpers/fault-injection.ts), so nothing is
 * acknowledged and SQS brings the whole batch back after its visibility timeout — as when a Lambda
 * execution environment dies. On the full stack a crash is a call that never returns, ended by the
 * poller's function timeout (lib/local/drivers/soak-faults.ts, exercised by faults-soak.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message } from '@aws-sdk/client-sqs';
import { resolveLanes, type LaneConfig, type LaneOverride } from '../../lib/config/lanes.js';
import { createConsumerHandler } from '../../lib/consumer/handler.js';
import { operatorResume } from '../../lib/local/drivers/soak.js';
import { localKeySecret, startLocalStack, type LocalStack, type LocalStackOptions } from '../../lib/local/stack.js';
import { ProviderTransportError, type ExtractionRequest } from '../../lib/providers/model.js';
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
  waitUntil,
  type TestLane,
  trackedLanes,
} from '../helpers/consumer-harness.js';
import { testEndpoints, uniqueLaneResources } from '../helpers/endpoints.js';
import { Crash, crashingHandler, failSqsCommands, SimulatedCrashError, unavailableCommits, withDepFaults, withOverrides } from '../helpers/fault-injection.js';

const newLane = trackedLanes();

/** Receives until `count` messages are in hand (or `timeoutMs` passes). */
async function receiveAll(t: TestLane, count: number, timeoutMs = 8000): Promise<Message[]> {
  const got: Message[] = [];
  const until = Date.now() + timeoutMs;
  while (got.length < count && Date.now() < until) got.push(...(await receive(t, { max: count - got.length, waitSeconds: 1 })));
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
    const dying = testConsumer(t, model, { sink });
    const handler = crashingHandler(createConsumerHandler(crash.deps(dying.deps)), crash);
    const first = await receive(t, { max: 1, visibilityTimeout: 1 });

    // Act 1
    await assert.rejects(invoke(t, handler, first), SimulatedCrashError);

    // Assess 1: the model answered, nothing was committed, the message is still on the queue
    assert.deepEqual(crash.at, ['afterModelCall']);
    assert.equal(model.calls.length, 1);
    assert.equal(await t.results.count(), 0);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 1, delayed: 0 });

    // Act 2: SQS brings it back to a new execution environment
    const back = await receive(t, { max: 1, waitSeconds: 3 });
    const fresh = testConsumer(t, model, { sink });
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

    // Act 2
    const back = await receive(t, { max: 1, waitSeconds: 3 });
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
    const consumer = testConsumer(t, model);
    const handler = createConsumerHandler(withDepFaults(consumer.deps, faults));
    const first = await receive(t, { max: 3, visibilityTimeout: 1 });

    // Act 1
    const one = await invoke(t, handler, first);

    // Assess 1: two reported failed (not acknowledged), one committed
    assert.equal(one.failedIds.size, 2);
    assert.equal(await t.results.count(), 1);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 2, delayed: 0 });

    // Act 2: they come back after their visibility timeout; DynamoDB is back
    const back = await receiveAll(t, 2);
    const two = await invoke(t, handler, back);

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

  it('SQS took the deferral re-send but its answer was lost: the original comes back beside the copy; one commit, one duplicate suppressed', async () => {
    // Prepare: a 429 "retry in 1 s" on the first call; the re-send reaches SQS and then throws
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#lost-answer` }]);
    const model = scriptedModel((call) => (call.callNo === 1 ? throttle({ kind: 'rate_limit', retryAfterMs: 1000 }) : undefined));
    const sqs = freshSqsClient(t);
    const sends = failSqsCommands(sqs, { commands: ['SendMessageCommand'], times: 1, when: 'after' });
    const { handler, sink } = testConsumer(t, model, { sqs });
    const first = await receive(t, { max: 1, visibilityTimeout: 2 });

    // Act 1
    const one = await invoke(t, handler, first);

    // Assess 1: the record is not acknowledged (the consumer cannot know the copy exists), yet the copy exists
    assert.deepEqual(one.response.batchItemFailures, [{ itemIdentifier: first[0]!.MessageId! }]);
    assert.equal(sends.failed.SendMessageCommand, 1);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 1, delayed: 1 });

    // Act 2: both arrive (the copy after its delay, the original after its visibility timeout), in one batch
    const both = await receiveAll(t, 2);
    const two = await invoke(t, handler, both);
    sqs.destroy();

    // Assess 2
    assert.equal(both.length, 2);
    assert.deepEqual(both.map((m) => jobOf(m).deferrals).sort(), [0, 1], 'the original and the deferred copy');
    assert.deepEqual(two.response.batchItemFailures, []);
    assert.equal(await t.results.count(), 1);
    assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId);
    assert.equal(sink.totals.total.Completed, 1);
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
    const { handler, sink } = testConsumer(t, model, { sqs, random: () => 0.5 });
    const first = await receive(t, { max: 1, visibilityTimeout: 2 });

    // Act
    const failedAt = Date.now();
    const one = await invoke(t, handler, first);
    const back = await receive(t, { max: 1, waitSeconds: 5 });
    const backAfterMs = Date.now() - failedAt;
    const two = await invoke(t, handler, back);
    sqs.destroy();

    // Assess
    assert.deepEqual(one.response.batchItemFailures, [{ itemIdentifier: first[0]!.MessageId! }]);
    assert.equal(visibility.failed.ChangeMessageVisibilityCommand, 1);
    const warning = sink.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.message === 'could not set the visibility backoff');
    assert.ok(warning, 'the lost backoff is logged');
    assert.equal(back[0]?.MessageId, first[0]!.MessageId);
    assert.ok(backAfterMs < 4500, `back after ${backAfterMs} ms, not the policy's ~10 s`);
    assert.deepEqual(two.response.batchItemFailures, []);
    assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId);
    assert.equal(sink.totals.total.Failed, 1);
    assert.equal(sink.totals.total.Completed, 1);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });
});

describe('faults: one message, two consumers at once', () => {
  it('the visibility timeout runs out while the first consumer waits on the model: the same message (same id) goes to a second; one commit, one duplicate', async () => {
    // Prepare: the first model call takes 2 s, longer than the message's 1 s visibility
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#same-message` }]);
    const scripted = scriptedModel();
    let slowCalls = 0;
    const model = withOverrides(scripted, {
      extract: async (request: ExtractionRequest) => {
        if (slowCalls++ === 0) await sleep(2000);
        return scripted.extract(request);
      },
    });
    const sink = new CapturingSink();
    const a = testConsumer(t, model, { sink });
    const b = testConsumer(t, model, { sink });
    const [message] = await receive(t, { max: 1, visibilityTimeout: 1 });

    // Act: A starts; the message reappears and B takes it while A still waits
    const first = invoke(t, a.handler, [message!], { ack: false });
    const [again] = await receive(t, { max: 1, waitSeconds: 3, visibilityTimeout: 30 });
    const second = await invoke(t, b.handler, [again!]);
    const firstDone = await first;

    // Assess
    assert.equal(again?.MessageId, message!.MessageId, 'the same SQS message');
    assert.notEqual(again?.ReceiptHandle, message!.ReceiptHandle);
    assert.equal(again?.Attributes?.ApproximateReceiveCount, '2');
    assert.deepEqual(second.response.batchItemFailures, []);
    assert.deepEqual(firstDone.response.batchItemFailures, []);
    assert.equal(scripted.calls.length, 2, 'both asked the model');
    assert.equal(await t.results.count(), 1);
    assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId);
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(sink.totals.total.DuplicateSuppressed, 1, 'the slower one hit the conditional write');
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });
});

// ---------------------------------------------------------------------------------------------
// The full local stack: poller, real consumer, fake provider over HTTP

function stackLane(override: LaneOverride = {}): LaneConfig {
  return resolveLanes({
    us: {
      ...override,
      resources: uniqueLaneResources(),
      queue: { visibilityTimeoutSeconds: 12, receiveWaitTimeSeconds: 1, ...override.queue },
      consumer: { timeoutSeconds: 2, maximumConcurrency: 2, ...override.consumer },
      backoff: { throttleBaseSeconds: 1, throttleCapSeconds: 1, failureBaseSeconds: 1, failureCapSeconds: 1, ...override.backoff },
      provider: { timeoutMs: 1000, ...override.provider },
    },
  }).us!;
}

async function withStack(
  lane: LaneConfig,
  options: Omit<LocalStackOptions, 'lanes' | 'endpoints'>,
  body: (stack: LocalStack, t: TestLane) => Promise<void>,
): Promise<void> {
  const stack = await startLocalStack({ lanes: { us: lane }, endpoints: testEndpoints(), ...options });
  try {
    await body(stack, { ...stack.lanes.us!, destroy: () => undefined });
  } finally {
    await stack.stop();
  }
}

describe('faults on the full local stack', () => {
  it('provider 5xx and timeouts: every receive fails with a visibility backoff, and the DLQ takes each job at maxReceiveCount with the reason in the ledger', async () => {
    // Prepare: every call is a 500/503 or hangs past the 400 ms call timeout; maxReceiveCount 2
    const lane = stackLane({ queue: { maxReceiveCount: 2 }, provider: { timeoutMs: 400 } });
    await withStack(lane, { provider: { faults: { serverError: 0.5, timeout: 0.5 }, seed: 11 } }, async (stack, t) => {
      const docs = englishDocuments(4);
      const items = await submitTo(
        t,
        docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#5xx` })),
      );

      // Act
      await waitUntil(
        '4 jobs in the DLQ',
        async () => {
          const dlq = await queueCounts(t, 'dlq');
          return dlq.visible + dlq.notVisible + dlq.delayed >= 4;
        },
        40_000,
        250,
      );
      await stack.lanes.us!.poller?.stop();

      // Assess
      const stats = stack.provider.stats();
      assert.ok(stats.faults.serverError > 0 && stats.faults.timeout > 0, `both faults drawn: ${JSON.stringify(stats.faults)}`);
      const m = stack.telemetry.totals.total;
      assert.equal(m.Failed, 8, 'two failed receives per job');
      assert.equal(m.Deferred, undefined, 'a 5xx or a timeout is never a throttle');
      assert.equal(m.Completed, undefined);
      assert.equal(await t.results.count(), 0);
      for (const item of items) {
        const ledger = await t.ledger.entriesFor(item.jobId);
        assert.deepEqual(
          ledger.map((e) => [e.kind, e.receiveCount]),
          [['dead_letter_pending', 2]],
          `ledger of ${item.jobId}`,
        );
        assert.ok(['overloaded', 'provider_error', 'transport_failure'].includes(ledger[0]!.reason), ledger[0]!.reason);
        assert.match(ledger[0]!.details ?? '', /HTTP 50\d|timed out/);
      }
      const dead = await receive(t, { max: 10, queueUrl: t.dlqUrl, waitSeconds: 1 });
      assert.deepEqual(new Set(dead.map((d) => jobOf(d).jobId)), new Set(items.map((i) => i.jobId)));
      assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    });
  });

  it('garbage and schema-invalid answers from the provider: each job is ledgered twice, repaired once, and ends needs_review; none retried or dead-lettered', async () => {
    // Prepare: every answer is either not JSON or breaks the schema
    const lane = stackLane();
    await withStack(lane, { provider: { faults: { garbageJson: 0.5, schemaInvalid: 0.5 }, seed: 5 } }, async (stack, t) => {
      const docs = englishDocuments(4);
      const items = await submitTo(
        t,
        docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#garbage-stack` })),
      );

      // Act
      await waitUntil('4 jobs need review', async () => (stack.telemetry.totals.total.NeedsReview ?? 0) >= 4, 30_000, 200);
      await sleep(300);
      await stack.lanes.us!.poller?.stop();

      // Assess
      const stats = stack.provider.stats();
      assert.ok(stats.faults.garbageJson > 0 && stats.faults.schemaInvalid > 0, `both faults drawn: ${JSON.stringify(stats.faults)}`);
      assert.equal(stats.requests, 8, 'one call and one repair call per job');
      for (const item of items) {
        const ledger = await t.ledger.entriesFor(item.jobId);
        assert.deepEqual(
          ledger.map((e) => e.kind),
          ['validation_failed', 'validation_failed', 'needs_review'],
          `ledger of ${item.jobId}`,
        );
        for (const entry of ledger.slice(0, 2)) {
          assert.ok(['not_json', 'schema_invalid', 'domain_invalid'].includes(entry.parseStatus ?? ''), entry.parseStatus);
          assert.equal(entry.schemaVersion, 'invoice@1');
          assert.equal(entry.promptVersion, 'invoice-extract@1');
        }
      }
      const m = stack.telemetry.totals.total;
      assert.equal(m.NeedsReview, 4);
      assert.equal(m.ValidationFailed, 8);
      assert.equal(m.Failed, undefined);
      assert.equal(await t.results.count(), 0);
      assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
      assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    });
  });

  it('an out-of-credit key: jobs wait (deferred with a billing alarm, the lane paused when admission is on), none dead-lettered; once credit is back and the lane resumed, they commit', async () => {
    // Prepare: the lane's only key has no credit; maxReceiveCount 2 and a 1 s failure backoff, so a
    // failure path would dead-letter within a few seconds
    const lane = stackLane({ queue: { maxReceiveCount: 2 } });
    const secret = localKeySecret('us', lane.provider.keys[0]!.id);
    await withStack(lane, { provider: { outOfCreditKeys: [secret], seed: 3 } }, async (stack, t) => {
      const docs = englishDocuments(3);
      const items = await submitTo(
        t,
        docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#credit` })),
      );

      // Act 1: every job is told "not now"; then they wait longer than a failure path would take
      await waitUntil(
        'every job deferred',
        async () => {
          const ledgers = await Promise.all(items.map((i) => t.ledger.entriesFor(i.jobId)));
          return ledgers.every((entries) => entries.some((e) => e.kind === 'deferred'));
        },
        20_000,
        200,
      );
      await sleep(4000);
      const during = { ...stack.telemetry.totals.total };
      const callsDuring = stack.provider.stats().requests;
      const dlqDuring = await queueCounts(t, 'dlq');
      const queueDuring = await queueCounts(t);
      const committedDuring = await t.results.count();

      // Act 2: the bill is paid; an operator resumes the lane (ratelane resume: clears the billing cooldown)
      stack.provider.setKeyOutOfCredit(secret, false);
      await operatorResume(stack, 'us');
      await waitUntil('3 commits', async () => (await t.results.count()) >= 3, 30_000, 200).catch(async (error: unknown) => {
        const ledgers = await Promise.all(items.map((i) => t.ledger.entriesFor(i.jobId)));
        const trail = ledgers.map((entries) => entries.map((e) => `${e.kind}:${e.reason} (${e.details})`).join(' | ')).join('\n');
        throw new Error(`${(error as Error).message}; ledgers:\n${trail}`);
      });
      await sleep(300);
      await stack.lanes.us!.poller?.stop();

      // Assess: while out of credit, the jobs waited in the queue — no commit, no failure, nothing dead-lettered
      assert.equal(committedDuring, 0);
      assert.ok((during.BillingAlarm ?? 0) >= 1, 'a person was alarmed');
      assert.ok((stack.provider.stats().rateLimited.insufficient_quota ?? 0) >= 1);
      assert.equal(during.Failed, undefined, 'out of credit never takes the failure path');
      assert.deepEqual(dlqDuring, { visible: 0, notVisible: 0, delayed: 0 });
      assert.equal(queueDuring.visible + queueDuring.notVisible + queueDuring.delayed, 3, 'all three wait in the queue');
      if (stack.lanes.us!.admission) {
        // With admission, the key is cooled and the lane paused after the first billing 429: no call is spent to learn it again.
        assert.ok((during.LanePaused ?? 0) >= 1, `the lane paused: ${JSON.stringify(during)}`);
        assert.ok(callsDuring <= 3, `${callsDuring} calls while out of credit`);
      }
      // ...and committed once credit was back
      const results = await t.results.scanAll();
      assert.deepEqual(new Set(results.map((r) => r.jobId)), new Set(items.map((i) => i.jobId)));
      for (const r of results) {
        assert.equal(r.attempt, 0, 'no retry spent');
        assert.ok(r.deferrals >= 1);
      }
      for (const item of items) {
        const kinds = (await t.ledger.entriesFor(item.jobId)).map((e) => e.kind);
        assert.ok(!kinds.includes('dead_letter_pending'), kinds.join(', '));
      }
      assert.equal(stack.telemetry.totals.total.Failed, undefined);
      assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
      assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    });
  });
});
