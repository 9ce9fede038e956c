/**
 * What the batch lane hands to the queue lane is sent once however many reconcilers or redrives run at
 * once, on the local services (fauxqs's queue counted message by message) and the fake provider's
 * Batch API on a virtual clock: each item is claimed first (a conditional write to `sending`), then
 * sent, then settled `redriven`.
 *
 * - four reconcile passes at once over a finished batch: each invalid answer's repair is sent once (and
 *   recorded once in the ledger), every valid answer committed once, no item a duplicate of its own job;
 * - a pass whose settle failed after its commit: the next pass finds the item's own result, `committed`;
 * - two redrives at once: each unresolved item sent once;
 * - a repair whose send fails leaves its item `sending` and the batch open; the next pass sends it once
 *   and ends the batch.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { hasOwnIdempotencyKey, idempotencyKeyFor, JobSchema } from '../../../../lib/contract/job.js';
import { DEFAULT_PROMPT_VERSION as PROMPT, DEFAULT_SCHEMA_VERSION as SCHEMA } from '../../../../lib/contract/schemas/registry.js';
import { reconcileBatch } from '../../../../lib/lanes/batch/reconcile.js';
import { redriveBatch } from '../../../../lib/lanes/batch/redrive.js';
import { submitBatch } from '../../../../lib/lanes/batch/submit.js';
import { StoreUnavailableError } from '../../../../lib/store/errors.js';
import type { BatchManifest } from '../../../../lib/store/manifest.js';
import { itemIdFor, itemIdOfRecord } from '../../../../lib/store/manifest-model.js';
import { scriptedLane } from './scripted-lane.js';

const PACE = { validationMs: 100, completionMs: 600, finalizingMs: 100 };

describe('batch lane: sent once, however many run at once', () => {
  it('four reconciles at once: each repair sent once and recorded once, every valid answer committed, none a duplicate of its own job', async () => {
    // Prepare: 10 documents; the provider answers some with output that fails the schema
    const l = await scriptedLane({ ...PACE, invalidRate: 0.4 });
    const batchId = (await submitBatch(l.documents('four', 10), l.submitDeps)).batchId!;
    await l.untilEnded(batchId);
    const header = (await l.manifest.header(batchId))!;
    const invalid = l.fake.stats().batches.invalidCustomIds.map((id) => itemIdOfRecord(header, id)!);
    assert.ok(invalid.length >= 2 && invalid.length < 10, `the provider spoiled some answers: ${invalid.join(' ')}`);
    // Act
    const passes = await Promise.all([1, 2, 3, 4].map(() => reconcileBatch(batchId, l.reconcileDeps)));
    const messages = await l.drainMessages();
    // Assess: one message per invalid item, none for the others
    const items = await l.manifest.items(batchId);
    const byId = new Map(items.map((i) => [i.itemId, i]));
    const sent = l.perJob(messages);
    assert.deepEqual([...sent.entries()].sort(), invalid.map((id) => [byId.get(id)!.jobId, 1]).sort(), 'each repair sent exactly once');
    for (const id of invalid) {
      const item = byId.get(id)!;
      assert.deepEqual([item.state, /^repair: /.test(item.reason ?? '')], ['redriven', true], id);
      const entries = (await l.t.ledger.entriesFor(item.jobId)).filter((e) => e.kind === 'validation_failed');
      assert.equal(entries.length, 1, `${id}: one validation entry in the ledger`);
    }
    // the valid answers: committed once, never a duplicate of their own job
    for (const item of items.filter((i) => !invalid.includes(i.itemId))) {
      assert.deepEqual([item.itemId, item.state, item.reason], [item.itemId, 'committed', undefined]);
      assert.equal((await l.t.results.get(item.idempotencyKey))?.jobId, item.jobId);
    }
    const moved = passes.reduce((n, p) => n + Object.values(p.moved).reduce((a, b) => a + (b ?? 0), 0), 0);
    assert.equal(moved, 10, 'the four passes moved each item once between them');
    assert.deepEqual(
      passes.flatMap((p) => p.failed),
      [],
    );
    assert.equal((await l.manifest.header(batchId))?.state, 'done');
  });

  it('a commit whose settle failed: the next pass finds the result its own job committed and settles the item committed, never a duplicate of itself', async () => {
    // Prepare: the manifest refuses the first settle of item 1 as committed (after its result was written)
    const l = await scriptedLane(PACE);
    const batchId = (await submitBatch(l.documents('own', 3), l.submitDeps)).batchId!;
    await l.untilEnded(batchId);
    let refused = 0;
    const manifest = new Proxy(l.manifest, {
      get(target, property, receiver) {
        if (property !== 'settleItem') {
          const value = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return async (...args: Parameters<BatchManifest['settleItem']>) => {
          if (args[1] === itemIdFor(1) && args[2].to === 'committed' && refused++ === 0) {
            throw new StoreUnavailableError('PutItem', target.tableName, { cause: new Error('ServiceUnavailable') });
          }
          return target.settleItem(...args);
        };
      },
    });
    const deps = { ...l.reconcileDeps, manifest };
    // Act
    const first = await reconcileBatch(batchId, deps);
    const second = await reconcileBatch(batchId, deps);
    // Assess
    assert.deepEqual(first.failed, [{ itemId: itemIdFor(1), errorName: 'StoreUnavailableError' }]);
    assert.deepEqual([second.moved, second.state], [{ committed: 1 }, 'done']);
    const item = (await l.manifest.item(batchId, itemIdFor(1)))!;
    assert.deepEqual([item.state, item.reason], ['committed', undefined], 'committed, not a duplicate of its own job');
    assert.equal((await l.t.results.get(item.idempotencyKey))?.jobId, item.jobId);
  });

  it("a batch stated for a tenant keeps it: committed under the tenant's key, its repairs sent as the tenant's jobs", async () => {
    // Prepare: 10 documents of one tenant; the provider spoils some answers
    const tenant = 'arn:aws:iam::000000000000:role/backfill-team';
    const l = await scriptedLane({ ...PACE, invalidRate: 0.4 });
    const documents = l.documents('tenant', 10).map((d) => ({ ...d, tenant }));
    const batchId = (await submitBatch(documents, l.submitDeps)).batchId!;
    await l.untilEnded(batchId);

    // Act
    await l.reconcileToEnd(batchId);
    const messages = await l.drainMessages();

    // Assess: every repair is the tenant's job, its key its own; every commit under the tenant's key
    assert.ok(messages.length >= 1, 'some answers went for their repair');
    for (const message of messages) {
      const job = JobSchema.parse(JSON.parse(message.Body!));
      assert.deepEqual([job.tenant, hasOwnIdempotencyKey(job)], [tenant, true]);
    }
    const items = await l.manifest.items(batchId);
    for (const item of items.filter((i) => i.state === 'committed')) {
      const key = idempotencyKeyFor({ sourceId: item.sourceId, contentSha256: item.contentSha256, promptVersion: PROMPT, schemaVersion: SCHEMA, tenant });
      assert.deepEqual([item.tenant, item.idempotencyKey], [tenant, key]);
      assert.equal((await l.t.results.get(key))?.jobId, item.jobId);
    }
  });

  it('two redrives at once: each unresolved item sent once', async () => {
    // Prepare: 8 documents; the provider drops some lines, which end unresolved (no_result)
    const l = await scriptedLane({ ...PACE, dropRate: 0.5 });
    const batchId = (await submitBatch(l.documents('two', 8), l.submitDeps)).batchId!;
    await l.untilEnded(batchId);
    await l.reconcileToEnd(batchId);
    const unresolved = (await l.manifest.items(batchId)).filter((i) => i.state === 'unresolved');
    assert.ok(unresolved.length >= 2, `some lines were dropped: ${unresolved.length}`);
    const deps = { lane: l.t.lane, manifest: l.manifest, sqs: l.t.clients.sqs, queueUrl: l.t.queueUrl, now: l.clock.now };
    // Act
    const [a, b] = await Promise.all([redriveBatch(batchId, deps), redriveBatch(batchId, deps)]);
    const messages = await l.drainMessages();
    // Assess
    const sent = l.perJob(messages);
    assert.deepEqual([...sent.entries()].sort(), unresolved.map((i) => [i.jobId, 1]).sort(), 'each unresolved item sent exactly once');
    assert.deepEqual([...a!.itemIds, ...b!.itemIds].sort(), unresolved.map((i) => i.itemId).sort(), 'the two redrives sent disjoint items');
    assert.deepEqual([a!.failed, b!.failed], [[], []]);
    const after = await l.manifest.counts(batchId);
    assert.deepEqual([after.redriven, after.unresolved, after.sending], [unresolved.length, 0, 0]);
  });

  it('a repair whose send fails: the item stays sending, the batch open; the next pass sends it once and ends the batch', async () => {
    // Prepare: the provider spoils some answers; the queue refuses every message of the first pass
    const l = await scriptedLane({ ...PACE, invalidRate: 0.4 });
    const batchId = (await submitBatch(l.documents('fail', 6), l.submitDeps)).batchId!;
    await l.untilEnded(batchId);
    const header = (await l.manifest.header(batchId))!;
    const invalid = l.fake.stats().batches.invalidCustomIds.map((id) => itemIdOfRecord(header, id)!);
    assert.ok(invalid.length > 0, 'the provider spoiled some answers');
    const down = { send: () => Promise.reject(Object.assign(new Error('down'), { name: 'ServiceUnavailable' })) } as unknown as SQSClient;
    // Act
    const first = await reconcileBatch(batchId, { ...l.reconcileDeps, sqs: down });
    const between = await l.manifest.counts(batchId);
    const second = await reconcileBatch(batchId, l.reconcileDeps);
    const third = await reconcileBatch(batchId, l.reconcileDeps);
    const messages = await l.drainMessages();
    // Assess: the first pass could not send; nothing was lost and the batch stayed open
    assert.deepEqual(first.failed.map((f) => [f.itemId, f.errorName]).sort(), invalid.map((id) => [id, 'ResendFailedError']).sort());
    assert.deepEqual([between.sending, between.redriven, first.state], [invalid.length, 0, 'submitted']);
    // the next pass sent each once and ended the batch; a third changes nothing
    assert.deepEqual([second.moved.redriven, second.failed, second.state], [invalid.length, [], 'done']);
    assert.deepEqual([third.moved, third.state], [{}, 'done']);
    assert.equal(messages.length, invalid.length);
    assert.ok([...l.perJob(messages).values()].every((n) => n === 1));
  });
});
