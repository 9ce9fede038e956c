/**
 * Leases (`bucket/lease.ts`): a take on a proven owner with ample headroom sets a few more calls
 * aside for its instance in the same write; the instance grants them without a write while the lease
 * lasts, gives back what it did not use with its next take while the lease lasts (an ended lease's
 * rest is dropped), and what it admits still fits the provider's bucket.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyUpdate } from '../../../../lib/admission/bucket/item-update.js';
import { configuredDailyReset, levelsAt } from '../../../../lib/admission/bucket/token-bucket.js';
import type { BucketLevels, BucketLimits, BucketState } from '../../../../lib/admission/model/bucket.js';
import type { KeyRef } from '../../../../lib/admission/model/cooldowns.js';
import { acquireGroupOps } from '../../../../lib/admission/decisions/group-take.js';
import { givenBack, leaseValidityMs, spendLease, withLease } from '../../../../lib/admission/bucket/lease.js';
import { acquireOps, coolOps, settleOps } from '../../../../lib/admission/decisions/pool-core.js';
import { newPoolState, type PoolConfig, type PoolState } from '../../../../lib/admission/decisions/pool-state.js';
import { runSync } from '../../../../lib/admission/drivers/sync.js';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import { newAdmissionCounters, SimRateState, type AdmissionCounters } from '../../../../workbench/sim/sim-key-pool.js';
import { T0 } from '../support.js';

/** 100 requests and 100 000 tokens a minute, a 5 % margin (validity: 1.5 s, capped by the 1 s cache). */
const LIMITS: BucketLimits = {
  requestsPerWindow: 100,
  tokensPerWindow: 100_000,
  burstShare: 0.95,
  windowMs: 60_000,
  requestsPerDay: 10_000,
  dayMs: 86_400_000,
};
const CALL = { requests: 1, tokens: 1000 };

/** A bucket with these levels at `at` (95 requests and 95 000 tokens full, the day's 10 000), in the day the configured reset ends. */
function holding(levels: BucketLevels, at: number): BucketState {
  return {
    requestsFullAt: at + (95 - levels.requests) * 600,
    tokensFullAt: at + (95_000 - levels.tokens) * 0.6,
    reservedUntil: 0,
    version: 1,
    dayResetAt: configuredDailyReset(LIMITS, at),
    dailyUsed: 10_000 - levels.daily,
  };
}

/** `levels` within floating-point noise of `expected`. */
function assertLevels(levels: BucketLevels, expected: BucketLevels, message?: string): void {
  for (const level of ['requests', 'tokens', 'daily'] as const) {
    assert.ok(Math.abs(levels[level] - expected[level]) < 1e-6, `${message ?? ''} ${level}: ${levels[level]}, expected ${expected[level]}`);
  }
}
const KEYS: KeyRef[] = [{ id: 'k1', quotaOwner: 'o1' }];

describe('lease arithmetic', () => {
  it('leases up to the terms while every level keeps half its capacity, valid for half the margin', () => {
    // Prepare: a full bucket after one take (94 requests, 94 000 tokens left)
    const next = holding({ requests: 94, tokens: 94_000, daily: 9999 }, T0);
    // Act
    const ten = withLease(LIMITS, next, CALL, { calls: 10, validityMs: leaseValidityMs(LIMITS, { leaseMs: 1000, cooldownCacheMs: 1000 }) }, T0);
    const tight = withLease(LIMITS, holding({ requests: 50, tokens: 94_000, daily: 9999 }, T0), CALL, { calls: 10, validityMs: 1000 }, T0);
    const spent = withLease(LIMITS, holding({ requests: 40, tokens: 94_000, daily: 9999 }, T0), CALL, { calls: 10, validityMs: 1000 }, T0);
    // Assess
    assert.ok(Math.abs(leaseValidityMs(LIMITS, { leaseMs: 5000, cooldownCacheMs: 5000 }) - 1500) < 1e-6, 'half the margin at most');
    assert.equal(leaseValidityMs(LIMITS, { leaseMs: 200, cooldownCacheMs: 5000 }), 200);
    assert.equal(leaseValidityMs({ ...LIMITS, burstShare: 1 }, { leaseMs: 1000, cooldownCacheMs: 1000 }), 0, 'no margin, no lease');
    assert.deepEqual(ten?.lease, { requests: 10, tokens: 10_000, until: T0 + 1000, dayEnd: next.dayResetAt });
    assertLevels(levelsAt(applyUpdate(next, ten!.update), LIMITS, T0), { requests: 84, tokens: 84_000, daily: 9989 });
    assert.equal(tight?.lease.requests, 2, '50 - 47.5 leaves room for 2');
    assert.equal(spent, undefined, 'below half: no lease');
  });

  it('never lasts past the fixed day’s reset, and spends only while it lasts and holds the call', () => {
    // Prepare: 300 ms before the day's reset
    const late = holding({ requests: 94, tokens: 94_000, daily: 9999 }, T0 - 300);
    // Act
    const leased = withLease(LIMITS, late, CALL, { calls: 3, validityMs: 1000 }, T0 - 300);
    const lease = leased!.lease;
    const spends = [spendLease(lease, CALL, T0 - 200), spendLease(lease, { requests: 1, tokens: 5000 }, T0 - 100), spendLease(lease, CALL, T0)];
    // Assess
    assert.equal(lease.until, T0, 'ends at the reset');
    assert.deepEqual(spends, [true, false, false], 'too large a call, then too late');
    assert.deepEqual({ requests: lease.requests, tokens: lease.tokens }, { requests: 2, tokens: 2000 });
  });

  it('gives back what is left, never above capacity, and the daily requests only within their day', () => {
    // Prepare
    const bucket = holding({ requests: 90, tokens: 50_000, daily: 9000 }, T0);
    const lease = { requests: 4, tokens: 4000, until: T0 + 1000, dayEnd: bucket.dayResetAt! };
    // Act
    const same = applyUpdate(bucket, givenBack(bucket, LIMITS, lease, T0)!);
    const nextDay = applyUpdate(bucket, givenBack(bucket, LIMITS, lease, T0 + LIMITS.dayMs)!);
    // Assess
    assertLevels(levelsAt(same, LIMITS, T0), { requests: 94, tokens: 54_000, daily: 9004 });
    assertLevels(levelsAt(nextDay, LIMITS, T0 + LIMITS.dayMs), { requests: 95, tokens: 95_000, daily: 10_000 }, 'capped, and the new day whole');
  });
});

/** The lowest level of the provider's request bucket (a whole window's capacity, starting full) facing calls at `times`. */
function providerLowest(times: readonly number[]): number {
  let level = LIMITS.requestsPerWindow;
  let last = T0;
  let lowest = level;
  for (const at of [...times].sort((x, y) => x - y)) {
    level = Math.min(LIMITS.requestsPerWindow, level + ((at - last) * LIMITS.requestsPerWindow) / LIMITS.windowMs) - 1;
    last = at;
    lowest = Math.min(lowest, level);
  }
  return lowest;
}

/** One pool instance on a shared in-memory table, with its own clock. */
function instance(clock: { now: number }, leaseCalls = 10): { config: PoolConfig; state: PoolState } {
  const settings = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0.05, leaseCalls });
  return { config: { keys: KEYS, limits: LIMITS, settings, now: () => clock.now }, state: newPoolState(settings) };
}

function newTable(): { store: SimRateState; counters: AdmissionCounters } {
  const counters = newAdmissionCounters();
  return { store: new SimRateState(KEYS, counters), counters };
}

/** One call through `pool`: acquired, then settled with its real usage (the estimate: no correction). */
function call(pool: { config: PoolConfig; state: PoolState }, store: SimRateState): number | undefined {
  const answer = runSync(acquireOps(pool.config, pool.state, { estimatedTokens: CALL.tokens }), store);
  if (!answer.admitted) return undefined;
  runSync(settleOps(pool.config, pool.state, answer.key.quotaOwner, answer.cost.tokens, { inputTokens: CALL.tokens, outputTokens: 0 }), store);
  return answer.startAt;
}

describe('the pool with leases', () => {
  it('leases as many calls as its instance asked for in a lease’s validity before: a steady caller writes once per 11 calls', () => {
    // Prepare: a proven owner
    const { store, counters } = newTable();
    const clock = { now: T0 };
    const pool = instance(clock);
    call(pool, store); // the probe and its settlement (proves the owner): two writes
    // Act: calls 10 ms apart, until the instance holds a lease of 10; then 22 more
    const leased: number[] = [];
    while ((pool.state.leases.get('o1')?.requests ?? 0) < 10) {
      clock.now += 10;
      assert.notEqual(call(pool, store), undefined);
      leased.push(pool.state.leases.get('o1')?.requests ?? 0);
    }
    const before = counters.bucketWrites;
    for (let i = 0; i < 22; i++) {
      clock.now += 10;
      assert.notEqual(call(pool, store), undefined, `call ${i}`);
    }
    // Assess: each take leased the calls asked for in the second before it (the probe, then 3, 7, 10 of 10
    // at most); then a take leasing 10, twice; the 23rd call takes again
    assert.deepEqual(leased, [1, 0, 3, 2, 1, 0, 7, 6, 5, 4, 3, 2, 1, 0, 10]);
    assert.equal(counters.bucketWrites - before, 2);
  });

  it('leases nothing for an instance whose calls come further apart than a lease lasts: the bucket keeps the calls it did not make', () => {
    // Prepare: the same six calls, 1.5 s apart (a lease lasts 1 s), with and without leases
    const run = (leaseCalls: number) => {
      const { store } = newTable();
      const clock = { now: T0 };
      const pool = instance(clock, leaseCalls);
      const held: number[] = [];
      for (let i = 0; i < 6; i++) {
        call(pool, store);
        held.push(pool.state.leases.get('o1')?.requests ?? 0);
        clock.now += 1500;
      }
      return { held, levels: levelsAt(store.readBucket('o1'), LIMITS, clock.now) };
    };
    // Act
    const leasing = run(10);
    const plain = run(0);
    // Assess: no take leased (a lease would have ended unused and its calls stayed taken)
    assert.deepEqual(leasing.held, [0, 0, 0, 0, 0, 0]);
    assertLevels(leasing.levels, plain.levels);
  });

  it('never leases in a group’s round, and grants a group’s calls from a lease held before', () => {
    // Prepare: a proven owner
    const { store, counters } = newTable();
    const clock = { now: T0 };
    const pool = instance(clock);
    call(pool, store);
    const group = () =>
      runSync(
        acquireGroupOps(
          pool.config,
          pool.state,
          [1, 2, 3].map(() => ({ estimatedTokens: CALL.tokens })),
        ),
        store,
      );
    // Act: a group, a lone call, another group
    const before = counters.bucketWrites;
    const first = group();
    const afterGroup = { writes: counters.bucketWrites - before, leased: pool.state.leases.size };
    call(pool, store);
    const beforeSecond = counters.bucketWrites;
    const second = group();
    // Assess
    assert.ok([...first, ...second].every((a) => a.admitted));
    assert.deepEqual(afterGroup, { writes: 1, leased: 0 }, 'one write for the group, no lease');
    assert.equal(counters.bucketWrites - beforeSecond, 0, 'the lone call leased the 4 calls asked for before it: the group took 3 of them');
    assert.equal(pool.state.leases.get('o1')?.requests, 1);
  });

  it('drops the lease when the owner cools, and takes again after the cooldown', () => {
    // Prepare: a lease of 10, then a rate limit on the owner for 100 ms
    const { store, counters } = newTable();
    const clock = { now: T0 };
    const pool = instance(clock);
    call(pool, store);
    call(pool, store);
    runSync(coolOps(pool.config, pool.state, KEYS[0]!, { scope: 'quota_owner', reason: 'rate_limit', until: new Date(T0 + 100).toISOString() }), store);
    const before = counters.bucketWrites;
    // Act
    clock.now = T0 + 200;
    const at = call(pool, store);
    // Assess: the call after the cooldown was taken with a write, not granted from the old lease
    assert.equal(at, T0 + 200);
    assert.equal(counters.bucketWrites - before, 1);
  });

  it('drops the rest of a lease that ended instead of giving it back: the bucket holds its unused calls until they refill', () => {
    // Prepare: the same 5 calls with and without leases (the fourth leases 3, the fifth spends one), then one call after the lease ended
    const run = (leaseCalls: number) => {
      const { store } = newTable();
      const clock = { now: T0 };
      const pool = instance(clock, leaseCalls);
      for (let i = 0; i < 5; i++) call(pool, store);
      const rest = pool.state.leases.get('o1');
      const left = rest && { requests: rest.requests, tokens: rest.tokens };
      clock.now += 2000;
      call(pool, store);
      return { left, levels: levelsAt(store.readBucket('o1'), LIMITS, clock.now), lease: pool.state.leases.get('o1') };
    };
    // Act
    const leased = run(10);
    const plain = run(0);
    // Assess: the last take gave nothing back of the 2 calls left, and leased none (its instance asked for
    // nothing in the second before); while the lease was out the bucket refilled as if they had been made, the
    // provider's, full, may not have: a give-back would count that refill twice. Nothing else differs
    assert.equal(plain.lease, undefined);
    assert.equal(leased.left?.requests, 2);
    assert.equal(leased.lease, undefined);
    const held = { ...leased.left!, daily: 2 };
    for (const level of ['requests', 'tokens', 'daily'] as const) {
      const { [level]: a } = leased.levels;
      assert.ok(Math.abs(a + held[level] - plain.levels[level]) < 1e-3, `${level}: ${a} + ${held[level]} vs ${plain.levels[level]}`); // clocks in ms: float rounding
    }
  });

  it('keeps half the margin when a lease is called at its end, after an idle spell, behind another instance’s burst', () => {
    // Prepare: A proves the owner and calls until it holds a lease of 10; nobody calls until just before the lease ends
    const { store } = newTable();
    const clock = { now: T0 };
    const [a, b] = [instance(clock), instance(clock)];
    const times = [call(a, store)];
    while ((a.state.leases.get('o1')?.requests ?? 0) < 10) times.push(call(a, store));
    clock.now += leaseValidityMs(LIMITS, a.config.settings) - 1;
    // Act: B takes all it can, then A calls its 10 leased calls
    for (let at = call(b, store); at !== undefined; at = call(b, store)) times.push(at);
    for (let i = 0; i < 10; i++) times.push(call(a, store));
    // Assess: the provider's bucket (a whole window, starting full) keeps half the margin (the rest absorbs skew)
    assert.ok(a.state.leases.has('o1') && times.every((t) => t !== undefined));
    assert.ok(times.length > 90, `${times.length} calls`);
    assert.ok(providerLowest(times as number[]) >= (1 - LIMITS.burstShare!) * LIMITS.requestsPerWindow * 0.5 - 1e-9);
  });

  it('admits no more than the provider’s bucket holds, with three instances leasing and calls arriving late by half the margin', () => {
    // Prepare: three instances asking at random every few ms for two minutes
    const { store } = newTable();
    const clock = { now: T0 };
    const pools = [instance(clock), instance(clock), instance(clock)];
    let seed = 11;
    const random = (): number => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    const times: number[] = [];
    // Act
    while (clock.now < T0 + 120_000) {
      clock.now += Math.floor(random() * 400);
      const at = call(pools[Math.floor(random() * pools.length)]!, store);
      if (at !== undefined) times.push(at + random() * 0.025 * LIMITS.windowMs);
    }
    // Assess: the provider's bucket never goes below empty
    assert.ok(providerLowest(times) >= -1e-9);
    assert.ok(times.length > 150, `${times.length} calls`);
  });
});
