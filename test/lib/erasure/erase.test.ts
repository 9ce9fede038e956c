/**
 * Lane-bound erasure with the real consumer on DynamoDB Local and fauxqs: a source erased while its job's
 * model call runs is never committed (the commit is one transaction with the tombstone's absence), a job
 * of an erased source still in the queue makes no call, an erasure removes a committed job's result,
 * ledger items and document, and `erasure.afterErasure: accept` lets a later submission run again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { eraseSource, type EraseDeps, laneEraseDeps } from '../../../lib/erasure/erase.js';
import { BatchManifest } from '../../../lib/store/manifest.js';
import { itemIdFor, manifestTableName } from '../../../lib/store/manifest-model.js';
import type { ModelAdapter } from '../../../lib/providers/model.js';
import { idempotencyKeyFor, sha256Hex } from '../../../lib/contract/job.js';
import { documentKeyFor } from '../../../lib/store/documents.js';
import { ErasureLedger } from '../../../lib/store/erasure.js';
import { jobStatus } from '../../../lib/store/job-status.js';
import {
  englishDocuments,
  invoke,
  queueCounts,
  receive,
  scriptedModel,
  submitTo,
  testConsumer,
  trackedLanes,
  type TestLane,
} from '../../helpers/consumer-harness.js';

const newLane = trackedLanes();

function eraseDeps(t: TestLane): EraseDeps {
  return {
    lane: t.lane,
    erasure: new ErasureLedger({ dynamodb: t.clients.dynamodb, tableName: t.lane.resources.ledgerTable, retentionDays: t.lane.retention.ledgerDays }),
    results: t.results,
    s3: t.clients.s3,
    now: () => new Date(),
    // DynamoDB Local updates its indexes with the write: no second pass to wait for.
    indexSettleMs: 0,
  };
}

/** Whether the lane's bucket still holds the document of `sha`. */
async function documentExists(t: TestLane, sha: string): Promise<boolean> {
  try {
    await t.clients.s3.send(new HeadObjectCommand({ Bucket: t.lane.resources.bucketName, Key: documentKeyFor(sha) }));
    return true;
  } catch {
    return false;
  }
}

describe('erasure: what the lane keeps of an erased source', () => {
  it("a source erased while its job's model call runs is not committed: nothing of the job is kept", async () => {
    // Prepare: one job; the model erases its source while "answering" (the erasure lands mid-call)
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const sourceId = `${doc!.sourceId}#erase-mid-call`;
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId }]);
    const inner = scriptedModel();
    let receipt: Awaited<ReturnType<typeof eraseSource>> | undefined;
    const model: ModelAdapter = {
      provider: 'scripted',
      async extract(request) {
        const answer = await inner.extract(request);
        receipt = await eraseSource(eraseDeps(t), { sourceId, by: 'test' });
        return answer;
      },
    };
    const { handler, sink } = testConsumer(t, model);

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 1 }));

    // Assess: the call was made, its answer never committed, the job's records and document gone
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(inner.calls.length, 1);
    assert.equal(sink.totals.total.Erased, 1);
    assert.equal(sink.totals.total.Completed, undefined);
    assert.equal(await t.results.count(), 0);
    assert.deepEqual(await t.ledger.entriesFor(item!.jobId), []);
    assert.equal(await t.ledger.claimOf(item!.jobId), undefined);
    assert.equal(await documentExists(t, sha256Hex(doc!.text)), false);
    assert.equal((await jobStatus(item!.jobId, { results: t.results, ledger: t.ledger })).state, 'unknown');
    assert.equal((await eraseDeps(t).erasure.erasedJob(item!.jobId))?.erasedBy, 'ratelane (a job of an erased source)');
    assert.ok(receipt);
    assert.equal(receipt.found, true, 'the job was claimed before the erasure ran');
    assert.deepEqual((await eraseDeps(t).erasure.tombstone(sourceId))?.contentSha256s, [sha256Hex(doc!.text)]);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });

  it('a job of a source erased while it waits in the queue makes no call when it comes, and leaves nothing', async () => {
    // Prepare: two jobs queued; one's source is erased before any consumer saw it
    const t = await newLane();
    const docs = englishDocuments(2);
    const [erased, kept] = await submitTo(
      t,
      docs.map((d, i) => ({ text: d.text, sourceId: `${d.sourceId}#queued-${i}` })),
    );
    const receipt = await eraseSource(eraseDeps(t), { sourceId: `${docs[0]!.sourceId}#queued-0`, by: 'test' });
    const model = scriptedModel();
    const { handler, sink } = testConsumer(t, model);

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 2, waitSeconds: 1 }));

    // Assess: the erasure found nothing yet (no job claimed); the job was stopped at its receive, the other committed
    assert.equal(receipt.found, false);
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(model.calls.length, 1, 'only the other job was called for');
    assert.equal(sink.totals.total.Erased, 1);
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(await t.results.get(erased!.idempotencyKey), undefined);
    assert.ok(await t.results.get(kept!.idempotencyKey));
    assert.deepEqual(await t.ledger.entriesFor(erased!.jobId), []);
    assert.equal(await documentExists(t, sha256Hex(docs[0]!.text)), false, 'its document is removed when it is stopped');
    assert.equal(await documentExists(t, sha256Hex(docs[1]!.text)), true);
  });

  it("erasing a committed source (twice at once) removes its result, ledger items and document once; the lane's other jobs stay", async () => {
    // Prepare: two committed jobs
    const t = await newLane();
    const docs = englishDocuments(2);
    const items = await submitTo(
      t,
      docs.map((d, i) => ({ text: d.text, sourceId: `${d.sourceId}#committed-${i}` })),
    );
    const { handler } = testConsumer(t, scriptedModel());
    await invoke(t, handler, await receive(t, { max: 2, waitSeconds: 1 }));
    assert.equal(await t.results.count(), 2);

    // Act: two erasures of the source at once, then one more
    const sourceId = `${docs[0]!.sourceId}#committed-0`;
    const [receipt, twin] = await Promise.all([
      eraseSource(eraseDeps(t), { sourceId, by: 'ops@example.com' }),
      eraseSource(eraseDeps(t), { sourceId, by: 'ops@example.com' }),
    ]);
    const again = await eraseSource(eraseDeps(t), { sourceId, by: 'ops@example.com' });

    // Assess
    assert.equal(receipt.found, true);
    assert.deepEqual(
      receipt.jobs.map((j) => j.jobId),
      [items[0]!.jobId],
    );
    const removed = [...receipt.jobs, ...twin!.jobs].filter((j) => j.resultRemoved);
    assert.equal(removed.length, 1, 'the result was removed once, by one of the two');
    assert.deepEqual(receipt.documents, [documentKeyFor(sha256Hex(docs[0]!.text))]);
    assert.deepEqual([receipt.tombstone.erasedBy, receipt.afterErasure], ['ops@example.com', 'refuse']);
    assert.equal(await t.results.get(items[0]!.idempotencyKey), undefined);
    assert.deepEqual(await t.ledger.entriesFor(items[0]!.jobId), []);
    assert.equal(await documentExists(t, sha256Hex(docs[0]!.text)), false);
    assert.ok(await t.results.get(items[1]!.idempotencyKey), 'the other source is untouched');
    assert.equal(await documentExists(t, sha256Hex(docs[1]!.text)), true);
    assert.deepEqual([again.found, again.tombstone.erasures, again.jobs.length, again.tombstone.erasedAt], [true, 3, 0, receipt.tombstone.erasedAt]);
  });

  it("an operator's erasure reaches the source's batch items: their results and ledger entries go, the receipt lists them", async () => {
    // Prepare: a batch item of the source whose result the batch lane committed (no job claim: batches claim none)
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const sourceId = `${doc!.sourceId}#batch`;
    const contentSha256 = sha256Hex(doc!.text);
    const deps = laneEraseDeps(t.lane, t.clients, { local: true });
    const manifest = new BatchManifest({ dynamodb: t.clients.dynamodb, tableName: manifestTableName(t.lane) });
    const idempotencyKey = idempotencyKeyFor({ sourceId, contentSha256, promptVersion: 'invoice-extract@3', schemaVersion: 'invoice@1' });
    await manifest.createBatch({ batchId: 'b-erase', lane: t.lane.name, schemaVersion: 'invoice@1', promptVersion: 'invoice-extract@3' }, [
      {
        itemId: itemIdFor(0),
        sourceId,
        jobId: 'job-batch-0',
        idempotencyKey,
        contentSha256,
        documentKey: documentKeyFor(contentSha256),
        bytes: 10,
        estimatedTokens: 5,
      },
    ]);
    await t.results.commitOnce({
      idempotencyKey,
      jobId: 'job-batch-0',
      region: t.lane.name,
      schemaVersion: 'invoice@1',
      promptVersion: 'invoice-extract@3',
      result: {},
      usage: { inputTokens: 1, outputTokens: 1 },
      model: 'batch',
      attempt: 0,
      deferrals: 0,
      modelCalls: 1,
      committedAt: new Date().toISOString(),
      jobCreatedAt: new Date().toISOString(),
    });

    // Act
    const receipt = await eraseSource(deps, { sourceId, by: 'ops@example.com' });

    // Assess
    assert.equal(receipt.found, true);
    assert.deepEqual(receipt.jobs, []);
    assert.deepEqual(receipt.batchItems, [{ batchId: 'b-erase', itemId: itemIdFor(0), jobId: 'job-batch-0', resultRemoved: true, ledgerItemsRemoved: 0 }]);
    assert.deepEqual(receipt.documents, [documentKeyFor(contentSha256)]);
    assert.equal(await t.results.get(idempotencyKey), undefined);
  });

  it("in a Bedrock lane, the source's records leave the batch's input and output files in the lane's bucket; the others stay", async () => {
    // Prepare: a batch of two sources' items, its input and output JSONL as Bedrock has them
    const t = await newLane({ provider: { kind: 'bedrock', model: 'anthropic.claude-3-5-haiku-20241022-v1:0' } });
    const docs = englishDocuments(2);
    const sourceIds = docs.map((d, i) => `${d.sourceId}#bedrock-${i}`);
    const manifest = new BatchManifest({ dynamodb: t.clients.dynamodb, tableName: manifestTableName(t.lane) });
    await manifest.createBatch(
      { batchId: 'b-bedrock', lane: t.lane.name, schemaVersion: 'invoice@1', promptVersion: 'invoice-extract@3' },
      docs.map((d, i) => {
        const contentSha256 = sha256Hex(d.text);
        return {
          itemId: itemIdFor(i),
          sourceId: sourceIds[i]!,
          jobId: `job-bedrock-${i}`,
          idempotencyKey: idempotencyKeyFor({ sourceId: sourceIds[i]!, contentSha256, promptVersion: 'invoice-extract@3', schemaVersion: 'invoice@1' }),
          contentSha256,
          documentKey: documentKeyFor(contentSha256),
          bytes: d.text.length,
          estimatedTokens: 100,
        };
      }),
    );
    const line = (i: number, extra: object) => JSON.stringify({ recordId: itemIdFor(i), modelInput: { text: `document ${i}` }, ...extra });
    const input = `${line(0, {})}\n${line(1, {})}\n`;
    const output = `${line(0, { modelOutput: { answer: 0 } })}\n${line(1, { modelOutput: { answer: 1 } })}\n`;
    const put = (Key: string, Body: string) => t.clients.s3.send(new PutObjectCommand({ Bucket: t.lane.resources.bucketName, Key, Body }));
    await put('batch/b-bedrock/input/0.jsonl', input);
    await put('batch/b-bedrock/output/job1/0.jsonl.out', output);
    const read = async (Key: string) =>
      (await (await t.clients.s3.send(new GetObjectCommand({ Bucket: t.lane.resources.bucketName, Key }))).Body?.transformToString()) ?? '';

    // Act
    const receipt = await eraseSource(laneEraseDeps(t.lane, t.clients, { local: true }), { sourceId: sourceIds[0]!, by: 'ops' });

    // Assess
    assert.deepEqual(receipt.batchFiles, [
      { batchId: 'b-bedrock', filesRewritten: ['batch/b-bedrock/input/0.jsonl', 'batch/b-bedrock/output/job1/0.jsonl.out'], linesRemoved: 2, tooLarge: [] },
    ]);
    assert.equal(await read('batch/b-bedrock/input/0.jsonl'), `${line(1, {})}\n`);
    assert.equal(await read('batch/b-bedrock/output/job1/0.jsonl.out'), `${line(1, { modelOutput: { answer: 1 } })}\n`);
  });

  it('with afterErasure accept, a submission made after the erasure runs again; the default refuses it', async () => {
    // Prepare: a source erased in two lanes, one accepting later submissions; then it is submitted again to both
    const refusing = await newLane();
    const accepting = await newLane({ erasure: { afterErasure: 'accept' } });
    const [doc] = englishDocuments(1);
    const sourceId = `${doc!.sourceId}#after`;
    for (const t of [refusing, accepting]) await eraseSource(eraseDeps(t), { sourceId, by: 'test' });
    await new Promise((r) => setTimeout(r, 5));
    for (const t of [refusing, accepting]) await submitTo(t, [{ text: doc!.text, sourceId }]);

    // Act
    const counts = [];
    for (const t of [refusing, accepting]) {
      const { handler, sink } = testConsumer(t, scriptedModel());
      await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 1 }));
      counts.push([sink.totals.total.Erased ?? 0, sink.totals.total.Completed ?? 0, await t.results.count()]);
    }

    // Assess
    assert.deepEqual(counts, [
      [1, 0, 0],
      [0, 1, 1],
    ]);
  });
});
