/**
 * The consumer on the local stack: commit once, real failures and the DLQ, the region guard and bad
 * bodies, validation with one repair call, and no source text in logs or metrics. Most tests drive the
 * real handler through the eval harness (test/helpers/consumer-harness.ts); the last runs the whole
 * local stack (poller, consumer, fake provider at a tiny rate limit).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteMessageCommand, type SendMessageCommandInput } from '@aws-sdk/client-sqs';
import { loadCorpus } from '../../corpus/index.js';
import { resolveLanes } from '../../lib/config/lanes.js';
import { idempotencyKeyFor, sha256Hex, type Job } from '../../lib/contract/job.js';
import { documentKeyFor } from '../../lib/store/documents.js';
import { extractInvoice } from '../../lib/local/fake-provider/invoice-extractor.js';
import { startLocalStack } from '../../lib/local/stack.js';
import { ProviderTransportError } from '../../lib/providers/model.js';
import {
  CapturingSink,
  correctOutput,
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
  waitUntil,
  type TestLane,
  trackedLanes,
} from '../helpers/consumer-harness.js';
import { testEndpoints, uniqueLaneResources } from '../helpers/endpoints.js';

const newLane = trackedLanes();

/** The job with the idempotency key its source id, content hash and versions give. */
function withOwnKey(job: Job): Job {
  return {
    ...job,
    idempotencyKey: idempotencyKeyFor({
      sourceId: job.input.sourceId,
      contentSha256: job.input.contentSha256,
      promptVersion: job.promptVersion,
      schemaVersion: job.schemaVersion,
    }),
  };
}

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

describe('consumer: guards', () => {
  it('rejects a job of another region without calling the model, and a body that is not JSON under msg:<messageId>', async () => {
    // Prepare: an `eu` job put on the `us` queue, and a body that is not JSON
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#region` }]);
    const [submitted] = await receive(t, { max: 1 });
    await t.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: t.queueUrl, ReceiptHandle: submitted!.ReceiptHandle! }));
    const euJob: Job = { ...jobOf(submitted!), region: 'eu' };
    await sendRaw(t, JSON.stringify(euJob));
    const badId = await sendRaw(t, '{"jobId": "x", this is not json');
    const model = scriptedModel();
    const { handler, sink } = testConsumer(t, model);
    const messages = await receive(t, { max: 2, waitSeconds: 1 });
    assert.equal(messages.length, 2);

    // Act
    const { response } = await invoke(t, handler, messages);

    // Assess
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(model.calls.length, 0, 'the model was never called');
    assert.equal(await t.results.count(), 0);
    const regionLedger = await t.ledger.entriesFor(item!.jobId);
    assert.deepEqual(
      regionLedger.map((e) => [e.kind, e.reason, e.region]),
      [['rejected', 'region_mismatch', 'eu']],
    );
    const badLedger = await t.ledger.entriesFor(`msg:${badId}`);
    assert.deepEqual(
      badLedger.map((e) => [e.kind, e.reason]),
      [['rejected', 'invalid_body']],
    );
    assert.equal(sink.totals.total.RegionMismatch, 1);
    assert.equal(sink.totals.total.Rejected, 2);
    assert.equal(sink.totals.total.ModelCalls, undefined);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });
});

describe('consumer: eligibility, versions and inputs', () => {
  it('a job not yet eligible hops without a model call: 900 s at most, eligibleAt and counters unchanged; a near one comes back and commits', async () => {
    // Prepare: one job eligible in 2 hours, one in ~1.5 s; the deps' SQS client records its sends
    const t = await newLane();
    const docs = englishDocuments(2);
    const items = await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#hop` })),
    );
    const submitted = await receive(t, { max: 2 });
    assert.equal(submitted.length, 2);
    const [far, near] = items.map((item) => jobOf(submitted.find((m) => jobOf(m).jobId === item.jobId)!));
    for (const m of submitted) await t.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: t.queueUrl, ReceiptHandle: m.ReceiptHandle! }));
    const farJob: Job = { ...far!, eligibleAt: new Date(Date.now() + 2 * 3600_000).toISOString() };
    const nearJob: Job = { ...near!, eligibleAt: new Date(Date.now() + 1500).toISOString() };
    await sendRaw(t, JSON.stringify(farJob));
    await sendRaw(t, JSON.stringify(nearJob));
    const sqs = freshSqsClient(t);
    const sends: SendMessageCommandInput[] = [];
    sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'SendMessageCommand') sends.push(args.input as SendMessageCommandInput);
        return next(args);
      },
      { step: 'initialize', name: 'recordSends' },
    );
    const model = scriptedModel();
    const { handler, sink } = testConsumer(t, model, { sqs });

    // Act
    const first = await invoke(t, handler, await receive(t, { max: 2, waitSeconds: 1 }));
    const back = await receive(t, { max: 2, waitSeconds: 4 });
    const second = await invoke(t, handler, back);
    sqs.destroy();

    // Assess: the first round called no model and re-sent both as they were
    assert.deepEqual(first.response.batchItemFailures, []);
    assert.equal(sends.length, 2);
    const sentFar = sends.find((s) => (JSON.parse(s.MessageBody!) as Job).jobId === farJob.jobId)!;
    const sentNear = sends.find((s) => (JSON.parse(s.MessageBody!) as Job).jobId === nearJob.jobId)!;
    assert.equal(sentFar.DelaySeconds, 900);
    assert.deepEqual(JSON.parse(sentFar.MessageBody!), farJob, 'eligibleAt, attempt and deferrals unchanged');
    assert.ok(sentNear.DelaySeconds === 1 || sentNear.DelaySeconds === 2, `near delay ${sentNear.DelaySeconds}`);
    assert.deepEqual(JSON.parse(sentNear.MessageBody!), nearJob);
    assert.equal(sink.totals.total.EligibilityHops, 2);
    // the near one came back (alone: the far one is still delayed) and committed with one model call
    assert.deepEqual(
      back.map((m) => jobOf(m).jobId),
      [nearJob.jobId],
    );
    assert.deepEqual(second.response.batchItemFailures, []);
    assert.equal(model.calls.length, 1);
    assert.equal((await t.results.get(nearJob.idempotencyKey))?.deferrals, 0);
    assert.equal(await t.results.get(farJob.idempotencyKey), undefined);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 1 });
    // every hop is a ledger line (a job hopping for long is visible in its history)
    assert.deepEqual(
      (await t.ledger.entriesFor(farJob.jobId)).map((e) => [e.kind, e.reason]),
      [['deferred', 'not_yet_eligible']],
    );
  });

  it('rejects an unregistered prompt version and a missing input document without a model call', async () => {
    // Prepare
    const t = await newLane();
    const docs = englishDocuments(2);
    const items = await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#inputs` })),
    );
    const submitted = await receive(t, { max: 2 });
    for (const m of submitted) await t.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: t.queueUrl, ReceiptHandle: m.ReceiptHandle! }));
    const [a, b] = items.map((item) => jobOf(submitted.find((m) => jobOf(m).jobId === item.jobId)!));
    // Another producer's jobs, each with the idempotency key its fields give: an unknown prompt, and a
    // document (its content-addressed key in the lane's bucket) that was never stored
    const missingSha = sha256Hex('a document that was never stored');
    await sendRaw(t, JSON.stringify(withOwnKey({ ...a!, promptVersion: 'invoice-extract@99' })));
    await sendRaw(t, JSON.stringify(withOwnKey({ ...b!, input: { ...b!.input, contentSha256: missingSha, key: documentKeyFor(missingSha) } })));
    const model = scriptedModel();
    const { handler, sink } = testConsumer(t, model);

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 2, waitSeconds: 1 }));

    // Assess
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(model.calls.length, 0);
    assert.deepEqual(
      (await t.ledger.entriesFor(a!.jobId)).map((e) => [e.kind, e.reason]),
      [['rejected', 'unknown_version']],
    );
    assert.deepEqual(
      (await t.ledger.entriesFor(b!.jobId)).map((e) => [e.kind, e.reason]),
      [['rejected', 'input_missing']],
    );
    assert.equal(sink.totals.total.Rejected, 2);
    assert.equal(await t.results.count(), 0);
  });
});

describe('consumer: validation', () => {
  it('garbage once then a valid answer: one repair call, committed, ledger validation_failed not_json', async () => {
    // Prepare
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#garbage` }]);
    const model = scriptedModel((call) => (call.callNo === 1 ? { content: 'Sure! Here is the invoice: {"invoiceNumber": ' } : undefined));
    const { handler, sink } = testConsumer(t, model);

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 1 }));

    // Assess
    assert.deepEqual(response.batchItemFailures, []);
    assert.deepEqual(
      model.calls.map((c) => c.repair),
      [false, true],
      'one first call, one repair call',
    );
    const result = await t.results.get(item!.idempotencyKey);
    assert.equal(result?.modelCalls, 2);
    assert.deepEqual(result?.result, JSON.parse(correctOutput(doc!.text)));
    const ledger = await t.ledger.entriesFor(item!.jobId);
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0]!.kind, 'validation_failed');
    assert.equal(ledger[0]!.parseStatus, 'not_json');
    assert.equal(ledger[0]!.schemaVersion, 'invoice@1');
    assert.equal(ledger[0]!.promptVersion, 'invoice-extract@1');
    assert.equal(ledger[0]!.attempt, 0);
    assert.equal(sink.totals.total.ValidationFailed, 1);
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(sink.totals.total.RateLimited, undefined, 'validation never takes the throttle path');
  });

  it('output that always breaks the schema ends needs_review after exactly 2 calls, each failure in the ledger', async () => {
    // Prepare: amounts as strings, a bad currency
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#invalid` }]);
    const bad = { ...extractInvoice(doc!.text), total: 'a lot', currency: 'euro' };
    const model = scriptedModel(() => ({ content: JSON.stringify(bad) }));
    const { handler, sink } = testConsumer(t, model);

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 1 }));

    // Assess
    assert.deepEqual(response.batchItemFailures, [], 'needs_review is terminal: acknowledged');
    assert.equal(model.calls.length, 2);
    assert.equal(await t.results.get(item!.idempotencyKey), undefined);
    const ledger = await t.ledger.entriesFor(item!.jobId);
    assert.deepEqual(
      ledger.map((e) => e.kind),
      ['validation_failed', 'validation_failed', 'needs_review'],
    );
    for (const entry of ledger.slice(0, 2)) {
      assert.equal(entry.parseStatus, 'schema_invalid');
      assert.deepEqual([...(entry.failingFields ?? [])].sort(), ['currency', 'total']);
      assert.ok((entry.failingRules ?? []).length > 0);
    }
    assert.equal(sink.totals.total.ValidationFailed, 2);
    assert.equal(sink.totals.total.NeedsReview, 1);
    assert.equal(sink.totals.total.Completed, undefined);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });
});

describe('consumer: no source text in logs or metrics', () => {
  it('a sentinel in the documents and in model outputs never appears in a log line, metric or ledger entry', async () => {
    // Prepare: three documents carrying the sentinel in a line-item description
    const SENTINEL = 'SENTINEL-7f3a';
    const docs = englishDocuments(3).map((d) => {
      const description = d.expected.lineItems[0]!.description;
      assert.ok(d.text.includes(description));
      return { ...d, text: d.text.replace(description, `${description} ${SENTINEL}`) };
    });
    const t = await newLane();
    const submitted = await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#sentinel` })),
    );
    const [reviewSha, repairSha, throttleSha] = docs.map((d) => sha256Hex(d.text));
    const model = scriptedModel((call) => {
      const answer = extractInvoice(call.text);
      if (call.sha === reviewSha) {
        // not JSON, then schema-invalid: needs review
        return call.callNo === 1 ? { content: `Here you go: ${SENTINEL} {` } : { content: JSON.stringify({ ...answer, total: SENTINEL }) };
      }
      if (call.sha === repairSha && call.callNo === 1) {
        // domain-invalid (a line amount that does not add up), then correct
        const lineItems = answer.lineItems.map((l, i) => (i === 0 ? { ...l, amount: l.amount + 1 } : l));
        return { content: JSON.stringify({ ...answer, lineItems }) };
      }
      if (call.sha === throttleSha) return throttle({ kind: 'rate_limit', retryAfterMs: 1000 });
      return undefined;
    });
    const { handler, sink } = testConsumer(t, model, { logLevel: 'DEBUG' });

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 3 }));

    // Assess: the paths ran (the sentinel reached the model and the committed result)...
    assert.deepEqual(response.batchItemFailures, []);
    assert.ok(model.calls.every((c) => c.text.includes(SENTINEL)));
    const committed = await t.results.get(submitted[1]!.idempotencyKey);
    assert.ok(JSON.stringify(committed?.result).includes(SENTINEL), 'the sentinel is in the committed result');
    assert.equal(sink.totals.total.NeedsReview, 1);
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(sink.totals.total.Deferred, 1);
    assert.equal(sink.totals.total.ValidationFailed, 3);
    // ...and it is in no captured line (log or EMF), and in no ledger entry
    assert.ok(sink.lines.length >= 6, `captured ${sink.lines.length} lines`);
    assert.equal(sink.unstructuredLines, 0);
    const leaking = sink.lines.filter((line) => line.includes(SENTINEL) || line.includes('SENTINEL'));
    assert.deepEqual(leaking, []);
    assert.deepEqual(
      sink.lines.filter((line) => line.includes('sk-test-key-1')),
      [],
      'nor the provider key',
    );
    const ledger = await t.ledger.scanAll();
    assert.ok(ledger.length >= 4);
    assert.deepEqual(
      ledger.filter((e) => JSON.stringify(e).includes(SENTINEL)),
      [],
    );
    // the deferred job's re-sent message carries no text either
    const [resent] = await receive(t, { max: 1, waitSeconds: 3 });
    assert.ok(resent && !resent.Body!.includes(SENTINEL));
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
