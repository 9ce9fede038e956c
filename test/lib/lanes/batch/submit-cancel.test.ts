/**
 * A cancel that lands while a batch is still being submitted, on the local services and
 * the fake provider's Batch API, with nine documents split into three parts of three. The submission's
 * last header write applies only while the header is still `submitting`, so the cancel stays in force:
 * the header is never `submitted`, the parts not sent yet are never sent (their items unresolved,
 * `cancelled_before_submit`), the parts sent after the cancel's own pass are asked to stop, and
 * reconciling ends the batch `cancelled` with every item accounted for. Without a cancel, a write that
 * lost to another writer is read again and retried, and the batch ends `submitted`.
 *
 * The cancel is injected between the manifest write and the final header write: by a provider whose
 * `submit` runs the cancel once the provider has created a part's job (before the manifest records it),
 * or by a manifest whose `updateHeader` runs it just before the write to `submitted`.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadCorpus } from '../../../../workbench/corpus/index.js';
import { cancelBatch } from '../../../../lib/lanes/batch/cancel.js';
import { createOpenAiBatchProvider } from '../../../../lib/lanes/batch/providers/openai.js';
import type { BatchProvider } from '../../../../lib/lanes/batch/providers/provider.js';
import { reconcileBatch, type ReconcileDeps } from '../../../../lib/lanes/batch/reconcile.js';
import { batchStatus } from '../../../../lib/lanes/batch/status.js';
import { submitBatch, type SubmitBatchDeps } from '../../../../lib/lanes/batch/submit.js';
import { startFakeProvider, type FakeProvider } from '../../../../workbench/fake-provider/index.js';
import { extractInvoice } from '../../../../workbench/fake-provider/extractors/invoice.js';
import { BatchManifest } from '../../../../lib/store/manifest.js';
import { type BatchState, type HeaderChange, type HeaderWrite, manifestTableName } from '../../../../lib/store/manifest-model.js';
import { trackedLanes } from '../../../helpers/consumer-harness.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';

const KEY = 'sk-batch-submit-cancel';
const providers: FakeProvider[] = [];
after(async () => {
  await Promise.all(providers.map((p) => p.stop()));
});
const newLane = trackedLanes();
const english = loadCorpus().filter((d) => d.language === 'en');
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const documents = (tag: string) => Array.from({ length: 9 }, (_, i) => ({ text: english[i % english.length]!.text, sourceId: `${tag}-${i}` }));

/** Where a test injects its cancel (or another writer). */
interface Hooks {
  /** After the provider created part `index`'s job, before the manifest records it. */
  afterProviderSubmit?: (index: number, batchId: string) => Promise<void>;
  /** Just before the header write to `submitted` (after the submission read the header); runs once. */
  beforeSubmittedWrite?: (batchId: string) => Promise<void>;
}

/** The lane's manifest, with a hook before the write to `submitted` and a record of every header state written. */
class HookedManifest extends BatchManifest {
  hooks: Hooks = {};
  readonly written: BatchState[] = [];
  refused = 0;

  override async updateHeader(batchId: string, expectedVersion: number, change: HeaderChange): Promise<HeaderWrite> {
    const hook = change.state === 'submitted' ? this.hooks.beforeSubmittedWrite : undefined;
    if (hook) {
      this.hooks.beforeSubmittedWrite = undefined;
      await hook(batchId);
    }
    const out = await super.updateHeader(batchId, expectedVersion, change);
    if (out.ok && change.state) this.written.push(change.state);
    if (!out.ok) this.refused += 1;
    return out;
  }
}

/**
 * A lane whose batches go to a fake provider that answers nothing for 20 s (so a cancel always finds
 * lines unanswered), in parts of three; the lane and the provider on one virtual clock.
 */
async function cancelLane() {
  const clock = virtualClock();
  const provider = await startFakeProvider({
    keys: [{ key: KEY }],
    extract: (text) => extractInvoice(text),
    minuteMs: 600,
    seed: 3,
    batch: { validationMs: 200, completionMs: 20_000, finalizingMs: 100, cancellingMs: 100 },
    now: clock.nowMs,
  });
  providers.push(provider);
  const t = await newLane({ provider: { baseUrl: provider.baseUrl } });
  const manifest = new HookedManifest({ dynamodb: t.clients.dynamodb, tableName: manifestTableName(t.lane) });
  const base = createOpenAiBatchProvider({ apiKey: KEY, baseUrl: provider.baseUrl, timeoutMs: 10_000, limits: { maxRecordsPerJob: 3 } });
  const batchProvider: BatchProvider = {
    ...base,
    submit: async (input) => {
      const handle = await base.submit(input);
      await manifest.hooks.afterProviderSubmit?.(input.index, input.batchId);
      return handle;
    },
  };
  const now = clock.now;
  const submitDeps: SubmitBatchDeps = { lane: t.lane, s3: t.clients.s3, manifest, provider: batchProvider, now };
  const reconcileDeps: ReconcileDeps = { ...submitDeps, results: t.results, ledger: t.ledger, sqs: t.clients.sqs, queueUrl: t.queueUrl, logger: quiet };
  const cancel = (batchId: string) => cancelBatch(batchId, { lane: t.lane, manifest, provider: base, now });
  /** Reconciles until the batch is cancelled (moving the clock between two passes); its status then. */
  const reconcileToEnd = async (batchId: string) => {
    await clock.until('the batch is reconciled to cancelled', async () => (await reconcileBatch(batchId, reconcileDeps)).state === 'cancelled', {
      timeoutMs: 15_000,
    });
    return batchStatus(batchId, { manifest, results: t.results, ledger: t.ledger });
  };
  return { t, provider, manifest, submitDeps, cancel, reconcileToEnd };
}

/** The reasons of a status's unresolved items, per part of three (`r00000`–`r00002` is p000, …). */
function reasonsByPart(unresolved: { itemId: string; reason: string }[]): string[][] {
  const parts: string[][] = [[], [], []];
  for (const u of unresolved) parts[Math.floor(Number(u.itemId.replace(/\D/g, '')) / 3)]?.push(u.reason);
  return parts;
}

describe('batch lane: a cancel during the submission stays in force', () => {
  it("a cancel during the first part's submission: that part is asked to stop and read, the others never sent, the header never submitted", async () => {
    // Prepare: the cancel runs once the provider has created p000's job, before the manifest records it
    const l = await cancelLane();
    const events: string[] = [];
    let cancelState: BatchState | undefined;
    l.manifest.hooks.afterProviderSubmit = async (index, batchId) => {
      if (index === 0) cancelState = (await l.cancel(batchId)).state;
    };
    // Act
    const report = await submitBatch(documents('first'), { ...l.submitDeps, onProgress: (e) => events.push(`${e.type}: ${e.detail}`) });
    const header = await l.manifest.header(report.batchId!);
    const end = await l.reconcileToEnd(report.batchId!);
    // Assess: the cancel found no part recorded yet, so it left the batch cancelling (not every item's part is known); the submission's one sent part is stopped and read
    assert.equal(cancelState, 'cancelling');
    assert.equal(report.state, 'cancelling');
    assert.deepEqual(
      report.parts.map((p) => [p.partId, p.state]),
      [
        ['p000', 'submitted'],
        ['p001', 'cancelled'],
        ['p002', 'cancelled'],
      ],
    );
    assert.equal(header?.state, 'cancelling');
    assert.ok(!l.manifest.written.includes('submitted'), `header states written: ${l.manifest.written.join(', ')}`);
    assert.ok(
      events.some((e) => /^cancelled: .*stop asked of 1 part/.test(e)),
      events.join('\n'),
    );
    // the batch ends cancelled: p000 stopped at the provider, p001 and p002 never sent; every item unresolved
    assert.equal(end.state, 'cancelled');
    assert.deepEqual(
      end.providerJobs.map((p) => p.state),
      ['cancelled', 'cancelled', 'cancelled'],
    );
    assert.deepEqual(end.outcome, { committed: 0, needsReview: 0, rejected: 0, unresolved: 9, waiting: 0 });
    assert.deepEqual(reasonsByPart(end.unresolved), [
      Array(3).fill('cancelled'),
      Array(3).fill('cancelled_before_submit'),
      Array(3).fill('cancelled_before_submit'),
    ]);
    const stats = l.provider.stats().batches;
    assert.deepEqual([stats.created, stats.cancelled, stats.completed], [1, 1, 0], 'only p000 reached the provider, and it was cancelled');
  });

  it("a cancel after the first part: the part sent after the cancel's pass is asked to stop too, the last one never sent", async () => {
    // Prepare: the cancel runs once the provider has created p001's job (its pass sees p000 only)
    const l = await cancelLane();
    let asked: string[] = [];
    l.manifest.hooks.afterProviderSubmit = async (index, batchId) => {
      if (index === 1) asked = (await l.cancel(batchId)).cancelRequested.map((c) => c.partId);
    };
    // Act
    const report = await submitBatch(documents('second'), l.submitDeps);
    const atEnd = await l.manifest.header(report.batchId!);
    const end = await l.reconcileToEnd(report.batchId!);
    // Assess: the final write left the cancel in force
    assert.deepEqual(asked, ['p000']);
    assert.equal(report.state, 'cancelling');
    assert.equal(atEnd?.state, 'cancelling');
    assert.ok(!l.manifest.written.includes('submitted'));
    assert.deepEqual(
      report.parts.map((p) => p.state),
      ['submitted', 'submitted', 'cancelled'],
    );
    // p001, sent after the cancel's pass, was stopped as well: both provider jobs ended cancelled, none completed
    assert.equal(end.state, 'cancelled');
    assert.deepEqual(reasonsByPart(end.unresolved), [Array(3).fill('cancelled'), Array(3).fill('cancelled'), Array(3).fill('cancelled_before_submit')]);
    const stats = l.provider.stats().batches;
    assert.deepEqual([stats.created, stats.cancelled, stats.completed], [2, 2, 0]);
  });

  it('a cancel between the last part and the final write: the write at the version read is refused, the header stays cancelling', async () => {
    // Prepare: every part is recorded; the cancel lands after the submission read the header
    const l = await cancelLane();
    l.manifest.hooks.beforeSubmittedWrite = async (batchId) => {
      await l.cancel(batchId);
    };
    // Act
    const report = await submitBatch(documents('third'), l.submitDeps);
    const end = await l.reconcileToEnd(report.batchId!);
    // Assess
    assert.equal(report.state, 'cancelling');
    assert.equal(l.manifest.refused, 1, 'the write to submitted was refused once, and not retried over the cancel');
    assert.ok(!l.manifest.written.includes('submitted'));
    assert.equal(end.state, 'cancelled');
    assert.deepEqual(reasonsByPart(end.unresolved), [Array(3).fill('cancelled'), Array(3).fill('cancelled'), Array(3).fill('cancelled')]);
    assert.deepEqual([l.provider.stats().batches.created, l.provider.stats().batches.cancelled], [3, 3]);
  });

  it('without a cancel, a final write that lost to another writer is read again and retried: the batch ends submitted', async () => {
    // Prepare: another writer (a reconcile pass recording a part) moves the header's version under the final write
    const l = await cancelLane();
    l.manifest.hooks.beforeSubmittedWrite = async (batchId) => {
      const header = await l.manifest.header(batchId);
      assert.ok((await l.manifest.setProviderJob(batchId, header!.providerJobs[0]!)).ok);
    };
    // Act
    const report = await submitBatch(documents('fourth'), l.submitDeps);
    const header = await l.manifest.header(report.batchId!);
    // Assess
    assert.equal(l.manifest.refused, 1);
    assert.equal(report.state, 'submitted');
    assert.equal(header?.state, 'submitted');
    assert.deepEqual(l.manifest.written, ['submitted']);
    assert.deepEqual(
      report.parts.map((p) => p.state),
      ['submitted', 'submitted', 'submitted'],
    );
  });
});
