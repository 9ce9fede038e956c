/**
 * What the consumer refuses or puts off without a model call, on the local stack through the eval
 * harness (test/helpers/consumer-harness.ts): a job of another region, a body that is not JSON, a job
 * not yet eligible (it hops, a near one comes back and commits), an unregistered prompt version, a
 * missing input document, and a lane whose model endpoint is not approved for its geography.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeleteMessageCommand, type SendMessageCommandInput } from '@aws-sdk/client-sqs';
import { idempotencyKeyFor, sha256Hex, type Job } from '../../../../lib/contract/job.js';
import { documentKeyFor } from '../../../../lib/store/documents.js';
import {
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
  trackedLanes,
} from '../../../helpers/consumer-harness.js';
import { skipDelays } from '../../../helpers/queue-time.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';

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

describe('consumer: the model endpoint', () => {
  it("a lane whose model endpoint is not approved for its geography makes no call: its jobs wait (EndpointMismatch), whatever the function's config says", async () => {
    // Prepare: the us lane's config moved to OpenAI's EU endpoint (as an edited RATELANE_LANE_CONFIG would)
    const t = await newLane({ provider: { baseUrl: 'https://eu.api.openai.com/v1' } });
    const docs = englishDocuments(2);
    const items = await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#endpoint` })),
    );
    const model = scriptedModel();
    const sqs = freshSqsClient(t);
    const waits = skipDelays(sqs);
    const { handler, sink } = testConsumer(t, model, { sqs });

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 2, waitSeconds: 1 }));

    // Assess: no call, nothing committed or rejected, both jobs re-sent for later with one more deferral
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(model.calls.length, 0, 'the model was never called');
    assert.equal(sink.totals.total.EndpointMismatch, 2);
    assert.equal(sink.totals.total.ModelCalls, undefined);
    assert.equal(sink.totals.total.Rejected, undefined);
    assert.equal(await t.results.count(), 0);
    assert.deepEqual(
      waits.delays.map((d) => d.delaySeconds),
      [t.lane.backoff.throttleCapSeconds, t.lane.backoff.throttleCapSeconds],
    );
    const waiting = (await receive(t, { max: 2, waitSeconds: 1 })).map(jobOf);
    assert.deepEqual(waiting.map((j) => j.jobId).sort(), items.map((i) => i.jobId).sort());
    assert.deepEqual(
      waiting.map((j) => j.deferrals),
      [1, 1],
    );
    assert.ok(sink.lines.some((l) => l.includes('eu.api.openai.com') && l.includes('model endpoint not approved')));
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
    // (the near hop's delay passes at once on the consumer's virtual clock; the far one stays delayed)
    const waits = skipDelays(sqs, { upToSeconds: 2 });
    const clock = virtualClock();
    const model = scriptedModel();
    const { handler, sink } = testConsumer(t, model, { sqs, now: clock.now, sleep: clock.sleep });

    // Act
    const first = await invoke(t, handler, await receive(t, { max: 2, waitSeconds: 1 }));
    waits.letDelaysPass(clock);
    const back = await receive(t, { max: 2 });
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
