/**
 * Admission's keys: the key pool over the in-memory rate state (denied calls spread over every owner,
 * the learned output-token estimate, the lane out when every owner's day is spent) and the key choice
 * (round robin, owners cooling together, keys left, the lane out until the earliest reset). The
 * bucket arithmetic: `bucket/token-bucket.test.ts`; the pause: `pause/pause.test.ts`; the two
 * drivers of the key pool's decisions: `drivers/core.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockerOf, chooseKeys, keysLeftAfter, laneCapacity } from '../../../../lib/admission/decisions/choice.js';
import { laneOutOf } from '../../../../lib/admission/decisions/pool-core.js';
import { chooseShard, newPoolState, type PoolConfig } from '../../../../lib/admission/decisions/pool-state.js';
import type { BucketLimits, BucketState } from '../../../../lib/admission/model/bucket.js';
import { EMPTY_SNAPSHOT, type CooldownRecord, type CooldownSnapshot } from '../../../../lib/admission/model/cooldowns.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import type { KeyAdmission, KeyDenial, ProviderKey } from '../../../../lib/admission/keys/key-pool.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { levelsOf, LIMITS, T0 } from '../support.js';

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
    // Bucket decisions without settlements: first-call probes are `bucket/first-calls.test.ts`'s.
    settings: admissionSettings({ outputTokenEstimate: 0, outputTokenEstimateMin: 0, probeFirstCalls: false, ...options.settings }),
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
    // Assess: the estimate moved to ~100; the buckets, with the corrections the pool still owes them
    // (written with its next take of each, or alone past 2 % of a window), hold what the calls really used
    assert.ok(p.outputTokenEstimate > 100 && p.outputTokenEstimate < 120, `estimate ${p.outputTokenEstimate}`);
    const used = [...store.buckets.values()].reduce((sum, b) => sum + (6000 - levelsOf(b, { ...LIMITS, requestsPerWindow: 1000 }).tokens), 0);
    assert.ok(Math.abs(used + p.tokensOwed - 30 * 150) < 1e-6, `reconciled: ${used} + owed ${p.tokensOwed}`);
    assert.ok(Math.abs(p.tokensOwed) < 2 * 0.02 * 6000, `owed at most 2 % of a window per owner: ${p.tokensOwed}`);
  });

  it('says the lane is out when every owner’s daily quota is spent until a reset far enough away', async () => {
    // Prepare: 1 request a day per owner, both spent at 01:00
    let now = T0 + 3_600_000;
    const p = pool({ now: () => now, limits: { requestsPerWindow: 1000, requestsPerDay: 1 } });
    const first = await p.acquire({ estimatedTokens: 1 });
    const second = await p.acquire({ estimatedTokens: 1 });
    // Act
    const out = denial(await p.acquire({ estimatedTokens: 1 }));
    // Assess: each grant says what it left: half the owners, then none (the lane can pause before it receives more)
    const midnight = new Date(T0 + 86_400_000);
    assert.ok(first.admitted && second.admitted);
    assert.deepEqual(first.laneCapacity, { share: 0.5, until: midnight, reason: 'quota_exhausted' });
    assert.deepEqual(second.laneCapacity, { share: 0, until: midnight, reason: 'quota_exhausted' });
    // out until midnight, for the daily quota; the job comes back then
    assert.deepEqual(out.laneOut, { until: midnight, reason: 'quota_exhausted' });
    assert.equal(out.retryAt.getTime(), T0 + 86_400_000);
    // 30 s before the reset (less than a window): one deferral, no pause
    now = T0 + 86_400_000 - 30_000;
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
    assert.deepEqual(laneOutOf(laneCapacity(keys, s, T0)), { until: T0 + 3_600_000, reason: 'quota_exhausted' });
    const withShort = snap(
      { scope: 'quota_owner', id: 'o1', reason: 'billing', until: T0 + 7_200_000 },
      { scope: 'key', id: 'k3', reason: 'rate_limit', until: T0 + 1000 },
    );
    assert.equal(laneOutOf(laneCapacity(keys, withShort, T0)), null, 'k3 is back in a second');
  });

  it("the lane's capacity is the share of its owners with a usable key, until the earliest out one returns", () => {
    // Prepare: k1 out of credit (o1 keeps k2); then o1 out for billing, o2's day spent
    const oneKey = snap({ scope: 'key', id: 'k1', reason: 'billing', until: T0 + 7_200_000 });
    const oneOwner = snap({ scope: 'quota_owner', id: 'o1', reason: 'billing', until: T0 + 7_200_000 });
    // Act + Assess
    assert.equal(laneCapacity(keys, oneKey, T0), null, 'o1 still has k2: every owner usable');
    assert.deepEqual(laneCapacity(keys, oneOwner, T0), { share: 0.5, until: T0 + 7_200_000, reason: 'billing' });
    assert.deepEqual(laneCapacity(keys, oneOwner, T0, new Map([['o2', { share: 1, until: T0 + 3_600_000 }]])), {
      share: 0,
      until: T0 + 3_600_000,
      reason: 'quota_exhausted',
    });
    assert.equal(laneCapacity(keys, snap({ scope: 'quota_owner', id: 'o1', reason: 'rate_limit', until: T0 + 1000 }), T0), null, 'a rate limit is short');
    assert.deepEqual(
      laneCapacity(keys, EMPTY_SNAPSHOT, T0, new Map([['o2', { share: 0.5, until: T0 + 3_600_000 }]])),
      { share: 0.75, until: T0 + 3_600_000, reason: 'quota_exhausted' },
      'half of o2’s bucket shards spent: the lane keeps o1 and half of o2',
    );
  });

  it('an owner whose daily quota admission saw spent is out until its reset', () => {
    // Prepare: o1 out for billing
    const s = snap({ scope: 'quota_owner', id: 'o1', reason: 'billing', until: T0 + 7_200_000 });
    // Act + Assess: o2 has spent its day until T0 + 1 h: every key is out, until the earliest
    assert.deepEqual(laneOutOf(laneCapacity(keys, s, T0, new Map([['o2', { share: 1, until: T0 + 3_600_000 }]]))), {
      until: T0 + 3_600_000,
      reason: 'quota_exhausted',
    });
    // o2 is rate limited for a second, but its day is spent: still out
    const short = snap(
      { scope: 'quota_owner', id: 'o1', reason: 'quota_exhausted', until: T0 + 7_200_000 },
      { scope: 'key', id: 'k3', reason: 'rate_limit', until: T0 + 1000 },
    );
    assert.deepEqual(laneOutOf(laneCapacity(keys, short, T0, new Map([['o2', { share: 1, until: T0 + 3_600_000 }]]))), {
      until: T0 + 3_600_000,
      reason: 'quota_exhausted',
    });
    assert.equal(laneOutOf(laneCapacity(keys, s, T0, new Map())), null, 'without it, o2 is free');
  });
});

describe('admission: shard choice', () => {
  const settings = admissionSettings({ safetyMargin: 0 });
  const keys = [{ id: 'key-1', quotaOwner: 'org-1' }];
  const shards: PoolConfig[] = ['', '#s1', '#s2'].map((suffix) => ({ keys, limits: LIMITS, bucketSuffix: suffix, settings, now: () => T0 }));
  /** A bucket taken from: full again 30 s after T0. */
  const spent: BucketState = { version: 1, requestsFullAt: T0 + 30_000, tokensFullAt: 0, reservedUntil: 0 };

  it('stays on the last shard while the one drawn holds no more, and moves to one that does', () => {
    // Prepare: shard 0 (the last) and shard 1 taken from alike, shard 2 unknown (counts as full)
    const state = newPoolState(settings);
    state.buckets.set('org-1', spent);
    state.buckets.set('org-1#s1', spent);
    // Act: the draw 0.1 weighs shard 1, 0.9 shard 2
    const [weighsOne, weighsTwo] = [0.1, 0.9].map((draw) => chooseShard(shards, state, T0, 0, () => draw));
    // Assess
    assert.equal(weighsOne, 0, 'as full as the last: stays');
    assert.equal(weighsTwo, 2, 'unknown, so full: moves');
    assert.equal(
      chooseShard(shards.slice(0, 1), state, T0, 0, () => 0.9),
      0,
      'one shard: no choice',
    );
  });

  it('counts a shard whose day is spent as holding nothing, whatever its window holds', () => {
    // Prepare: shard 1's day spent (until a reset an hour after T0), its window full; shard 0 unknown
    const state = newPoolState(settings);
    state.buckets.set('org-1#s1', {
      version: 1,
      requestsFullAt: 0,
      tokensFullAt: 0,
      reservedUntil: 0,
      dayResetAt: T0 + 3_600_000,
      dailyUsed: LIMITS.requestsPerDay,
    });
    // Act
    const [fromSpent, fromFull] = [chooseShard(shards, state, T0, 1, () => 0.1), chooseShard(shards, state, T0, 0, () => 0.1)];
    // Assess
    assert.equal(fromSpent, 0, 'leaves the spent shard');
    assert.equal(fromFull, 0, 'does not move to it');
  });
});
