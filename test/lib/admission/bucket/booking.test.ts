/**
 * Booking a call on a near slot instead of denying it: the bucket takes the cost now into debt and
 * says when the call may start, later callers book behind it, a far slot is still denied, and the key
 * pool hands the booked start to the caller.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { levelsAt, takeFromBucket } from '../../../../lib/admission/bucket/token-bucket.js';
import type { BucketState } from '../../../../lib/admission/model/bucket.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { assertNear, levelsOf, LIMITS, T0 } from '../support.js';

const CALL = { requests: 1, tokens: 100 };

/** The bucket after `n` calls at T0 (6 requests a minute: one refills every 10 s). */
function spent(n: number): BucketState {
  let state: BucketState | undefined;
  for (let i = 0; i < n; i++) {
    const verdict = takeFromBucket(state, LIMITS, CALL, T0, { reserve: false });
    assert.ok(verdict.admitted);
    state = verdict.next;
  }
  return state!;
}

describe('admission: booking a near slot', () => {
  it('books a call whose slot is within the window: the cost is taken now, the start is when it refills', () => {
    // Prepare: every request of the minute spent
    const state = spent(6);
    // Act: a caller that may wait up to 15 s
    const verdict = takeFromBucket(state, LIMITS, CALL, T0, { reserve: true, bookWithinMs: 15_000 });
    // Assess: booked for T0 + 10 s, the requests level in debt by one
    assert.ok(verdict.admitted);
    assert.ok(Math.abs(verdict.startAt - (T0 + 10_000)) < 1);
    assert.ok(Math.abs(levelsAt(verdict.next, LIMITS, T0).requests - -1) < 1e-9);
    assert.equal(verdict.next.version, state.version + 1);
  });

  it('books the next caller behind the first, and denies one whose slot is beyond its window', () => {
    // Prepare: one call already booked for T0 + 10 s
    const first = takeFromBucket(spent(6), LIMITS, CALL, T0, { reserve: true, bookWithinMs: 15_000 });
    assert.ok(first.admitted);
    // Act
    const second = takeFromBucket(first.next, LIMITS, CALL, T0, { reserve: true, bookWithinMs: 25_000 });
    const third = takeFromBucket(first.next, LIMITS, CALL, T0, { reserve: true, bookWithinMs: 15_000 });
    // Assess: the second starts a slot later; the third would have to wait 20 s, more than its 15
    assert.ok(second.admitted && Math.abs(second.startAt - (T0 + 20_000)) < 1);
    assert.equal(third.admitted, false);
    assert.ok(!third.admitted && Math.abs(third.retryAt - (T0 + 20_000)) < 1);
  });

  it('leaves the provider a bucket it can honour: at each booked start the levels hold nothing negative', () => {
    // Prepare: 6 spent, then 3 booked
    let state = spent(6);
    const starts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const verdict = takeFromBucket(state, LIMITS, CALL, T0, { reserve: true, bookWithinMs: 60_000 });
      assert.ok(verdict.admitted);
      starts.push(verdict.startAt);
      state = verdict.next;
    }
    // Act + Assess: by the last start every booking has refilled (the level is back to 0)
    assert.deepEqual(
      starts.map((s) => Math.round((s - T0) / 1000)),
      [10, 20, 30],
    );
    assert.ok(Math.abs(levelsAt(state, LIMITS, starts[2]!).requests) < 1e-9);
  });

  it('never books against a spent daily quota: the wait is the reset', () => {
    // Prepare: a day of 2 requests, both spent
    const limits = { ...LIMITS, requestsPerDay: 2 };
    let state: BucketState | undefined;
    for (let i = 0; i < 2; i++) {
      const verdict = takeFromBucket(state, limits, CALL, T0, { reserve: false });
      assert.ok(verdict.admitted);
      state = verdict.next;
    }
    // Act: even a window of a whole day does not book
    const verdict = takeFromBucket(state, limits, CALL, T0 + 60_000, { reserve: true, bookWithinMs: 86_400_000 });
    // Assess
    assert.equal(verdict.admitted, false);
    assert.ok(!verdict.admitted && verdict.limitedBy === 'daily');
  });
});

describe('SharedKeyPool: booked grants', () => {
  const key = { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' };
  // Bucket decisions without settlements: first-call probes are `bucket/first-calls.test.ts`'s.
  const settings = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, probeFirstCalls: false });

  it('grants a booked call with its start, and denies one without a window', async () => {
    // Prepare: one key of 6 requests a minute, all spent
    const store = new MemoryRateStateStore();
    const pool = new SharedKeyPool({ keys: [key], store, limits: LIMITS, settings, now: () => T0 });
    for (let i = 0; i < 6; i++) assert.equal((await pool.acquire({ estimatedTokens: 100 })).admitted, true);
    // Act
    const unbooked = await pool.acquire({ estimatedTokens: 100 });
    const booked = await pool.acquire({ estimatedTokens: 100, bookWithinMs: 30_000 });
    // Assess: without a window the caller is denied (and reserves the slot at +10 s); with one it is
    // booked behind that reservation's refill, at +10 s as well (the reservation took nothing)
    assert.equal(unbooked.admitted, false);
    assert.ok(booked.admitted);
    assert.equal(booked.startAt?.getTime(), T0 + 10_000);
  });

  it('a booked grant says when its owner started cooling on this instance after it was given', async () => {
    // Prepare: two owners of 6 requests a minute, all 12 spent, then a call booked on one of them
    const keys = [key, { id: 'k2', quotaOwner: 'o2', secret: 'sk-2' }];
    const pool = new SharedKeyPool({ keys, store: new MemoryRateStateStore(), limits: LIMITS, settings, now: () => T0 });
    for (let i = 0; i < 12; i++) assert.equal((await pool.acquire({ estimatedTokens: 100 })).admitted, true);
    const booked = await pool.acquire({ estimatedTokens: 100, bookWithinMs: 30_000 });
    assert.ok(booked.admitted && booked.startAt, 'booked');
    const other = keys.find((k) => k.quotaOwner !== booked.key.quotaOwner)!;
    const before = booked.coolingUntil?.();
    // Act: another record's 429 cools the other owner on this instance, then the booked key's owner
    await pool.cool(other, { scope: 'quota_owner', reason: 'rate_limit', until: new Date(T0 + 5_000).toISOString() });
    const otherOwnerCooling = booked.coolingUntil?.();
    await pool.cool(booked.key, { scope: 'quota_owner', reason: 'rate_limit', until: new Date(T0 + 30_000).toISOString() });
    // Assess
    assert.equal(before, undefined);
    assert.equal(otherOwnerCooling, undefined, 'another owner cooling is not this grant’s');
    assert.equal(booked.coolingUntil?.()?.getTime(), T0 + 30_000);
  });
});

describe('SharedKeyPool: a spent day with booking on', () => {
  const keys = [
    { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' },
    { id: 'k2', quotaOwner: 'o2', secret: 'sk-2' },
  ];
  const settings = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, probeFirstCalls: false });

  it("spreads the callers denied until a near reset over every owner's slots, and reserves none a day away", async () => {
    // Prepare: two owners of 6 requests a minute and 12 a day, both days spent over two minutes; the
    // reset is at T0 + 1 day
    const limits = { ...LIMITS, requestsPerDay: 12 };
    const reset = T0 + limits.dayMs;
    const store = new MemoryRateStateStore();
    let now = T0;
    const pool = new SharedKeyPool({ keys, store, limits, settings, now: () => now });
    for (const minute of [0, 1]) {
      now = T0 + minute * 60_000;
      for (let i = 0; i < 12; i++) assert.equal((await pool.acquire({ estimatedTokens: 100 })).admitted, true);
    }
    /** 16 callers that could wait 30 s in-process, denied: their retry times, seconds after the reset. */
    const deny16 = async (): Promise<number[]> => {
      const offsets: number[] = [];
      for (let i = 0; i < 16; i++) {
        const verdict = await pool.acquire({ estimatedTokens: 100, bookWithinMs: 30_000 });
        assert.equal(verdict.admitted, false);
        if (!verdict.admitted) offsets.push(Math.round((verdict.retryAt.getTime() - reset) / 1000));
      }
      return offsets.sort((a, b) => a - b);
    };
    // Act: a second after the last grant (the reset a day away, further than a message can be delayed),
    // then ten minutes before the reset
    now += 1000;
    const writesBefore = store.writes;
    const farAway = await deny16();
    const writesFarAway = store.writes - writesBefore;
    now = reset - 600_000;
    const near = await deny16();
    // Assess: a day away, every caller comes back at the reset, and no slot is written; near it, both
    // owners' first minutes go at the reset (12 calls), the other 4 one refill apart on each owner (+10 s,
    // +20 s); one owner alone would have held the last caller back to +100 s
    assert.deepEqual(farAway, Array<number>(16).fill(0));
    assert.equal(writesFarAway, 0);
    assert.deepEqual(near, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 10, 20, 20]);
  });
});

describe('SharedKeyPool: settlements ride on the next take', () => {
  const key = { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' };
  // Corrections only: the first answer's proving write is `bucket/first-calls.test.ts`'s.
  const settings = admissionSettings({ outputTokenEstimate: 100, outputTokenEstimateWeight: 0, safetyMargin: 0, probeFirstCalls: false });

  it('a small correction is owed, not written, and goes in with the next take; a large one is written at once', async () => {
    // Prepare: 6 000 tokens a minute (2 % = 120 tokens owed at most); the store counts its bucket writes
    const store = new MemoryRateStateStore();
    const pool = new SharedKeyPool({ keys: [key], store, limits: LIMITS, settings, now: () => T0 });
    const first = await pool.acquire({ estimatedTokens: 100 });
    assert.ok(first.admitted);
    // Act 1: the call used 50 tokens fewer than taken (200)
    await first.settle({ inputTokens: 100, outputTokens: 50 });
    // Assess 1: no write; 50 tokens owed back
    assert.equal(store.writes, 1);
    assert.equal(pool.tokensOwed, -50);
    // Act 2: the next take
    const second = await pool.acquire({ estimatedTokens: 100 });
    assert.ok(second.admitted);
    // Assess 2: one write for the take, with the correction in it
    assert.equal(store.writes, 2);
    assert.equal(pool.tokensOwed, 0);
    assertNear(levelsOf(await store.readBucket('o1')).tokens, 6000 - 150 - 200);
    // Act 3: a call that used 500 tokens more than taken
    await second.settle({ inputTokens: 600, outputTokens: 100 });
    // Assess 3: written at once
    assert.equal(store.writes, 3);
    assert.equal(pool.tokensOwed, 0);
    assertNear(levelsOf(await store.readBucket('o1')).tokens, 6000 - 150 - 700);
  });
});
