/**
 * The capacity kept for the live lane (`config/reserve.ts`) on the run's DynamoDB Local: a queue side and a
 * live side wired by `createLaneAdmission` on one real rate-state table, taking at once: each keeps
 * to its share of the quota owner's limits in its own bucket item; cooldowns are shared, and a person
 * resuming the lane lifts them for both; a share of 0 leaves one bucket item per owner.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { PoolSide } from '../../../../lib/admission/config/reserve.js';
import type { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import { liveBucketId } from '../../../../lib/admission/dynamodb/rate-state.js';
import { createLaneAdmission, type AdmissionSettings } from '../../../../lib/admission/index.js';
import type { KeyAdmission, ProviderKey } from '../../../../lib/admission/keys/key-pool.js';
import { createAwsClients } from '../../../../lib/platform/clients.js';
import { liftCooldowns } from '../../../../lib/cli/resume.js';
import { resolveLanes, type LaneConfig } from '../../../../lib/config/lanes.js';
import { ensureTable } from '../../../../lib/store/ensure-table.js';
import { RATE_STATE_TABLE } from '../../../../lib/store/tables.js';
import { testEndpoints, uniqueLaneResources } from '../../../helpers/endpoints.js';

const clients = createAwsClients('us-east-1', testEndpoints());
after(() => clients.destroy());

const HOUR = 3_600_000;
/** 8 requests per hour-long "minute" (no refill to speak of during a test), no safety margin. */
/** Takes only (no calls answer): first-call probes are `bucket/first-calls.test.ts`'s. */
const SETTINGS: Partial<AdmissionSettings> = { safetyMargin: 0, windowMs: HOUR, maxBucketAttempts: 50, outputTokenEstimate: 100, probeFirstCalls: false };

/** The `us` lane on its own new rate-state table, keeping `reserveShare` of 8 requests a window for live requests. */
async function laneOnNewTable(reserveShare: number, keys = [{ id: 'key-1', quotaOwner: 'org-1' }]): Promise<LaneConfig> {
  const lane = resolveLanes({
    us: {
      resources: uniqueLaneResources(),
      provider: { limits: { requestsPerMinute: 8, tokensPerMinute: 80_000, requestsPerDay: 1_000 }, keys },
      live: { enabled: true, reserveShare },
    },
  }).us!;
  await ensureTable(clients.dynamodb, lane.resources.rateStateTable, RATE_STATE_TABLE);
  return lane;
}

const keysOf = (lane: LaneConfig): ProviderKey[] => lane.provider.keys.map((k) => ({ ...k, secret: `sk-${k.id}` }));

/** A pool of `side` (one consumer instance) on the lane's table. */
function poolOf(lane: LaneConfig, side: PoolSide, extra: Partial<AdmissionSettings> = {}): SharedKeyPool {
  return createLaneAdmission({ lane, dynamodb: clients.dynamodb, keys: keysOf(lane), side, settings: { ...SETTINGS, ...extra } }).newPool();
}

/** `n` acquires at once on `pool`. */
const burst = (pool: SharedKeyPool, n: number): Promise<KeyAdmission[]> => Promise.all(Array.from({ length: n }, () => pool.acquire({ estimatedTokens: 100 })));
const grants = (answers: KeyAdmission[]): number => answers.filter((a) => a.admitted).length;

/** The partition keys of the table's bucket items. */
async function bucketItems(lane: LaneConfig): Promise<string[]> {
  const out = await clients.dynamodb.send(new ScanCommand({ TableName: lane.resources.rateStateTable, ProjectionExpression: 'pk' }));
  return (out.Items ?? [])
    .map((item) => item.pk?.S ?? '')
    .filter((pk) => pk.startsWith('bucket#'))
    .sort();
}

describe('admission reserve on DynamoDB: two sides, one table', () => {
  it('two queue consumers and a live pool taking at once: 6 for the queue, 2 for live, in two items', async () => {
    // Prepare: a quarter kept for live requests
    const lane = await laneOnNewTable(0.25);
    const queues = [poolOf(lane, 'queue'), poolOf(lane, 'queue')];
    const live = poolOf(lane, 'live');

    // Act: 2 x 15 queue acquires and 6 live ones, all at once
    const [q1, q2, l] = await Promise.all([burst(queues[0]!, 15), burst(queues[1]!, 15), burst(live, 6)]);

    // Assess: neither side took from the other's share
    assert.equal(grants(q1) + grants(q2), 6, `queue granted ${grants(q1) + grants(q2)}`);
    assert.equal(grants(l), 2, `live granted ${grants(l)}`);
    assert.deepEqual(await bucketItems(lane), ['bucket#org-1', `bucket#${liveBucketId('org-1')}`]);
    // the queue, saturated and reserving slots on its own bucket, still leaves live its share next window
    const store = createLaneAdmission({ lane, dynamodb: clients.dynamodb, keys: keysOf(lane) }).store;
    const liveBucket = await store.readBucket(liveBucketId('org-1'));
    assert.ok(
      liveBucket && liveBucket.reservedUntil > 0 && liveBucket.requestsFullAt - Date.now() > HOUR - 60_000,
      'live reserved on its own bucket (its 2 of the hour taken)',
    );
    const queueBucket = await store.readBucket('org-1');
    assert.ok(queueBucket && queueBucket.reservedUntil > liveBucket.reservedUntil, 'the queue’s 24 denials reserved further out');
  });

  it('a cooldown recorded by either side denies both, and a person resuming lifts it for both', async () => {
    // Prepare: two owners; every pool has taken once (warm caches for a minute)
    const lane = await laneOnNewTable(0.25, [
      { id: 'key-1', quotaOwner: 'org-1' },
      { id: 'key-2', quotaOwner: 'org-2' },
    ]);
    const [k1, k2] = keysOf(lane);
    const queue = poolOf(lane, 'queue', { cooldownCacheMs: 60_000 });
    const live = poolOf(lane, 'live', { cooldownCacheMs: 60_000 });
    assert.ok((await queue.acquire({ estimatedTokens: 1 })).admitted);
    assert.ok((await live.acquire({ estimatedTokens: 1 })).admitted);
    const until = new Date(Math.ceil((Date.now() + 2 * HOUR) / 1000) * 1000);

    // Act: the queue learns org-1's billing is out; the live side learns key-2 is invalid
    await queue.cool(k1!, { scope: 'quota_owner', reason: 'billing', until: until.toISOString() });
    await live.cool(k2!, { scope: 'key', reason: 'auth', until: until.toISOString() });
    const liveAnswer = await live.acquire({ estimatedTokens: 1 });
    const freshQueue = await poolOf(lane, 'queue').acquire({ estimatedTokens: 1 });

    // Assess: the live side, despite its warm cache, learns org-1's cooldown from its own bucket
    // item; a queue consumer sees key-2's; neither has a key left
    assert.equal(liveAnswer.admitted, false);
    assert.equal(freshQueue.admitted, false);
    assert.ok(!freshQueue.admitted && freshQueue.laneOut?.reason === 'billing', `lane out: ${JSON.stringify(!freshQueue.admitted && freshQueue.laneOut)}`);
    const store = createLaneAdmission({ lane, dynamodb: clients.dynamodb, keys: keysOf(lane) }).store;
    assert.equal((await store.readBucket('org-1'))?.cooldown?.reason, 'billing');
    assert.equal((await store.readBucket(liveBucketId('org-1')))?.cooldown?.reason, 'billing');

    // Act: a person resumes (the resume command's lift), then fresh pools of both sides ask
    const lifted = await liftCooldowns(store, ['billing', 'auth']);
    const [queueAfter, liveAfter] = await Promise.all([
      poolOf(lane, 'queue').acquire({ estimatedTokens: 1 }),
      poolOf(lane, 'live').acquire({ estimatedTokens: 1 }),
    ]);

    // Assess: both sides admitted again; no cooldown copy left in either bucket
    assert.deepEqual(lifted.sort(), ['key key-2 (auth)', 'owner org-1 (billing)']);
    assert.ok(queueAfter.admitted, 'queue admitted after the resume');
    assert.ok(liveAfter.admitted, 'live admitted after the resume');
    assert.equal((await store.readBucket(liveBucketId('org-1')))?.cooldown, undefined);
  });

  it('with a share of 0, both sides share the owner’s one bucket item and its full limits', async () => {
    // Prepare
    const lane = await laneOnNewTable(0);
    const queue = poolOf(lane, 'queue');
    const live = poolOf(lane, 'live');

    // Act
    const [q, l] = await Promise.all([burst(queue, 10), burst(live, 10)]);

    // Assess: 8 in all, one item
    assert.equal(grants(q) + grants(l), 8);
    assert.deepEqual(await bucketItems(lane), ['bucket#org-1']);
  });

  it('with the queue side in three shards, each takes its third; a billing cooldown reaches every shard and a resume lifts it from all', async () => {
    // Prepare: no reserve, 8 a window in three shards (8/3 each: two calls fit a shard), one pool per shard
    const lane = await laneOnNewTable(0);
    const admission = createLaneAdmission({ lane, dynamodb: clients.dynamodb, keys: keysOf(lane), settings: { ...SETTINGS, bucketShards: 3 } });
    const pools = [0, 1, 2].map((shard) => admission.newPool(undefined, undefined, shard));
    const until = new Date(Math.ceil((Date.now() + 2 * HOUR) / 1000) * 1000);

    // Act
    const taken = await Promise.all(pools.map((pool) => burst(pool, 4)));
    await pools[0]!.cool(keysOf(lane)[0]!, { scope: 'quota_owner', reason: 'billing', until: until.toISOString() });
    const copies = await Promise.all(['org-1', 'org-1#s1', 'org-1#s2'].map(async (id) => (await admission.store.readBucket(id))?.cooldown?.reason));
    await liftCooldowns(admission.store, ['billing', 'auth']);
    const left = await Promise.all(['org-1', 'org-1#s1', 'org-1#s2'].map(async (id) => (await admission.store.readBucket(id))?.cooldown));

    // Assess
    assert.deepEqual(taken.map(grants), [2, 2, 2], 'each shard admits its third');
    assert.deepEqual(await bucketItems(lane), ['bucket#org-1', 'bucket#org-1#s1', 'bucket#org-1#s2']);
    assert.deepEqual(copies, ['billing', 'billing', 'billing']);
    assert.deepEqual(left, [undefined, undefined, undefined]);
  });
});
