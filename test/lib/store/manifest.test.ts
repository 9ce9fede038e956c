/**
 * The batch manifest on the run's DynamoDB Local: a batch over more than one BatchWrite chunk created
 * and read back, the header's optimistic concurrency, provider jobs, settling items once, and counts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createAwsClients, LOCAL_CREDENTIALS, type AwsClients } from '../../../lib/platform/clients.js';
import { idempotencyKeyFor, sha256Hex } from '../../../lib/contract/job.js';
import { ensureTable } from '../../../lib/store/ensure-table.js';
import { StoreUnavailableError } from '../../../lib/store/errors.js';
import { BatchManifest } from '../../../lib/store/manifest.js';
import {
  BatchExistsError,
  ITEM_STATES,
  ItemTransitionError,
  itemIdFor,
  manifestTableName,
  type NewBatchItem,
  type ProviderJobRef,
} from '../../../lib/store/manifest-model.js';
import { MANIFEST_TABLE } from '../../../lib/store/tables.js';
import { testEndpoints, uniqueLaneResources, uniqueName } from '../../helpers/endpoints.js';

const VERSIONS = { schemaVersion: 'invoice@1', promptVersion: 'invoice-extract@3' };

function newItem(index: number): NewBatchItem {
  const contentSha256 = sha256Hex(`document ${index}`);
  const sourceId = `s3://inbox/doc-${index}.txt`;
  return {
    itemId: itemIdFor(index),
    sourceId,
    jobId: `job-${index}`,
    idempotencyKey: idempotencyKeyFor({ sourceId, contentSha256, ...VERSIONS }),
    contentSha256,
    documentKey: `batch/in/doc-${index}.txt`,
    bytes: 1000 + index,
    estimatedTokens: 250 + index,
  };
}

function part(partId: string, state: ProviderJobRef['state'], extra: Partial<ProviderJobRef> = {}): ProviderJobRef {
  return { partId, kind: 'openai', inputRef: `file-${partId}`, state, items: { first: itemIdFor(0), last: itemIdFor(59), count: 60 }, ...extra };
}

describe('BatchManifest on DynamoDB Local', () => {
  let clients: AwsClients;
  let manifest: BatchManifest;
  let tableName: string;

  before(async () => {
    clients = createAwsClients('us-east-1', testEndpoints());
    tableName = manifestTableName({ name: 'us', resources: uniqueLaneResources() });
    await ensureTable(clients.dynamodb, tableName, MANIFEST_TABLE);
    manifest = new BatchManifest({ dynamodb: clients.dynamodb, tableName });
  });
  after(() => clients.destroy());

  /** A new batch of `n` items under a unique id. */
  async function createBatch(n: number, lane = 'us'): Promise<string> {
    const batchId = uniqueName('batch');
    await manifest.createBatch(
      { batchId, lane, ...VERSIONS },
      Array.from({ length: n }, (_, i) => newItem(i)),
    );
    return batchId;
  }

  it('creates the table with the manifest key schema under a name derived from the results table', async () => {
    const described = await clients.dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
    assert.match(tableName, /^r-[0-9a-f]{8}-batch-manifest$/);
    assert.deepEqual(
      described.Table?.KeySchema?.map((k) => [k.AttributeName, k.KeyType]),
      [
        ['batchId', 'HASH'],
        ['itemId', 'RANGE'],
      ],
    );
  });

  it('creates a batch of 60 items (three BatchWrite chunks) and reads it back', async () => {
    // Prepare
    const batchId = uniqueName('batch');
    const items = Array.from({ length: 60 }, (_, i) => newItem(i));

    // Act
    const created = await manifest.createBatch({ batchId, lane: 'us', ...VERSIONS, providerJobs: [part('p000', 'pending_submit')] }, items);
    const header = await manifest.header(batchId);
    const stored = await manifest.items(batchId);

    // Assess
    assert.deepEqual(header, created);
    assert.equal(header?.state, 'submitting');
    assert.equal(header?.itemCount, 60);
    assert.equal(header?.version, 1);
    assert.deepEqual(header?.providerJobs, [part('p000', 'pending_submit')]);
    assert.equal(stored.length, 60);
    assert.deepEqual(
      stored.map((i) => i.itemId),
      items.map((i) => i.itemId),
    );
    for (const [index, item] of stored.entries()) {
      const { batchId: b, state, version, updatedAt, expiresAt, ...fields } = item;
      assert.deepEqual(fields, items[index]);
      assert.equal(b, batchId);
      assert.equal(state, 'prepared');
      assert.equal(version, 1);
      assert.equal(expiresAt, header?.expiresAt);
      assert.ok(updatedAt);
    }
    const counts = await manifest.counts(batchId);
    assert.deepEqual(Object.keys(counts).sort(), [...ITEM_STATES].sort());
    assert.equal(counts.prepared, 60);
  });

  it('refuses a second batch with the same id and leaves the first as it was', async () => {
    // Prepare
    const batchId = await createBatch(3);

    // Act + Assess
    await assert.rejects(manifest.createBatch({ batchId, lane: 'us', ...VERSIONS }, [newItem(0)]), BatchExistsError);
    assert.equal((await manifest.header(batchId))?.itemCount, 3);
    assert.equal((await manifest.items(batchId)).length, 3);
  });

  it('updates the header only at the expected version', async () => {
    // Prepare
    const batchId = await createBatch(2);

    // Act
    const first = await manifest.updateHeader(batchId, 1, { state: 'submitted' });
    const stale = await manifest.updateHeader(batchId, 1, { state: 'cancelling', reason: 'operator' });
    const missing = await manifest.updateHeader(uniqueName('nobatch'), 1, { state: 'done' });

    // Assess
    assert.ok(first.ok);
    assert.equal(first.header.state, 'submitted');
    assert.equal(first.header.version, 2);
    assert.ok(!stale.ok);
    assert.equal(stale.current?.state, 'submitted');
    assert.equal(stale.current?.version, 2);
    assert.deepEqual(missing, { ok: false, current: undefined });
    assert.equal((await manifest.header(batchId))?.reason, undefined);
  });

  it('sets and updates a provider job, and refuses to move it back', async () => {
    // Prepare
    const batchId = await createBatch(60);

    // Act
    const pending = await manifest.setProviderJob(batchId, part('p001', 'pending_submit', { nextSubmitAt: '2030-01-01T00:10:00.000Z' }));
    const other = await manifest.setProviderJob(batchId, part('p000', 'submitted', { providerJobId: 'batch_abc', submittedAt: '2030-01-01T00:00:00.000Z' }));
    const submitted = await manifest.setProviderJob(batchId, part('p001', 'submitted', { providerJobId: 'batch_def' }));
    const finished = await manifest.setProviderJob(batchId, part('p001', 'finished', { providerJobId: 'batch_def', outputRef: 'file-out' }));
    const stalePoll = await manifest.setProviderJob(batchId, part('p001', 'in_progress', { providerJobId: 'batch_def' }));

    // Assess
    assert.ok(pending.ok && other.ok && submitted.ok && finished.ok);
    assert.equal(finished.header.version, 5);
    assert.deepEqual(
      finished.header.providerJobs.map((j) => [j.partId, j.state, j.providerJobId]),
      [
        ['p000', 'submitted', 'batch_abc'],
        ['p001', 'finished', 'batch_def'],
      ],
    );
    assert.equal(finished.header.providerJobs[1]?.outputRef, 'file-out');
    assert.equal(finished.header.providerJobs[1]?.nextSubmitAt, undefined);
    assert.ok(!stalePoll.ok);
    assert.equal(stalePoll.current?.providerJobs[1]?.state, 'finished');
    assert.equal((await manifest.header(batchId))?.version, 5);
  });

  it('settles an item once: a second reconcile does not move it again', async () => {
    // Prepare
    const batchId = await createBatch(4);
    const id = itemIdFor(1);
    const submit = await manifest.settleItem(batchId, id, { from: ['prepared'], to: 'submitted', providerJobId: 'batch_abc' });

    // Act
    const first = await manifest.settleItem(batchId, id, { from: ['submitted', 'unresolved'], to: 'committed' });
    const second = await manifest.settleItem(batchId, id, { from: ['submitted', 'unresolved'], to: 'committed' });

    // Assess
    assert.ok(submit.moved);
    assert.equal(submit.item.providerJobId, 'batch_abc');
    assert.ok(first.moved);
    assert.equal(first.item.state, 'committed');
    assert.equal(first.item.version, 3);
    assert.ok(!second.moved);
    assert.equal(second.current?.state, 'committed');
    assert.equal(second.current?.version, 3);
  });

  it('refuses a disallowed move and an item in another state, and counts per state', async () => {
    // Prepare
    const batchId = await createBatch(6);
    for (let i = 0; i < 5; i++) await manifest.settleItem(batchId, itemIdFor(i), { from: ['prepared'], to: 'submitted' });
    await manifest.settleItem(batchId, itemIdFor(0), { from: ['submitted'], to: 'committed' });
    await manifest.settleItem(batchId, itemIdFor(1), { from: ['submitted'], to: 'duplicate' });
    await manifest.settleItem(batchId, itemIdFor(2), { from: ['submitted'], to: 'unresolved', reason: 'missing_from_output' });
    await manifest.settleItem(batchId, itemIdFor(3), { from: ['submitted'], to: 'needs_review', reason: 'schema_invalid' });

    // Act
    const disallowed = await manifest.settleItem(batchId, itemIdFor(0), { from: ['committed'], to: 'unresolved' }).catch((e: unknown) => e);
    const wrongState = await manifest.settleItem(batchId, itemIdFor(0), { from: ['submitted'], to: 'unresolved' });
    const missing = await manifest.settleItem(batchId, itemIdFor(99), { from: ['submitted'], to: 'unresolved' });
    const late = await manifest.settleItem(batchId, itemIdFor(2), { from: ['submitted', 'unresolved'], to: 'committed' });

    // Assess
    assert.ok(disallowed instanceof ItemTransitionError);
    assert.deepEqual({ moved: wrongState.moved, state: wrongState.moved ? undefined : wrongState.current?.state }, { moved: false, state: 'committed' });
    assert.deepEqual(missing, { moved: false, current: undefined });
    assert.ok(late.moved);
    assert.equal(late.item.reason, undefined);
    assert.equal((await manifest.item(batchId, itemIdFor(3)))?.reason, 'schema_invalid');
    const counts = await manifest.counts(batchId);
    assert.deepEqual(
      Object.entries(counts).filter(([, n]) => n > 0),
      [
        ['prepared', 1],
        ['submitted', 1],
        ['committed', 2],
        ['duplicate', 1],
        ['needs_review', 1],
      ],
    );
    assert.equal(
      Object.values(counts).reduce((a, b) => a + b, 0),
      (await manifest.header(batchId))?.itemCount,
    );
  });

  it('claims an item to send once: of four claims at once one moves it to sending; the claim settles at its version only', async () => {
    // Prepare: an unresolved item
    const batchId = await createBatch(2);
    const id = itemIdFor(0);
    await manifest.settleItem(batchId, id, { from: ['prepared'], to: 'unresolved', reason: 'no_result' });

    // Act
    const claims = await Promise.all([1, 2, 3, 4].map(() => manifest.claimSend(batchId, id, { from: ['unresolved'], reason: 'redrive', leaseMs: 60_000 })));
    const won = claims.find((c) => c.moved);
    const stale = await manifest.settleItem(batchId, id, { from: ['sending'], to: 'redriven', version: (won?.moved ? won.item.version : 0) - 1 });
    const again = await manifest.claimSend(batchId, id, { from: ['sending'], leaseMs: 60_000 });
    const settled = await manifest.settleItem(batchId, id, {
      from: ['sending'],
      to: 'redriven',
      reason: 'redrive',
      version: won?.moved ? won.item.version : 0,
    });

    // Assess
    assert.equal(claims.filter((c) => c.moved).length, 1, 'one claim wins');
    assert.ok(won?.moved);
    assert.deepEqual([won.item.state, won.item.reason, won.item.claimUntil !== undefined], ['sending', 'redrive', true]);
    assert.ok(!stale.moved, 'a settle at another version is refused');
    assert.ok(!again.moved, 'a claim that has not lapsed is not taken again');
    assert.ok(settled.moved);
    assert.deepEqual([settled.item.state, settled.item.reason, settled.item.claimUntil], ['redriven', 'redrive', undefined]);
    await assert.rejects(manifest.settleItem(batchId, itemIdFor(1), { from: ['prepared'], to: 'sending' }), ItemTransitionError);
  });

  it('takes a sending item again once its claim is released or has lapsed', async () => {
    // Prepare: two claimed items, the clock of a second manifest two minutes ahead
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    const timed = new BatchManifest({ dynamodb: clients.dynamodb, tableName, now: () => new Date(now) });
    const batchId = uniqueName('batch');
    await timed.createBatch({ batchId, lane: 'us', ...VERSIONS }, [newItem(0), newItem(1)]);
    for (const i of [0, 1]) await timed.settleItem(batchId, itemIdFor(i), { from: ['prepared'], to: 'submitted' });
    const first = await timed.claimSend(batchId, itemIdFor(0), { from: ['submitted'], reason: 'repair: not_json', leaseMs: 60_000 });
    const second = await timed.claimSend(batchId, itemIdFor(1), { from: ['submitted'], reason: 'repair: not_json', leaseMs: 60_000 });
    assert.ok(first.moved && second.moved);

    // Act
    const released = await timed.releaseClaim(batchId, itemIdFor(0), first.item.version);
    const retaken = await timed.claimSend(batchId, itemIdFor(0), { from: ['sending'], leaseMs: 60_000 });
    const early = await timed.claimSend(batchId, itemIdFor(1), { from: ['sending'], leaseMs: 60_000 });
    now += 120_000;
    const lapsed = await timed.claimSend(batchId, itemIdFor(1), { from: ['sending'], leaseMs: 60_000 });

    // Assess
    assert.ok(released.moved);
    assert.deepEqual([released.item.state, released.item.claimUntil], ['sending', undefined]);
    assert.ok(retaken.moved, 'a released claim is taken at once');
    assert.equal(retaken.item.reason, 'repair: not_json', 'the reason stays');
    assert.ok(!early.moved, 'a claim is not taken before it lapses');
    assert.ok(lapsed.moved, 'a lapsed claim is taken again');
    assert.equal(lapsed.item.claimUntil, '2030-01-01T00:03:00.000Z');
  });

  it("lists a lane's batches from their headers", async () => {
    // Prepare
    const usBatch = await createBatch(1, 'us');
    const euBatch = await createBatch(1, 'eu');

    // Act
    const us = await manifest.listBatches('us');
    const eu = await manifest.listBatches('eu');

    // Assess
    assert.ok(us.some((h) => h.batchId === usBatch));
    assert.ok(!us.some((h) => h.batchId === euBatch));
    assert.deepEqual(
      eu.map((h) => h.batchId),
      [euBatch],
    );
    for (const header of [...us, ...eu]) assert.ok(header.itemCount > 0 && Array.isArray(header.providerJobs));
  });

  it('reports an unreachable table as StoreUnavailableError with a cause', async () => {
    // Prepare
    const dead = new DynamoDBClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
    const unreachable = new BatchManifest({ dynamodb: dead, tableName: 'nowhere' });

    // Act
    const errors = await Promise.all([
      unreachable.createBatch({ batchId: 'b', lane: 'us', ...VERSIONS }, [newItem(0)]).catch((e: unknown) => e),
      unreachable.settleItem('b', itemIdFor(0), { from: ['prepared'], to: 'submitted' }).catch((e: unknown) => e),
      unreachable.counts('b').catch((e: unknown) => e),
    ]);
    dead.destroy();

    // Assess
    for (const error of errors) {
      assert.ok(error instanceof StoreUnavailableError);
      assert.equal(error.name, 'StoreUnavailableError');
      assert.equal(error.tableName, 'nowhere');
      assert.ok(error.cause);
    }
    assert.match((errors[1] as Error).message, /^UpdateItem on table nowhere failed/);
  });
});
