/**
 * A queue message is input from outside: anyone with `SendMessage` on a lane's queue can
 * write one. The consumer recomputes what it can (the idempotency key, the document's place, the job
 * id's owner) and bounds what it cannot (stated waits, `eligibleAt`, deadlines, counters), before any
 * model call or commit. Each probe runs the real handler on DynamoDB Local and fauxqs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { idempotencyKeyFor, jobFlowId, MAX_ATTEMPT, sha256Hex, type Job } from '../../../../lib/contract/job.js';
import { ProviderError } from '../../../../lib/providers/model.js';
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
  throttle,
  trackedLanes,
  type TestLane,
} from '../../../helpers/consumer-harness.js';
import { inspectQueue, skipDelays } from '../../../helpers/queue-time.js';
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

/** Submits one English document with the real producer and takes its job off the queue (not processed). */
async function submittedJob(t: TestLane, index: number, tag: string): Promise<Job> {
  const doc = englishDocuments(index + 1)[index]!;
  await submitTo(t, [{ text: doc.text, sourceId: `${doc.sourceId}#${tag}` }]);
  const [message] = await receive(t, { max: 1, waitSeconds: 2 });
  const { DeleteMessageCommand } = await import('@aws-sdk/client-sqs');
  await t.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: t.queueUrl, ReceiptHandle: message!.ReceiptHandle! }));
  return jobOf(message!);
}

/** Stores raw bytes as a content-addressed document of the lane and returns the job reference to it. */
async function storeBytes(t: TestLane, bytes: Uint8Array, template: Job): Promise<Job['input']> {
  const sha = sha256Hex(bytes);
  await t.clients.s3.send(new PutObjectCommand({ Bucket: t.lane.resources.bucketName, Key: documentKeyFor(sha), Body: bytes }));
  return { ...template.input, contentSha256: sha, key: documentKeyFor(sha), bytes: bytes.byteLength, sourceId: `bytes-${sha.slice(0, 8)}` };
}

/** Runs every message in the queue through one invocation; returns the sink and the model. */
async function consumeAll(t: TestLane, model = scriptedModel()) {
  const consumer = testConsumer(t, model);
  const out = await invoke(t, consumer.handler, await receive(t, { max: 10, waitSeconds: 2 }));
  return { ...consumer, model, out };
}

/** The reasons of the `msg:` ledger entries (rejections of messages that were not trusted). */
async function messageRejections(t: TestLane): Promise<string[]> {
  return (await t.ledger.scanAll())
    .filter((e) => e.jobId.startsWith('msg:'))
    .map((e) => e.reason)
    .sort();
}

describe('trust: what a message claims', () => {
  it("a message with another job's idempotency key is refused before any model call; the real job then commits under its own key", async () => {
    // Prepare: the victim's job (not yet processed) and an attacker's message carrying its key over the attacker's own document
    const t = await newLane();
    const victim = await submittedJob(t, 0, 'victim');
    const attacker = await submittedJob(t, 1, 'attacker');
    await sendRaw(t, JSON.stringify({ ...attacker, idempotencyKey: victim.idempotencyKey }));
    // Act
    const first = await consumeAll(t);
    await sendRaw(t, JSON.stringify(victim));
    const second = await consumeAll(t);
    // Assess
    assert.equal(first.model.calls.length, 0);
    assert.deepEqual(await messageRejections(t), ['idempotency_key_mismatch']);
    assert.equal(second.sink.totals.total.Completed, 1);
    assert.equal((await t.results.get(victim.idempotencyKey))?.jobId, victim.jobId, 'the result under the key is the real job');
  });

  it("a job id reused for another document is refused at its commit, and nothing is written into the first job's history", async () => {
    // Prepare: the victim's job runs first; a second message reuses its job id for another (valid) document
    const t = await newLane();
    const victim = await submittedJob(t, 0, 'victim-id');
    await sendRaw(t, JSON.stringify(victim));
    await consumeAll(t);
    const other = await submittedJob(t, 1, 'other');
    await sendRaw(t, JSON.stringify({ ...other, jobId: victim.jobId }));
    // Act
    const { model } = await consumeAll(t);
    // Assess: the id is claimed beside the model call, so that one call is spent (as by any new job id), no more
    assert.equal(model.calls.length, 1);
    assert.deepEqual(await messageRejections(t), ['job_id_reused']);
    assert.deepEqual(await t.ledger.entriesFor(victim.jobId), [], "the victim's history holds only its own (none: it committed at once)");
    assert.equal(await t.results.get(other.idempotencyKey), undefined);
  });

  it('a reused job id that would be deferred or rejected without a model call is refused before anything is written under the id', async () => {
    // Prepare: the victim commits; one message reuses its id with an eligibleAt in the future (a deferral),
    // another with a prompt version no one registered (a rejection under the job id)
    const t = await newLane();
    const victim = await submittedJob(t, 0, 'victim-defer');
    await sendRaw(t, JSON.stringify(victim));
    await consumeAll(t);
    const later = await submittedJob(t, 1, 'later');
    const unknown = withOwnKey({ ...(await submittedJob(t, 2, 'unknown')), jobId: victim.jobId, promptVersion: 'unregistered@9' });
    await sendRaw(t, JSON.stringify({ ...later, jobId: victim.jobId, eligibleAt: new Date(Date.now() + 60_000).toISOString() }));
    await sendRaw(t, JSON.stringify(unknown));
    // Act
    const { model } = await consumeAll(t);
    // Assess: both refused for the id, neither re-sent, no model call, the victim's history untouched
    assert.equal(model.calls.length, 0);
    assert.deepEqual(await messageRejections(t), ['job_id_reused', 'job_id_reused']);
    assert.deepEqual(await t.ledger.entriesFor(victim.jobId), []);
    assert.equal((await queueCounts(t)).delayed + (await queueCounts(t)).visible, 0, 'nothing was re-sent');
  });

  it("a document outside the lane's bucket or documents prefix is a region mismatch, with no read and no model call", async () => {
    // Prepare: one job pointing at another bucket, one at another key of the lane's bucket
    const t = await newLane();
    const job = await submittedJob(t, 0, 'where');
    await sendRaw(t, JSON.stringify({ ...job, jobId: `${job.jobId}-a`, input: { ...job.input, bucket: 'ratelane-eu-source' } }));
    await sendRaw(t, JSON.stringify({ ...job, jobId: `${job.jobId}-b`, input: { ...job.input, key: `private/${job.input.contentSha256}.txt` } }));
    // Act
    const { model, sink } = await consumeAll(t);
    // Assess
    assert.equal(model.calls.length, 0);
    assert.deepEqual(await messageRejections(t), ['region_mismatch', 'region_mismatch']);
    assert.equal(sink.totals.total.RegionMismatch, 2);
  });
});

describe('trust: bounded waits and counters', () => {
  it('a retry-after of a year (or of 10^15 s) is not believed: the normal backoff, the key cooled briefly, no lane pause, no throw', async () => {
    // Prepare: two jobs; the provider states absurd waits for a rate limit
    const t = await newLane({ backoff: { throttleBaseSeconds: 1, throttleCapSeconds: 4, failureBaseSeconds: 1, failureCapSeconds: 5 } });
    for (const i of [0, 1]) await sendRaw(t, JSON.stringify(await submittedJob(t, i, `wait-${i}`)));
    const waits = [365 * 86_400_000, 1e18];
    const model = scriptedModel(() => new ProviderError('429', 'scripted', 429, { kind: 'rate_limit', retryAfterMs: waits.shift() ?? 1000, resetAt: null }));
    // Act
    const { out, sink } = await consumeAll(t, model);
    const held = await inspectQueue(t.queueUrl);
    const back = [...held.ready, ...held.delayed];
    // Assess: both re-sent to come back within the throttle cap (as fauxqs holds them: the delays are not waited out)
    assert.deepEqual(out.response.batchItemFailures, []);
    assert.equal(sink.totals.total.StatedWaitIgnored, 2);
    assert.equal(back.length, 2, 'both re-sent');
    for (const m of back) {
      assert.ok(
        (m.delayUntil ?? m.sentTimestamp) - m.sentTimestamp <= 4_000,
        `delayed ${(m.delayUntil ?? m.sentTimestamp) - m.sentTimestamp} ms: within the throttle cap`,
      );
      assert.ok(Date.parse((JSON.parse(m.body) as Job).eligibleAt) - m.sentTimestamp < 5_000, 'eligible within the throttle cap');
    }
    const lines = sink.lines.filter((l) => l.includes('stated wait not believed'));
    assert.equal(lines.length, 2);
  });

  it('eligibleAt or a deadline beyond the horizon is rejected; a hop is a ledger entry', async () => {
    // Prepare
    const t = await newLane();
    const job = await submittedJob(t, 0, 'horizon');
    const year9999 = '9999-12-31T00:00:00.000Z';
    await sendRaw(t, JSON.stringify({ ...job, jobId: `${job.jobId}-far`, eligibleAt: year9999 }));
    await sendRaw(t, JSON.stringify({ ...job, jobId: `${job.jobId}-late`, deadline: year9999 }));
    await sendRaw(t, JSON.stringify({ ...job, jobId: `${job.jobId}-hop`, eligibleAt: new Date(Date.now() + 3_600_000).toISOString() }));
    // Act
    const { model } = await consumeAll(t);
    // Assess
    assert.equal(model.calls.length, 0);
    for (const suffix of ['far', 'late']) {
      assert.deepEqual(
        (await t.ledger.entriesFor(`${job.jobId}-${suffix}`)).map((e) => [e.kind, e.reason]),
        [['rejected', 'beyond_horizon']],
        suffix,
      );
    }
    assert.deepEqual(
      (await t.ledger.entriesFor(`${job.jobId}-hop`)).map((e) => [e.kind, e.reason]),
      [['deferred', 'not_yet_eligible']],
    );
  });

  it('attempt or deferrals beyond the lane limits are refused at the contract', async () => {
    // Prepare
    const t = await newLane();
    const job = await submittedJob(t, 0, 'counters');
    await sendRaw(t, JSON.stringify({ ...job, jobId: `${job.jobId}-a`, attempt: Number.MAX_SAFE_INTEGER }));
    await sendRaw(t, JSON.stringify({ ...job, jobId: `${job.jobId}-b`, attempt: Math.min(MAX_ATTEMPT, t.lane.queue.maxReceiveCount + 1) }));
    await sendRaw(t, JSON.stringify({ ...job, jobId: `${job.jobId}-c`, deferrals: t.lane.bounds.maxDeferrals + 1 }));
    // Act
    const { model, sink } = await consumeAll(t);
    // Assess
    assert.equal(model.calls.length, 0);
    assert.deepEqual(await messageRejections(t), ['invalid_body', 'invalid_body', 'invalid_body']);
    assert.equal(sink.totals.total.AttemptsPerCompletion ?? 0, 0, 'no poisoned attempts metric');
  });
});

describe('trust: who may state a tenant', () => {
  const granted = 'AROAGRANTEDPRODUCER01';
  const consumerRole = 'AROALANECONSUMERROLE1';

  it('a tenant is believed only from a producer the lane grants it: another tenant, another sender or no sender is refused before any model call; a job without a tenant needs no grant', async () => {
    // Prepare: one producer may state team-a; the messages as SQS would stamp them for each sender
    const t = await newLane({ producers: [{ senderId: granted, tenants: ['team-a'], note: 'svc-a' }] });
    const docs = englishDocuments(5);
    const cases = [
      { tag: 'granted', tenant: 'team-a', senderId: `${granted}:svc-a-session`, committed: true },
      { tag: 'other-tenant', tenant: 'team-b', senderId: `${granted}:svc-a-session`, committed: false },
      { tag: 'other-sender', tenant: 'team-a', senderId: 'AROASOMEONEELSE000001:x', committed: false },
      { tag: 'no-sender', tenant: 'team-a', senderId: '', committed: false },
      { tag: 'no-tenant', tenant: undefined, senderId: 'AIDASOMEUSER000000001', committed: true },
    ];
    const model = scriptedModel();
    const { handler, sink } = testConsumer(t, model, { laneSenders: [consumerRole] });
    const jobIds: string[] = [];
    // Act
    for (const [i, c] of cases.entries()) {
      const [item] = await submitTo(t, [{ text: docs[i]!.text, sourceId: `${docs[i]!.sourceId}#${c.tag}`, ...(c.tenant ? { tenant: c.tenant } : {}) }]);
      jobIds.push(item!.jobId);
      await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 2 }), { senderId: c.senderId });
    }
    // Assess
    assert.equal(model.calls.length, 2, 'a model call for the granted tenant and for the job with none');
    assert.equal(sink.totals.total.Completed, 2);
    for (const [i, c] of cases.entries()) {
      assert.equal((await t.ledger.claimOf(jobIds[i]!)) !== undefined, c.committed, `${c.tag}: its job id is claimed only when believed`);
    }
    assert.deepEqual(await messageRejections(t), ['tenant_not_allowed', 'tenant_not_allowed', 'tenant_not_allowed']);
    const details = (await t.ledger.scanAll()).filter((e) => e.reason === 'tenant_not_allowed').map((e) => e.details ?? '');
    assert.ok(
      details.some((d) => d.includes('sender AROASOMEONEELSE000001 may not state')),
      details.join(' | '),
    );
    assert.ok(
      details.some((d) => d.includes('a sender SQS did not name')),
      details.join(' | '),
    );
  });

  it('urgent is believed only from a producer the lane grants it; bulk (or none) from anyone', async () => {
    // Prepare: one producer may state urgent (for no tenant in particular); the messages as SQS would stamp them
    const t = await newLane({ producers: [{ senderId: granted, priorities: ['urgent'] }] });
    const docs = englishDocuments(3);
    const cases = [
      { tag: 'granted-urgent', priority: 'urgent' as const, senderId: `${granted}:svc`, committed: true },
      { tag: 'other-urgent', priority: 'urgent' as const, senderId: 'AROASOMEONEELSE000001:x', committed: false },
      { tag: 'other-bulk', priority: 'bulk' as const, senderId: 'AROASOMEONEELSE000001:x', committed: true },
    ];
    const model = scriptedModel();
    const { handler } = testConsumer(t, model, { laneSenders: [consumerRole] });
    const jobIds: string[] = [];
    // Act
    for (const [i, c] of cases.entries()) {
      const [item] = await submitTo(t, [{ text: docs[i]!.text, sourceId: `${docs[i]!.sourceId}#${c.tag}`, priority: c.priority }]);
      jobIds.push(item!.jobId);
      await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 2 }), { senderId: c.senderId });
    }
    // Assess
    assert.equal(model.calls.length, 2);
    for (const [i, c] of cases.entries()) {
      assert.equal((await t.ledger.claimOf(jobIds[i]!)) !== undefined, c.committed, `${c.tag}: its job id is claimed only when believed`);
    }
    assert.deepEqual(await messageRejections(t), ['priority_not_allowed']);
  });

  it("the lane's own re-send keeps the tenant, class and message group its first sender stated: the consumer's role may state any", async () => {
    // Prepare: a granted producer's urgent job is throttled once; the consumer re-sends it (as its own role)
    const t = await newLane({ producers: [{ senderId: granted, tenants: ['team-a'], priorities: ['urgent'] }] });
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#resent`, tenant: 'team-a', priority: 'urgent' }]);
    let calls = 0;
    const model = scriptedModel(() => (++calls === 1 ? throttle({ kind: 'rate_limit', retryAfterMs: 1_000 }) : undefined));
    const clock = virtualClock();
    const sqs = freshSqsClient(t);
    skipDelays(sqs);
    const { handler } = testConsumer(t, model, { sqs, now: clock.now, sleep: clock.sleep, laneSenders: [consumerRole] });
    const first = await receive(t, { max: 1, waitSeconds: 2 });
    await invoke(t, handler, first, { senderId: `${granted}:svc-a` });
    clock.advance(60_000);
    // Act: the re-sent copy, stamped with the consumer role's id
    const resent = await receive(t, { max: 1, waitSeconds: 3 });
    const second = await invoke(t, handler, resent, { senderId: `${consumerRole}:ratelane-us-consumer` });
    // Assess: the job's flow is the message group of both copies (SQS fair queues deliver by it)
    const flow = jobFlowId({ tenant: 'team-a', priority: 'urgent' });
    assert.match(flow, /^urgent:[0-9a-f]{12}$/);
    assert.equal(first[0]!.Attributes?.MessageGroupId, flow);
    assert.equal(resent[0]!.Attributes?.MessageGroupId, flow);
    assert.equal(jobOf(resent[0]!).tenant, 'team-a');
    assert.equal(jobOf(resent[0]!).priority, 'urgent');
    assert.deepEqual(second.response.batchItemFailures, []);
    assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId);
    assert.deepEqual(await messageRejections(t), []);
  });
});

describe('trust: what a document is', () => {
  it('bytes that are not UTF-8, binary, NUL-only or zero-width-only are refused in the consumer, without a model call', async () => {
    // Prepare: hand-made jobs over documents another producer stored
    const t = await newLane();
    const template = await submittedJob(t, 0, 'bytes');
    const cases: Record<string, { bytes: Uint8Array; reason: string }> = {
      pdf: { bytes: Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 0, 5, 6])]), reason: 'not_text' },
      latin1: { bytes: Buffer.from('Rechnung f\u00fcr M\u00fcller', 'latin1'), reason: 'not_text' },
      nul: { bytes: Buffer.alloc(64), reason: 'not_text' },
      zeroWidth: { bytes: Buffer.from('\u200b\u200c\u200d\ufeff \u2060\n', 'utf8'), reason: 'empty_document' },
    };
    const jobIds: Record<string, string> = {};
    for (const [name, c] of Object.entries(cases)) {
      const input = await storeBytes(t, c.bytes, template);
      const job = withOwnKey({ ...template, jobId: `${template.jobId}-${name}`, input });
      jobIds[name] = job.jobId;
      await sendRaw(t, JSON.stringify(job));
    }
    // Act
    const { model } = await consumeAll(t);
    // Assess
    assert.equal(model.calls.length, 0);
    for (const [name, c] of Object.entries(cases)) {
      assert.deepEqual(
        (await t.ledger.entriesFor(jobIds[name]!)).map((e) => [e.kind, e.reason]),
        [['rejected', c.reason]],
        name,
      );
    }
  });
});
