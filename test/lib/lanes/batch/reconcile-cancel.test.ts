/**
 * Reconciling a batch that is being cancelled, on the local services and the fake
 * provider's Batch API with its clock moved by hand. A cancel whose provider call failed leaves the
 * header `cancelling` with the provider's job still running; the reconcile pass asks the provider to
 * stop every open part (asking again is safe), reads what the stopped job answered once the provider
 * reports it ended, and ends the batch `cancelled`: the answered items committed, the rest unresolved
 * (`cancelled`). Also the fake provider's batch stats: `invalidCustomIds` is there (empty) from the
 * start and a snapshot is a copy.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadCorpus } from '../../../../workbench/corpus/index.js';
import { createOpenAiBatchProvider } from '../../../../lib/lanes/batch/providers/openai.js';
import { handleOf, reconcileBatch, type ReconcileDeps } from '../../../../lib/lanes/batch/reconcile.js';
import { batchStatus } from '../../../../lib/lanes/batch/status.js';
import { submitBatch, type SubmitBatchDeps } from '../../../../lib/lanes/batch/submit.js';
import { startFakeProvider, type FakeProvider } from '../../../../workbench/fake-provider/index.js';
import { extractInvoice } from '../../../../workbench/fake-provider/extractors/invoice.js';
import { StatsRecorder } from '../../../../workbench/fake-provider/stats.js';
import { BatchManifest } from '../../../../lib/store/manifest.js';
import { itemIdFor, manifestTableName } from '../../../../lib/store/manifest-model.js';
import { trackedLanes } from '../../../helpers/consumer-harness.js';

const KEY = 'sk-batch-reconcile-cancel';
const providers: FakeProvider[] = [];
after(async () => {
  await Promise.all(providers.map((p) => p.stop()));
});
const newLane = trackedLanes();
const english = loadCorpus().filter((d) => d.language === 'en');
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const documents = (tag: string, n: number) => Array.from({ length: n }, (_, i) => ({ text: english[i % english.length]!.text, sourceId: `${tag}-${i}` }));

/** The fake provider's clock, moved by hand: its batches change state only when the test moves it. */
function manualClock() {
  let t = Date.UTC(2026, 0, 5, 9);
  return { now: () => t, tick: (ms: number) => (t += ms) };
}

/** A lane whose batches go to a fake provider on a hand-moved clock: 4 lines answered one every 15 s once `in_progress`. */
async function slowLane() {
  const clock = manualClock();
  const provider = await startFakeProvider({
    keys: [{ key: KEY }],
    extract: (text) => extractInvoice(text),
    minuteMs: 600,
    seed: 5,
    now: clock.now,
    batch: { validationMs: 100, completionMs: 60_000, finalizingMs: 100, cancellingMs: 100 },
  });
  providers.push(provider);
  const t = await newLane({ provider: { baseUrl: provider.baseUrl } });
  const manifest = new BatchManifest({ dynamodb: t.clients.dynamodb, tableName: manifestTableName(t.lane) });
  const batchProvider = createOpenAiBatchProvider({ apiKey: KEY, baseUrl: provider.baseUrl, timeoutMs: 10_000 });
  const now = () => new Date();
  const submitDeps: SubmitBatchDeps = { lane: t.lane, s3: t.clients.s3, manifest, provider: batchProvider, now };
  const reconcileDeps: ReconcileDeps = { ...submitDeps, results: t.results, ledger: t.ledger, sqs: t.clients.sqs, queueUrl: t.queueUrl, logger: quiet };
  return { t, clock, provider, manifest, batchProvider, submitDeps, reconcileDeps };
}

describe('batch lane: reconciling a cancelling batch stops its running jobs', () => {
  it('a cancelling header with a running part: one pass asks the provider to stop it; later passes end the batch cancelled, answered items committed, the rest unresolved (cancelled)', async () => {
    // Prepare: one part of 4 items running at the provider, two of its lines answered so far
    const l = await slowLane();
    const submitted = await submitBatch(documents('rc', 4), l.submitDeps);
    const batchId = submitted.batchId!;
    l.clock.tick(100 + 35_000);
    // the header moved to cancelling directly, as a cancel whose provider call failed leaves it
    const before = await l.manifest.header(batchId);
    assert.equal(before?.state, 'submitted');
    assert.ok((await l.manifest.updateHeader(batchId, before!.version, { state: 'cancelling', reason: 'cancel requested' })).ok);
    const handle = handleOf(before!, before!.providerJobs[0]!, l.t.lane.provider.model)!;
    // Act: one pass
    const first = await reconcileBatch(batchId, l.reconcileDeps);
    const atProviderAfterFirst = await l.batchProvider.status(handle);
    const statsAfterFirst = l.provider.stats().batches;
    // the provider ends the cancel; later passes read the part and end the batch
    l.clock.tick(100);
    const second = await reconcileBatch(batchId, l.reconcileDeps);
    const third = await reconcileBatch(batchId, l.reconcileDeps);
    const end = await batchStatus(batchId, { manifest: l.manifest, results: l.t.results, ledger: l.t.ledger });
    const statsAtEnd = l.provider.stats().batches;
    // Assess: the first pass asked the provider to stop the running job; it is stopping, not ended
    assert.equal(submitted.parts.length, 1);
    assert.equal(atProviderAfterFirst.providerState, 'cancelling');
    assert.deepEqual([first.state, first.jobsOpen, first.jobsEnded, first.cancelRequested], ['cancelling', 1, 0, 1]);
    assert.deepEqual([statsAfterFirst.created, statsAfterFirst.cancelled, statsAfterFirst.completed], [1, 0, 0]);
    // the second pass read what the stopped job answered and ended the batch
    assert.deepEqual([second.state, second.jobsOpen, second.jobsEnded, second.cancelRequested], ['cancelled', 0, 1, 0]);
    assert.deepEqual(second.moved, { committed: 2, unresolved: 2 });
    assert.deepEqual([statsAtEnd.cancelled, statsAtEnd.linesAnswered, statsAtEnd.linesCancelled, statsAtEnd.completed], [1, 2, 2, 0]);
    // reconciling again changes nothing
    assert.deepEqual([third.state, third.moved, third.cancelRequested], ['cancelled', {}, 0]);
    // the end: the answered half committed, the rest unresolved with reason cancelled
    assert.equal(end.state, 'cancelled');
    assert.deepEqual(
      end.providerJobs.map((p) => p.state),
      ['cancelled'],
    );
    assert.deepEqual(end.outcome, { committed: 2, needsReview: 0, rejected: 0, unresolved: 2, waiting: 0 });
    assert.deepEqual(
      end.unresolved.map((u) => [u.itemId, u.reason]),
      [
        [itemIdFor(2), 'cancelled'],
        [itemIdFor(3), 'cancelled'],
      ],
    );
  });
});

describe("fake provider: the Batch API's stats", () => {
  it('invalidCustomIds is an empty list from the start, and a snapshot is a copy of it', async () => {
    // Prepare
    const recorder = new StatsRecorder([]);
    const provider = await startFakeProvider({ keys: [{ key: KEY }], extract: (text) => extractInvoice(text) });
    providers.push(provider);
    // Act: a snapshot's list changed by its reader
    const snapshot = provider.stats().batches;
    snapshot.invalidCustomIds.push('r0000000000');
    const fresh = recorder.snapshot().batches;
    // Assess: the counters themselves are untouched, and the list is there before any batch
    assert.deepEqual(provider.stats().batches.invalidCustomIds, []);
    assert.deepEqual(fresh.invalidCustomIds, []);
    assert.deepEqual([fresh.droppedCustomIds, fresh.erroredCustomIds], [[], []]);
  });
});
