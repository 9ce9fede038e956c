/**
 * A rate limit the provider answered says its requests are spent, whoever spent them (another client of
 * the same quota, a limit lower than configured): the owner's bucket then holds one call when the
 * cooldown ends and refills from there, instead of the burst the pool's own count would still allow on
 * the owner's other keys and after the cooldown; and one met again cuts the owner's rates, which recover
 * slowly.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyUpdate } from '../../../../lib/admission/bucket/item-update.js';
import { levelsAt, rateLimitedUpdate, rateShareAt } from '../../../../lib/admission/bucket/token-bucket.js';
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
    const at = (a: (typeof atEnd)[number]): number => (a.admitted ? Number.NaN : a.retryAt.getTime());
    assert.ok(Math.abs(at(meanwhile) - (T0 + 15_000)) <= 1, `meanwhile: ${JSON.stringify(meanwhile)}`);
    assert.equal(atEnd[0]!.admitted, true, 'one call when the cooldown ends');
    assert.ok(Math.abs(at(atEnd[1]!) - (T0 + 25_000)) <= 1, `the second: ${JSON.stringify(atEnd[1])}`);
  });

  it('takes nothing from a bucket that is booked further already, and never moves its clock back', () => {
    // Prepare: a bucket booked 80 s ahead of T0 (its requests clock), and one never taken from
    const limits = LIMITS;
    const booked = { version: 1, reservedUntil: 0, requestsFullAt: T0 + 80_000, tokensFullAt: 0 };
    const until = T0 + 15_000;
    // Act
    const onBooked = rateLimitedUpdate(booked, limits, T0, until);
    const fresh = rateLimitedUpdate(undefined, limits, T0, until);
    // Assess: the booked one's clock stays; the other holds one call at `until`, none a slot before
    assert.equal(applyUpdate(booked, onBooked).requestsFullAt, T0 + 80_000);
    const after = applyUpdate(undefined, fresh);
    assertNear(levelsAt(after, limits, until).requests, 1, 'requests at the end');
    assertNear(levelsAt(after, limits, until - 10_000).requests, 0, 'requests a slot before the end');
    assert.ok(levelsAt(after, limits, T0).requests < 0, 'in debt at T0');
    assert.deepEqual(fresh.condition, {
      any: [
        { field: 'requestsFullAt', missing: true },
        { field: 'requestsFullAt', cmp: '<', value: after.requestsFullAt },
      ],
    });
  });

  it('cuts the rates to 3/4 when a rate limit comes again within three windows, at most once a window, and they recover 5 % a window', () => {
    // Prepare: LIMITS' window is a minute
    const limits = LIMITS;
    const w = limits.windowMs;
    // Act: a rate limit at T0, another 2 windows later, a third in the same window as the second, a fourth 4 windows after that
    const first = applyUpdate(undefined, rateLimitedUpdate(undefined, limits, T0, T0 + 1_000));
    const second = applyUpdate(first, rateLimitedUpdate(first, limits, T0 + 2 * w, T0 + 2 * w + 1_000));
    const third = applyUpdate(second, rateLimitedUpdate(second, limits, T0 + 2 * w + 30_000, T0 + 2 * w + 31_000));
    const lone = applyUpdate(third, rateLimitedUpdate(third, limits, T0 + 10 * w, T0 + 10 * w + 1_000));
    // Assess
    assert.equal(rateShareAt(first, limits, T0), 1, 'one alone cuts nothing');
    assert.equal(second.rateCut, 0.75);
    assert.equal(third.rateCutAt, T0 + 2 * w, 'not cut again within the window');
    assertNear(rateShareAt(third, limits, T0 + 3 * w), 0.8, 'a window later');
    assert.equal(rateShareAt(third, limits, T0 + 7 * w), 1, 'whole after five windows');
    assert.equal(lone.rateCutAt, T0 + 2 * w, 'the last came 7.5 windows after the one before it: no cut');
  });

  it('says which cooldown cut the rates, and spaces the calls after it at the cut rate: a slot of 10 s becomes about 13.3 s', async () => {
    // Prepare: two rate limits 20 s apart on o1 (each a 5 s wait)
    const settings = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, probeFirstCalls: false, leaseMs: 0 });
    const clock = { now: T0 };
    const pool = new SharedKeyPool({ keys: KEYS, store: new MemoryRateStateStore(), limits: LIMITS, settings, now: () => clock.now });
    const lone = await pool.cool(KEYS[0]!, rateLimited(T0 + 5_000));
    clock.now = T0 + 20_000;
    const again = await pool.cool(KEYS[0]!, rateLimited(T0 + 25_000));
    // Act: at the second cooldown's end, three calls asked at once
    clock.now = T0 + 25_000;
    const answers = [await pool.acquire({ estimatedTokens: 100 }), await pool.acquire({ estimatedTokens: 100 }), await pool.acquire({ estimatedTokens: 100 })];
    // Assess: one call, then the next slots 10 s over the share left (3/4, and 5 s of its recovery) apart, not 10 s
    const slot = 10_000 / (0.75 + (0.05 * 5_000) / 60_000);
    assert.deepEqual([lone, again], [{}, { rateCut: 0.75 }], 'the second cooldown says it cut the rates');
    assert.equal(answers[0]!.admitted, true);
    const retries = answers.slice(1).map((a) => (a.admitted ? Number.NaN : a.retryAt.getTime() - clock.now));
    assert.ok(Math.abs(retries[0]! - slot) <= 2, `second slot in ${retries[0]} ms, expected ${slot}`);
    assert.ok(Math.abs(retries[1]! - 2 * slot) <= 2, `third slot in ${retries[1]} ms, expected ${2 * slot}`);
  });
});
