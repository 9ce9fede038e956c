/**
 * The capacity kept for the live lane (`config/reserve.ts`), in memory: each quota owner's limits split into a
 * queue side and a live side, each its own bucket on one rate-state store; cooldowns shared; a share
 * of 0 exactly admission without a reserve (the live side then shares the owner's one bucket); the queue
 * side's bucket split into shards, a pool drawing one per take (or pinned to one) and cooldowns copied into all.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { poolSideConfig, reserveLimits, shardedSideConfig, shardSideConfigs, type PoolSide } from '../../../../lib/admission/config/reserve.js';
import { AdmissionSettingsError, admissionSettings, bucketLimitsFor, shardsFor } from '../../../../lib/admission/config/settings.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import { liveBucketId } from '../../../../lib/admission/dynamodb/rate-state.js';
import { createLaneAdmission, type AdmissionSettings } from '../../../../lib/admission/index.js';
import { LIVE_BUCKET_SUFFIX } from '../../../../lib/admission/model/bucket.js';
import type { KeyAdmission, ProviderKey } from '../../../../lib/admission/keys/key-pool.js';
import { resolveLanes, type LaneConfig } from '../../../../lib/config/lanes.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { assertNear, levelsOf } from '../support.js';

const T0 = Date.parse('2026-03-02T10:00:00.000Z');
const MINUTE = 60_000;
/** The two sides' per-minute levels of the lane below with a reserve of 1/4 (the daily one does not bind here). */
const queueLimits = { requestsPerWindow: 6, tokensPerWindow: 60_000, windowMs: MINUTE, requestsPerDay: 750, dayMs: 86_400_000 };
const liveLimits = { requestsPerWindow: 2, tokensPerWindow: 20_000, windowMs: MINUTE, requestsPerDay: 250, dayMs: 86_400_000 };
/** No safety margin: the split is the provider's limits times the shares, exactly. */
/** Bucket decisions without settlements: first-call probes are `bucket/first-calls.test.ts`'s. */
const SETTINGS: Partial<AdmissionSettings> = { safetyMargin: 0, outputTokenEstimate: 100, probeFirstCalls: false };
const NO_DB = undefined as unknown as DynamoDBClient;

/** The `us` lane with 8 requests a minute for its one quota owner, keeping `reserveShare` for live requests. */
function laneWith(reserveShare: number, options: { enabled?: boolean; keys?: { id: string; quotaOwner: string }[] } = {}): LaneConfig {
  return resolveLanes({
    us: {
      provider: {
        limits: { requestsPerMinute: 8, tokensPerMinute: 80_000, requestsPerDay: 1_000 },
        keys: options.keys ?? [{ id: 'key-1', quotaOwner: 'org-1' }],
      },
      live: { enabled: options.enabled ?? true, reserveShare },
    },
  }).us!;
}

const keysOf = (lane: LaneConfig): ProviderKey[] => lane.provider.keys.map((k) => ({ ...k, secret: `sk-${k.id}` }));

/** A pool of `side` on `store`, at the test's clock. */
function poolOf(lane: LaneConfig, store: MemoryRateStateStore, side: PoolSide, clock: { now: number }, extra: Partial<AdmissionSettings> = {}): SharedKeyPool {
  return createLaneAdmission({ lane, dynamodb: NO_DB, keys: keysOf(lane), store, side, settings: { ...SETTINGS, ...extra } }).newPool(() => clock.now);
}

/** How many of `n` acquires (one after another) were admitted. */
async function admitted(pool: SharedKeyPool, n: number): Promise<number> {
  let count = 0;
  for (let i = 0; i < n; i++) if ((await pool.acquire({ estimatedTokens: 100 })).admitted) count++;
  return count;
}

describe('admission reserve: the limits of each side', () => {
  it('splits every limit by the share, at least 1 each; 0 leaves bucketLimitsFor as it is', () => {
    // Prepare
    const settings = admissionSettings(SETTINGS);
    const lane = laneWith(0.25);

    // Act
    const reserve = reserveLimits(lane, settings);
    const none = reserveLimits(lane, settings, 0);
    const tiny = reserveLimits(
      resolveLanes({ us: { provider: { limits: { requestsPerMinute: 2, tokensPerMinute: 2, requestsPerDay: 2 } } } }).us!,
      settings,
      0.1,
    );

    // Assess: 6 + 2 requests a minute, 60,000 + 20,000 tokens, 750 + 250 requests a day
    assert.equal(reserve.reserveShare, 0.25);
    assert.deepEqual([reserve.queue.requestsPerWindow, reserve.queue.tokensPerWindow, reserve.queue.requestsPerDay], [6, 60_000, 750]);
    assert.deepEqual([reserve.queue.ownerShare, reserve.live.ownerShare], [0.75, 0.25], "each side's share of the owner");
    assert.deepEqual([reserve.live.requestsPerWindow, reserve.live.tokensPerWindow, reserve.live.requestsPerDay], [2, 20_000, 250]);
    assert.equal(reserve.live.windowMs, settings.windowMs);
    assert.deepEqual(none.queue, bucketLimitsFor(lane, settings));
    assert.equal(none.live, none.queue, 'no reserve: the live side is the queue side');
    assert.deepEqual([tiny.live.requestsPerWindow, tiny.live.tokensPerWindow, tiny.live.requestsPerDay], [1, 1, 1], 'at least 1 each');
    // the lane's own share, only while the live lane is enabled; shares outside 0..0.9 are refused
    assert.equal(reserveLimits(laneWith(0.3), settings).reserveShare, 0.3);
    assert.equal(reserveLimits(laneWith(0.3, { enabled: false }), settings).reserveShare, 0);
    assert.throws(() => reserveLimits(lane, settings, 0.95), AdmissionSettingsError);
    assert.throws(() => reserveLimits(lane, settings, Number.NaN), AdmissionSettingsError);
    assert.throws(() => poolSideConfig(reserve, 'backfill' as PoolSide), AdmissionSettingsError);
  });

  it('refuses a lane whose quota owner is named like another owner’s live bucket, unless nothing is reserved', () => {
    // Prepare
    const keys = [
      { id: 'key-1', quotaOwner: 'org' },
      { id: 'key-2', quotaOwner: `org${LIVE_BUCKET_SUFFIX}` },
    ];
    const store = new MemoryRateStateStore();

    // Act + Assess
    assert.throws(
      () => createLaneAdmission({ lane: laneWith(0.25, { keys }), dynamodb: NO_DB, keys: keysOf(laneWith(0.25, { keys })), store }),
      AdmissionSettingsError,
    );
    assert.doesNotThrow(() => createLaneAdmission({ lane: laneWith(0, { keys }), dynamodb: NO_DB, keys: keysOf(laneWith(0, { keys })), store }));
  });
});

describe('admission reserve: two sides on one store', () => {
  it('the queue admits 6 of 8 a minute and is denied; the live side still admits its 2, from its own bucket', async () => {
    // Prepare
    const clock = { now: T0 };
    const lane = laneWith(0.25);
    const store = new MemoryRateStateStore();
    const queue = poolOf(lane, store, 'queue', clock);
    const live = poolOf(lane, store, 'live', clock);

    // Act
    const queueAdmitted = await admitted(queue, 10);
    const liveAdmitted = await admitted(live, 5);

    // Assess: two bucket items, the owner's and its live one
    assert.equal(queueAdmitted, 6);
    assert.equal(liveAdmitted, 2);
    assert.deepEqual([...store.buckets.keys()].sort(), ['org-1', liveBucketId('org-1')]);
    assert.ok(levelsOf(store.buckets.get('org-1'), queueLimits, clock.now).requests < 1e-9);
    assert.ok(levelsOf(store.buckets.get(liveBucketId('org-1')), liveLimits, clock.now).requests < 1e-9);
    // the queue's denial says when its own bucket refills (one request in 10 s at 6 a minute)
    const denied = await queue.acquire({ estimatedTokens: 100 });
    assert.ok(!denied.admitted && denied.retryAt.getTime() >= T0 + 10_000, 'denied until its own refill');
  });

  it('a saturating queue never reduces live admissions, and the live side never borrows the queue’s share', async () => {
    // Prepare: a live pool with its share spent first, while the queue's bucket is full
    const clock = { now: T0 };
    const lane = laneWith(0.25);
    const store = new MemoryRateStateStore();
    const queues = [0, 1, 2].map(() => poolOf(lane, store, 'queue', clock));
    const live = poolOf(lane, store, 'live', clock);
    assert.equal(await admitted(live, 3), 2);
    assert.equal((await live.acquire({ estimatedTokens: 100 })).admitted, false, 'no borrowing: the queue’s 6 are untouched');

    // Act: for five minutes, three queue consumers ask 20 times every 10 s (their denials reserving
    // slots on the owner's bucket); the live side asks 5 times a minute
    let queueGranted = 0;
    const liveGranted: number[] = [];
    for (let minute = 1; minute <= 5; minute++) {
      for (let tick = 0; tick < 6; tick++) {
        clock.now = T0 + minute * MINUTE + tick * 10_000;
        const answers: KeyAdmission[] = await Promise.all(queues.flatMap((q) => Array.from({ length: 20 }, () => q.acquire({ estimatedTokens: 100 }))));
        queueGranted += answers.filter((a) => a.admitted).length;
      }
      liveGranted.push(await admitted(live, 5));
    }

    // Assess: the queue got no more than its share over the run (6 a minute, plus the 6 it started with);
    // live requests got their 2 every minute
    assert.ok(queueGranted <= 6 * 5 + 6, `queue granted ${queueGranted}`);
    assert.ok(queueGranted >= 6 * 4, `queue granted ${queueGranted}`);
    assert.deepEqual(liveGranted, [2, 2, 2, 2, 2]);
  });

  it('settles a live call against the live bucket only', async () => {
    // Prepare
    const clock = { now: T0 };
    const lane = laneWith(0.25);
    const store = new MemoryRateStateStore();
    const live = poolOf(lane, store, 'live', clock);
    const grant = await live.acquire({ estimatedTokens: 100 });
    assert.ok(grant.admitted);

    // Act: the call used 5,000 tokens more than taken
    await grant.settle({ inputTokens: 100, outputTokens: 5_100 });

    // Assess
    const bucket = store.buckets.get(liveBucketId('org-1'))!;
    assertNear(levelsOf(bucket, liveLimits, clock.now).tokens, 20_000 - 5_200, 'live tokens');
    assert.equal(store.buckets.has('org-1'), false, 'the queue side’s bucket was not touched');
  });
});

describe('admission reserve: shared cooldowns', () => {
  it('an owner’s cooldown recorded by the queue side denies the live side at once, even with a warm cache', async () => {
    // Prepare: both sides have taken once (their cooldown caches are warm for a minute)
    const clock = { now: T0 };
    const lane = laneWith(0.25);
    const store = new MemoryRateStateStore();
    const queue = poolOf(lane, store, 'queue', clock, { cooldownCacheMs: MINUTE });
    const live = poolOf(lane, store, 'live', clock, { cooldownCacheMs: MINUTE });
    assert.ok((await queue.acquire({ estimatedTokens: 100 })).admitted);
    assert.ok((await live.acquire({ estimatedTokens: 100 })).admitted);
    const until = T0 + 30 * MINUTE;
    const key = keysOf(lane)[0]!;

    // Act
    await queue.cool(key, { scope: 'quota_owner', reason: 'quota_exhausted', until: new Date(until).toISOString() });
    const liveAnswer = await live.acquire({ estimatedTokens: 100 });
    const queueAnswer = await queue.acquire({ estimatedTokens: 100 });

    // Assess: both denied until the cooldown's end; the cooldown was copied into both buckets
    assert.ok(!liveAnswer.admitted && liveAnswer.retryAt.getTime() === until, 'live denied until the reset');
    assert.ok(!queueAnswer.admitted && queueAnswer.retryAt.getTime() === until, 'queue denied until the reset');
    assert.equal(store.buckets.get('org-1')!.cooldown?.until, until);
    assert.equal(store.buckets.get(liveBucketId('org-1'))!.cooldown?.until, until);
    assert.deepEqual([...store.cooldowns.keys()], ['owner#org-1'], 'one cooldown item, shared');
  });

  it('a cooldown recorded by the live side (key or owner) denies the queue side', async () => {
    // Prepare: two keys of two owners; the live side cools key-1 (a rate limit) and owner org-2 (billing)
    const clock = { now: T0 };
    const keys = [
      { id: 'key-1', quotaOwner: 'org-1' },
      { id: 'key-2', quotaOwner: 'org-2' },
    ];
    const lane = laneWith(0.25, { keys });
    const store = new MemoryRateStateStore();
    const live = poolOf(lane, store, 'live', clock);
    const [k1, k2] = keysOf(lane);
    const until = T0 + 5 * MINUTE;

    // Act
    await live.cool(k1!, { scope: 'key', reason: 'rate_limit', until: new Date(T0 + MINUTE).toISOString() });
    await live.cool(k2!, { scope: 'quota_owner', reason: 'billing', until: new Date(until).toISOString() });
    const queue = poolOf(lane, store, 'queue', clock);
    const answer = await queue.acquire({ estimatedTokens: 100 });
    const keysLeft = await queue.keysLeftAfter(k1!, { scope: 'key', reason: 'rate_limit' });

    // Assess: no key for the queue; it comes back when key-1's rate limit ends
    assert.ok(!answer.admitted, 'queue denied');
    assert.ok(!answer.admitted && answer.retryAt.getTime() === T0 + MINUTE);
    assert.equal(keysLeft, 1, 'key-1 cools for a rate limit only; org-2 is out for billing');
    assert.equal(store.buckets.get('org-2')!.cooldown?.reason, 'billing', 'copied into the queue side’s bucket');
  });
});

describe('admission reserve: a share of 0', () => {
  it('the queue side is admission without a reserve: same limits, same bucket item, same decisions', async () => {
    // Prepare: the same script through a queue pool with share 0 and through a plain pool
    const clock = { now: T0 };
    const lane = laneWith(0);
    const settings = admissionSettings(SETTINGS);
    const reserved = new MemoryRateStateStore();
    const plain = new MemoryRateStateStore();
    const admission = createLaneAdmission({ lane, dynamodb: NO_DB, keys: keysOf(lane), store: reserved, settings: SETTINGS });
    const queue = admission.newPool(() => clock.now);
    const before = new SharedKeyPool({ keys: keysOf(lane), store: plain, limits: bucketLimitsFor(lane, settings), settings, now: () => clock.now });
    const play = async (pool: SharedKeyPool): Promise<unknown[]> => {
      const out: unknown[] = [];
      for (let i = 0; i < 12; i++) out.push(await pool.acquire({ estimatedTokens: 100 }));
      await pool.cool(keysOf(lane)[0]!, { scope: 'quota_owner', reason: 'rate_limit', until: new Date(T0 + 20_000).toISOString() });
      out.push(await pool.acquire({ estimatedTokens: 100 }));
      return out.map((a) => JSON.stringify(a));
    };

    // Act
    const withReserve = await play(queue);
    const without = await play(before);

    // Assess
    assert.deepEqual(admission.reserve.queue, bucketLimitsFor(lane, settings));
    assert.equal(admission.side, 'queue');
    assert.deepEqual(withReserve, without);
    assert.deepEqual([...reserved.buckets.entries()], [...plain.buckets.entries()]);
    assert.deepEqual([reserved.writes, reserved.conflicts], [plain.writes, plain.conflicts]);
    assert.deepEqual([...reserved.buckets.keys()], ['org-1'], 'no live bucket item');
  });

  it('a live pool works and competes with the queue in the owner’s one bucket', async () => {
    // Prepare
    const clock = { now: T0 };
    const lane = laneWith(0);
    const store = new MemoryRateStateStore();
    const queue = poolOf(lane, store, 'queue', clock);
    const live = poolOf(lane, store, 'live', clock);

    // Act
    const liveFirst = await admitted(live, 3);
    const queueAfter = await admitted(queue, 10);
    const liveLast = await admitted(live, 1);

    // Assess: 8 in all, one bucket
    assert.equal(liveFirst, 3);
    assert.equal(queueAfter, 5);
    assert.equal(liveLast, 0);
    assert.deepEqual([...store.buckets.keys()], ['org-1']);
  });
});

describe('admission shards: an owner’s queue-side bucket split into items', () => {
  it('sizes the shards so no item takes more than half its write ceiling, and checks the setting', () => {
    // Act + Assess: about 3 writes a second per busy consumer, 500 per item
    assert.deepEqual([shardsFor(5, 1), shardsFor(166, 1), shardsFor(167, 1), shardsFor(1000, 4), shardsFor(1000, 1), shardsFor(1e6, 1)], [1, 1, 2, 2, 6, 64]);
    assert.equal(admissionSettings().bucketShards, 1);
    for (const bad of [0, 1.5, 65]) assert.throws(() => admissionSettings({ bucketShards: bad }), AdmissionSettingsError);
  });

  it("knows the records the queue side's mapping holds (the live side has none)", () => {
    // Prepare
    const lane = laneWith(0.25);
    const store = new MemoryRateStateStore();
    // Act
    const queue = createLaneAdmission({ lane, dynamodb: NO_DB, keys: keysOf(lane), store });
    const live = createLaneAdmission({ lane, dynamodb: NO_DB, keys: keysOf(lane), store, side: 'live' });
    // Assess
    assert.equal(queue.settings.mappingRecords, lane.consumer.maximumConcurrency * lane.queue.batchSize);
    assert.equal(live.settings.mappingRecords, 0);
    assert.throws(() => admissionSettings({ mappingRecords: -1 }), AdmissionSettingsError);
  });

  it('gives each shard its share of every queue-side limit; a queue pool takes from its shard and copies cooldowns into the others and the live bucket', () => {
    // Prepare
    const settings = admissionSettings(SETTINGS);
    const reserve = reserveLimits(laneWith(0.25), settings);
    const keys = keysOf(laneWith(0.25));
    // Act
    const one = shardedSideConfig(reserve, 'queue', poolSideConfig(reserve, 'queue'), 1, 0, keys);
    const second = shardedSideConfig(reserve, 'queue', poolSideConfig(reserve, 'queue'), 3, 1, keys);
    const live = shardedSideConfig(reserve, 'live', poolSideConfig(reserve, 'live'), 3, 0, keys);
    // Assess
    assert.deepEqual(one, poolSideConfig(reserve, 'queue'), 'one shard: the side as it was');
    const third = { ...reserve.queue, requestsPerWindow: 2, tokensPerWindow: 20_000, requestsPerDay: 250, ownerShare: 0.25 };
    assert.deepEqual(second, {
      limits: third,
      bucketSuffix: '#s1',
      otherBuckets: [
        { suffix: '', limits: third },
        { suffix: '#s2', limits: third },
        { suffix: LIVE_BUCKET_SUFFIX, limits: reserve.live },
      ],
    });
    assert.deepEqual(live, { ...poolSideConfig(reserve, 'live'), otherBuckets: ['', '#s1', '#s2'].map((suffix) => ({ suffix, limits: third })) });
    assert.throws(() => shardedSideConfig(reserve, 'queue', poolSideConfig(reserve, 'queue'), 3, 3), AdmissionSettingsError);
    const clashing = keysOf(
      laneWith(0.25, {
        keys: [
          { id: 'a', quotaOwner: 'org-1' },
          { id: 'b', quotaOwner: 'org-1#s1' },
        ],
      }),
    );
    assert.throws(() => shardedSideConfig(reserve, 'queue', poolSideConfig(reserve, 'queue'), 2, 0, clashing), /another owner's bucket/);
  });

  it('two pools on two shards admit their halves from their own items; an owner’s cooldown reaches both', async () => {
    // Prepare: 8 requests a minute, no reserve, two shards: 4 each
    const clock = { now: T0 };
    const lane = laneWith(0, { enabled: false });
    const store = new MemoryRateStateStore();
    const admission = createLaneAdmission({ lane, dynamodb: NO_DB, keys: keysOf(lane), store, settings: { ...SETTINGS, bucketShards: 2 } });
    const [first, second] = [admission.newPool(() => clock.now, undefined, 0), admission.newPool(() => clock.now, undefined, 1)];
    // Act
    const admittedFirst = await admitted(first, 6);
    const admittedSecond = await admitted(second, 6);
    const until = T0 + 30 * MINUTE;
    clock.now += MINUTE; // both shards full again
    await first.cool(keysOf(lane)[0]!, { scope: 'quota_owner', reason: 'quota_exhausted', until: new Date(until).toISOString() });
    const afterCooldown = await second.acquire({ estimatedTokens: 100 });
    // Assess
    assert.deepEqual([admittedFirst, admittedSecond], [4, 4], 'each shard admits its half of the minute');
    assert.deepEqual([...store.buckets.keys()].sort(), ['org-1', 'org-1#s1']);
    assertNear(levelsOf(store.buckets.get('org-1'), { ...queueLimits, requestsPerWindow: 4 }, T0).requests, 0);
    assert.ok(!afterCooldown.admitted && afterCooldown.retryAt.getTime() === until, 'the other shard’s pool is denied until the reset');
    assert.equal(store.buckets.get('org-1#s1')!.cooldown?.until, until);
  });

  it('a pool with every shard takes from the one it knows holds more, reaches all of them and settles each grant on the shard it was taken from', async () => {
    // Prepare: 8 requests a minute, no reserve, two shards of 4; the pool starts on shard 1 (its second draw)
    const clock = { now: T0 };
    const lane = laneWith(0, { enabled: false });
    const store = new MemoryRateStateStore();
    const settings = admissionSettings({ ...SETTINGS, bucketShards: 2 });
    const reserve = reserveLimits(lane, settings);
    const shards = shardSideConfigs(reserve, 'queue', poolSideConfig(reserve, 'queue'), 2, keysOf(lane));
    let draws = 0;
    const random = (): number => (draws++ % 2 === 0 ? 0.25 : 0.75);
    const pool = new SharedKeyPool({ keys: keysOf(lane), store, ...shards[0]!, shards, settings, now: () => clock.now, random });
    // Act: nine takes; the first grant's call used 10,000 tokens more than it took
    const grants: KeyAdmission[] = [];
    for (let i = 0; i < 9; i++) grants.push(await pool.acquire({ estimatedTokens: 100 }));
    const first = grants[0]!;
    assert.ok(first.admitted);
    await first.settle({ inputTokens: 100, outputTokens: 10_200 });
    // Assess
    assert.deepEqual(
      grants.map((g) => g.admitted),
      [...Array<boolean>(8).fill(true), false],
      'both shards admit their half of the minute to the one pool',
    );
    assert.deepEqual(shardSideConfigs(reserve, 'queue', poolSideConfig(reserve, 'queue'), 1), [poolSideConfig(reserve, 'queue')]);
    const half = { ...queueLimits, requestsPerWindow: 4, tokensPerWindow: 40_000, requestsPerDay: 500 };
    assertNear(
      levelsOf(store.buckets.get('org-1#s1'), half, clock.now).tokens,
      40_000 - 4 * 200 - (100 + 10_200 - 200),
      'the correction on the grant’s shard: the call’s usage less what it took',
    );
    assertNear(levelsOf(store.buckets.get('org-1'), half, clock.now).tokens, 40_000 - 4 * 200, 'the other shard untouched');
  });
});
