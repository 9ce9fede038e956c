/**
 * Operating the batch lane on the local services and the fake provider's Batch API: an
 * expired job keeps what it answered (committed) and leaves the rest unresolved (`expired`); a redrive
 * hands the unresolved items to the queue lane, where the real consumer commits each exactly once, and
 * a second redrive sends nothing; a running batch cancelled keeps its answered items and leaves the rest
 * unresolved (`cancelled`), a part still waiting to be submitted is cancelled at once
 * (`cancelled_before_submit`), and reconciling again changes nothing. At every step the status's outcome
 * accounts for every item exactly once. The fake provider's batches move on a virtual clock
 * (`virtual-clock.ts`) that the test moves between two reconciles, instead of waiting.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadCorpus } from '../../../../workbench/corpus/index.js';
import { cancelBatch } from '../../../../lib/lanes/batch/cancel.js';
import { createOpenAiBatchProvider } from '../../../../lib/lanes/batch/providers/openai.js';
import { reconcileBatch, type ReconcileDeps } from '../../../../lib/lanes/batch/reconcile.js';
import { redriveBatch } from '../../../../lib/lanes/batch/redrive.js';
import { batchStatus, type BatchStatusReport } from '../../../../lib/lanes/batch/status.js';
import { submitBatch, type SubmitBatchDeps } from '../../../../lib/lanes/batch/submit.js';
import { startFakeProvider, type FakeProvider, type FakeProviderBatchOptions } from '../../../../workbench/fake-provider/index.js';
import { extractInvoice } from '../../../../workbench/fake-provider/extractors/invoice.js';
import { DEFAULT_PROMPT_VERSION, DEFAULT_SCHEMA_VERSION } from '../../../../lib/contract/schemas/registry.js';
import { BatchManifest } from '../../../../lib/store/manifest.js';
import { itemIdFor, manifestTableName } from '../../../../lib/store/manifest-model.js';
import { invoke, jobOf, queueCounts, receive, scriptedModel, testConsumer, trackedLanes, waitUntil, type TestLane } from '../../../helpers/consumer-harness.js';
import { virtualClock, type VirtualClock } from '../../../helpers/virtual-clock.js';

const KEY = 'sk-batch-operate';
const providers: FakeProvider[] = [];
after(async () => {
  await Promise.all(providers.map((p) => p.stop()));
});
const newLane = trackedLanes();
const english = loadCorpus().filter((d) => d.language === 'en');
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A test lane whose batch client talks to a fake provider with the given Batch API options, both on one virtual clock. */
async function batchLane(batch: FakeProviderBatchOptions) {
  const clock = virtualClock();
  const provider = await startFakeProvider({ keys: [{ key: KEY }], extract: (text) => extractInvoice(text), minuteMs: 600, seed: 7, batch, now: clock.nowMs });
  providers.push(provider);
  const t = await newLane({ provider: { baseUrl: provider.baseUrl } });
  const manifest = new BatchManifest({ dynamodb: t.clients.dynamodb, tableName: manifestTableName(t.lane) });
  const batchProvider = createOpenAiBatchProvider({ apiKey: KEY, baseUrl: provider.baseUrl, timeoutMs: 10_000 });
  const now = clock.now;
  const submitDeps: SubmitBatchDeps = { lane: t.lane, s3: t.clients.s3, manifest, provider: batchProvider, now };
  const reconcileDeps: ReconcileDeps = {
    lane: t.lane,
    manifest,
    provider: batchProvider,
    results: t.results,
    ledger: t.ledger,
    sqs: t.clients.sqs,
    queueUrl: t.queueUrl,
    logger: quiet,
    now,
  };
  const status = async (batchId: string): Promise<BatchStatusReport> => {
    const report = await batchStatus(batchId, { manifest, results: t.results, ledger: t.ledger, now });
    const o = report.outcome;
    assert.equal(o.committed + o.needsReview + o.rejected + o.unresolved + o.waiting, report.items, `outcome accounts for every item: ${JSON.stringify(o)}`);
    return report;
  };
  return { clock, t, provider, manifest, batchProvider, submitDeps, reconcileDeps, status };
}

const documents = (tag: string, n: number) => Array.from({ length: n }, (_, i) => ({ text: english[i % english.length]!.text, sourceId: `${tag}-${i}` }));

/** Runs the real consumer, on `clock`, over the lane's queue until it is empty. */
async function drainQueue(t: TestLane, clock: VirtualClock): Promise<void> {
  const { handler } = testConsumer(t, scriptedModel(), { logLevel: 'ERROR', now: clock.now, sleep: clock.sleep });
  await waitUntil(
    'the queue lane has taken every message',
    async () => {
      const messages = await receive(t, { max: 10 });
      if (messages.length > 0) await invoke(t, handler, messages);
      const c = await queueCounts(t);
      return messages.length === 0 && c.visible + c.notVisible + c.delayed === 0;
    },
    30_000,
    50,
  );
}

describe('batch lane: status, redrive, cancel, expiry', () => {
  it('an expired job: answered items committed, the rest unresolved (expired); a redrive commits each of them once through the queue lane; twice sends nothing', async () => {
    // Prepare: one job of 10 that stalls after half its lines and expires
    const l = await batchLane({ validationMs: 100, completionMs: 800, finalizingMs: 100, windowMs: 2_500, expire: 1, expireAnsweredShare: 0.5 });
    const submitted = await submitBatch(documents('exp', 10), l.submitDeps);
    const batchId = submitted.batchId!;
    const waiting = await l.status(batchId);
    // Act: reconcile to the end, then redrive
    await l.clock.until('the expired batch is reconciled', async () => (await reconcileBatch(batchId, l.reconcileDeps)).state === 'done', {
      everyMs: 200,
      timeoutMs: 20_000,
    });
    const expired = await l.status(batchId);
    const redrive = await redriveBatch(batchId, { lane: l.t.lane, manifest: l.manifest, sqs: l.t.clients.sqs, queueUrl: l.t.queueUrl, now: l.clock.now });
    const inFlight = await l.status(batchId);
    const sentFirst = await queueCounts(l.t);
    const again = await redriveBatch(batchId, { lane: l.t.lane, manifest: l.manifest, sqs: l.t.clients.sqs, queueUrl: l.t.queueUrl, now: l.clock.now });
    const sentAfterSecond = await queueCounts(l.t);
    await drainQueue(l.t, l.clock);
    const end = await l.status(batchId);
    // Assess: before anything ended, every item waits
    assert.equal(waiting.outcome.waiting, 10);
    // the expired job: its answered half committed, the other half unresolved with reason expired
    assert.equal(expired.providerJobs[0]?.state, 'expired');
    assert.deepEqual(expired.outcome, { committed: 5, needsReview: 0, rejected: 0, unresolved: 5, waiting: 0 });
    assert.ok(
      expired.unresolved.every((u) => u.reason === 'expired'),
      JSON.stringify(expired.unresolved),
    );
    // the redrive sent exactly the unresolved items, with their job ids and keys; a second sends nothing
    assert.deepEqual(
      redrive.itemIds,
      expired.unresolved.map((u) => u.itemId),
    );
    assert.deepEqual(redrive.failed, []);
    assert.equal(sentFirst.visible, 5);
    assert.deepEqual(again, { batchId, redriven: 0, itemIds: [], failed: [] });
    assert.equal(sentAfterSecond.visible, 5, 'the second redrive sent nothing');
    assert.equal(inFlight.counts.redriven, 5);
    assert.equal(inFlight.outcome.waiting, 5, 'redriven items wait for the queue lane');
    // the queue lane committed each of them once: every item of the batch has exactly one result
    assert.deepEqual(end.outcome, { committed: 10, needsReview: 0, rejected: 0, unresolved: 0, waiting: 0 });
    const results = await l.t.results.scanAll();
    const items = await l.manifest.items(batchId);
    assert.equal(results.length, 10, 'no extra results');
    assert.deepEqual(new Set(results.map((r) => r.idempotencyKey)), new Set(items.map((i) => i.idempotencyKey)));
    for (const item of items.filter((i) => i.state === 'redriven')) {
      assert.equal(item.reason, 'redrive');
      assert.equal((await l.t.results.get(item.idempotencyKey))?.jobId, item.jobId, 'committed under the same job id');
    }
  });

  it('a running batch cancelled: answered items committed, the rest unresolved (cancelled), header cancelled; reconciling again changes nothing', async () => {
    // Prepare: 12 lines answered over 6 s; cancel once some are answered
    const l = await batchLane({ validationMs: 100, completionMs: 6_000, finalizingMs: 100, cancellingMs: 300 });
    const submitted = await submitBatch(documents('can', 12), l.submitDeps);
    const batchId = submitted.batchId!;
    await l.clock.until(
      'the job runs',
      async () =>
        (await reconcileBatch(batchId, l.reconcileDeps)).jobsOpen === 1 && (await l.manifest.header(batchId))?.providerJobs[0]?.state === 'in_progress',
      { everyMs: 100, timeoutMs: 10_000 },
    );
    l.clock.advance(1_500);
    // Act
    const cancel = await cancelBatch(batchId, { lane: l.t.lane, manifest: l.manifest, provider: l.batchProvider, now: l.clock.now });
    const cancelling = await l.status(batchId);
    await l.clock.until('the cancelled batch is reconciled', async () => (await reconcileBatch(batchId, l.reconcileDeps)).state === 'cancelled', {
      everyMs: 150,
      timeoutMs: 10_000,
    });
    const end = await l.status(batchId);
    const again = await reconcileBatch(batchId, l.reconcileDeps);
    const cancelAgain = await cancelBatch(batchId, { lane: l.t.lane, manifest: l.manifest, provider: l.batchProvider, now: l.clock.now });
    // Assess
    assert.equal(cancel.state, 'cancelling');
    assert.deepEqual(
      cancel.cancelRequested.map((c) => c.partId),
      ['p000'],
    );
    assert.deepEqual(cancel.failed, []);
    assert.equal(cancelling.state, 'cancelling');
    assert.equal(end.state, 'cancelled');
    assert.equal(end.providerJobs[0]?.state, 'cancelled');
    assert.ok(end.outcome.committed > 0 && end.outcome.unresolved > 0, JSON.stringify(end.outcome));
    assert.equal(end.outcome.committed + end.outcome.unresolved, 12);
    assert.ok(
      end.unresolved.every((u) => u.reason === 'cancelled'),
      JSON.stringify(end.unresolved),
    );
    assert.equal((await l.t.results.scanAll()).length, end.outcome.committed, 'one result per committed item');
    assert.deepEqual(again.moved, {});
    assert.equal(again.state, 'cancelled');
    assert.equal(cancelAgain.changed, false, 'a cancelled batch is left as it is');
    assert.deepEqual((await l.status(batchId)).counts, end.counts);
  });

  it('a part still waiting to be submitted is cancelled at once: its items unresolved (cancelled_before_submit), header cancelled', async () => {
    // Prepare: room for one batch's enqueued tokens; the second batch's part fails its admission and waits
    const l = await batchLane({ validationMs: 100, completionMs: 3_000, finalizingMs: 100, enqueuedTokenLimit: 9_000 });
    await submitBatch(documents('first', 8), l.submitDeps);
    const second = (await submitBatch(documents('second', 8), l.submitDeps)).batchId!;
    await l.clock.until(
      'the second batch waits to be submitted again',
      async () => {
        await reconcileBatch(second, l.reconcileDeps);
        return (await l.manifest.header(second))?.providerJobs[0]?.state === 'pending_submit';
      },
      { everyMs: 100, timeoutMs: 10_000 },
    );
    // Act
    const cancel = await cancelBatch(second, { lane: l.t.lane, manifest: l.manifest, provider: l.batchProvider, now: l.clock.now });
    const again = await reconcileBatch(second, l.reconcileDeps);
    const end = await l.status(second);
    // Assess
    assert.equal(cancel.state, 'cancelled');
    assert.deepEqual(cancel.cancelledBeforeSubmit, [{ partId: 'p000', items: 8 }]);
    assert.deepEqual(cancel.cancelRequested, []);
    assert.equal(end.providerJobs[0]?.state, 'cancelled');
    assert.deepEqual(end.outcome, { committed: 0, needsReview: 0, rejected: 0, unresolved: 8, waiting: 0 });
    assert.ok(end.unresolved.every((u) => u.reason === 'cancelled_before_submit'));
    assert.deepEqual(again.moved, {});
    assert.equal(again.state, 'cancelled');
  });

  it('a redrive claims, sends, then settles (a failed send puts the item back unresolved, its reason kept) and leaves the items of a part still open alone', async () => {
    // Prepare: a batch recorded by hand, part p000 ended, part p001 still running; r0, r1 (ended part) and r2 (open part) unresolved
    const t = await newLane();
    const manifest = new BatchManifest({ dynamodb: t.clients.dynamodb, tableName: manifestTableName(t.lane) });
    const hex = (i: number) => i.toString(16).padStart(64, '0');
    const part = (partId: string, state: 'finished' | 'in_progress', first: number) =>
      ({
        partId,
        providerJobId: `batch_${partId}`,
        kind: 'openai',
        inputRef: `file_${partId}`,
        state,
        items: { first: itemIdFor(first), last: itemIdFor(first + 1), count: 2 },
      }) as const;
    await manifest.createBatch(
      {
        batchId: 'b-redrive-open',
        lane: 'us',
        schemaVersion: DEFAULT_SCHEMA_VERSION,
        promptVersion: DEFAULT_PROMPT_VERSION,
        providerJobs: [part('p000', 'finished', 0), part('p001', 'in_progress', 2)],
      },
      [0, 1, 2, 3].map((i) => ({
        itemId: itemIdFor(i),
        sourceId: `doc-${i}`,
        jobId: `job-${i}`,
        idempotencyKey: hex(i + 1),
        contentSha256: hex(100 + i),
        documentKey: `documents/${hex(100 + i)}`,
        bytes: 10,
        estimatedTokens: 5,
      })),
    );
    for (const i of [0, 1, 2]) await manifest.settleItem('b-redrive-open', itemIdFor(i), { from: ['prepared'], to: 'unresolved', reason: 'no_result' });
    const failing = { send: () => Promise.reject(Object.assign(new Error('down'), { name: 'ServiceUnavailable' })) } as unknown as TestLane['clients']['sqs'];
    const deps = { lane: t.lane, manifest, queueUrl: t.queueUrl, now: () => new Date() };
    // Act
    const failed = await redriveBatch('b-redrive-open', { ...deps, sqs: failing });
    const afterFailure = await manifest.counts('b-redrive-open');
    const reasonAfterFailure = (await manifest.item('b-redrive-open', itemIdFor(0)))?.reason;
    const sent = await redriveBatch('b-redrive-open', { ...deps, sqs: t.clients.sqs });
    const messages = await receive(t, { max: 10 });
    // Assess: nothing settled when nothing was sent
    assert.deepEqual(
      failed.failed.map((f) => f.itemId),
      [itemIdFor(0), itemIdFor(1)],
    );
    assert.equal(failed.redriven, 0);
    assert.equal(afterFailure.unresolved, 3);
    assert.equal(afterFailure.sending, 0, 'no item is left claimed');
    assert.equal(reasonAfterFailure, 'no_result', 'back unresolved with the reason it had');
    // sent and settled: only the ended part's items, as the same jobs
    assert.deepEqual(sent.itemIds, [itemIdFor(0), itemIdFor(1)]);
    assert.equal((await manifest.item('b-redrive-open', itemIdFor(2)))?.state, 'unresolved', "the open part's item is left alone");
    assert.equal((await manifest.item('b-redrive-open', itemIdFor(0)))?.reason, 'redrive');
    assert.deepEqual(messages.map((m) => [jobOf(m).jobId, jobOf(m).idempotencyKey]).sort(), [
      ['job-0', hex(1)],
      ['job-1', hex(2)],
    ]);
  });
});
