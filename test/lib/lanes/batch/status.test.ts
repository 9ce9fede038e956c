/**
 * `batchStatus` on in-memory stores: every item is counted once in the outcome (committed +
 * needsReview + rejected + unresolved + waiting = items), a duplicate counts as committed, redriven
 * items follow what the queue lane made of them (results table, then ledger), the age comes from the
 * `now` passed in, and an unknown batch is a typed error.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchNotFoundError, batchStatus, type BatchStatusDeps } from '../../../../lib/lanes/batch/status.js';
import type { LedgerEntry } from '../../../../lib/store/ledger.js';
import { itemIdFor, type BatchHeader, type BatchItem, type ItemState } from '../../../../lib/store/manifest-model.js';
import type { ResultRecord } from '../../../../lib/store/results.js';

const CREATED = '2026-12-01T10:00:00.000Z';
const key = (i: number) => i.toString(16).padStart(64, '0');

function item(i: number, state: ItemState, reason?: string): BatchItem {
  return {
    batchId: 'b-1',
    itemId: itemIdFor(i),
    sourceId: `doc-${i}`,
    jobId: `job-${i}`,
    idempotencyKey: key(i),
    contentSha256: key(1000 + i),
    documentKey: `docs/${i}`,
    bytes: 10,
    estimatedTokens: 5,
    state,
    ...(reason ? { reason } : {}),
    updatedAt: CREATED,
    version: 2,
    expiresAt: 0,
  };
}

function header(items: number): BatchHeader {
  return {
    batchId: 'b-1',
    lane: 'eu',
    createdAt: CREATED,
    updatedAt: CREATED,
    state: 'reconciling',
    schemaVersion: 'invoice.v1',
    promptVersion: 'p1',
    itemCount: items,
    providerJobs: [
      {
        partId: 'p000',
        providerJobId: 'batch_a',
        kind: 'openai',
        inputRef: 'file_a',
        state: 'finished',
        items: { first: itemIdFor(0), last: itemIdFor(7), count: 8 },
      },
      {
        partId: 'p001',
        kind: 'openai',
        inputRef: '',
        state: 'pending_submit',
        items: { first: itemIdFor(8), last: itemIdFor(items - 1), count: items - 8 },
        nextSubmitAt: '2026-12-01T10:05:00.000Z',
      },
    ],
    version: 5,
    expiresAt: 0,
  };
}

function stores(items: BatchItem[], committedKeys: string[], ledger: Record<string, LedgerEntry['kind'][]>): BatchStatusDeps {
  const h = header(items.length);
  return {
    manifest: { header: async (id) => (id === h.batchId ? h : undefined), items: async () => items },
    results: { get: async (k) => (committedKeys.includes(k) ? ({ idempotencyKey: k } as ResultRecord) : undefined) },
    ledger: {
      entriesFor: async (jobId) =>
        (ledger[jobId] ?? []).map((kind, n) => ({
          jobId,
          kind,
          entryId: `${n}`,
          at: CREATED,
          expiresAt: 0,
          region: 'eu',
          reason: kind,
          attempt: 0,
          deferrals: 0,
        })),
    },
    now: new Date('2026-12-01T10:01:30.500Z'),
  };
}

describe('batch status', () => {
  it('counts every item once: outcome sums to items; duplicates are committed; redriven items follow the queue lane', async () => {
    // Prepare: 12 items in every kind of state; four redriven ones, each with another queue-lane outcome
    const items = [
      item(0, 'committed'),
      item(1, 'duplicate', 'committed by job-x'),
      item(2, 'needs_review'),
      item(3, 'rejected'),
      item(4, 'unresolved', 'no_result'),
      item(5, 'unresolved', 'expired'),
      item(6, 'redriven', 'repair: schema_invalid'),
      item(7, 'redriven', 'redrive'),
      item(8, 'redriven', 'redrive'),
      item(9, 'redriven', 'redrive'),
      item(10, 'prepared'),
      item(11, 'submitted'),
    ];
    const deps = stores(items, [key(6)], {
      'job-6': ['validation_failed'],
      'job-7': ['validation_failed', 'needs_review'],
      'job-8': ['rejected'],
      'job-9': ['deferred'],
    });
    // Act
    const report = await batchStatus('b-1', deps);
    // Assess
    const o = report.outcome;
    assert.equal(o.committed + o.needsReview + o.rejected + o.unresolved + o.waiting, report.items);
    assert.deepEqual(o, { committed: 3, needsReview: 2, rejected: 2, unresolved: 2, waiting: 3 });
    assert.equal(report.items, 12);
    assert.equal(report.counts.redriven, 4);
    assert.equal(report.counts.duplicate, 1);
    assert.equal(
      Object.values(report.counts).reduce((a, b) => a + b, 0),
      12,
    );
    assert.deepEqual(report.unresolved, [
      { itemId: itemIdFor(4), sourceId: 'doc-4', reason: 'no_result' },
      { itemId: itemIdFor(5), sourceId: 'doc-5', reason: 'expired' },
    ]);
    assert.equal(report.ageSeconds, 90);
    assert.deepEqual(
      { batchId: report.batchId, lane: report.lane, state: report.state, createdAt: report.createdAt },
      { batchId: 'b-1', lane: 'eu', state: 'reconciling', createdAt: CREATED },
    );
    assert.deepEqual(report.providerJobs, [
      { partId: 'p000', state: 'finished', providerJobId: 'batch_a', items: 8 },
      { partId: 'p001', state: 'pending_submit', items: 4, nextSubmitAt: '2026-12-01T10:05:00.000Z' },
    ]);
  });

  it('a redriven item with no outcome yet is waiting; an unknown batch is BatchNotFoundError', async () => {
    // Prepare
    const deps = stores([item(0, 'redriven', 'redrive'), ...Array.from({ length: 8 }, (_, i) => item(i + 1, 'committed'))], [], {});
    // Act
    const report = await batchStatus('b-1', deps);
    const missing = batchStatus('b-nope', deps);
    // Assess
    assert.equal(report.outcome.waiting, 1);
    assert.equal(report.outcome.committed, 8);
    await assert.rejects(missing, (error: unknown) => error instanceof BatchNotFoundError && error.name === 'BatchNotFoundError' && error.batchId === 'b-nope');
  });
});
