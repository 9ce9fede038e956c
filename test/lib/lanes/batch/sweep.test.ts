/**
 * One sweep of a lane's batches (`sweepBatches`, what the scheduled reconciler runs) on the local
 * services and the fake provider's OpenAI Batch API: every batch not done or cancelled gets its pass,
 * oldest first; a batch whose pass fails (its provider job cannot be polled) is reported with its
 * error's name while the others are reconciled to the end; the report carries per batch its state,
 * moves and unresolved items, and for the lane the items moved, errors, open batches, unresolved items
 * (finished batches included) and the oldest open batch's age; a batch whose pass could not settle an
 * item counts as an error and the next sweep settles it; `maxBatches` and the invocation's time left
 * bound a sweep. Nothing logged carries document text.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createAwsClients } from '../../../../lib/platform/clients.js';
import { BatchProviderUnavailableError } from '../../../../lib/lanes/batch/providers/errors.js';
import { createOpenAiBatchProvider } from '../../../../lib/lanes/batch/providers/openai.js';
import type { BatchProvider } from '../../../../lib/lanes/batch/providers/provider.js';
import { submitBatch } from '../../../../lib/lanes/batch/submit.js';
import { type SweepDeps, type SweepReport, sweepBatches } from '../../../../lib/lanes/batch/sweep.js';
import { resolveLanes } from '../../../../lib/config/lanes.js';
import { startFakeProvider, type FakeProvider } from '../../../../workbench/fake-provider/index.js';
import { extractInvoice } from '../../../../workbench/fake-provider/extractors/invoice.js';
import { provisionLane } from '../../../../workbench/local-stack/services/provision.js';
import { Ledger } from '../../../../lib/store/ledger.js';
import { BatchManifest } from '../../../../lib/store/manifest.js';
import { type ItemState, itemIdFor, manifestTableName } from '../../../../lib/store/manifest-model.js';
import { StoreUnavailableError } from '../../../../lib/store/errors.js';
import { ResultStore } from '../../../../lib/store/results.js';
import { englishDocuments } from '../../../helpers/consumer-harness.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';
import { testEndpoints, uniqueLaneResources } from '../../../helpers/endpoints.js';

const KEY = 'sk-batch-sweep';
const providers: FakeProvider[] = [];
after(async () => {
  await Promise.all(providers.map((p) => p.stop()));
});

/**
 * A lane on the local services with the fake provider's Batch API, both on one virtual clock; `failFor`
 * makes polling those batches' jobs fail.
 */
async function sweepLane(batch: NonNullable<Parameters<typeof startFakeProvider>[0]['batch']>) {
  // The clock stands still but when a test moves it: a slow machine's real time never finishes a batch early.
  const clock = virtualClock({ at: Date.now() });
  const fake = await startFakeProvider({ keys: [{ key: KEY }], extract: (text) => extractInvoice(text), minuteMs: 600, seed: 23, batch, now: clock.nowMs });
  providers.push(fake);
  const lane = resolveLanes({ us: { resources: uniqueLaneResources(), provider: { baseUrl: fake.baseUrl } } }).us!;
  const clients = createAwsClients(lane.region, testEndpoints());
  const provisioned = await provisionLane(lane, clients);
  const manifest = new BatchManifest({ dynamodb: clients.dynamodb, tableName: manifestTableName(lane), now: clock.now });
  const real = createOpenAiBatchProvider({ apiKey: KEY, baseUrl: fake.baseUrl, timeoutMs: 10_000 });
  const failFor = new Set<string>();
  const polled: string[] = [];
  const provider: BatchProvider = {
    ...real,
    status: async (handle) => {
      polled.push(handle.batchId);
      if (failFor.has(handle.batchId)) throw new BatchProviderUnavailableError('openai: retrieve HTTP 503', 'openai', false, { status: 503 });
      return real.status(handle);
    },
  };
  const logs: Array<{ level: string; message: string; fields: unknown }> = [];
  const record =
    (level: string) =>
    (message: string, ...fields: unknown[]): void => {
      logs.push({ level, message, fields: fields[0] });
    };
  const deps: SweepDeps = {
    lane,
    s3: clients.s3,
    manifest,
    provider,
    results: new ResultStore({ dynamodb: clients.dynamodb, tableName: lane.resources.resultsTable }),
    ledger: new Ledger({ dynamodb: clients.dynamodb, tableName: lane.resources.ledgerTable }),
    sqs: clients.sqs,
    queueUrl: provisioned.queueUrl,
    logger: { info: record('info'), warn: record('warn'), error: record('error') },
    now: clock.now,
  };
  const submit = async (tag: string, count: number) => {
    const docs = englishDocuments(count).map((d, i) => ({ text: d.text, sourceId: `${tag}-${i}` }));
    const submitted = await submitBatch(docs, deps);
    assert.ok(submitted.batchId, `${tag} was submitted`);
    clock.advance(10); // the next batch is submitted later: the order "oldest first" is told by the clock
    return submitted.batchId;
  };
  return { clock, deps, manifest, failFor, polled, logs, submit };
}

/** Items moved across several sweeps, by state. */
function addMoved(into: Partial<Record<ItemState, number>>, report: SweepReport): void {
  for (const [state, n] of Object.entries(report.moved) as Array<[ItemState, number]>) into[state] = (into[state] ?? 0) + n;
}

describe('sweepBatches', () => {
  it('reconciles every open batch to the end while one batch keeps failing, and reports states, moves, errors, unresolved items and the oldest open batch', async () => {
    // Prepare: three batches; the provider drops some lines; polling the third batch's job fails
    const t = await sweepLane({ completionMs: 1_200, validationMs: 100, finalizingMs: 100, dropRate: 0.25 });
    const first = await t.submit('sweep-a', 6);
    const second = await t.submit('sweep-b', 6);
    const failing = await t.submit('sweep-c', 4);
    t.failFor.add(failing);
    const moved: Partial<Record<ItemState, number>> = {};
    const done = new Set<string>();
    let sweeps = 0;
    // Act: sweep until both healthy batches are done (moving the clock between two sweeps), then once more
    await t.clock.until(
      'both healthy batches are done',
      async () => {
        const report = await sweepBatches(t.deps);
        sweeps += 1;
        addMoved(moved, report);
        for (const b of report.batches) if (b.state === 'done') done.add(b.batchId);
        assert.equal(report.errors, 1, 'the failing batch fails every sweep, the others go on');
        return done.has(first) && done.has(second);
      },
      { everyMs: 300, timeoutMs: 30_000 },
    );
    const last = await sweepBatches(t.deps);
    // Assess: per batch
    const byId = new Map(last.batches.map((b) => [b.batchId, b]));
    const counts = { [first]: await t.manifest.counts(first), [second]: await t.manifest.counts(second) };
    for (const batchId of [first, second]) {
      const swept = byId.get(batchId);
      assert.deepEqual([swept?.outcome, swept?.state, swept?.error], ['final', 'done', undefined], batchId);
      assert.equal(swept?.unresolved, counts[batchId]?.unresolved, `${batchId}: its unresolved items are counted after it is done`);
      assert.equal((counts[batchId]?.committed ?? 0) + (counts[batchId]?.unresolved ?? 0), 6, JSON.stringify(counts[batchId]));
    }
    const broken = byId.get(failing);
    assert.deepEqual([broken?.outcome, broken?.state, broken?.error, broken?.unresolved], ['failed', 'submitted', 'BatchProviderUnavailableError', undefined]);
    assert.deepEqual(
      last.batches.map((b) => b.batchId),
      [first, second, failing],
      'oldest first',
    );
    // Assess: the lane
    const unresolved = (counts[first]?.unresolved ?? 0) + (counts[second]?.unresolved ?? 0);
    assert.ok(unresolved > 0, 'the fake dropped some lines');
    assert.deepEqual(
      [last.errors, last.skipped, last.open, last.settled, last.unresolvedItems],
      [1, 0, 1, 0, unresolved],
      'the last sweep moved nothing; only the failing batch is open',
    );
    assert.equal(last.oldestOpenAgeSeconds, broken?.ageSeconds);
    assert.deepEqual(moved, { committed: 12 - unresolved, unresolved }, 'every item of the healthy batches moved once, across the sweeps');
    assert.ok(sweeps >= 2);
    // Assess: what was logged
    const errors = t.logs.filter((l) => l.level === 'error');
    assert.equal(errors.length, sweeps + 1, 'one error line per sweep, for the failing batch');
    for (const e of errors) {
      assert.deepEqual(e.fields, { lane: 'us', batchId: failing, state: 'submitted', error: 'BatchProviderUnavailableError' });
    }
    const logged = JSON.stringify(t.logs);
    for (const doc of englishDocuments(6)) assert.ok(!logged.includes(doc.text.slice(0, 40).trim()), 'no document text in any log line');
  });

  it('a batch whose pass could not settle an item counts as an error and is logged; the next sweep settles it and ends the batch', async () => {
    // Prepare: one batch of 3; the results table refuses the first commit of its second item
    const t = await sweepLane({ completionMs: 300, validationMs: 100, finalizingMs: 100 });
    const batchId = await t.submit('flaky', 3);
    const flaky = (await t.manifest.item(batchId, itemIdFor(1)))!;
    let refused = 0;
    const results = new Proxy(t.deps.results, {
      get(target, property, receiver) {
        if (property !== 'commitOnce') return Reflect.get(target, property, receiver);
        return async (record: Parameters<ResultStore['commitOnce']>[0]) => {
          if (record.idempotencyKey === flaky.idempotencyKey && refused++ === 0) {
            throw new StoreUnavailableError('PutItem', target.tableName, { cause: new Error('ServiceUnavailable') });
          }
          return target.commitOnce(record);
        };
      },
    });
    const deps = { ...t.deps, results };
    const reports: SweepReport[] = [];
    // Act: sweep until the batch is done
    await t.clock.until(
      'the batch is done',
      async () => {
        const report = await sweepBatches(deps);
        reports.push(report);
        return report.batches[0]?.state === 'done';
      },
      { everyMs: 200, timeoutMs: 10_000 },
    );
    // Assess: one sweep had the failed item: an error, the batch reconciled and open; the next one ended it
    const failing = reports.filter((r) => r.errors > 0);
    assert.equal(failing.length, 1);
    assert.deepEqual(
      [failing[0]?.batches[0]?.outcome, failing[0]?.batches[0]?.failedItems, failing[0]?.batches[0]?.state, failing[0]?.moved],
      ['reconciled', 1, 'submitted', { committed: 2 }],
    );
    assert.deepEqual(reports.at(-1)?.moved, { committed: 1 });
    const logged = t.logs.filter((l) => l.level === 'error' && l.message === 'batch items could not be settled');
    assert.deepEqual(
      logged.map((l) => l.fields),
      [{ lane: 'us', batchId, items: 1, errors: ['StoreUnavailableError'] }],
    );
  });

  it('runs at most maxBatches passes, oldest first, and starts none without the time it needs; skipped batches stay open', async () => {
    // Prepare
    const t = await sweepLane({ completionMs: 60_000, validationMs: 100, finalizingMs: 100 });
    await t.submit('limit-a', 2);
    await t.submit('limit-b', 2);
    // Act
    const limited = await sweepBatches({ ...t.deps, maxBatches: 1 });
    const polledBefore = t.polled.length;
    const hurried = await sweepBatches({ ...t.deps, timeLeftMs: () => 5_000, reserveMs: 10_000 });
    // Assess
    const [oldest, newer] = limited.batches;
    assert.deepEqual([oldest?.outcome, newer?.outcome], ['reconciled', 'skipped']);
    assert.ok(oldest && oldest.jobsOpen === 1 && oldest.unresolved === 0, JSON.stringify(oldest));
    assert.deepEqual([limited.skipped, limited.open, limited.errors], [1, 2, 0]);
    assert.deepEqual(
      hurried.batches.map((b) => b.outcome),
      ['skipped', 'skipped'],
    );
    assert.equal(t.polled.length, polledBefore, 'no provider call without time for it');
    assert.deepEqual([hurried.skipped, hurried.open, hurried.settled], [2, 2, 0]);
    assert.equal(hurried.oldestOpenAgeSeconds, Math.max(...hurried.batches.map((b) => b.ageSeconds)));
  });
});
