/**
 * The producer against the run's real fauxqs (SQS + S3): routing by lane, the job contract on the
 * wire, batching, and retries of partial batch failures and of calls that throw. Rejections are in
 * producer-rejections.test.ts, the `ratelane submit` command in submit-command.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveLanes } from '../../../lib/config/lanes.js';
import { JobSchema, sha256Hex } from '../../../lib/contract/job.js';
import { planBatches, submitDocuments } from '../../../lib/intake/producer.js';
import { readDocument } from '../../../lib/store/documents.js';
import { uniqueName } from '../../helpers/endpoints.js';
import { baseDeps, clientsIn, drain, interceptBatches, newClients, objectKeys, setupLanes } from '../../helpers/producer-lanes.js';

describe('producer: submitDocuments', () => {
  it('routes each document to its own lane: us to us-east-1, eu to eu-central-1, never the other', async () => {
    // Prepare
    const t = await setupLanes();
    const deps = baseDeps(t.lanes);
    // Act
    const result = await submitDocuments(
      {
        documents: [
          { text: 'invoice A from the US', region: 'us' },
          { text: 'Rechnung B aus der EU', region: 'eu' },
          { text: 'invoice C from the US', region: 'us-east-1' },
        ],
      },
      deps,
    );
    // Assess
    assert.equal(result.sent, 3);
    assert.equal(result.failed, 0);
    assert.deepEqual(
      result.results.map((r) => r.region),
      ['us', 'eu', 'us'],
    );
    assert.deepEqual([...new Set(deps.regionsAsked)].sort(), ['eu-central-1', 'us-east-1']);
    const usMessages = await drain(clientsIn('us-east-1').sqs, t.queueUrl.us);
    const euMessages = await drain(clientsIn('eu-central-1').sqs, t.queueUrl.eu);
    assert.equal(usMessages.length, 2);
    assert.equal(euMessages.length, 1);
    const usJobs = usMessages.map((m) => JobSchema.parse(JSON.parse(m.Body!)));
    const euJobs = euMessages.map((m) => JobSchema.parse(JSON.parse(m.Body!)));
    assert.ok(usJobs.every((j) => j.region === 'us' && j.input.bucket === t.bucket.us));
    assert.ok(euJobs.every((j) => j.region === 'eu' && j.input.bucket === t.bucket.eu));
    assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), usJobs.map((j) => j.input.key).sort());
    assert.deepEqual(
      await objectKeys('eu-central-1', t.bucket.eu),
      euJobs.map((j) => j.input.key),
    );
    assert.deepEqual(usMessages.map((m) => m.MessageId).sort(), [result.results[0]!.messageId, result.results[2]!.messageId].sort());
  });

  it('puts a valid job without the text on the queue, and the text with its hash in the bucket', async () => {
    // Prepare
    const t = await setupLanes();
    const text = 'INVOICE-MARKER-7f3a: Widget x3, total 42.00 EUR';
    const now = new Date('2030-01-02T03:04:05.000Z');
    const deps = baseDeps(t.lanes, { now: () => now, newJobId: () => 'job-0001' });
    // Act
    const result = await submitDocuments({ documents: [{ text, sourceId: 'erp://invoices/17', region: 'eu', deadline: '2030-01-03T00:00:00Z' }] }, deps);
    // Assess
    const [message] = await drain(clientsIn('eu-central-1').sqs, t.queueUrl.eu);
    assert.ok(message?.Body);
    assert.ok(!message.Body.includes('INVOICE-MARKER'), 'the body must not carry document text');
    const job = JobSchema.parse(JSON.parse(message.Body));
    assert.equal(job.jobId, 'job-0001');
    assert.equal(job.region, 'eu');
    assert.equal(job.attempt, 0);
    assert.equal(job.deferrals, 0);
    assert.equal(job.createdAt, now.toISOString());
    assert.equal(job.eligibleAt, now.toISOString());
    assert.equal(job.deadline, '2030-01-03T00:00:00.000Z');
    assert.equal(job.schemaVersion, 'invoice@1');
    assert.equal(job.promptVersion, 'invoice-extract@1');
    assert.equal(job.input.sourceId, 'erp://invoices/17');
    assert.equal(job.input.contentSha256, sha256Hex(text));
    assert.equal(job.input.key, `documents/${sha256Hex(text)}.txt`);
    assert.equal(job.input.bytes, Buffer.byteLength(text));
    assert.equal(message.MessageAttributes?.jobId?.StringValue, 'job-0001');
    assert.equal(message.MessageAttributes?.region?.StringValue, 'eu');
    const stored = await readDocument(clientsIn('eu-central-1').s3, { bucket: job.input.bucket, key: job.input.key, expectedSha256: job.input.contentSha256 });
    assert.equal(stored, text);
    assert.deepEqual(result.results[0], {
      index: 0,
      sourceId: 'erp://invoices/17',
      jobId: 'job-0001',
      region: 'eu',
      idempotencyKey: job.idempotencyKey,
      status: 'sent',
      messageId: message.MessageId,
    });
  });

  it('sends 25 documents in 3 SendMessageBatch calls of at most 10', async () => {
    // Prepare
    const t = await setupLanes();
    const clients = newClients('us-east-1');
    const spy = interceptBatches(clients.sqs, () => ({}));
    const deps = baseDeps(t.lanes, { clientsFor: () => clients });
    const documents = Array.from({ length: 25 }, (_, i) => ({ text: `document number ${i}`, region: 'us' }));
    // Act
    const result = await submitDocuments({ documents }, deps);
    // Assess
    assert.deepEqual(spy.calls, [10, 10, 5]);
    assert.equal(result.sent, 25);
    assert.deepEqual(
      result.results.map((r) => r.index),
      Array.from({ length: 25 }, (_, i) => i),
    );
    assert.equal((await drain(clients.sqs, t.queueUrl.us)).length, 25);
    assert.equal((await objectKeys('us-east-1', t.bucket.us)).length, 25);
  });

  it('plans batches by entry count and by total bytes', () => {
    // Prepare
    const items = Array.from({ length: 5 }, () => ({ messageBytes: 100 * 1024 }));
    // Act
    const bySize = planBatches(items);
    const byCount = planBatches(Array.from({ length: 21 }, () => ({ messageBytes: 10 })));
    // Assess
    assert.deepEqual(
      bySize.map((b) => b.length),
      [2, 2, 1],
    );
    assert.deepEqual(
      byCount.map((b) => b.length),
      [10, 10, 1],
    );
  });

  it('retries an entry that failed server-side and reports a sender fault without retrying it', async () => {
    // Prepare
    const t = await setupLanes();
    const clients = newClients('us-east-1');
    const spy = interceptBatches(clients.sqs, (call) => ({
      fail: {
        ...(call === 1 ? { d2: { senderFault: false, code: 'InternalError' } } : {}),
        d4: { senderFault: true, code: 'InvalidParameterValue' },
      },
    }));
    const deps = baseDeps(t.lanes, { clientsFor: () => clients, random: () => 0.5 });
    const documents = Array.from({ length: 6 }, (_, i) => ({ text: `doc ${i}`, region: 'us', sourceId: `src-${i}` }));
    // Act
    const result = await submitDocuments({ documents }, deps);
    // Assess
    assert.deepEqual(spy.calls, [6, 1], 'the second call carries only the server-side failure');
    assert.equal(deps.sleeps.length, 1);
    assert.equal(result.sent, 5);
    assert.equal(result.failed, 1);
    const failed = result.results[4]!;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.sourceId, 'src-4');
    assert.deepEqual(failed.error, { code: 'InvalidParameterValue', message: 'injected by test', senderFault: true, stage: 'send' });
    assert.equal(result.results[2]!.status, 'sent');
    assert.ok(result.results[2]!.messageId);
    const bodies = (await drain(clients.sqs, t.queueUrl.us)).map((m) => JobSchema.parse(JSON.parse(m.Body!)).input.sourceId);
    assert.deepEqual(bodies.sort(), ['src-0', 'src-1', 'src-2', 'src-3', 'src-5']);
  });

  it('retries a batch call that throws, then reports each item failed when it keeps throwing', async () => {
    // Prepare
    const t = await setupLanes();
    const flaky = newClients('us-east-1');
    const flakySpy = interceptBatches(flaky.sqs, (call) => (call === 1 ? { throw: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) } : {}));
    const down = newClients('eu-central-1');
    const downSpy = interceptBatches(down.sqs, () => ({ throw: Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }) }));
    const deps = baseDeps(t.lanes, { clientsFor: (r) => (r === 'us-east-1' ? flaky : down), retry: { maxAttempts: 3 } });
    // Act
    const result = await submitDocuments(
      {
        documents: [
          { text: 'u1', region: 'us' },
          { text: 'e1', region: 'eu' },
          { text: 'u2', region: 'us' },
          { text: 'e2', region: 'eu' },
        ],
      },
      deps,
    );
    // Assess
    assert.deepEqual(flakySpy.calls, [2, 2]);
    assert.deepEqual(downSpy.calls, [2, 2, 2]);
    assert.deepEqual(
      result.results.map((r) => r.status),
      ['sent', 'failed', 'sent', 'failed'],
    );
    assert.equal(result.results[1]!.error?.code, 'ECONNREFUSED');
    assert.equal(result.results[1]!.error?.stage, 'send');
    assert.equal((await drain(flaky.sqs, t.queueUrl.us)).length, 2);
    assert.equal((await drain(clientsIn('eu-central-1').sqs, t.queueUrl.eu)).length, 0);
  });

  it('reports every document failed when the lane queue does not exist, storing nothing', async () => {
    // Prepare
    const t = await setupLanes();
    const lanes = resolveLanes({
      us: { resources: { queueName: uniqueName('rl-missing'), bucketName: t.bucket.us } },
      eu: { resources: { queueName: t.lanes.eu!.resources.queueName, bucketName: t.bucket.eu } },
    });
    // Act
    const result = await submitDocuments(
      {
        documents: [
          { text: 'a', region: 'us' },
          { text: 'b', region: 'us' },
        ],
      },
      baseDeps(lanes),
    );
    // Assess
    assert.equal(result.failed, 2);
    assert.ok(result.results.every((r) => r.status === 'failed' && r.error?.stage === 'queue_url'));
    assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), []);
  });
});
