/**
 * The pure bucket arithmetic of admission: the token bucket (capacity, continuous refill,
 * reservations, tokens reconciled with the real usage, cooldowns), the daily quota (a fixed window
 * reset at the configured time, or continuous), and where a denied call comes back. The key pool and
 * key choice: `decisions/choice.test.ts`; settings and errors: `config/settings.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyUpdate, updateInMemory } from '../../../../lib/admission/bucket/item-update.js';
import { adjustTokens, configuredDailyReset, cooldownUpdate, dayEndAt, levelsAt, takeFromBucket } from '../../../../lib/admission/bucket/token-bucket.js';
import type { BucketLimits, BucketState } from '../../../../lib/admission/model/bucket.js';
import { LIMITS, T0 } from '../support.js';

/** `state` with the owner's cooldown as `cooldownUpdate` writes it. */
function cooled(state: BucketState | undefined, limits: BucketLimits, cooldown: NonNullable<BucketState['cooldown']>, now: number): BucketState {
  return applyUpdate(state, cooldownUpdate(state, limits, cooldown, now)!.build()!);
}

function drain(limits: BucketLimits, n: number, tokens = 100): BucketState {
  let state: BucketState | undefined;
  for (let i = 0; i < n; i++) {
    const v = takeFromBucket(state, limits, { requests: 1, tokens }, T0, { reserve: false });
    assert.ok(v.admitted, `take ${i + 1} admitted`);
    state = v.next;
  }
  return state!;
}

describe('admission: token bucket', () => {
  it('admits up to the capacity at once, then says when the next request is due', () => {
    // Prepare: 6 requests per minute, all spent
    const state = drain(LIMITS, 6);
    // Act
    const denied = takeFromBucket(state, LIMITS, { requests: 1, tokens: 100 }, T0, { reserve: false });
    // Assess: one request refills in 10 s
    assert.equal(denied.admitted, false);
    assert.ok(!denied.admitted && denied.limitedBy === 'requests');
    assert.ok(!denied.admitted && Math.abs(denied.dueAt - (T0 + 10_000)) < 1);
    assert.equal(!denied.admitted && denied.next, state, 'no reservation: nothing to write');
    const later = takeFromBucket(state, LIMITS, { requests: 1, tokens: 100 }, T0 + 10_000, { reserve: false });
    assert.ok(later.admitted, 'admitted once refilled');
  });

  it('refills continuously and never above the capacity', () => {
    // Prepare: 6 requests per minute, all spent
    const state = drain(LIMITS, 6);
    // Act + Assess: half a minute refills 3; ten minutes refill no more than the capacity
    assert.ok(Math.abs(levelsAt(state, LIMITS, T0 + 30_000).requests - 3) < 1e-9);
    assert.equal(levelsAt(state, LIMITS, T0 + 10 * 60_000).requests, 6);
    assert.ok(levelsAt(state, LIMITS, T0 - 5_000).requests < 0, 'a clock behind the takes never sees more than is left');
  });

  it('reservations space callers denied together one slot apart, at the refill rate', () => {
    // Prepare
    let state = drain(LIMITS, 6);
    // Act: 4 callers denied at T0, each reserving
    const retryAts: number[] = [];
    for (let i = 0; i < 4; i++) {
      const v = takeFromBucket(state, LIMITS, { requests: 1, tokens: 100 }, T0, { reserve: true });
      assert.ok(!v.admitted);
      retryAts.push(v.retryAt);
      state = v.next;
    }
    // Assess: one request refills every 10 s
    assert.deepEqual(
      retryAts.map((t) => Math.round((t - T0) / 1000)),
      [10, 20, 30, 40],
    );
  });

  it('limits by tokens too, and reconciles the estimate with the real usage', () => {
    // Prepare: one call of 5 000 estimated tokens out of 6 000
    const v = takeFromBucket(undefined, LIMITS, { requests: 1, tokens: 5000 }, T0, { reserve: false });
    assert.ok(v.admitted);
    const second = takeFromBucket(v.next, LIMITS, { requests: 1, tokens: 2000 }, T0, { reserve: false });
    assert.ok(!second.admitted && second.limitedBy === 'tokens');
    // Act: the call used 1 000 tokens only: 4 000 come back
    const reconciled = applyUpdate(v.next, adjustTokens(LIMITS, 1000 - 5000)!);
    // Assess
    assert.ok(Math.abs(levelsAt(reconciled, LIMITS, T0).tokens - 5000) < 1e-6);
    assert.equal(reconciled.version, v.next.version + 1);
    assert.ok(takeFromBucket(reconciled, LIMITS, { requests: 1, tokens: 2000 }, T0, { reserve: false }).admitted);
    // more than estimated: debt, as much as the call used beyond the level
    assert.ok(Math.abs(levelsAt(applyUpdate(v.next, adjustTokens(LIMITS, 3000)!), LIMITS, T0).tokens - -2000) < 1e-6);
  });

  it('a call bigger than the whole token window asks for the whole window (the provider decides)', () => {
    // Act: 50,000 tokens from a window of 6,000
    const v = takeFromBucket(undefined, LIMITS, { requests: 1, tokens: 50_000 }, T0, { reserve: false });
    // Assess
    assert.ok(v.admitted);
    assert.ok(Math.abs(levelsAt(v.next, LIMITS, T0).tokens) < 1e-6);
  });

  it("an owner's cooldown in the bucket denies until it ends, and only a later one replaces it", () => {
    // Prepare
    const cooling = cooled(undefined, LIMITS, { until: T0 + 5000, reason: 'quota_exhausted' }, T0);
    // Act
    const denied = takeFromBucket(cooling, LIMITS, { requests: 1, tokens: 1 }, T0, { reserve: true });
    // Assess
    assert.ok(!denied.admitted && denied.limitedBy === 'cooldown' && denied.retryAt === T0 + 5000);
    assert.equal(cooldownUpdate(cooling, LIMITS, { until: T0 + 1000, reason: 'rate_limit' }, T0), undefined, 'a shorter one is ignored');
    assert.ok(takeFromBucket(cooling, LIMITS, { requests: 1, tokens: 1 }, T0 + 5000, { reserve: false }).admitted);
  });

  it('the daily level refuses after a day’s requests', () => {
    // Prepare: 3 requests a day, spent
    const limits = { ...LIMITS, requestsPerWindow: 1000, requestsPerDay: 3 };
    const state = drain(limits, 3);
    // Act
    const v = takeFromBucket(state, limits, { requests: 1, tokens: 1 }, T0, { reserve: false });
    // Assess
    assert.ok(!v.admitted && v.limitedBy === 'daily');
  });
});

describe('admission: the daily quota', () => {
  const DAY = 86_400_000;
  const daily3: BucketLimits = { ...LIMITS, requestsPerWindow: 1000, requestsPerDay: 3 };
  const take = (state: BucketState | undefined, limits: BucketLimits, at: number, reserve = false) =>
    takeFromBucket(state, limits, { requests: 1, tokens: 1 }, at, { reserve });

  it('is a fixed window: spent, it refuses until the daily reset, then comes back whole (no trickle)', () => {
    // Prepare: T0 is 00:00 UTC; the day's 3 requests spent at 01:00
    let state: BucketState | undefined;
    for (let i = 0; i < 3; i++) {
      const v = take(state, daily3, T0 + 3_600_000);
      assert.ok(v.admitted);
      state = v.next;
    }
    // Act + Assess: denied until midnight, by the daily level, even 23 h later
    const denied = take(state, daily3, T0 + 3_600_000);
    assert.ok(!denied.admitted && denied.limitedBy === 'daily' && denied.dueAt === T0 + DAY, `due ${!denied.admitted && denied.dueAt}`);
    assert.equal(take(state, daily3, T0 + DAY - 1).admitted, false, 'nothing refilled a millisecond before the reset');
    assert.equal(levelsAt(state!, daily3, T0 + DAY).daily, 3, 'whole at the reset');
    const after = take(state, daily3, T0 + DAY);
    assert.ok(after.admitted && after.next.dayResetAt === T0 + 2 * DAY, 'the next day ends a day later');
  });

  it('resets at the configured time of day, and a continuous daily level can still be chosen', () => {
    // Prepare: a reset at 07:00 UTC
    const at7 = { ...daily3, dailyResetOffsetMs: 7 * 3_600_000 };
    // Act + Assess
    assert.equal(configuredDailyReset(at7, T0 + 3_600_000), T0 + 7 * 3_600_000);
    assert.equal(configuredDailyReset(at7, T0 + 8 * 3_600_000), T0 + DAY + 7 * 3_600_000);
    // continuous: refills at 3 per day, and once it binds, reserved slots are spaced by its refill
    const continuous: BucketLimits = { ...daily3, dailyWindow: 'continuous' };
    let state: BucketState | undefined;
    for (let i = 0; i < 3; i++) state = (take(state, continuous, T0) as { next: BucketState }).next;
    assert.ok(Math.abs(levelsAt(state!, continuous, T0 + DAY / 3).daily - 1) < 1e-9);
    const first = take(state, continuous, T0, true);
    assert.ok(!first.admitted && first.limitedBy === 'daily' && Math.abs(first.retryAt - (T0 + DAY / 3)) < 1);
    const second = take(first.next, continuous, T0, true);
    assert.ok(!second.admitted && Math.abs(second.retryAt - (T0 + (2 * DAY) / 3)) < 1, 'the next slot one daily refill later');
  });

  it('slots reserved after the reset count against that day: once it is all promised, the next slot is the day after', () => {
    // Prepare: the day's 3 requests spent
    let state: BucketState | undefined;
    for (let i = 0; i < 3; i++) state = (take(state, daily3, T0) as { next: BucketState }).next;
    // Act: 5 callers denied at once, each reserving
    const slots: number[] = [];
    for (let i = 0; i < 5; i++) {
      const v = take(state, daily3, T0, true);
      assert.ok(!v.admitted);
      slots.push(v.retryAt - T0);
      state = v.next;
    }
    // Assess: three slots at the next reset (its per-minute levels are full then: a burst), then the day after
    assert.deepEqual(
      slots.map((t) => Math.round(t)),
      [DAY, DAY, DAY, 2 * DAY, 2 * DAY],
    );
    // the promise is only counted for days still to come: once that day begins, takes spend its level
    const then = take(state, daily3, T0 + DAY);
    assert.ok(then.admitted);
  });

  it('a new day bursts its first window of calls at its start, then spaces the rest one refill apart', () => {
    // Prepare: 2 requests a minute, 4 a day, spent by 00:01
    const limits: BucketLimits = { ...LIMITS, requestsPerWindow: 2, requestsPerDay: 4 };
    let state: BucketState | undefined;
    for (const at of [T0, T0, T0 + 60_000, T0 + 60_000]) state = (take(state, limits, at) as { next: BucketState }).next;
    // Act: 5 callers denied at 00:01, each reserving
    const slots: number[] = [];
    for (let i = 0; i < 5; i++) {
      const v = take(state, limits, T0 + 60_000, true);
      assert.ok(!v.admitted && v.limitedBy === 'daily');
      slots.push(Math.round(v.retryAt - T0));
      state = v.next;
    }
    // Assess: two at the reset (the minute's burst), two one refill (30 s) apart after it, then the next day
    assert.deepEqual(slots, [DAY, DAY, DAY + 30_000, DAY + 60_000, 2 * DAY]);
  });

  it('a quota_exhausted cooldown moves the day to end at the reset the provider stated', () => {
    // Prepare: the provider says the quota is out until 05:00 (its own day), while ours would end at midnight
    const cooled_ = cooled(undefined, daily3, { until: T0 + 5 * 3_600_000, reason: 'quota_exhausted' }, T0 + 3_600_000);
    // Assess: out until 05:00, whole then, and the following day ends at 05:00 the next day
    const denied = take(cooled_, daily3, T0 + 4 * 3_600_000);
    assert.ok(!denied.admitted && denied.limitedBy === 'cooldown');
    const v = take(cooled_, daily3, T0 + 5 * 3_600_000);
    assert.ok(v.admitted && v.next.dayResetAt === T0 + DAY + 5 * 3_600_000 && levelsAt(v.next, daily3, T0 + 5 * 3_600_000).daily === 2);
    // a rate-limit cooldown leaves the day alone
    const rate = cooled(undefined, daily3, { until: T0 + 1000, reason: 'rate_limit' }, T0);
    assert.equal(dayEndAt(rate, daily3, T0), T0 + DAY);
  });

  it('a bucket stored without a day (or in the format before the clocks) counts the configured day, whole', () => {
    // Prepare: an item with none of the clocks' attributes reads back as every clock at 0
    const legacy: BucketState = { requestsFullAt: 0, tokensFullAt: 0, reservedUntil: 0, version: 4 };
    // Act
    const v = take(legacy, daily3, T0 + 2000);
    // Assess: admitted, the day started at the configured reset, the clocks set from the present
    assert.ok(v.admitted && v.next.dayResetAt === T0 + DAY && v.next.dailyUsed === 1);
    assert.equal(v.update?.changes.get('requestsFullAt') && 'set' in v.update.changes.get('requestsFullAt')! ? 'set' : 'add', 'set');
  });
});

describe('admission: where a denied call comes back', () => {
  it('retryAt is the next free slot, counting reserved ones, with or without reserving', () => {
    // Prepare: the minute spent, one slot reserved
    let state = drain(LIMITS, 6);
    const reserved = takeFromBucket(state, LIMITS, { requests: 1, tokens: 100 }, T0, { reserve: true });
    assert.ok(!reserved.admitted);
    state = reserved.next;
    // Act
    const look = takeFromBucket(state, LIMITS, { requests: 1, tokens: 100 }, T0, { reserve: false });
    const again = takeFromBucket(state, LIMITS, { requests: 1, tokens: 100 }, T0, { reserve: true });
    // Assess
    assert.ok(!look.admitted && !again.admitted);
    assert.equal(look.retryAt, again.retryAt);
    assert.equal(look.dueAt, T0 + 10_000, 'the levels alone would allow it at 10 s');
    assert.equal(Math.round(look.retryAt - T0), 20_000, 'but the slot at 10 s is promised');
  });

  it('with reserveBy, passes over a slot past it without writing, and reserves only while the stored timeline is no later', () => {
    // Prepare: the minute spent; one reservation seen (cached), three more made by others since (stored)
    const spent = drain(LIMITS, 6);
    const cached = takeFromBucket(spent, LIMITS, { requests: 1, tokens: 100 }, T0, { reserve: true }).next;
    let stored = cached;
    for (let i = 0; i < 3; i++) stored = takeFromBucket(stored, LIMITS, { requests: 1, tokens: 100 }, T0, { reserve: true }).next;
    const call = { requests: 1, tokens: 100 };
    // Act: the same reservation bounded at 25 s, decided on the stored bucket and on the stale cache
    const onStored = takeFromBucket(stored, LIMITS, call, T0, { reserve: true, reserveBy: T0 + 25_000 });
    const onCache = takeFromBucket(cached, LIMITS, call, T0, { reserve: true, reserveBy: T0 + 25_000 });
    const unbounded = takeFromBucket(cached, LIMITS, call, T0, { reserve: true });
    // Assess: the stored timeline has the slot at 50 s, past 25 s: passed over, nothing to write
    assert.ok(!onStored.admitted && onStored.passedOver === true);
    assert.equal(Math.round(onStored.retryAt - T0), 50_000);
    assert.equal(onStored.update, undefined);
    // The cache shows the slot at 20 s: a reservation, whose write the stored timeline refuses; unbounded, it lands
    assert.ok(!onCache.admitted && onCache.passedOver === undefined && onCache.update);
    assert.equal(updateInMemory(stored, onCache.update).ok, false, 'refused where others reserved past 25 s');
    assert.equal(updateInMemory(cached, onCache.update).ok, true, 'lands where the timeline is as cached');
    assert.ok(!unbounded.admitted && unbounded.update);
    assert.equal(updateInMemory(stored, unbounded.update).ok, true, 'without a bound it piles on');
  });
});
