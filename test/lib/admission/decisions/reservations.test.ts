/**
 * Where a denial reserves its retry slot when the instance's cache of an owner is stale: other instances'
 * reservations may have moved that owner's stored timeline far past what the cache shows, and a reservation
 * moves it on by `ADD` whatever it stands at. A denial passes over an owner whose stored timeline stands more
 * than a window past the next owner's known slot (`TakeOptions.reserveBy`), and reserves on that next owner.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import type { BucketLimits } from '../../../../lib/admission/model/bucket.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { T0 } from '../support.js';

const A = { id: 'ka', quotaOwner: 'oa', secret: 'sk-a' };
const B = { id: 'kb', quotaOwner: 'ob', secret: 'sk-b' };
const WINDOW = 60_000;
/** One request every 10 s per owner, a burst of 6. */
const LIMITS: BucketLimits = { requestsPerWindow: 6, tokensPerWindow: 1_000_000, windowMs: WINDOW, requestsPerDay: 10_000, dayMs: 86_400_000 };
const SETTINGS = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, probeFirstCalls: false, leaseCalls: 0, windowMs: WINDOW });

describe('admission: where a denial reserves its slot', () => {
  it("passes over an owner whose stored timeline others' reservations moved more than a window past the next owner's slot", async () => {
    // Prepare: instance X (both owners) spends both owners' minutes and learns both buckets; instance Y, which
    // takes from owner A alone, then reserves 20 slots on A (A's timeline 200 s ahead, X's cache still at 0 s)
    const clock = { now: T0 };
    const store = new MemoryRateStateStore();
    const x = new SharedKeyPool({ keys: [A, B], store, limits: LIMITS, settings: SETTINGS, now: () => clock.now });
    const y = new SharedKeyPool({ keys: [A], store, limits: LIMITS, settings: SETTINGS, now: () => clock.now });
    for (let i = 0; i < 12; i++) assert.ok((await x.acquire({ estimatedTokens: 10 })).admitted, `grant ${i + 1}`);
    for (let i = 0; i < 20; i++) assert.ok(!(await y.acquire({ estimatedTokens: 10 })).admitted);
    const aTimeline = (await store.readBucket('oa'))?.reservedUntil;
    assert.ok(aTimeline !== undefined && aTimeline - T0 >= 200_000, `A's timeline ${aTimeline! - T0} ms ahead`);
    // Act: X is denied, with A first in its round robin and A's slot as early as B's in its cache
    const denied = await x.acquire({ estimatedTokens: 10 });
    // Assess: the slot reserved on B, about 10 s away; A's timeline as Y left it
    assert.ok(!denied.admitted);
    assert.ok(denied.retryAt.getTime() - T0 <= 20_000, `come back after ${denied.retryAt.getTime() - T0} ms`);
    assert.equal((await store.readBucket('oa'))?.reservedUntil, aTimeline);
    assert.ok(((await store.readBucket('ob'))?.reservedUntil ?? 0) > T0, 'reserved on B');
  });
});
