/**
 * The batch lane's submit and reconcile on the local services: documents checked as the
 * producer checks them, stored, recorded in the manifest and sent through the fake provider's OpenAI
 * Batch API; reconciling commits each returned item once and leaves every dropped or errored item
 * unresolved with its reason; reconciling again changes nothing. The fake provider's batches move on a
 * virtual clock (`virtual-clock.ts`) that the test moves between two reconciles, instead of waiting.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadCorpus } from '../../../../workbench/corpus/index.js';
import { createOpenAiBatchProvider } from '../../../../lib/lanes/batch/providers/openai.js';
import { batchPass } from '../../../../lib/lanes/batch/index.js';
import { reconcileBatch, type ReconcileDeps } from '../../../../lib/lanes/batch/reconcile.js';
import { submitBatch, type SubmitBatchDeps } from '../../../../lib/lanes/batch/submit.js';
import { createAwsClients } from '../../../../lib/platform/clients.js';
import { resolveLanes } from '../../../../lib/config/lanes.js';
import { startFakeProvider, type FakeProvider } from '../../../../workbench/fake-provider/index.js';
import { extractInvoice } from '../../../../workbench/fake-provider/extractors/invoice.js';
import { provisionLane } from '../../../../workbench/local-stack/services/provision.js';
import { BatchManifest } from '../../../../lib/store/manifest.js';
import { itemIdOfRecord, manifestTableName } from '../../../../lib/store/manifest-model.js';
import { Ledger } from '../../../../lib/store/ledger.js';
import { ResultStore } from '../../../../lib/store/results.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';
import { testEndpoints, uniqueLaneResources } from '../../../helpers/endpoints.js';

const KEY = 'sk-batch-test';
const providers: FakeProvider[] = [];
after(async () => {
  await Promise.all(providers.map((p) => p.stop()));
});

/** A lane whose batch client talks to a fake provider with the given Batch API options, both on one virtual clock. */
async function batchLane(batch: NonNullable<Parameters<typeof startFakeProvider>[0]['batch']>) {
  const clock = virtualClock();
  const provider = await startFakeProvider({ keys: [{ key: KEY }], extract: (text) => extractInvoice(text), minuteMs: 600, seed: 11, batch, now: clock.nowMs });
  providers.push(provider);
  const lane = resolveLanes({ us: { resources: uniqueLaneResources(), provider: { baseUrl: provider.baseUrl } } }).us!;
  const clients = createAwsClients(lane.region, testEndpoints());
  const provisioned = await provisionLane(lane, clients);
  const manifest = new BatchManifest({ dynamodb: clients.dynamodb, tableName: manifestTableName(lane) });
  const batchProvider = createOpenAiBatchProvider({ apiKey: KEY, baseUrl: provider.baseUrl, timeoutMs: 10_000 });
  const results = new ResultStore({ dynamodb: clients.dynamodb, tableName: lane.resources.resultsTable });
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const now = clock.now;
  const submitDeps: SubmitBatchDeps = { lane, s3: clients.s3, manifest, provider: batchProvider, now };
  const reconcileDeps: ReconcileDeps = {
    lane,
    manifest,
    provider: batchProvider,
    results,
    ledger: new Ledger({ dynamodb: clients.dynamodb, tableName: lane.resources.ledgerTable }),
    sqs: clients.sqs,
    queueUrl: provisioned.queueUrl,
    logger: quiet,
    now,
  };
  return { clock, provider, manifest, results, submitDeps, reconcileDeps };
}

const english = loadCorpus().filter((d) => d.language === 'en');

describe('batch lane: submit and reconcile', () => {
  it('every item ends committed or unresolved with its reason; dropped and errored items are exactly the unresolved ones; twice changes nothing', async () => {
    // Prepare: 30 documents and one that is no text; the fake drops or errors some lines
    const t = await batchLane({ completionMs: 1_500, validationMs: 100, finalizingMs: 100, dropRate: 0.1, errorRate: 0.1 });
    const documents = [
      ...Array.from({ length: 30 }, (_, i) => ({ text: english[i % english.length]!.text, sourceId: `batch-doc-${i}` })),
      { text: '\u200b \n', sourceId: 'batch-empty' },
    ];
    // Act
    const submitted = await submitBatch(documents, t.submitDeps);
    const batchId = submitted.batchId!;
    await t.clock.until('the batch is reconciled to the end', async () => (await reconcileBatch(batchId, t.reconcileDeps)).state === 'done', {
      everyMs: 300,
      timeoutMs: 30_000,
    });
    const again = await reconcileBatch(batchId, t.reconcileDeps);
    // Assess
    assert.equal(submitted.items, 30);
    assert.deepEqual(
      submitted.rejected.map((r) => [r.sourceId, r.reason]),
      [['batch-empty', 'empty_document']],
    );
    const counts = await t.manifest.counts(batchId);
    const header = await t.manifest.header(batchId);
    const stats = t.provider.stats().batches;
    const lost = new Set([...stats.droppedCustomIds, ...stats.erroredCustomIds].map((id) => itemIdOfRecord(header!, id)));
    assert.ok(
      [...stats.droppedCustomIds, ...stats.erroredCustomIds].every((id) => id.startsWith(`${batchId}.`)),
      "every record id sent carries the batch's prefix",
    );
    assert.ok(lost.size > 0, 'the fake dropped or errored some lines');
    assert.equal(counts.committed + counts.unresolved, 30, JSON.stringify(counts));
    assert.equal(counts.unresolved, lost.size, 'unresolved = dropped + errored');
    const items = await t.manifest.items(batchId);
    const unresolved = items.filter((i) => i.state === 'unresolved');
    assert.deepEqual(new Set(unresolved.map((i) => i.itemId)), lost);
    for (const item of unresolved) {
      assert.ok(item.reason, `${item.itemId} says why`);
      assert.equal(await t.results.get(item.idempotencyKey), undefined, 'no committed object for an unresolved item');
    }
    const committed = items.filter((i) => i.state === 'committed');
    for (const item of committed) assert.equal((await t.results.get(item.idempotencyKey))?.jobId, item.jobId);
    assert.deepEqual(again.moved, {}, 'reconciling again moves nothing');
  });

  it('an enqueued-token limit makes the second batch wait and be submitted again; both end committed, each item once', async () => {
    // Prepare: room for about one batch's tokens at a time
    const t = await batchLane({ completionMs: 1_200, validationMs: 100, finalizingMs: 100, enqueuedTokenLimit: 9_000 });
    const docs = (tag: string) => Array.from({ length: 8 }, (_, i) => ({ text: english[i]!.text, sourceId: `${tag}-${i}` }));
    const first = await submitBatch(docs('first'), t.submitDeps);
    const second = await submitBatch(docs('second'), t.submitDeps);
    const deps = { ...t.submitDeps, ...t.reconcileDeps };
    // Act
    await t.clock.until(
      'both batches are done',
      async () => (await batchPass(first.batchId!, deps)).state === 'done' && (await batchPass(second.batchId!, deps)).state === 'done',
      { everyMs: 300, timeoutMs: 40_000 },
    );
    // Assess
    assert.ok(t.provider.stats().batches.failed >= 1, 'the provider refused a batch for its enqueued tokens');
    for (const batchId of [first.batchId!, second.batchId!]) {
      const counts = await t.manifest.counts(batchId);
      assert.equal(counts.committed, 8, `${batchId}: ${JSON.stringify(counts)}`);
    }
    assert.equal((await t.results.scanAll()).length, 16, 'each item committed once');
  });

  it('a batch is one schema and prompt version: a document of another is rejected with mixed_versions, the rest submitted', async () => {
    // Prepare: three invoices and one receipt in one submission
    const t = await batchLane({ completionMs: 600, validationMs: 100, finalizingMs: 100 });
    const documents = [
      ...Array.from({ length: 3 }, (_, i) => ({ text: english[i]!.text, sourceId: `mixed-${i}` })),
      { text: english[3]!.text, sourceId: 'mixed-receipt', schemaVersion: 'receipt@1', promptVersion: 'receipt-extract@1' },
    ];
    // Act
    const submitted = await submitBatch(documents, t.submitDeps);
    // Assess
    assert.equal(submitted.items, 3);
    assert.deepEqual(
      submitted.rejected.map((r) => [r.index, r.sourceId, r.reason]),
      [[3, 'mixed-receipt', 'mixed_versions']],
    );
    assert.match(submitted.rejected[0]!.detail, /receipt@1 \/ receipt-extract@1 differs from the batch's invoice@1 \/ invoice-extract@1/);
    assert.equal((await t.manifest.items(submitted.batchId!)).length, 3, "the manifest holds the batch's own items only");
  });
});
