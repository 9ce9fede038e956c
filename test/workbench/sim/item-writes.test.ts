/**
 * The simulator's rate-state table counts each bucket item's conditional writes per second of virtual
 * time (the failed ones too: each consumes the item's write throughput), for the per-item ceiling.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fullBucket } from '../../../lib/admission/bucket/token-bucket.js';
import { ITEM_WRITE_CEILING, newAdmissionCounters, SimRateState } from '../../../workbench/sim/sim-key-pool.js';

const LIMITS = { requestsPerWindow: 60, tokensPerWindow: 100_000, requestsPerDay: 10_000, windowMs: 60_000, dayMs: 86_400_000 };
const T0 = Date.parse('2026-01-01T00:00:00Z');

describe('simulator: writes per bucket item', () => {
  it('keeps each item’s most writes in one second, failed writes included', () => {
    // Prepare
    const counters = newAdmissionCounters();
    const table = new SimRateState([{ id: 'k1', quotaOwner: 'o1' }], counters);
    const bucket = fullBucket(LIMITS, T0);
    // Act: o1 written 3 times in its first second (the third fails its condition), twice in the next; o2 once
    table.writeBucket('o1', bucket, undefined, T0 + 100);
    table.writeBucket('o1', { ...bucket, version: 1 }, 0, T0 + 200);
    table.writeBucket('o1', { ...bucket, version: 1 }, 0, T0 + 900);
    table.writeBucket('o1', { ...bucket, version: 2 }, 1, T0 + 1_100);
    table.writeBucket('o1', { ...bucket, version: 3 }, 2, T0 + 1_999);
    table.writeBucket('o2', bucket, undefined, T0 + 1_500);
    // Assess
    assert.deepEqual(counters.peakItemWritesPerSecond, { o1: 3, o2: 1 });
    assert.equal(counters.bucketConflicts, 1);
    assert.equal(ITEM_WRITE_CEILING, 1000);
  });
});
