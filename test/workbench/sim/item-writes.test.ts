/**
 * The simulator's rate-state table counts each bucket item's conditional writes per second of virtual
 * time (the failed ones too: each consumes the item's write throughput), for the per-item ceiling.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UpdateBuilder } from '../../../lib/admission/bucket/item-update.js';
import { ITEM_WRITE_CEILING, newAdmissionCounters, SimRateState } from '../../../workbench/sim/sim-key-pool.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

describe('simulator: writes per bucket item', () => {
  it('keeps each item’s most writes in one second, failed writes included', () => {
    // Prepare
    const counters = newAdmissionCounters();
    const table = new SimRateState([{ id: 'k1', quotaOwner: 'o1' }], counters);
    const take = new UpdateBuilder().add('requestsFullAt', 1_000).build()!;
    const refused = new UpdateBuilder().add('requestsFullAt', 1_000).require({ field: 'requestsFullAt', cmp: '<', value: 0 }).build()!;
    // Act: o1 written 3 times in its first second (the third fails its condition), twice in the next; o2 once
    table.writeBucket('o1', take, T0 + 100);
    table.writeBucket('o1', take, T0 + 200);
    table.writeBucket('o1', refused, T0 + 900);
    table.writeBucket('o1', take, T0 + 1_100);
    table.writeBucket('o1', take, T0 + 1_999);
    table.writeBucket('o2', take, T0 + 1_500);
    // Assess
    assert.deepEqual(counters.peakItemWritesPerSecond, { o1: 3, o2: 1 });
    assert.equal(counters.bucketConflicts, 1);
    assert.equal(ITEM_WRITE_CEILING, 1000);
  });
});
