/**
 * The batch manifest's pure parts: record ids, the one table of item moves, the table name, the records
 * a batch is created with; and, on a stand-in client, the bounded retry of unprocessed items.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchWriteItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { idempotencyKeyFor, sha256Hex } from '../../../lib/contract/job.js';
import { StoreRecordInvalidError, StoreUnavailableError } from '../../../lib/store/errors.js';
import { BatchManifest } from '../../../lib/store/manifest.js';
import {
  canMoveItem,
  ITEM_ID_PATTERN,
  ITEM_STATES,
  ITEM_TRANSITIONS,
  ItemTransitionError,
  itemIdFor,
  itemIndexOf,
  MAX_ITEM_INDEX,
  manifestTableName,
  type NewBatchItem,
  PROVIDER_JOB_STATES,
  PROVIDER_JOB_TRANSITIONS,
  prepareBatch,
  itemIdInRecordId,
  itemIdOfRecord,
  recordIdOf,
  recordPrefixFor,
} from '../../../lib/store/manifest-model.js';

const FINAL = ['committed', 'duplicate', 'needs_review', 'rejected', 'redriven'] as const;

function newItem(index: number): NewBatchItem {
  const contentSha256 = sha256Hex(`document ${index}`);
  const sourceId = `s3://inbox/doc-${index}.txt`;
  const idempotencyKey = idempotencyKeyFor({ sourceId, contentSha256, promptVersion: 'invoice-extract@3', schemaVersion: 'invoice@1' });
  return {
    itemId: itemIdFor(index),
    sourceId,
    jobId: `job-${index}`,
    idempotencyKey,
    contentSha256,
    documentKey: `in/doc-${index}.txt`,
    bytes: 1200,
    estimatedTokens: 300,
  };
}

const BATCH = { batchId: 'batch-1', lane: 'us', schemaVersion: 'invoice@1', promptVersion: 'invoice-extract@3' };

describe('itemIdFor', () => {
  it('gives r and a 10-digit zero-padded index: 11 alphanumeric characters', () => {
    assert.equal(itemIdFor(0), 'r0000000000');
    assert.equal(itemIdFor(42), 'r0000000042');
    assert.equal(itemIdFor(MAX_ITEM_INDEX), 'r9999999999');
    for (const index of [0, 7, 123_456, MAX_ITEM_INDEX]) {
      assert.match(itemIdFor(index), /^[A-Za-z0-9]{11}$/);
      assert.match(itemIdFor(index), ITEM_ID_PATTERN);
    }
  });

  it('sorts as the indexes do, and reads back to its index', () => {
    const ids = [9, 10, 100, 2, 99_999].map(itemIdFor);
    assert.deepEqual([...ids].sort(), [2, 9, 10, 100, 99_999].map(itemIdFor));
    for (const index of [0, 42, 60, 1_000_000]) assert.equal(itemIndexOf(itemIdFor(index)), index);
  });

  it('refuses a negative, fractional, non-finite or too large index', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX_ITEM_INDEX + 1]) assert.throws(() => itemIdFor(bad), RangeError);
  });

  it('itemIndexOf is undefined for what is not an item id (the header, a foreign custom_id)', () => {
    for (const other of ['#header', 'r42', 'x0000000042', 'r00000000420', 'request-1', '']) assert.equal(itemIndexOf(other), undefined);
  });
});

describe('record ids', () => {
  it("carries the batch id in a new batch's record ids when it fits, else a hash of it, else nothing (11 characters)", () => {
    const batchId = 'b-3f2c1a9e-5d7b-4c8e-9f10-2a3b4c5d6e7f';
    assert.equal(recordPrefixFor(batchId, 64), `${batchId}.`);
    assert.equal(recordIdOf({ recordPrefix: recordPrefixFor(batchId, 64) }, itemIdFor(42)), `${batchId}.r0000000042`);
    assert.equal(`${batchId}.r0000000042`.length, 50);
    assert.match(recordPrefixFor('x'.repeat(60), 64), /^h[0-9a-f]{24}\.$/);
    assert.match(recordPrefixFor('batch_with:odd.chars', 64), /^h[0-9a-f]{24}\.$/);
    assert.equal(recordPrefixFor(batchId, 11), '', "Bedrock's 11 characters leave no room");
    for (const max of [11, 24, 30, 64]) {
      assert.ok(recordIdOf({ recordPrefix: recordPrefixFor('x'.repeat(80), max) }, itemIdFor(9)).length <= max, String(max));
    }
  });

  it('reads an item id back from its own batch only; a manifest without a prefix reads bare item ids', () => {
    const header = { recordPrefix: 'b-1.' };
    assert.equal(itemIdOfRecord(header, 'b-1.r0000000007'), itemIdFor(7));
    for (const other of ['b-2.r0000000007', 'r0000000007', 'b-1.r7', 'b-1.r0000000007x']) assert.equal(itemIdOfRecord(header, other), undefined, other);
    assert.equal(itemIdOfRecord({}, 'r0000000007'), itemIdFor(7));
    assert.equal(itemIdOfRecord({}, 'b-1.r0000000007'), undefined);
    assert.equal(itemIdInRecordId('b-2.r0000000007'), itemIdFor(7));
    assert.equal(itemIdInRecordId('r0000000007'), itemIdFor(7));
    assert.equal(itemIdInRecordId('request-1'), undefined);
  });

  it('refuses a batch whose record prefix is not letters, digits and - ending in .', () => {
    const at = { now: new Date('2030-01-01T00:00:00.000Z'), retentionSeconds: 3600, tableName: 'manifest' };
    assert.equal(prepareBatch({ ...BATCH, recordPrefix: 'b-1.' }, [newItem(0)], at).header.recordPrefix, 'b-1.');
    assert.equal('recordPrefix' in prepareBatch(BATCH, [newItem(0)], at).header, false);
    for (const bad of ['b-1', 'b 1.', 'b/1.'])
      assert.throws(() => prepareBatch({ ...BATCH, recordPrefix: bad }, [newItem(0)], at), StoreRecordInvalidError, bad);
  });
});

describe('ITEM_TRANSITIONS', () => {
  it('names every item state, and only item states', () => {
    assert.deepEqual(Object.keys(ITEM_TRANSITIONS).sort(), [...ITEM_STATES].sort());
    for (const targets of Object.values(ITEM_TRANSITIONS)) for (const to of targets) assert.ok(ITEM_STATES.includes(to), to);
  });

  it('has no self moves, so a second settle of the same move is refused', () => {
    for (const state of ITEM_STATES) assert.equal(canMoveItem(state, state), false, state);
  });

  it('lets final states go nowhere and never back to prepared', () => {
    for (const state of FINAL) assert.deepEqual(ITEM_TRANSITIONS[state], [], state);
    for (const state of ITEM_STATES) assert.equal(canMoveItem(state, 'prepared'), false, state);
  });

  it('lets a submitted item end in every final state but redriven, or unresolved; an unresolved one settle late; both reach the queue lane only through sending', () => {
    const settled = FINAL.filter((to) => to !== 'redriven');
    for (const to of [...settled, 'unresolved', 'sending'] as const) assert.equal(canMoveItem('submitted', to), true, to);
    for (const to of [...settled, 'sending'] as const) assert.equal(canMoveItem('unresolved', to), true, to);
    for (const from of ['submitted', 'unresolved'] as const) assert.equal(canMoveItem(from, 'redriven'), false, from);
    assert.deepEqual(ITEM_TRANSITIONS.sending, ['redriven', 'unresolved'], 'sent: redriven; a redrive whose send failed: unresolved again');
    assert.equal(canMoveItem('unresolved', 'submitted'), false);
    assert.equal(canMoveItem('prepared', 'committed'), false);
  });

  it('reaches a final state from every state (no item can be stuck)', () => {
    const reachesFinal = (state: (typeof ITEM_STATES)[number], seen = new Set<string>()): boolean =>
      ITEM_TRANSITIONS[state].length === 0 || ITEM_TRANSITIONS[state].some((next) => !seen.has(next) && reachesFinal(next, new Set([...seen, state])));
    for (const state of ITEM_STATES) assert.ok(reachesFinal(state), state);
  });

  it('is frozen', () => {
    assert.ok(Object.isFrozen(ITEM_TRANSITIONS));
    assert.ok(Object.isFrozen(PROVIDER_JOB_TRANSITIONS));
  });
});

describe('PROVIDER_JOB_TRANSITIONS', () => {
  it('lets a state be written again, never moves back to pending_submit, and keeps ended jobs ended', () => {
    assert.deepEqual(Object.keys(PROVIDER_JOB_TRANSITIONS).sort(), [...PROVIDER_JOB_STATES].sort());
    for (const state of PROVIDER_JOB_STATES) assert.ok(PROVIDER_JOB_TRANSITIONS[state].includes(state), state);
    for (const state of ['finished', 'expired', 'cancelled', 'failed'] as const) assert.deepEqual(PROVIDER_JOB_TRANSITIONS[state], [state]);
    assert.equal(PROVIDER_JOB_TRANSITIONS.in_progress.includes('submitted'), false);
  });
});

describe('manifestTableName', () => {
  it('replaces a -results suffix, else appends -batch-manifest', () => {
    assert.equal(manifestTableName({ name: 'us', resources: { resultsTable: 'ratelane-us-results' } }), 'ratelane-us-batch-manifest');
    assert.equal(manifestTableName({ name: 'eu', resources: { resultsTable: 'r-1a2b3c4d' } }), 'r-1a2b3c4d-batch-manifest');
    assert.equal(manifestTableName({ name: 'us', resources: { resultsTable: 'my-results-table' } }), 'my-results-table-batch-manifest');
  });
});

describe('prepareBatch', () => {
  const at = { now: new Date('2030-01-01T00:00:00.000Z'), retentionSeconds: 3600, tableName: 'manifest' };

  it('starts the header submitting and the items prepared, at version 1, with one expiry', () => {
    // Act
    const { header, items } = prepareBatch(BATCH, [newItem(0), newItem(1)], at);
    // Assess
    assert.equal(header.state, 'submitting');
    assert.equal(header.itemCount, 2);
    assert.equal(header.version, 1);
    assert.equal(header.createdAt, '2030-01-01T00:00:00.000Z');
    assert.equal(header.expiresAt, Date.parse('2030-01-01T01:00:00.000Z') / 1000);
    assert.deepEqual(
      items.map((i) => [i.itemId, i.state, i.version, i.expiresAt]),
      [
        ['r0000000000', 'prepared', 1, header.expiresAt],
        ['r0000000001', 'prepared', 1, header.expiresAt],
      ],
    );
  });

  it('stores only the listed fields: text a caller slips in is dropped', () => {
    // Prepare
    const withText = { ...newItem(0), text: 'Invoice INV-1 total 12.50' } as NewBatchItem;
    // Act
    const { items } = prepareBatch(BATCH, [withText], at);
    // Assess
    assert.equal('text' in (items[0] ?? {}), false);
    assert.doesNotMatch(JSON.stringify(items), /INV-1/);
  });

  it('refuses no items, a repeated or malformed item id, a bad hash and a repeated part', () => {
    const ref = {
      partId: 'p000',
      kind: 'openai' as const,
      inputRef: 'file-1',
      state: 'pending_submit' as const,
      items: { first: 'r0000000000', last: 'r0000000000', count: 1 },
    };
    assert.throws(() => prepareBatch(BATCH, [], at), StoreRecordInvalidError);
    assert.throws(() => prepareBatch(BATCH, [newItem(0), newItem(0)], at), StoreRecordInvalidError);
    assert.throws(() => prepareBatch(BATCH, [{ ...newItem(0), itemId: 'doc-0' }], at), StoreRecordInvalidError);
    assert.throws(() => prepareBatch(BATCH, [{ ...newItem(0), contentSha256: 'abc' }], at), StoreRecordInvalidError);
    assert.throws(() => prepareBatch({ ...BATCH, batchId: 'has space' }, [newItem(0)], at), StoreRecordInvalidError);
    assert.throws(() => prepareBatch({ ...BATCH, providerJobs: [ref, ref] }, [newItem(0)], at), StoreRecordInvalidError);
  });
});

describe('BatchManifest on a stand-in client', () => {
  /** A client whose BatchWriteItem leaves the last `unprocessed` requests of each of the first `times` calls unprocessed. */
  function flakyClient(times: number, unprocessed = 3): { client: DynamoDBClient; batchWrites: number[] } {
    const batchWrites: number[] = [];
    const client = {
      send: async (command: { input: Record<string, unknown> }) => {
        if (!(command instanceof BatchWriteItemCommand)) return {};
        const requests = command.input.RequestItems?.manifest ?? [];
        batchWrites.push(requests.length);
        const leftOver = batchWrites.length <= times ? requests.slice(-unprocessed) : [];
        return { UnprocessedItems: leftOver.length > 0 ? { manifest: leftOver } : {} };
      },
    } as unknown as DynamoDBClient;
    return { client, batchWrites };
  }

  it('writes items in chunks of 25 and sends unprocessed items again until they are written', async () => {
    // Prepare
    const { client, batchWrites } = flakyClient(2);
    const manifest = new BatchManifest({ dynamodb: client, tableName: 'manifest', writeConcurrency: 1, sleep: async () => {} });
    // Act
    await manifest.createBatch(
      BATCH,
      Array.from({ length: 30 }, (_, i) => newItem(i)),
    );
    // Assess: 25 (3 left), 3 (3 left), 3, then the last 5
    assert.deepEqual(batchWrites, [25, 3, 3, 5]);
  });

  it('gives up after maxBatchWriteAttempts with StoreUnavailableError', async () => {
    // Prepare
    const { client, batchWrites } = flakyClient(100);
    const manifest = new BatchManifest({ dynamodb: client, tableName: 'manifest', maxBatchWriteAttempts: 3, sleep: async () => {} });
    // Act
    const error = await manifest.createBatch(BATCH, [newItem(0), newItem(1), newItem(2), newItem(3)]).then(
      () => assert.fail('createBatch should have failed'),
      (e: unknown) => e,
    );
    // Assess
    assert.ok(error instanceof StoreUnavailableError);
    assert.equal(error.name, 'StoreUnavailableError');
    assert.match(error.message, /BatchWriteItem .* left 3 items of batch batch-1 unprocessed after 3 attempts/);
    assert.deepEqual(batchWrites, [4, 3, 3]);
  });

  it('refuses a move the table does not allow before any call', async () => {
    // Prepare
    const { client, batchWrites } = flakyClient(0);
    const manifest = new BatchManifest({ dynamodb: client, tableName: 'manifest' });
    // Act + Assess
    await assert.rejects(manifest.settleItem('batch-1', itemIdFor(0), { from: ['committed'], to: 'submitted' }), ItemTransitionError);
    await assert.rejects(manifest.settleItem('batch-1', itemIdFor(0), { from: ['submitted', 'committed'], to: 'committed' }), (e: Error) => {
      assert.equal(e.name, 'ItemTransitionError');
      return true;
    });
    await assert.rejects(manifest.settleItem('batch-1', itemIdFor(0), { from: [], to: 'committed' }), ItemTransitionError);
    assert.deepEqual(batchWrites, []);
  });
});
