/**
 * One admission algorithm, two drivers: the simulator's `SimKeyPool` (the core run synchronously over
 * its in-memory table) and `SharedKeyPool` (the core awaited against a `RateStateStore`, here the
 * in-memory one of the tests) play the same script and must take the same decisions; and what only
 * the asynchronous driver does (one owner's takes one at a time, shared cooldown reads, failures).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BucketState, BucketUpdate } from '../../../../lib/admission/model/bucket.js';
import type { KeyRef } from '../../../../lib/admission/model/cooldowns.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import type { CooldownTarget, KeyGrant, ProviderKey } from '../../../../lib/admission/keys/key-pool.js';
import { RateStateUnavailableError } from '../../../../lib/admission/dynamodb/rate-state.js';
import { admissionSettings, bucketLimitsFor, type AdmissionSettings } from '../../../../lib/admission/config/settings.js';
import type { LaneConfig } from '../../../../lib/config/lanes.js';
import type { Cooldown } from '../../../../lib/policy/index.js';
import { SimKeyPool } from '../../../../workbench/sim/sim-key-pool.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { assertNear, levelsOf } from '../support.js';

/** 4 keys, 3 quota owners (k1 and k2 share o1). */
const KEYS: KeyRef[] = [
  { id: 'k1', quotaOwner: 'o1' },
  { id: 'k2', quotaOwner: 'o1' },
  { id: 'k3', quotaOwner: 'o2' },
  { id: 'k4', quotaOwner: 'o3' },
];
const OWNERS = ['o1', 'o2', 'o3'];
/** Per owner: 4 requests a minute, 10,000 tokens a minute, 12 requests a day (less the 5 % margin). */
const LIMITS = { requestsPerMinute: 4, tokensPerMinute: 10_000, requestsPerDay: 12 };
/** One conditional-write attempt per take: a consumer whose cached bucket is stale finds it contended. */
/** Bucket decisions without settlements: first-call probes are `bucket/first-calls.test.ts`'s. */
const OVERRIDES: Partial<AdmissionSettings> = {
  maxBucketAttempts: 1,
  cooldownCacheMs: 1000,
  outputTokenEstimate: 100,
  billingRecheckMs: 300_000,
  probeFirstCalls: false,
};
const CONSUMERS = 3;
/** 20:00 UTC: the daily quotas reset at midnight, 4 hours away. */
const T0 = Date.parse('2026-03-02T20:00:00.000Z');
const MIDNIGHT = Date.parse('2026-03-03T00:00:00.000Z');

/** An acquire's answer, as both drivers can say it (times in whole ms, as `SharedKeyPool`'s `Date`s). */
type Answer = { granted: string } | { retryAt: number; detail: string; laneOut: { until: number; reason: string } | null };

/** The same lane through either driver: consumers 0..2, each its own pool instance. */
interface LaneDriver {
  acquire(consumer: number, estimatedTokens: number): Promise<Answer>;
  /** Settles the grant `grant` (the n-th grant of the script) with the real usage. */
  settle(grant: number, usage: { inputTokens: number; outputTokens: number }): Promise<void>;
  keysLeft(consumer: number, keyId: string, target: CooldownTarget): Promise<number | undefined>;
  cool(consumer: number, keyId: string, cooldown: Cooldown): Promise<void>;
  laneOut(consumer: number): Promise<{ until: number; reason: string } | null>;
  buckets(): Record<string, BucketState | undefined>;
  estimates(): number[];
}

function simDriver(clock: { now: number }): LaneDriver {
  const sim = new SimKeyPool({ keys: KEYS, limits: LIMITS, consumers: CONSUMERS, settings: OVERRIDES });
  const grants: { consumer: number; shard: number; index: number; tokens: number }[] = [];
  const index = (keyId: string): number => KEYS.findIndex((k) => k.id === keyId);
  return {
    async acquire(consumer, estimatedTokens) {
      const granted = sim.acquire(consumer, estimatedTokens, clock.now);
      if (granted >= 0) {
        grants.push({ consumer, shard: sim.takenShard, index: granted, tokens: sim.grantedTokens });
        return { granted: KEYS[granted]!.id };
      }
      const laneOut = sim.laneOut ? { until: new Date(sim.laneOut.until).getTime(), reason: sim.laneOut.reason } : null;
      return { retryAt: new Date(sim.retryAt).getTime(), detail: sim.detail, laneOut };
    },
    async settle(grant, usage) {
      const { consumer, shard, index: keyIndex, tokens } = grants[grant]!;
      sim.settle(consumer, shard, keyIndex, tokens, usage.inputTokens, usage.outputTokens, clock.now, clock.now);
    },
    keysLeft: async (consumer, keyId, target) => sim.keysLeftAfter(consumer, index(keyId), target, clock.now),
    cool: async (consumer, keyId, cooldown) => sim.cool(consumer, index(keyId), cooldown, clock.now),
    async laneOut(consumer) {
      const out = sim.laneOutFor(consumer, clock.now);
      return out ? { until: new Date(out.until).getTime(), reason: out.reason } : null;
    },
    buckets: () => Object.fromEntries(OWNERS.map((o) => [o, sim.store.bucketOf(o)])),
    estimates: () => Array.from({ length: CONSUMERS }, (_, c) => sim.outputEstimateOf(c)),
  };
}

function poolDriver(clock: { now: number }): LaneDriver {
  const settings = admissionSettings(OVERRIDES);
  const limits = bucketLimitsFor({ provider: { limits: LIMITS } } as unknown as Pick<LaneConfig, 'provider'>, settings);
  const keys: ProviderKey[] = KEYS.map((k) => ({ ...k, secret: `sk-${k.id}` }));
  const store = new MemoryRateStateStore();
  const pools = Array.from({ length: CONSUMERS }, () => new SharedKeyPool({ keys, store, limits, settings, now: () => clock.now }));
  const grants: KeyGrant[] = [];
  const key = (keyId: string): ProviderKey => keys.find((k) => k.id === keyId)!;
  return {
    async acquire(consumer, estimatedTokens) {
      const answer = await pools[consumer]!.acquire({ estimatedTokens });
      if (answer.admitted) {
        grants.push(answer);
        return { granted: answer.key.id };
      }
      const laneOut = answer.laneOut ? { until: answer.laneOut.until.getTime(), reason: answer.laneOut.reason } : null;
      return { retryAt: answer.retryAt.getTime(), detail: answer.detail, laneOut };
    },
    settle: (grant, usage) => grants[grant]!.settle(usage),
    keysLeft: (consumer, keyId, target) => pools[consumer]!.keysLeftAfter(key(keyId), target),
    cool: async (consumer, keyId, cooldown) => {
      await pools[consumer]!.cool(key(keyId), cooldown);
    },
    async laneOut(consumer) {
      const out = await pools[consumer]!.laneOut();
      return out ? { until: out.until.getTime(), reason: out.reason } : null;
    },
    buckets: () => Object.fromEntries(OWNERS.map((o) => [o, store.buckets.get(o)])),
    estimates: () => pools.map((p) => p.outputTokenEstimate),
  };
}

/** One step of the script and what the lane looked like after it. */
interface Entry {
  step: string;
  at: number;
  result: unknown;
  buckets: Record<string, BucketState | undefined>;
  estimates: number[];
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The script: a burst that spends every owner's minute, settles, fresh consumers meeting contended
 * buckets, a rate-limit cooldown, a billing cooldown, then takes every 20 s until the daily quotas
 * run out and the lane is out, quota 429s, and the day after.
 */
async function play(lane: LaneDriver, clock: { now: number }): Promise<Entry[]> {
  const entries: Entry[] = [];
  let grants = 0;
  const record = (step: string, result: unknown): void => {
    entries.push({ step, at: clock.now, result, buckets: lane.buckets(), estimates: lane.estimates() });
  };
  const acquire = async (consumer: number, tokens: number, settleWith?: number): Promise<Answer> => {
    const answer = await lane.acquire(consumer, tokens);
    record(`acquire by ${consumer}`, answer);
    if ('granted' in answer) {
      const grant = grants++;
      if (settleWith !== undefined) {
        await lane.settle(grant, { inputTokens: tokens, outputTokens: settleWith });
        record(`settle grant ${grant}`, null);
      }
    }
    return answer;
  };
  const at = (ms: number): void => {
    clock.now = ms;
  };
  // A burst at T0: every owner's minute spent, then denials reserving the next slots
  at(T0);
  for (let i = 0; i < 12; i++) await acquire(0, 300);
  // The first calls answer with less than estimated
  at(T0 + 2000);
  for (let g = 0; g < 5; g++) {
    await lane.settle(g, { inputTokens: 300, outputTokens: 40 + 10 * g });
    record(`settle grant ${g}`, null);
  }
  // A fresh consumer: its first write on each owner conflicts (contended); then it knows the buckets
  at(T0 + 3000);
  await acquire(1, 250);
  at(T0 + 4000);
  await acquire(1, 250, 70);
  // A rate-limit 429 on k3: a short cooldown of that key
  at(T0 + 10_000);
  record('keysLeft k3 rate_limit', await lane.keysLeft(0, 'k3', { scope: 'key', reason: 'rate_limit' }));
  await lane.cool(0, 'k3', { scope: 'key', reason: 'rate_limit', until: iso(T0 + 40_000) });
  record('cool k3 rate_limit', null);
  at(T0 + 10_500);
  await acquire(0, 300);
  // A billing 429 on k4: its owner waits for a person
  at(T0 + 11_000);
  record('keysLeft k4 billing', await lane.keysLeft(0, 'k4', { scope: 'quota_owner', reason: 'billing' }));
  await lane.cool(0, 'k4', { scope: 'quota_owner', reason: 'billing', until: iso(T0 + 48 * 3_600_000) });
  record('cool k4 billing', null);
  // Another fresh consumer, its cooldowns read (a lane-out check) but no bucket known: o3 cooling, o1
  // contended: back after one request slot, not at k3's end
  await lane.laneOut(2);
  at(T0 + 11_200);
  await acquire(2, 200);
  // Takes every 20 s until the lane is out (o1 and o2 spent their day, o3 waits for billing)
  let laneOut = false;
  for (let i = 0; i < 80 && !laneOut; i++) {
    at(T0 + 60_000 + i * 20_000);
    const answer = await acquire(i % 9 === 8 ? 1 : 0, 200 + ((i * 37) % 300), 60 + ((i * 53) % 120));
    laneOut = 'laneOut' in answer && answer.laneOut !== null;
  }
  // Quota 429s on k1 and k3: their owners cool until midnight, the lane is out by its cooldowns too
  at(clock.now + 500);
  record('keysLeft k1 quota', await lane.keysLeft(0, 'k1', { scope: 'quota_owner', reason: 'quota_exhausted' }));
  await lane.cool(0, 'k1', { scope: 'quota_owner', reason: 'quota_exhausted', until: iso(MIDNIGHT) });
  record('cool k1 quota', null);
  record('keysLeft k3 quota', await lane.keysLeft(0, 'k3', { scope: 'quota_owner', reason: 'quota_exhausted' }));
  await lane.cool(0, 'k3', { scope: 'quota_owner', reason: 'quota_exhausted', until: iso(MIDNIGHT) });
  record('cool k3 quota', null);
  record('laneOut by 0', await lane.laneOut(0));
  record('laneOut by 1', await lane.laneOut(1));
  at(clock.now + 2000);
  await acquire(1, 200);
  // The day after: the quota is whole again, billing still out
  at(MIDNIGHT + 1000);
  await acquire(0, 200, 90);
  await acquire(2, 200, 110);
  return entries;
}

describe('admission core: the simulator and SharedKeyPool decide alike', () => {
  it('grants, reservations, contention, cooldowns, a spent day and the lane out, settles: the same decisions and buckets', async () => {
    // Prepare
    const simClock = { now: T0 };
    const poolClock = { now: T0 };
    const sim = simDriver(simClock);
    const pool = poolDriver(poolClock);

    // Act
    const simEntries = await play(sim, simClock);
    const poolEntries = await play(pool, poolClock);

    // Assess: step by step, the same answers, buckets and learned estimates
    assert.equal(simEntries.length, poolEntries.length, 'as many steps');
    for (let i = 0; i < simEntries.length; i++) assert.deepEqual(simEntries[i], poolEntries[i], `step ${i}: ${poolEntries[i]!.step}`);
    // and the script went through every case it is meant to
    const denials = poolEntries.flatMap((e) =>
      typeof e.result === 'object' && e.result !== null && 'detail' in e.result ? [{ at: e.at, ...(e.result as Extract<Answer, { detail: string }>) }] : [],
    );
    const grants = poolEntries.filter((e) => typeof e.result === 'object' && e.result !== null && 'granted' in e.result);
    assert.ok(grants.length > 20, `grants: ${grants.length}`);
    const reserved = denials.filter((d) => d.detail === 'no budget (requests)' && d.at === T0);
    assert.equal(reserved.length, 3, 'three callers denied at once, each reserving a slot');
    assert.equal(new Set(poolEntries.filter((e) => e.at === T0).map((e) => JSON.stringify(e.buckets))).size, 12, 'every reservation is written');
    const contended = denials.find((d) => d.at === T0 + 11_200)!;
    assert.equal(contended.detail, 'bucket contended');
    assert.ok(contended.retryAt < T0 + 40_000, 'a contended bucket is busy, not out: back sooner than the cooling key');
    const out = denials.find((d) => d.laneOut !== null)!;
    assert.deepEqual(out.laneOut, { until: MIDNIGHT, reason: 'quota_exhausted' }, 'the days spent: the lane is out until midnight');
    assert.equal(out.retryAt, MIDNIGHT, 'back at the slot it reserved on a spent day: a key cooling for billing does not cap the return at its re-check');
    const keysLeft = poolEntries.filter((e) => e.step.startsWith('keysLeft')).map((e) => e.result);
    assert.deepEqual(keysLeft, [4, 3, 1, 0]);
    assert.deepEqual(poolEntries.find((e) => e.step === 'laneOut by 1')!.result, { until: MIDNIGHT, reason: 'quota_exhausted' });
    assert.equal(denials.find((d) => d.detail.startsWith('all 4 key'))?.laneOut?.until, MIDNIGHT, 'every key cooling');
    assert.ok(
      grants.some((e) => e.at === MIDNIGHT + 1000),
      'granted again after midnight',
    );
    const [first, second, third] = poolEntries.at(-1)!.estimates;
    // (the third's one grant is after midnight, on a bucket it last saw at 11.2 s: a stale cache no longer costs it the take)
    assert.ok(new Set([first, second, third, 100]).size === 4, `each instance learns from its own calls: ${first}, ${second}, ${third}`);
  });
});

/** The in-memory store, counting cooldown reads and failing the next `failWrites` bucket writes. */
class CountingStore extends MemoryRateStateStore {
  cooldownReads = 0;
  failWrites = 0;

  override async readCooldowns(keys: readonly KeyRef[]) {
    this.cooldownReads++;
    return super.readCooldowns(keys);
  }

  override async writeBucket(owner: string, update: BucketUpdate) {
    if (this.failWrites > 0) {
      this.failWrites--;
      throw new RateStateUnavailableError('UpdateItem', 'rate-test', { cause: new Error('connection reset') });
    }
    return super.writeBucket(owner, update);
  }
}

describe('SharedKeyPool: the asynchronous driver', () => {
  const key: ProviderKey = { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' };
  // The driver's bucket serialization without settlements: first-call probes are `bucket/first-calls.test.ts`'s.
  const settings = admissionSettings({ outputTokenEstimate: 100, probeFirstCalls: false });
  const limits = { requestsPerWindow: 20, tokensPerWindow: 1e9, windowMs: 60_000, requestsPerDay: 1e6, dayMs: 86_400_000 };

  it('makes the takes of acquires that meet in one instance together: one write, after one shared cooldown read', async () => {
    // Prepare
    const store = new CountingStore();
    const pool = new SharedKeyPool({ keys: [key], store, limits, settings, now: () => T0 });
    // Act: 10 acquires at once
    const answers = await Promise.all(Array.from({ length: 10 }, () => pool.acquire({ estimatedTokens: 10 })));
    // Assess: one group, one conditional write holding every take
    assert.equal(answers.filter((a) => a.admitted).length, 10);
    assert.equal(store.conflicts, 0);
    assert.equal(store.writes, 1);
    assert.equal(store.cooldownReads, 1);
    assertNear(levelsOf(store.buckets.get('o1'), limits, T0).requests, 10);
  });

  it('throws a failed store call to every caller of its group and lets the next take on the owner run', async () => {
    // Prepare
    const store = new CountingStore();
    const pool = new SharedKeyPool({ keys: [key], store, limits, settings, now: () => T0 });
    store.failWrites = 1;
    // Act: two acquires of one group, then one after it
    const failed = [pool.acquire({ estimatedTokens: 10 }), pool.acquire({ estimatedTokens: 10 })];
    const failures = await Promise.allSettled(failed);
    const next = await pool.acquire({ estimatedTokens: 10 });
    // Assess
    assert.ok(failures.every((f) => f.status === 'rejected' && f.reason instanceof RateStateUnavailableError));
    assert.equal(next.admitted, true, 'the owner is not left locked');
    assert.equal(store.writes, 1);
    assertNear(levelsOf(store.buckets.get('o1'), limits, T0).requests, limits.requestsPerWindow - 1, 'the failed group took nothing');
  });

  it('keeps owing its token corrections when the group write that carried them failed', async () => {
    // Prepare: one call settled 50 tokens under what it took (owed, not written)
    const store = new CountingStore();
    const pool = new SharedKeyPool({ keys: [key], store, limits, settings: { ...settings, outputTokenEstimateWeight: 0 }, now: () => T0 });
    const first = await pool.acquire({ estimatedTokens: 100 });
    assert.ok(first.admitted);
    await first.settle({ inputTokens: 100, outputTokens: 50 });
    assert.equal(pool.tokensOwed, -50);
    store.failWrites = 1;
    // Act: a group whose write fails, then a take that goes through
    await Promise.allSettled([pool.acquire({ estimatedTokens: 100 }), pool.acquire({ estimatedTokens: 100 })]);
    const owedAfterFailure = pool.tokensOwed;
    const next = await pool.acquire({ estimatedTokens: 100 });
    // Assess: still owed after the failure, written with the next take, once
    assert.equal(owedAfterFailure, -50);
    assert.ok(next.admitted);
    assert.equal(pool.tokensOwed, 0);
    assertNear(levelsOf(store.buckets.get('o1'), limits, T0).tokens, limits.tokensPerWindow - 2 * 200 + 50, 'tokens', 1);
  });
});
