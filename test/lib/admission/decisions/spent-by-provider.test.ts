/**
 * A rate limit the provider answered says its requests are spent, whoever spent them (another client of
 * the same quota, a limit lower than configured): the owner's bucket then holds one call when the
 * cooldown ends and refills from there, instead of the burst the pool's own count would still allow on
 * the owner's other keys and after the cooldown.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyUpdate } from '../../../../lib/admission/bucket/item-update.js';
import { levelsAt, spentUntilUpdate } from '../../../../lib/admission/bucket/token-bucket.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { assertNear, LIMITS, T0 } from '../support.js';

/** Two keys of one quota owner (6 requests a minute: a slot every 10 s). */
const KEYS = [
  { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' },
  { id: 'k2', quotaOwner: 'o1', secret: 'sk-2' },
];
const rateLimited = (untilMs: number) => ({ scope: 'key' as const, reason: 'rate_limit' as const, until: new Date(untilMs).toISOString() });

describe('SharedKeyPool: a rate limit the provider answered', () => {
  it("leaves the owner one call at the cooldown's end, then a call a slot, on every key of the owner", async () => {
    // Prepare: one call taken at T0 from a full bucket, answered with a 429 "retry after 15 s" (another
    // client had spent the owner's requests: the pool's count still shows 5 of 6 left)
    const settings = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, probeFirstCalls: false, leaseMs: 0 });
    const clock = { now: T0 };
    const pool = new SharedKeyPool({ keys: KEYS, store: new MemoryRateStateStore(), limits: LIMITS, settings, now: () => clock.now });
    const first = await pool.acquire({ estimatedTokens: 100 });
    assert.ok(first.admitted && first.key.id === 'k1');
    // Act
    await pool.cool(first.key, rateLimited(T0 + 15_000));
    const meanwhile = await pool.acquire({ estimatedTokens: 100 });
    clock.now = T0 + 15_000;
    const atEnd = [await pool.acquire({ estimatedTokens: 100 }), await pool.acquire({ estimatedTokens: 100 })];
    // Assess: no call on k2 meanwhile, back at the cooldown's end; then one call, the next a slot (10 s) later
    assert.ok(!meanwhile.admitted && meanwhile.retryAt.getTime() === T0 + 15_000, `meanwhile: ${JSON.stringify(meanwhile)}`);
    assert.equal(atEnd[0]!.admitted, true, 'one call when the cooldown ends');
    assert.ok(!atEnd[1]!.admitted && atEnd[1]!.retryAt.getTime() === T0 + 25_000, `the second: ${JSON.stringify(atEnd[1])}`);
  });

  it('takes nothing from a bucket that is booked further already, and never moves its clock back', () => {
    // Prepare: a bucket booked 80 s ahead of T0 (its requests clock), and one never taken from
    const limits = LIMITS;
    const booked = { version: 1, reservedUntil: 0, requestsFullAt: T0 + 80_000, tokensFullAt: 0 };
    const until = T0 + 15_000;
    // Act
    const onBooked = spentUntilUpdate(booked, limits, until);
    const atRest = spentUntilUpdate(undefined, limits, until);
    // Assess: nothing to write on the booked one; the other holds one call at `until`, none a slot before
    assert.equal(onBooked, undefined);
    assert.ok(atRest);
    const after = applyUpdate(undefined, atRest);
    assertNear(levelsAt(after, limits, until).requests, 1, 'requests at the end');
    assertNear(levelsAt(after, limits, until - 10_000).requests, 0, 'requests a slot before the end');
    assert.ok(levelsAt(after, limits, T0).requests < 0, 'in debt at T0');
    assert.deepEqual(atRest.condition, {
      any: [
        { field: 'requestsFullAt', missing: true },
        { field: 'requestsFullAt', cmp: '<', value: after.requestsFullAt },
      ],
    });
  });
});
