/**
 * The pure parts of admission: bucket arithmetic, key choice, settings, and the key pool over the
 * in-memory rate state (the pause: `admission-pause.test.ts`; the two drivers of the key pool's
 * decisions: `admission-core.test.ts`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adjustTokens, configuredDailyReset, levelsAt, takeFromBucket, withCooldown, type BucketLimits, type BucketState } from '../../lib/admission/bucket.js';
import { blockerOf, chooseKeys, EMPTY_SNAPSHOT, keysLeftAfter, laneOutUntil, type CooldownRecord, type CooldownSnapshot } from '../../lib/admission/choice.js';
import { SharedKeyPool } from '../../lib/admission/key-pool.js';
import { admissionSettings, AdmissionSettingsError, bucketLimitsFor, learnOutputEstimate } from '../../lib/admission/settings.js';
import { resolveLanes } from '../../lib/config/lanes.js';
import { NoProviderKeyError, type KeyAdmission, type KeyDenial, type ProviderKey } from '../../lib/admission/keys.js';
import { RateStateUnavailableError } from '../../lib/admission/rate-state.js';
import { RatelaneError } from '../../lib/shared/errors.js';
import { MemoryRateStateStore } from '../helpers/memory-rate-state.js';

const LIMITS: BucketLimits = { requestsPerWindow: 6, tokensPerWindow: 6000, windowMs: 60_000, requestsPerDay: 100, dayMs: 86_400_000 };
const T0 = Date.parse('2026-01-01T00:00:00Z');

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
    assert.equal(levelsAt(state, LIMITS, T0 - 5_000).requests, 0, 'a clock behind the bucket refills nothing');
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
    const reconciled = adjustTokens(v.next, LIMITS, 1000 - 5000, T0);
    // Assess
    assert.equal(reconciled.levels.tokens, 5000);
    assert.equal(reconciled.version, v.next.version + 1);
    assert.ok(takeFromBucket(reconciled, LIMITS, { requests: 1, tokens: 2000 }, T0, { reserve: false }).admitted);
    // more than estimated: debt, bounded by one window
    assert.equal(adjustTokens(v.next, LIMITS, 1e9, T0).levels.tokens, -6000);
  });

  it('a call bigger than the whole token window asks for the whole window (the provider decides)', () => {
    // Act: 50,000 tokens from a window of 6,000
    const v = takeFromBucket(undefined, LIMITS, { requests: 1, tokens: 50_000 }, T0, { reserve: false });
    // Assess
    assert.ok(v.admitted);
    assert.equal(v.next.levels.tokens, 0);
  });

  it("an owner's cooldown in the bucket denies until it ends, and only a later one replaces it", () => {
    // Prepare
    const cooled = withCooldown(undefined, LIMITS, { until: T0 + 5000, reason: 'quota_exhausted' }, T0);
    // Act
    const denied = takeFromBucket(cooled, LIMITS, { requests: 1, tokens: 1 }, T0, { reserve: true });
    // Assess
    assert.ok(!denied.admitted && denied.limitedBy === 'cooldown' && denied.retryAt === T0 + 5000);
    assert.equal(withCooldown(cooled, LIMITS, { until: T0 + 1000, reason: 'rate_limit' }, T0), cooled, 'a shorter one is ignored');
    assert.ok(takeFromBucket(cooled, LIMITS, { requests: 1, tokens: 1 }, T0 + 5000, { reserve: false }).admitted);
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
    // Assess: three slots at the next reset one refill apart (60 ms at 1000 a minute), then the day after
    assert.deepEqual(
      slots.map((t) => Math.round(t)),
      [DAY, DAY + 60, DAY + 120, 2 * DAY, 2 * DAY + 60],
    );
    // the promise is only counted for days still to come: once that day begins, takes spend its level
    const then = take(state, daily3, T0 + DAY);
    assert.ok(then.admitted);
  });

  it('a quota_exhausted cooldown moves the day to end at the reset the provider stated', () => {
    // Prepare: the provider says the quota is out until 05:00 (its own day), while ours would end at midnight
    const cooled = withCooldown(undefined, daily3, { until: T0 + 5 * 3_600_000, reason: 'quota_exhausted' }, T0 + 3_600_000);
    // Assess: out until 05:00, whole then, and the following day ends at 05:00 the next day
    const denied = take(cooled, daily3, T0 + 4 * 3_600_000);
    assert.ok(!denied.admitted && denied.limitedBy === 'cooldown');
    const v = take(cooled, daily3, T0 + 5 * 3_600_000);
    assert.ok(v.admitted && v.next.dayResetAt === T0 + DAY + 5 * 3_600_000 && v.next.levels.daily === 2);
    // a rate-limit cooldown leaves the day alone
    const rate = withCooldown(undefined, daily3, { until: T0 + 1000, reason: 'rate_limit' }, T0);
    assert.equal(rate.dayResetAt, T0 + DAY);
  });

  it('a bucket stored before the fixed day existed (no dayResetAt) takes the configured reset', () => {
    // Prepare
    const legacy: BucketState = { levels: { requests: 1000, tokens: 6000, daily: 0 }, updatedAt: T0 + 1000, reservedUntil: 0, version: 4 };
    // Act
    const v = take(legacy, daily3, T0 + 2000);
    // Assess
    assert.ok(!v.admitted && v.dueAt === T0 + DAY);
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
});

const POOL_KEYS: ProviderKey[] = [
  { id: 'k1', quotaOwner: 'o1', secret: 's1' },
  { id: 'k2', quotaOwner: 'o2', secret: 's2' },
];

function pool(options: {
  limits?: Partial<BucketLimits>;
  settings?: Parameters<typeof admissionSettings>[0];
  now: () => number;
  store?: MemoryRateStateStore;
}): SharedKeyPool {
  return new SharedKeyPool({
    keys: POOL_KEYS,
    store: options.store ?? new MemoryRateStateStore(),
    limits: { ...LIMITS, ...options.limits },
    settings: admissionSettings({ outputTokenEstimate: 0, outputTokenEstimateMin: 0, ...options.settings }),
    now: options.now,
  });
}

const denial = (v: KeyAdmission): KeyDenial => {
  assert.equal(v.admitted, false);
  return v as KeyDenial;
};

describe('admission: the key pool', () => {
  it('spreads denied calls over every key: each reserves the earliest free slot of any owner', async () => {
    // Prepare: two owners of 6 requests a minute each, all 12 spent at T0
    const p = pool({ now: () => T0 });
    for (let i = 0; i < 12; i++) assert.ok((await p.acquire({ estimatedTokens: 10 })).admitted);
    // Act: 8 more callers at T0
    const retryAts: number[] = [];
    for (let i = 0; i < 8; i++) retryAts.push(denial(await p.acquire({ estimatedTokens: 10 })).retryAt.getTime() - T0);
    // Assess: two callers per 10 s refill (one per owner), not 8 slots queued on one owner (10..80 s)
    assert.deepEqual(
      retryAts.map((t) => Math.round(t / 1000)).sort((a, b) => a - b),
      [10, 10, 20, 20, 30, 30, 40, 40],
    );
  });

  it('learns the output-token estimate from the usage calls report, and takes it for the next calls', async () => {
    // Prepare: a 512-token starting estimate, tokens binding (6 000 a minute)
    const store = new MemoryRateStateStore();
    const p = pool({ now: () => T0, store, settings: { outputTokenEstimate: 512, outputTokenEstimateMin: 16 }, limits: { requestsPerWindow: 1000 } });
    assert.equal(p.outputTokenEstimate, 512);
    // Act: calls answer with 100 output tokens
    for (let i = 0; i < 30; i++) {
      const grant = await p.acquire({ estimatedTokens: 50 });
      assert.ok(grant.admitted);
      await grant.settle({ inputTokens: 50, outputTokens: 100 });
    }
    // Assess: the estimate moved to ~100; the buckets hold what the calls really used
    assert.ok(p.outputTokenEstimate > 100 && p.outputTokenEstimate < 120, `estimate ${p.outputTokenEstimate}`);
    const used = [...store.buckets.values()].reduce((sum, b) => sum + (6000 - b.levels.tokens), 0);
    assert.ok(Math.abs(used - 30 * 150) < 1e-6, `reconciled: ${used}`);
  });

  it('says the lane is out when every owner’s daily quota is spent until a reset far enough away', async () => {
    // Prepare: 1 request a day per owner, both spent at 01:00
    let now = T0 + 3_600_000;
    const p = pool({ now: () => now, limits: { requestsPerWindow: 1000, requestsPerDay: 1 } });
    assert.ok((await p.acquire({ estimatedTokens: 1 })).admitted);
    assert.ok((await p.acquire({ estimatedTokens: 1 })).admitted);
    // Act
    const out = denial(await p.acquire({ estimatedTokens: 1 }));
    // Assess: out until midnight, for the daily quota; the job comes back then
    assert.deepEqual(out.laneOut, { until: new Date(T0 + 86_400_000), reason: 'quota_exhausted' });
    assert.equal(out.retryAt.getTime(), T0 + 86_400_000);
    // 10 minutes before the reset (less than 15 windows): one deferral, no pause
    now = T0 + 86_400_000 - 600_000;
    assert.equal(denial(await p.acquire({ estimatedTokens: 1 })).laneOut, undefined);
  });
});

describe('admission: key choice', () => {
  const keys = [
    { id: 'k1', quotaOwner: 'o1' },
    { id: 'k2', quotaOwner: 'o1' },
    { id: 'k3', quotaOwner: 'o2' },
  ];
  const snap = (...records: CooldownRecord[]): CooldownSnapshot => ({
    keys: new Map(records.filter((r) => r.scope === 'key').map((r) => [r.id, r])),
    owners: new Map(records.filter((r) => r.scope === 'quota_owner').map((r) => [r.id, r])),
  });

  it('goes round robin from the cursor over keys that are not cooling', () => {
    // Act: from cursor 1, k3 cooling
    const choice = chooseKeys(keys, 1, snap({ scope: 'key', id: 'k3', reason: 'rate_limit', until: T0 + 1000 }), T0);
    // Assess
    assert.deepEqual(
      choice.free.map((f) => f.key.id),
      ['k2', 'k1'],
    );
    assert.deepEqual(
      choice.cooling.map((c) => c.key.id),
      ['k3'],
    );
    assert.deepEqual(
      chooseKeys(keys, 0, EMPTY_SNAPSHOT, T0).free.map((f) => f.key.id),
      ['k1', 'k2', 'k3'],
    );
  });

  it('keys that share a quota owner cool together; an ended cooldown does not count', () => {
    // Prepare: o1 (k1 and k2) cooling
    const s = snap({ scope: 'quota_owner', id: 'o1', reason: 'quota_exhausted', until: T0 + 1000 });
    // Act + Assess
    assert.deepEqual(
      chooseKeys(keys, 0, s, T0).free.map((f) => f.key.id),
      ['k3'],
    );
    assert.equal(blockerOf(keys[1]!, s, T0)?.reason, 'quota_exhausted');
    assert.equal(blockerOf(keys[1]!, s, T0 + 1000), undefined);
  });

  it('keysLeft counts keys not out for a long reset once the new cooldown applies', () => {
    // Prepare
    const s = snap({ scope: 'key', id: 'k3', reason: 'rate_limit', until: T0 + 1000 });
    // Act + Assess: o1 out for its daily quota: k3 is only rate limited, so it is left
    assert.equal(keysLeftAfter(keys, s, { scope: 'quota_owner', id: 'o1', reason: 'quota_exhausted', until: T0 + 3_600_000 }, T0), 1);
    const s2 = snap({ scope: 'quota_owner', id: 'o2', reason: 'billing', until: T0 + 86_400_000 });
    assert.equal(keysLeftAfter(keys, s2, { scope: 'quota_owner', id: 'o1', reason: 'quota_exhausted', until: T0 + 3_600_000 }, T0), 0);
    // a rate-limit cooldown never takes a key out for long
    assert.equal(keysLeftAfter(keys, s2, { scope: 'key', id: 'k1', reason: 'rate_limit', until: T0 + 1000 }, T0), 2);
  });

  it('the lane is out when every key is out for a long reset: until the earliest one', () => {
    // Prepare
    const s = snap(
      { scope: 'quota_owner', id: 'o1', reason: 'quota_exhausted', until: T0 + 7_200_000 },
      { scope: 'quota_owner', id: 'o2', reason: 'quota_exhausted', until: T0 + 3_600_000 },
    );
    // Act + Assess
    assert.deepEqual(laneOutUntil(keys, s, T0), { until: T0 + 3_600_000, reason: 'quota_exhausted' });
    const withShort = snap(
      { scope: 'quota_owner', id: 'o1', reason: 'billing', until: T0 + 7_200_000 },
      { scope: 'key', id: 'k3', reason: 'rate_limit', until: T0 + 1000 },
    );
    assert.equal(laneOutUntil(keys, withShort, T0), null, 'k3 is back in a second');
  });

  it('an owner whose daily quota admission saw spent is out until its reset', () => {
    // Prepare: o1 out for billing
    const s = snap({ scope: 'quota_owner', id: 'o1', reason: 'billing', until: T0 + 7_200_000 });
    // Act + Assess: o2 has spent its day until T0 + 1 h: every key is out, until the earliest
    assert.deepEqual(laneOutUntil(keys, s, T0, new Map([['o2', T0 + 3_600_000]])), { until: T0 + 3_600_000, reason: 'quota_exhausted' });
    // o2 is rate limited for a second, but its day is spent: still out
    const short = snap(
      { scope: 'quota_owner', id: 'o1', reason: 'quota_exhausted', until: T0 + 7_200_000 },
      { scope: 'key', id: 'k3', reason: 'rate_limit', until: T0 + 1000 },
    );
    assert.deepEqual(laneOutUntil(keys, short, T0, new Map([['o2', T0 + 3_600_000]])), { until: T0 + 3_600_000, reason: 'quota_exhausted' });
    assert.equal(laneOutUntil(keys, s, T0, new Map()), null, 'without it, o2 is free');
  });
});

describe('admission: errors', () => {
  it('say what went wrong in terms a caller can act on, under their own names', () => {
    // Act
    const errors = [
      new AdmissionSettingsError('bad'),
      new NoProviderKeyError('none'),
      new RateStateUnavailableError('GetItem', 'rate-us', { cause: Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }) }),
    ];
    // Assess
    assert.deepEqual(
      errors.map((e) => [e instanceof RatelaneError, e.name, e.kind, e.retryable]),
      [
        [true, 'AdmissionSettingsError', 'config', false],
        [true, 'NoProviderKeyError', 'config', false],
        [true, 'RateStateUnavailableError', 'unavailable', true],
      ],
    );
    assert.equal(errors[2]!.message, 'GetItem on rate-state table rate-us failed: TimeoutError: socket hang up');
  });
});

describe('admission: settings', () => {
  it('takes the lane’s limits less the safety margin, over the given window', () => {
    // Prepare
    const lane = resolveLanes({ us: { provider: { limits: { requestsPerMinute: 60, tokensPerMinute: 10_000, requestsPerDay: 1000 } } } }).us!;
    // Act
    const limits = bucketLimitsFor(lane, admissionSettings({ safetyMargin: 0.1, windowMs: 6000, dayMs: 6000 * 1440 }));
    // Assess: and settings admission cannot work with are refused
    assert.deepEqual(limits, {
      requestsPerWindow: 54,
      tokensPerWindow: 9000,
      windowMs: 6000,
      requestsPerDay: 900,
      dayMs: 8_640_000,
      dailyWindow: 'fixed',
      dailyResetOffsetMs: 0,
    });
    assert.throws(() => admissionSettings({ safetyMargin: 0.9 }), AdmissionSettingsError);
    assert.throws(() => admissionSettings({ windowMs: 0 }), AdmissionSettingsError);
    assert.equal(admissionSettings({ windowMs: undefined as unknown as number }).windowMs, 60_000, 'undefined keeps the default');
    assert.throws(() => admissionSettings({ outputTokenEstimateWeight: 1.5 }), AdmissionSettingsError);
    assert.throws(() => admissionSettings({ outputTokenEstimateMin: 100, outputTokenEstimateMax: 50 }), AdmissionSettingsError);
    assert.throws(() => admissionSettings({ dailyWindow: 'hourly' as 'fixed' }), AdmissionSettingsError);
  });

  it('learns the output-token estimate as a weighted average of reported outputs, within bounds', () => {
    // Prepare
    const settings = admissionSettings();
    let estimate = settings.outputTokenEstimate;
    // Act: 60 calls answering with 150 output tokens
    for (let i = 0; i < 60; i++) estimate = learnOutputEstimate(estimate, 150, settings);
    // Assess
    assert.ok(Math.abs(estimate - 150) < 1, `converges to the real outputs: ${estimate}`);
    assert.equal(learnOutputEstimate(150, 1e9, settings), settings.outputTokenEstimateMax, 'one huge answer is bounded');
    assert.equal(learnOutputEstimate(17, 0, settings), settings.outputTokenEstimateMin, 'never below the minimum');
    assert.equal(learnOutputEstimate(150, Number.NaN, settings), 150, 'a report without a number changes nothing');
    assert.equal(learnOutputEstimate(512, 100, { ...settings, outputTokenEstimateWeight: 0 }), 512, 'weight 0: the fixed estimate');
  });
});
