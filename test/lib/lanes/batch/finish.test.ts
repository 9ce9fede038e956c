/**
 * Ending a batch (`finishIfEnded`, and the reconcile pass that calls it) on an in-memory manifest: a
 * batch ends (`done`, or `cancelled` when being cancelled) only once its recorded parts carry all of
 * its `itemCount` items and every one of them has ended. A header still `submitting` whose parts
 * recorded so far have all ended, but cover fewer items than the batch has, stays open: more parts are
 * still being submitted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { finishIfEnded, reconcileBatch, type ReconcileDeps } from '../../../../lib/lanes/batch/reconcile.js';
import type { BatchProvider } from '../../../../lib/lanes/batch/providers/provider.js';
import type { BatchManifest } from '../../../../lib/store/manifest.js';
import {
  ITEM_STATES,
  itemIdFor,
  type BatchHeader,
  type BatchState,
  type HeaderChange,
  type HeaderWrite,
  type ItemState,
  type ProviderJobRef,
} from '../../../../lib/store/manifest-model.js';

const CREATED = '2026-12-01T10:00:00.000Z';

/** Part `index` of three items (`p000` is r0–r2, …) in `state`. */
function part(index: number, state: ProviderJobRef['state']): ProviderJobRef {
  return {
    partId: `p${String(index).padStart(3, '0')}`,
    providerJobId: `batch_${index}`,
    kind: 'openai',
    inputRef: `file_${index}`,
    state,
    items: { first: itemIdFor(index * 3), last: itemIdFor(index * 3 + 2), count: 3 },
  };
}

function header(state: BatchState, itemCount: number, providerJobs: ProviderJobRef[]): BatchHeader {
  return {
    batchId: 'b-1',
    lane: 'eu',
    createdAt: CREATED,
    updatedAt: CREATED,
    state,
    schemaVersion: 'invoice.v1',
    promptVersion: 'p1',
    itemCount,
    providerJobs,
    version: 1,
    expiresAt: 0,
  };
}

/** A manifest holding one header: conditional header writes on its version, parts recorded as the submission does. */
function memoryManifest(initial: BatchHeader) {
  let current = structuredClone(initial);
  const written: HeaderChange[] = [];
  const manifest = {
    tableName: 'memory-batch-manifest',
    header: async (batchId: string) => (batchId === current.batchId ? structuredClone(current) : undefined),
    updateHeader: async (_batchId: string, expectedVersion: number, change: HeaderChange): Promise<HeaderWrite> => {
      if (expectedVersion !== current.version) return { ok: false, current: structuredClone(current) };
      written.push(change);
      current = { ...current, ...change, version: current.version + 1 };
      return { ok: true, header: structuredClone(current) };
    },
    /** No item is left to send to the queue lane (none is `sending`). */
    counts: async () => Object.fromEntries(ITEM_STATES.map((state) => [state, 0])) as Record<ItemState, number>,
    /** What `setProviderJob` does to the header: the part added or replaced, the version moved. */
    record: (ref: ProviderJobRef) => {
      const others = current.providerJobs.filter((p) => p.partId !== ref.partId);
      current = { ...current, providerJobs: [...others, ref].sort((a, b) => (a.partId < b.partId ? -1 : 1)), version: current.version + 1 };
    },
  };
  return { manifest, written };
}

/** Reconcile deps whose provider must not be called (every part recorded has ended). */
function reconcileDeps(manifest: ReturnType<typeof memoryManifest>['manifest']): ReconcileDeps {
  const untouched = () => assert.fail('an ended part is not polled');
  const provider = { status: untouched, readResults: untouched, cancel: untouched } as unknown as BatchProvider;
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  return { manifest: manifest as unknown as BatchManifest, provider, logger: quiet, now: () => new Date(CREATED) } as unknown as ReconcileDeps;
}

describe('batch lane: a batch ends only once every part is recorded and ended', () => {
  it('a submitting header whose one recorded part ended but covers 3 of 9 items stays submitting; with all three parts recorded and ended it is done', async () => {
    // Prepare: the submission has recorded p000 (already finished at the provider); p001 and p002 are still being sent
    const { manifest, written } = memoryManifest(header('submitting', 9, [part(0, 'finished')]));
    const deps = reconcileDeps(manifest);
    // Act: a reconcile pass while the submission is under way
    const during = await reconcileBatch('b-1', deps);
    const headerDuring = await manifest.header('b-1');
    const writesDuring = written.length;
    // the submission records the other two parts, which then end
    manifest.record(part(1, 'finished'));
    manifest.record(part(2, 'expired'));
    const after = await reconcileBatch('b-1', deps);
    // Assess: not ended while parts were missing
    assert.equal(during.state, 'submitting');
    assert.equal(headerDuring?.state, 'submitting');
    assert.equal(writesDuring, 0, 'no header write during the submission');
    // ended once every item is in a recorded, ended part
    assert.equal(after.state, 'done');
    assert.deepEqual(written, [{ state: 'done' }]);
    assert.equal((await manifest.header('b-1'))?.state, 'done');
  });

  it('finishIfEnded leaves a header with no part recorded yet as it is', async () => {
    // Prepare: the header was just created; no part is recorded
    const { manifest, written } = memoryManifest(header('submitting', 4, []));
    // Act
    const state = await finishIfEnded('b-1', manifest);
    // Assess
    assert.equal(state, 'submitting');
    assert.deepEqual(written, []);
  });

  it('a cancelling header with fewer items in its ended parts than it has stays cancelling; once the rest is recorded cancelled it is cancelled', async () => {
    // Prepare: a cancel landed during the submission: p000 was stopped, p001 is not recorded yet
    const { manifest, written } = memoryManifest(header('cancelling', 6, [part(0, 'cancelled')]));
    // Act
    const during = await finishIfEnded('b-1', manifest);
    manifest.record(part(1, 'cancelled'));
    const after = await finishIfEnded('b-1', manifest);
    // Assess
    assert.equal(during, 'cancelling');
    assert.equal(after, 'cancelled');
    assert.deepEqual(written, [{ state: 'cancelled' }]);
  });

  it('a batch with a part still open is not ended, whatever its item counts', async () => {
    // Prepare: every part recorded, one still running
    const { manifest, written } = memoryManifest(header('submitted', 6, [part(0, 'finished'), part(1, 'in_progress')]));
    // Act
    const state = await finishIfEnded('b-1', manifest);
    // Assess
    assert.equal(state, 'submitted');
    assert.deepEqual(written, []);
  });
});
