/**
 * The producer against the run's real fauxqs (SQS + S3): routing by lane, the job contract on the
 * wire, batching, per-item rejection (valid documents still sent) and all-or-nothing rejection,
 * partial batch failures and the CLI end to end.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CreateBucketCommand, ListObjectsV2Command, type BucketLocationConstraint } from '@aws-sdk/client-s3';
import { CreateQueueCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import { resolveLanes, type LaneSet } from '../../lib/config/lanes.js';
import { JobSchema, sha256Hex } from '../../lib/contract/job.js';
import { createAwsClients, type AwsClients } from '../../lib/aws/clients.js';
import { planBatches, SubmissionRejectedError, submitDocuments, type SubmitDeps } from '../../lib/queue/producer.js';
import { runSubmitCommand } from '../../lib/queue/submit-cli.js';
import { readDocument } from '../../lib/store/documents.js';
import { testEndpoints, uniqueName } from '../helpers/endpoints.js';

const endpoints = testEndpoints();
const created: AwsClients[] = [];
const shared = new Map<string, AwsClients>();

function newClients(region: string): AwsClients {
  const c = createAwsClients(region, endpoints);
  created.push(c);
  return c;
}
function clientsIn(region: string): AwsClients {
  let c = shared.get(region);
  if (!c) {
    c = newClients(region);
    shared.set(region, c);
  }
  return c;
}

after(() => {
  for (const c of created) c.destroy();
});

interface TestLanes {
  lanes: LaneSet;
  queueUrl: Record<'us' | 'eu', string>;
  bucket: Record<'us' | 'eu', string>;
}

/** Fresh lanes with their own queue and bucket in each lane's region. */
async function setupLanes(): Promise<TestLanes> {
  const lanes = resolveLanes({
    us: { resources: { queueName: uniqueName('rl-us-jobs'), bucketName: uniqueName('rl-us-docs') } },
    eu: { resources: { queueName: uniqueName('rl-eu-jobs'), bucketName: uniqueName('rl-eu-docs') } },
  });
  const queueUrl = {} as Record<'us' | 'eu', string>;
  const bucket = {} as Record<'us' | 'eu', string>;
  for (const name of ['us', 'eu'] as const) {
    const lane = lanes[name]!;
    const { sqs, s3 } = clientsIn(lane.region);
    const out = await sqs.send(new CreateQueueCommand({ QueueName: lane.resources.queueName }));
    queueUrl[name] = out.QueueUrl!;
    await s3.send(
      new CreateBucketCommand({
        Bucket: lane.resources.bucketName,
        ...(lane.region === 'us-east-1' ? {} : { CreateBucketConfiguration: { LocationConstraint: lane.region as BucketLocationConstraint } }),
      }),
    );
    bucket[name] = lane.resources.bucketName;
  }
  return { lanes, queueUrl, bucket };
}

/** Receives every visible message of a queue (hidden for 5 minutes after). */
async function drain(sqs: SQSClient, queueUrl: string): Promise<Message[]> {
  const all: Message[] = [];
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 300, MessageAttributeNames: ['All'] }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) return all;
    all.push(...messages);
  }
}

async function objectKeys(region: string, bucket: string): Promise<string[]> {
  const out = await clientsIn(region).s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (out.Contents ?? []).map((o) => o.Key!).sort();
}

function baseDeps(lanes: LaneSet, extra: Partial<SubmitDeps> = {}): SubmitDeps & { regionsAsked: string[]; sleeps: number[] } {
  const regionsAsked: string[] = [];
  const sleeps: number[] = [];
  return {
    lanes,
    clientsFor: (region) => {
      regionsAsked.push(region);
      return clientsIn(region);
    },
    now: () => new Date(),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    regionsAsked,
    sleeps,
    ...extra,
  };
}

type BatchInput = { Entries?: { Id?: string }[] };
type BatchOutput = { Successful?: unknown[]; Failed?: { Id: string; SenderFault: boolean; Code: string; Message?: string }[] };

/**
 * A thin interceptor on one SQS client's SendMessageBatch calls (an SDK middleware): `plan` may
 * remove entries from the request (so they are really not sent) and report them as failed, or throw.
 */
function interceptBatches(
  sqs: SQSClient,
  plan: (call: number, ids: string[]) => { fail?: Record<string, { senderFault: boolean; code: string }>; throw?: Error },
): { calls: number[] } {
  const calls: number[] = [];
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'SendMessageBatchCommand') return next(args);
      const input = args.input as BatchInput;
      const ids = (input.Entries ?? []).map((e) => e.Id!);
      calls.push(ids.length);
      const decision = plan(calls.length, ids);
      if (decision.throw) throw decision.throw;
      const fail = decision.fail ?? {};
      input.Entries = (input.Entries ?? []).filter((e) => !(e.Id! in fail));
      const result = await next(args);
      const output = result.output as BatchOutput;
      output.Failed = [
        ...(output.Failed ?? []),
        ...Object.entries(fail).map(([Id, f]) => ({ Id, SenderFault: f.senderFault, Code: f.code, Message: 'injected by test' })),
      ];
      return result;
    },
    { step: 'initialize', name: 'testBatchInterceptor' },
  );
  return { calls };
}

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
    assert.deepEqual(result.results.map((r) => r.region), ['us', 'eu', 'us']);
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
    assert.deepEqual(await objectKeys('eu-central-1', t.bucket.eu), euJobs.map((j) => j.input.key));
    assert.deepEqual(usMessages.map((m) => m.MessageId).sort(), [result.results[0]!.messageId, result.results[2]!.messageId].sort());
  });

  it('puts a valid job without the text on the queue, and the text with its hash in the bucket', async () => {
    // Prepare
    const t = await setupLanes();
    const text = 'INVOICE-MARKER-7f3a: Widget x3, total 42.00 EUR';
    const now = new Date('2030-01-02T03:04:05.000Z');
    const deps = baseDeps(t.lanes, { now: () => now, newJobId: () => 'job-0001' });
    // Act
    const result = await submitDocuments(
      { documents: [{ text, sourceId: 'erp://invoices/17', region: 'eu', deadline: '2030-01-03T00:00:00Z' }] },
      deps,
    );
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
    assert.deepEqual(result.results.map((r) => r.index), Array.from({ length: 25 }, (_, i) => i));
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
    assert.deepEqual(bySize.map((b) => b.length), [2, 2, 1]);
    assert.deepEqual(byCount.map((b) => b.length), [10, 10, 1]);
  });

  const valid = { text: 'a perfectly fine invoice', region: 'us' };
  const badCases: { name: string; doc: Record<string, unknown>; reason: string; deps?: Partial<SubmitDeps> }[] = [
      { name: 'unknown region', doc: { text: 'x', region: 'mars' }, reason: 'unknown_region' },
      { name: 'empty text', doc: { text: '', region: 'us' }, reason: 'empty_document' },
      { name: 'whitespace-only text', doc: { text: ' \n\t\u00a0 ', region: 'us' }, reason: 'empty_document' },
      { name: 'over max bytes', doc: { text: 'SECRET-OVERSIZE '.repeat(20), region: 'us' }, reason: 'document_too_large', deps: { maxDocumentBytes: 100 } },
      { name: 'over token budget', doc: { text: 'y'.repeat(400), region: 'us' }, reason: 'document_too_large', deps: { maxInputTokens: 50 } },
      { name: 'unknown version', doc: { text: 'x', region: 'us', schemaVersion: 'invoice@9' }, reason: 'unknown_version', deps: { isKnownVersion: (s) => s === 'invoice@1' } },
      { name: 'malformed version', doc: { text: 'x', region: 'us', promptVersion: 'latest' }, reason: 'unknown_version' },
      { name: 'past deadline', doc: { text: 'x', region: 'us', deadline: '2001-01-01T00:00:00Z' }, reason: 'deadline_passed' },
      { name: 'both text and path', doc: { text: 'x', path: 'a.txt', region: 'us' }, reason: 'bad_input' },
      { name: 'neither text nor path', doc: { region: 'us' }, reason: 'bad_input' },
      { name: 'missing file', doc: { path: '/nonexistent/ratelane/doc.txt', region: 'us' }, reason: 'bad_input' },
      { name: 'bad job id', doc: { text: 'x', region: 'us', jobId: 'has spaces' }, reason: 'bad_input' },
  ];

  describe('by default, rejects each bad document with its reason and still sends the valid ones', () => {
    for (const c of badCases) {
      it(c.name, async () => {
        // Prepare
        const t = await setupLanes();
        const deps = baseDeps(t.lanes, c.deps);
        // Act
        const result = await submitDocuments({ documents: [valid, c.doc as never] }, deps);
        // Assess
        assert.deepEqual([result.total, result.sent, result.failed, result.rejected], [2, 1, 0, 1]);
        assert.equal(result.results[0]!.status, 'sent');
        const bad = result.results[1]!;
        assert.equal(bad.status, 'rejected');
        assert.equal(bad.index, 1);
        assert.equal(bad.error?.code, c.reason);
        assert.equal(bad.error?.stage, 'validation');
        assert.ok((bad.error?.message.length ?? 0) > 5);
        assert.equal(bad.messageId, undefined);
        assert.ok(!JSON.stringify(result).includes('SECRET-OVERSIZE'), 'no document text in the result');
        const messages = await drain(clientsIn('us-east-1').sqs, t.queueUrl.us);
        assert.deepEqual(messages.map((m) => m.MessageId), [result.results[0]!.messageId]);
        assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), [`documents/${sha256Hex(valid.text)}.txt`]);
      });
    }

    it('a mixed batch across lanes sends exactly the valid documents and names each bad one', async () => {
      // Prepare
      const t = await setupLanes();
      const documents = [
        { text: '', region: 'us' },
        { text: 'good us invoice 1', region: 'us', sourceId: 'g-us-1' },
        { text: 'x', region: 'ap' },
        { text: 'good eu invoice', region: 'eu', sourceId: 'g-eu', jobId: 'j1' },
        { text: 'w', region: 'eu', jobId: 'j1' },
        { text: 'SECRET-OVERSIZE '.repeat(20), region: 'us', sourceId: 'too-big' },
        { text: 'good us invoice 2', region: 'us-east-1', sourceId: 'g-us-2' },
      ];
      // Act
      const result = await submitDocuments({ documents }, baseDeps(t.lanes, { maxDocumentBytes: 100 }));
      // Assess
      assert.deepEqual([result.total, result.sent, result.failed, result.rejected], [7, 3, 0, 4]);
      assert.deepEqual(
        result.results.map((r) => [r.index, r.status, r.error?.code ?? null]),
        [
          [0, 'rejected', 'empty_document'],
          [1, 'sent', null],
          [2, 'rejected', 'unknown_region'],
          [3, 'sent', null],
          [4, 'rejected', 'bad_input'],
          [5, 'rejected', 'document_too_large'],
          [6, 'sent', null],
        ],
      );
      assert.equal(result.results[0]!.sourceId, `text:${sha256Hex('')}`);
      assert.deepEqual([result.results[4]!.jobId, result.results[4]!.region], ['j1', 'eu']);
      assert.equal(result.results[2]!.region, 'ap');
      assert.ok(!JSON.stringify(result).includes('SECRET-OVERSIZE'));
      const usSources = (await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).map((m) => JobSchema.parse(JSON.parse(m.Body!)).input.sourceId);
      const euSources = (await drain(clientsIn('eu-central-1').sqs, t.queueUrl.eu)).map((m) => JobSchema.parse(JSON.parse(m.Body!)).input.sourceId);
      assert.deepEqual(usSources.sort(), ['g-us-1', 'g-us-2']);
      assert.deepEqual(euSources, ['g-eu']);
      assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), [sha256Hex('good us invoice 1'), sha256Hex('good us invoice 2')].map((h) => `documents/${h}.txt`).sort());
      assert.deepEqual(await objectKeys('eu-central-1', t.bucket.eu), [`documents/${sha256Hex('good eu invoice')}.txt`]);
    });

    it('a single bad document is rejected, nothing is sent, and the call does not throw', async () => {
      // Prepare
      const t = await setupLanes();
      const deps = baseDeps(t.lanes);
      // Act
      const result = await submitDocuments({ documents: [{ text: 'x', region: 'mars', sourceId: 'lost' }] }, deps);
      // Assess
      assert.deepEqual([result.total, result.sent, result.failed, result.rejected], [1, 0, 0, 1]);
      assert.deepEqual(result.results, [
        {
          index: 0,
          sourceId: 'lost',
          jobId: '',
          region: 'mars',
          idempotencyKey: '',
          status: 'rejected',
          error: { code: 'unknown_region', message: result.results[0]!.error!.message, stage: 'validation' },
        },
      ]);
      assert.match(result.results[0]!.error!.message, /unknown region "mars"; known lanes: us, eu/);
      assert.deepEqual(deps.regionsAsked, [], 'no client was even asked for');
      assert.equal((await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).length, 0);
      assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), []);
    });
  });

  describe('with atomic: true, rejects bad input with a typed error and sends nothing', () => {
    for (const c of badCases) {
      it(c.name, async () => {
        // Prepare
        const t = await setupLanes();
        const deps = baseDeps(t.lanes, { ...c.deps, atomic: true });
        // Act
        const error = await submitDocuments({ documents: [valid, c.doc as never] }, deps).then(
          () => assert.fail('expected a rejection'),
          (e: unknown) => e,
        );
        // Assess
        assert.ok(error instanceof SubmissionRejectedError);
        assert.equal(error.name, 'SubmissionRejectedError');
        assert.equal(error.items.length, 1);
        assert.equal(error.items[0]!.index, 1);
        assert.equal(error.items[0]!.reason, c.reason);
        assert.ok(!error.message.includes('SECRET-OVERSIZE') && !JSON.stringify(error.items).includes('SECRET-OVERSIZE'));
        assert.deepEqual(deps.regionsAsked, [], 'no client was even asked for');
        assert.equal((await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).length, 0);
        assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), []);
      });
    }

    it('lists every bad item of a submission at once', async () => {
      // Prepare
      const t = await setupLanes();
      // Act
      const error = await submitDocuments(
        { documents: [{ text: '', region: 'us' }, valid, { text: 'x', region: 'ap' }, { text: 'z', region: 'eu', jobId: 'j1' }, { text: 'w', region: 'eu', jobId: 'j1' }] },
        baseDeps(t.lanes, { atomic: true }),
      ).catch((e: unknown) => e);
      // Assess
      assert.ok(error instanceof SubmissionRejectedError);
      assert.deepEqual(
        error.items.map((i) => [i.index, i.reason]),
        [
          [0, 'empty_document'],
          [2, 'unknown_region'],
          [4, 'bad_input'],
        ],
      );
      assert.equal(error.items[0]!.sourceId, `text:${sha256Hex('')}`);
      assert.match(error.message, /^rejected 3 of 5 document\(s\), nothing was sent: #0 \(text:[a-f0-9]{64}\) empty_document/);
      assert.equal((await drain(clientsIn('eu-central-1').sqs, t.queueUrl.eu)).length, 0);
    });
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
      { documents: [{ text: 'u1', region: 'us' }, { text: 'e1', region: 'eu' }, { text: 'u2', region: 'us' }, { text: 'e2', region: 'eu' }] },
      deps,
    );
    // Assess
    assert.deepEqual(flakySpy.calls, [2, 2]);
    assert.deepEqual(downSpy.calls, [2, 2, 2]);
    assert.deepEqual(result.results.map((r) => r.status), ['sent', 'failed', 'sent', 'failed']);
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
    const result = await submitDocuments({ documents: [{ text: 'a', region: 'us' }, { text: 'b', region: 'us' }] }, baseDeps(lanes));
    // Assess
    assert.equal(result.failed, 2);
    assert.ok(result.results.every((r) => r.status === 'failed' && r.error?.stage === 'queue_url'));
    assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), []);
  });
});

describe('producer: ratelane submit', () => {
  const capture = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) }, env: {} } };
  };

  it('submits files, a folder and text end to end with --json', async () => {
    // Prepare
    const t = await setupLanes();
    const dir = await mkdtemp(join(tmpdir(), 'ratelane-submit-'));
    try {
      await mkdir(join(dir, 'batch'));
      await writeFile(join(dir, 'one.txt'), 'CLI-MARKER invoice one');
      await writeFile(join(dir, 'batch', 'a.txt'), 'invoice a');
      await writeFile(join(dir, 'batch', 'b.txt'), 'invoice b');
      const c = capture();
      // Act
      const code = await runSubmitCommand(
        ['--region', 'eu', '--file', join(dir, 'one.txt'), '--dir', join(dir, 'batch'), '--text', 'inline invoice', '--json', '--endpoints', JSON.stringify(endpoints)],
        c.io,
        { lanes: t.lanes },
      );
      // Assess
      assert.equal(code, 0);
      assert.equal(c.out.length, 1, 'exactly one JSON object on stdout');
      const summary = JSON.parse(c.out[0]!) as { ok: boolean; sent: number; failed: number; results: { sourceId: string; status: string; region: string }[] };
      assert.equal(summary.ok, true);
      assert.equal(summary.sent, 4);
      assert.deepEqual(
        summary.results.map((r) => r.sourceId),
        [join(dir, 'one.txt'), join(dir, 'batch', 'a.txt'), join(dir, 'batch', 'b.txt'), `text:${sha256Hex('inline invoice')}`],
      );
      assert.ok(summary.results.every((r) => r.region === 'eu' && r.status === 'sent'));
      assert.ok(c.err.join('').includes('validated 4 document(s)'));
      assert.ok(!c.err.join('').includes('CLI-MARKER') && !c.out.join('').includes('CLI-MARKER'));
      assert.equal((await drain(clientsIn('eu-central-1').sqs, t.queueUrl.eu)).length, 4);
      assert.equal((await objectKeys('eu-central-1', t.bucket.eu)).length, 4);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads endpoints from RATELANE_ENDPOINTS and prints a readable summary', async () => {
    // Prepare
    const t = await setupLanes();
    const c = capture();
    // Act
    const code = await runSubmitCommand(['--region', 'us', '--text', 'hello', '--source-id', 'ticket-9'], { ...c.io, env: { RATELANE_ENDPOINTS: JSON.stringify(endpoints) } }, {
      lanes: t.lanes,
    });
    // Assess
    assert.equal(code, 0);
    assert.match(c.out.join(''), /submitted 1 document\(s\): 1 sent, 0 failed\n {2}sent {4}#0 ticket-9 -> us job /);
    assert.equal((await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).length, 1);
  });

  it('by default sends the valid documents, lists each rejected one with its reason and exits 2', async () => {
    // Prepare
    const t = await setupLanes();
    const c = capture();
    const cj = capture();
    // Act
    const code = await runSubmitCommand(['--region', 'us', '--text', '   ', '--text', 'fine', '--endpoints', JSON.stringify(endpoints)], c.io, { lanes: t.lanes });
    const codeJson = await runSubmitCommand(['--region', 'us', '--text', 'CLI-MARKER fine too', '--text', '', '--json', '--endpoints', JSON.stringify(endpoints)], cj.io, {
      lanes: t.lanes,
    });
    // Assess
    assert.equal(code, 2);
    const out = c.out.join('');
    assert.match(out, /submitted 2 document\(s\): 1 sent, 0 failed, 1 rejected\n/);
    assert.match(out, /\n {2}REJECTED #0 text:[a-f0-9]{64}: empty_document: document is whitespace only \(3 bytes\)\n/);
    assert.match(out, /\n {2}sent {4}#1 text:[a-f0-9]{64} -> us job /);
    assert.match(out, /1 document\(s\) rejected and not sent; 1 of 2 sent anyway/);
    assert.match(c.err.join(''), /validated 1 document\(s\): us 1; 1 rejected, not sent/);
    assert.equal(codeJson, 2);
    assert.equal(cj.out.length, 1, 'exactly one JSON object on stdout');
    const summary = JSON.parse(cj.out[0]!) as { ok: boolean; sent: number; rejected: number; results: { index: number; status: string; error?: { code: string; stage: string } }[] };
    assert.equal(summary.ok, false);
    assert.deepEqual([summary.sent, summary.rejected], [1, 1]);
    assert.deepEqual(summary.results.map((r) => [r.index, r.status, r.error?.code ?? null, r.error?.stage ?? null]), [
      [0, 'sent', null, null],
      [1, 'rejected', 'empty_document', 'validation'],
    ]);
    assert.ok(!cj.out.join('').includes('CLI-MARKER') && !cj.err.join('').includes('CLI-MARKER'));
    const sources = (await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).map((m) => JobSchema.parse(JSON.parse(m.Body!)).input.sourceId);
    assert.deepEqual(sources.sort(), [`text:${sha256Hex('CLI-MARKER fine too')}`, `text:${sha256Hex('fine')}`].sort());
  });

  it('with --all-or-nothing exits 2 with the reasons when input is rejected, and sends nothing', async () => {
    // Prepare
    const t = await setupLanes();
    const c = capture();
    const ch = capture();
    // Act
    const code = await runSubmitCommand(['--region', 'us', '--text', '   ', '--text', 'fine', '--all-or-nothing', '--json', '--endpoints', JSON.stringify(endpoints)], c.io, {
      lanes: t.lanes,
    });
    const codeHuman = await runSubmitCommand(['--region', 'us', '--text', 'fine', '--text', 'x', '--all-or-nothing', '--schema-version', 'nope', '--endpoints', JSON.stringify(endpoints)], ch.io, {
      lanes: t.lanes,
    });
    // Assess
    assert.equal(codeHuman, 2);
    assert.match(ch.err.join(''), /rejected 2 of 2 document\(s\); nothing was sent\n {2}#0 text:[a-f0-9]{64}: unknown_version: /);
    assert.equal(code, 2);
    const out = JSON.parse(c.out[0]!) as { ok: boolean; error: { kind: string; items: { index: number; reason: string }[] } };
    assert.equal(out.ok, false);
    assert.equal(out.error.kind, 'rejected');
    assert.deepEqual(out.error.items.map((i) => [i.index, i.reason]), [[0, 'empty_document']]);
    assert.equal((await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).length, 0);
  });

  it('exits 2 with a clear message on bad usage', async () => {
    // Prepare
    const cases: [string[], RegExp][] = [
      [['--text', 'x'], /--region is required/],
      [['--region', 'us'], /nothing to submit/],
      [['--region', 'us', '--text', 'x', '--bogus'], /Unknown option '--bogus'/],
      [['--region', 'us', '--text', 'x', '--endpoints', '{nope'], /--endpoints is not valid JSON/],
      [['--region', 'us', '--text', 'x', '--text', 'y', '--source-id', 's'], /--source-id names one document, but 2 were given/],
      [['--region', 'us', '--text', 'x', '--deadline', 'yesterday'], /--deadline "yesterday" is not a date/],
      [['--region', 'us', '--dir', '/nonexistent/ratelane-dir'], /cannot read folder \/nonexistent\/ratelane-dir \(ENOENT\)/],
    ];
    for (const [argv, expected] of cases) {
      const c = capture();
      // Act
      const code = await runSubmitCommand(argv, c.io);
      // Assess
      assert.equal(code, 2, argv.join(' '));
      assert.match(c.err.join(''), expected);
    }
  });
});
