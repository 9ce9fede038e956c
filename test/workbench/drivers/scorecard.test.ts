import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { computeScorecard, quantile, type ScorecardInputs } from '../../../workbench/drivers/scorecard.js';

function inputs(overrides: Partial<ScorecardInputs> = {}): ScorecardInputs {
  return {
    submitted: ['a', 'b', 'c', 'd', 'e'].map((id, i) => ({ jobId: id, idempotencyKey: `k-${id}`, lane: 'us', createdAt: 1_000 + i })),
    results: [],
    terminalLedger: [],
    deadLettered: [],
    waiting: [],
    metrics: {},
    queueAgesMs: [],
    attemptsPerCompletion: [],
    provider: { requests: 0, rateLimited: 0, byKind: {} },
    elapsedMs: 1,
    timedOut: false,
    ...overrides,
  };
}

describe('scorecard', () => {
  it('counts a job as lost only when it is found in no terminal or waiting state', () => {
    // Act
    const card = computeScorecard(
      inputs({
        results: [{ jobId: 'a', idempotencyKey: 'k-a', committedAt: 2_000 }],
        terminalLedger: [
          { jobId: 'b', kind: 'rejected', reason: 'deadline' },
          { jobId: 'c', kind: 'needs_review', reason: 'schema_invalid' },
        ],
        deadLettered: ['d'],
      }),
    );
    // Assess
    assert.equal(card.committed, 1);
    assert.equal(card.rejected, 1);
    assert.deepEqual(card.rejectedByReason, { deadline: 1 });
    assert.equal(card.needsReview, 1);
    assert.equal(card.deadLettered, 1);
    assert.equal(card.lost, 1, 'job e is nowhere');
  });

  it('does not call a waiting job lost, and flags two results for one key as a double commit', () => {
    // Act
    const card = computeScorecard(
      inputs({
        waiting: ['a', 'b', 'c', 'd', 'e'],
        results: [
          { jobId: 'x', idempotencyKey: 'k-x', committedAt: 1 },
          { jobId: 'y', idempotencyKey: 'k-x', committedAt: 2 },
        ],
      }),
    );
    // Assess
    assert.equal(card.lost, 0);
    assert.equal(card.waiting, 5);
    assert.equal(card.doubleCommits, 1);
    assert.equal(card.committed, 0, 'results of jobs not submitted in this run do not count');
  });

  it('takes latency from createdAt to committedAt and nearest-rank quantiles', () => {
    // Act + Assess
    assert.equal(quantile([5, 1, 3, 2, 4], 0.5), 3);
    assert.equal(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100], 0.95), 19);
    assert.equal(quantile([], 0.5), null);
    const card = computeScorecard(inputs({ results: [{ jobId: 'a', idempotencyKey: 'k-a', committedAt: 1_500 }] }));
    assert.deepEqual(card.latencyMs, { p50: 500, p95: 500 });
  });
});
