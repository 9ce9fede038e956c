/**
 * Bad input, at intake (the producer) and in the queue (a message put there by someone else): a
 * non-JSON body, an unknown schema or prompt version, missing fields, the wrong region, an empty
 * document, a document over the model's input budget or over SQS's size limit, a deadline already
 * past. Each gets a clear reason — an error naming the item at intake, a ledger entry in the queue —
 * never a model call, and the rest of the batch is unaffected.
 *
 * At intake (lib/intake/producer.ts) each bad document is rejected with its reason and never stored
 * or sent, while the good documents of the same submission are sent as usual; with `atomic: true`
 * one bad document rejects the whole submission instead. The single-reason intake cases are in
 * producer.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { JOB_CONTRACT_VERSION, estimateTokens, idempotencyKeyFor, sha256Hex, type Job } from '../../../lib/contract/job.js';
import { DEFAULT_PROMPT_VERSION, DEFAULT_SCHEMA_VERSION, isKnownPromptVersion } from '../../../lib/contract/schemas/registry.js';
import { SubmissionRejectedError, submitDocuments, type DocumentInput } from '../../../lib/intake/producer.js';
import { documentKeyFor, putDocument } from '../../../lib/store/documents.js';
import {
  correctOutput,
  englishDocuments,
  invoke,
  jobOf,
  queueCounts,
  receive,
  scriptedModel,
  sendRaw,
  submitTo,
  testConsumer,
  trackedLanes,
} from '../../helpers/consumer-harness.js';

const newLane = trackedLanes();

/** Text that must never be echoed in an error, a log line or a ledger entry. */
const MARKER = 'BAD-INPUT-MARKER-5c1e';

/** The lane's input budget in these tests: 100,000 tokens per minute (~400 KB of text). */
const TPM = 100_000;

/** An invoice padded with notes to about `bytes` bytes. */
function padded(text: string, bytes: number): string {
  const line = `Note: ${MARKER} archived copy, no further action required.\n`;
  return `${text}\n${line.repeat(Math.ceil(Math.max(0, bytes - text.length) / line.length))}`;
}

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

describe('bad input at intake', () => {
  it('one submission mixing good documents with every kind of bad one: each bad item named with its reason, none of the text echoed, only the good ones sent', async () => {
    // Prepare
    const t = await newLane({ provider: { limits: { tokensPerMinute: TPM } } });
    const [good1, good2] = englishDocuments(2);
    const documents: unknown[] = [
      { text: good1!.text, region: 'us', sourceId: 'good-1' },
      `{"text": "${MARKER} a JSON string, not a document"}`, // 1: not an object
      { text: `${MARKER} no region` }, // 2: missing field
      { text: `${MARKER} wrong region`, region: 'mars' }, // 3
      { text: '', region: 'us' }, // 4: empty
      { text: ' \n\t ', region: 'us' }, // 5: whitespace only
      { text: `${MARKER} x`, region: 'us', schemaVersion: 'invoice@9' }, // 6: unknown schema version
      { text: `${MARKER} x`, region: 'us', promptVersion: 'invoice-extract@99' }, // 7: unknown prompt version
      { text: `${MARKER} x`, region: 'us', deadline: new Date(Date.now() - 60_000) }, // 8: deadline past
      { region: 'us', sourceId: 'no-text' }, // 9: neither text nor path
      { text: padded(good1!.text, 4 * TPM + 50_000), region: 'us', sourceId: 'over-budget' }, // 10: over the input budget
      { text: padded(good1!.text, 1_100_000), region: 'us', sourceId: 'over-bytes' }, // 11: over the 1 MiB document limit
      { text: good2!.text, region: 'us', sourceId: 'good-2' },
    ];
    const deps = {
      lanes: { us: t.lane },
      clientsFor: () => ({ sqs: t.clients.sqs, s3: t.clients.s3 }),
      queueUrlFor: () => t.queueUrl,
      now: () => new Date(),
      isKnownVersion: isKnownPromptVersion,
      defaultVersions: { schemaVersion: DEFAULT_SCHEMA_VERSION, promptVersion: DEFAULT_PROMPT_VERSION },
    };

    // Act
    const result = await submitDocuments({ documents: documents as DocumentInput[] }, deps);

    // Assess: every bad item named with its reason...
    const expected = [
      [1, 'bad_input'],
      [2, 'unknown_region'],
      [3, 'unknown_region'],
      [4, 'empty_document'],
      [5, 'empty_document'],
      [6, 'unknown_version'],
      [7, 'unknown_version'],
      [8, 'deadline_passed'],
      [9, 'bad_input'],
      [10, 'document_too_large'],
      [11, 'document_too_large'],
    ];
    const rejected = result.results.filter((r) => r.status === 'rejected');
    assert.deepEqual(
      rejected.map((r) => [r.index, r.error?.code]),
      expected,
    );
    assert.ok(rejected.every((r) => r.error?.stage === 'validation' && r.messageId === undefined));
    assert.match(rejected.find((r) => r.index === 10)!.error!.message, /tokens, over the input budget of 100000/);
    assert.match(rejected.find((r) => r.index === 11)!.error!.message, /bytes, over the limit of 1048576/);
    for (const r of rejected) assert.ok(r.error!.message.length > 10, `a clear detail for #${r.index}: ${r.error!.message}`);
    assert.ok(!JSON.stringify(result).includes(MARKER), 'no document text in the result');
    // ...and the rest of the batch unaffected: exactly the good ones sent, nothing else on the queue or in the bucket
    assert.deepEqual([result.total, result.sent, result.failed, result.rejected], [13, 2, 0, 11]);
    assert.deepEqual(
      result.results.filter((r) => r.status === 'sent').map((r) => [r.index, r.sourceId]),
      [
        [0, 'good-1'],
        [12, 'good-2'],
      ],
    );
    const messages = await receive(t, { max: 10, waitSeconds: 1, visibilityTimeout: 300 });
    assert.deepEqual(messages.map((m) => jobOf(m).input.sourceId).sort(), ['good-1', 'good-2']);
    assert.ok(messages.every((m) => !m.Body!.includes(MARKER)));
    const stored = await t.clients.s3.send(new ListObjectsV2Command({ Bucket: t.lane.resources.bucketName }));
    assert.deepEqual((stored.Contents ?? []).map((o) => o.Key).sort(), [good1!.text, good2!.text].map((text) => documentKeyFor(sha256Hex(text))).sort());

    // Act 2: all-or-nothing, the same submission is refused as a whole
    const error = await submitDocuments({ documents: documents as DocumentInput[] }, { ...deps, atomic: true }).then(
      () => assert.fail('expected a rejection'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof SubmissionRejectedError);
    assert.deepEqual(
      error.items.map((i) => [i.index, i.reason]),
      expected,
    );
    assert.ok(!error.message.includes(MARKER) && !JSON.stringify(error.items).includes(MARKER), 'no document text in the error');
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 2, delayed: 0 }, 'nothing more sent');
  });

  it("a document over SQS's 256 KiB message limit travels by reference: the message stays small and the job commits", async () => {
    // Prepare: ~300 KiB of text, within the lane's input budget
    const t = await newLane({ provider: { limits: { tokensPerMinute: TPM } } });
    const [doc] = englishDocuments(1);
    const big = padded(doc!.text, 300 * 1024);
    assert.ok(Buffer.byteLength(big) > 256 * 1024);
    const model = scriptedModel(() => ({ content: correctOutput(doc!.text) }));

    // Act
    const [item] = await submitTo(t, [{ text: big, sourceId: 'big-document' }]);
    const [message] = await receive(t, { max: 1 });
    const { response } = await invoke(t, testConsumer(t, model).handler, [message!]);

    // Assess
    assert.ok(Buffer.byteLength(message!.Body!) < 2048, `message body ${Buffer.byteLength(message!.Body!)} bytes`);
    assert.ok(!message!.Body!.includes(MARKER));
    assert.equal(jobOf(message!).input.bytes, Buffer.byteLength(big));
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId);
  });
});

describe('bad input in the queue', () => {
  it('twelve bad messages in one batch with four good ones: each bad one rejected with its reason in the ledger, no model call for any, the good ones committed', async () => {
    // Prepare: a lane with an input budget of 100,000 tokens; four good jobs from the real producer
    // (one of them a 300 KiB document, over SQS's message limit, by reference)
    const t = await newLane({ provider: { limits: { tokensPerMinute: TPM } } });
    const docs = englishDocuments(4);
    const bigText = padded(docs[3]!.text, 300 * 1024);
    const goodTexts = [docs[0]!.text, docs[1]!.text, docs[2]!.text, bigText];
    const good = await submitTo(
      t,
      goodTexts.map((text, i) => ({ text, sourceId: `good-${i}` })),
    );
    // Hand-made jobs, as another producer would write them (the good first document is in the bucket)
    const now = new Date().toISOString();
    const firstSha = sha256Hex(docs[0]!.text);
    const template: Job = {
      contractVersion: JOB_CONTRACT_VERSION,
      jobId: 'template',
      idempotencyKey: sha256Hex('template'),
      region: 'us',
      input: {
        bucket: t.lane.resources.bucketName,
        key: documentKeyFor(firstSha),
        sourceId: 'hand-made',
        contentSha256: firstSha,
        bytes: Buffer.byteLength(docs[0]!.text),
        estimatedTokens: estimateTokens(docs[0]!.text),
      },
      schemaVersion: DEFAULT_SCHEMA_VERSION,
      promptVersion: DEFAULT_PROMPT_VERSION,
      attempt: 0,
      deferrals: 0,
      eligibleAt: now,
      createdAt: now,
    };
    // Each hand-made job carries the idempotency key of its own source id, content hash and versions.
    const job = (id: string, patch: Partial<Job> = {}): Job => withOwnKey({ ...template, jobId: id, ...patch });
    // Documents for the bad references: whitespace only, and ~500 KB (over the 100,000-token budget)
    const blank = await putDocument(t.clients.s3, { bucket: t.lane.resources.bucketName, text: '  \n\t  \n' });
    const hugeText = padded(docs[0]!.text, 500_000);
    const huge = await putDocument(t.clients.s3, { bucket: t.lane.resources.bucketName, text: hugeText });
    const ref = (stored: { key: string; contentSha256: string; bytes: number }, text: string) => ({
      ...template.input,
      key: stored.key,
      contentSha256: stored.contentSha256,
      bytes: stored.bytes,
      estimatedTokens: estimateTokens(text),
    });
    const { contractVersion: _v, ...withoutVersion } = template;
    const { idempotencyKey: _k, ...withoutKey } = job('bad-missing-field');
    const bad: Record<string, { body: string; reason: string; byMessage?: boolean }> = {
      notJson: { body: `{"jobId": "bad-not-json", "text": "${MARKER}" this is not JSON`, reason: 'invalid_body', byMessage: true },
      array: { body: '[1, 2, 3]', reason: 'invalid_body', byMessage: true },
      missingField: { body: JSON.stringify(withoutKey), reason: 'invalid_body', byMessage: true },
      noContractVersion: { body: JSON.stringify(withoutVersion), reason: 'unknown_version', byMessage: true },
      futureContract: {
        body: JSON.stringify(job('bad-contract', { contractVersion: (JOB_CONTRACT_VERSION + 1) as 1 })),
        reason: 'unknown_version',
        byMessage: true,
      },
      inlineText: { body: JSON.stringify({ ...job('bad-inline'), text: `${MARKER} `.repeat(8_000) }), reason: 'invalid_body', byMessage: true },
      unknownSchema: { body: JSON.stringify(job('bad-schema', { schemaVersion: 'invoice@9' })), reason: 'unknown_version' },
      unknownPrompt: { body: JSON.stringify(job('bad-prompt', { promptVersion: 'invoice-extract@99' })), reason: 'unknown_version' },
      wrongRegion: { body: JSON.stringify(job('bad-region', { region: 'eu' })), reason: 'region_mismatch' },
      pastDeadline: { body: JSON.stringify(job('bad-deadline', { deadline: new Date(Date.now() - 60_000).toISOString() })), reason: 'deadline' },
      emptyDocument: { body: JSON.stringify(job('bad-empty', { input: ref(blank, '  \n\t  \n') })), reason: 'empty_document' },
      overBudget: { body: JSON.stringify(job('bad-over-budget', { input: ref(huge, hugeText) })), reason: 'too_large' },
    };
    const messageIds: Record<string, string> = {};
    for (const [name, b] of Object.entries(bad)) messageIds[name] = await sendRaw(t, b.body);
    const model = scriptedModel((call) => (call.sha === sha256Hex(bigText) ? { content: correctOutput(docs[3]!.text) } : undefined));
    const { handler, sink } = testConsumer(t, model);
    const batch = await receive(t, { max: 16, waitSeconds: 1 });
    assert.equal(batch.length, 16);

    // Act: one invocation
    const { response } = await invoke(t, handler, batch);

    // Assess: the batch succeeded as a whole
    const failedBodies = batch.filter((m) => response.batchItemFailures.some((f) => f.itemIdentifier === m.MessageId)).map((m) => m.Body!.slice(0, 120));
    assert.deepEqual(
      failedBodies,
      [],
      sink.lines
        .filter((l) => /"level":"(WARN|ERROR)"/.test(l))
        .join('\n')
        .slice(0, 3000),
    );
    // ...the model was called for the good documents only, once each
    assert.deepEqual(model.calls.map((c) => c.sha).sort(), goodTexts.map((text) => sha256Hex(text)).sort());
    // ...the good ones are committed, nothing else
    const results = await t.results.scanAll();
    assert.deepEqual(new Set(results.map((r) => r.jobId)), new Set(good.map((g) => g.jobId)));
    // ...and every bad one has one ledger entry with its reason
    for (const [name, b] of Object.entries(bad)) {
      const jobId = b.byMessage ? `msg:${messageIds[name]}` : (JSON.parse(b.body) as Job).jobId;
      const entries = await t.ledger.entriesFor(jobId);
      assert.deepEqual(
        entries.map((e) => [e.kind, e.reason]),
        [['rejected', b.reason]],
        `${name}: ledger of ${jobId}`,
      );
    }
    const m = sink.totals.total;
    assert.equal(m.Rejected, Object.keys(bad).length);
    assert.equal(m.RegionMismatch, 1);
    assert.equal(m.Completed, 4);
    assert.equal(m.ModelCalls, 4);
    // ...no text of any document in a log line, a metric or the ledger
    const ledger = await t.ledger.scanAll();
    assert.deepEqual(
      ledger.filter((e) => JSON.stringify(e).includes(MARKER)),
      [],
    );
    assert.deepEqual(
      sink.lines.filter((l) => l.includes(MARKER)),
      [],
    );
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
  });
});
