/**
 * A key out of credit costs the lane nothing but the call that found it out: a denial comes back at
 * the working key's slot, not at the dead key's billing re-check, and a caller whose first-choice
 * owner turns out to be cooling (another consumer cooled it) moves to the next owner.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { LIMITS, T0 } from '../support.js';

const KEYS = [
  { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' },
  { id: 'k2', quotaOwner: 'o2', secret: 'sk-2' },
];
const BILLING = { scope: 'quota_owner' as const, reason: 'billing' as const, until: new Date(T0 + 86_400_000).toISOString() };

describe('SharedKeyPool: a key out of credit', () => {
  it('sends a denied caller back at the working key slot, not at the dead key re-check', async () => {
    // Prepare: o1 out of credit (re-checked after 5 s); o2's 6 requests of the minute spent
    const settings = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, billingRecheckMs: 5_000, probeFirstCalls: false });
    const clock = { now: T0 };
    const pool = new SharedKeyPool({ keys: KEYS, store: new MemoryRateStateStore(), limits: LIMITS, settings, now: () => clock.now });
    await pool.cool(KEYS[0]!, BILLING);
    for (let i = 0; i < 6; i++) assert.equal((await pool.acquire({ estimatedTokens: 100 })).admitted, true);
    // Act
    const denied = await pool.acquire({ estimatedTokens: 100 });
    // Assess: back when o2 refills one request (10 s), after the 5 s re-check
    assert.equal(denied.admitted, false);
    assert.ok(!denied.admitted && denied.retryAt.getTime() === T0 + 10_000, `retry at +${!denied.admitted && denied.retryAt.getTime() - T0} ms`);
  });

  it('still comes back at the re-check when no key has credit', async () => {
    // Prepare: both owners out of credit
    const settings = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, billingRecheckMs: 5_000, probeFirstCalls: false });
    const pool = new SharedKeyPool({ keys: KEYS, store: new MemoryRateStateStore(), limits: LIMITS, settings, now: () => T0 });
    for (const key of KEYS) await pool.cool(key, BILLING);
    // Act
    const denied = await pool.acquire({ estimatedTokens: 100 });
    // Assess
    assert.ok(!denied.admitted && denied.retryAt.getTime() === T0 + 5_000);
  });

  it('moves to the next owner when the first choice was cooled by another consumer since it was read', async () => {
    // Prepare: consumer A spends both owners at T0 (round robin: o1 first, so o1 is its first choice),
    // then consumer B cools o1 for billing; A has not read it (its cooldowns are cached for a minute)
    const settings = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, cooldownCacheMs: 60_000, probeFirstCalls: false });
    const store = new MemoryRateStateStore();
    const a = new SharedKeyPool({ keys: KEYS, store, limits: LIMITS, settings, now: () => T0 });
    const b = new SharedKeyPool({ keys: KEYS, store, limits: LIMITS, settings, now: () => T0 });
    for (let i = 0; i < 12; i++) assert.ok((await a.acquire({ estimatedTokens: 100 })).admitted);
    await b.cool(KEYS[0]!, BILLING);
    // Act: A asks again, with a window too short to book either slot
    const denied = await a.acquire({ estimatedTokens: 100, bookWithinMs: 1_000 });
    // Assess: A learned o1's cooldown and reserved o2's slot (+10 s), not o1's re-check (+5 min)
    assert.equal(denied.admitted, false);
    assert.ok(!denied.admitted && denied.retryAt.getTime() === T0 + 10_000, `retry at +${!denied.admitted && denied.retryAt.getTime() - T0} ms`);
    const booked = await a.acquire({ estimatedTokens: 100, bookWithinMs: 30_000 });
    assert.ok(booked.admitted && booked.key.id === 'k2', 'booked on the working key');
  });
});
