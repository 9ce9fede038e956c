/**
 * Reserved admission capacity for the live lane: each quota owner's limits are split in two
 * **sides**, each its own token bucket in the lane's rate-state table.
 * - The **queue** side (the lane's SQS consumers) admits calls against `1 - reserveShare` of each
 *   limit (requests and tokens per window, requests per day), in the owner's usual bucket
 *   (`bucket#<owner>`).
 * - The **live** side (live requests) admits calls against `reserveShare` of each, in a bucket of its
 *   own (`bucket#<owner>#live`, see `liveBucketId` in `dynamodb/rate-state.ts`). It never takes from
 *   the queue side's bucket, even when its own is spent and the queue's is not: borrowing would spend
 *   the queue's share, and a saturating backfill would then meet 429s the queue's bucket never counted
 *   on (the provider sees both sides' calls); each side keeps to its share, so the two together stay
 *   within the limits.
 *
 * Cooldowns (a 429 of a key or of a quota owner, billing, auth) are not split: both sides read the
 * same cooldown items, so a key cooled by one is cooled for the other, and an owner's cooldown is
 * copied into both of its buckets (so a pool of either side with stale cooldowns learns it at its
 * next take). Only the buckets are split.
 *
 * A share of 0 keeps nothing: both sides then use the owner's one bucket with the full limits, so a
 * live pool works and competes with the queue (as the lane config says of `reserveShare: 0`), and the
 * queue side is exactly admission without a reserve (the simulator's and the benchmark's).
 *
 * A side is configuration of the one decision core (`decisions/pool-core.ts`): the bucket it takes from, its
 * limits, and the owner's other bucket its cooldowns are copied into ({@link poolSideConfig}).
 *
 * The queue side's bucket may be split further into shards (`AdmissionSettings.bucketShards`, items
 * `<owner>`, `<owner>#s1`, …), each admitting its share of the queue side's limits, so that no item is
 * written more often than DynamoDB serves one ({@link shardedSideConfig}).
 */
import type { LaneConfig } from '../../config/lanes.js';
import { LIVE_BUCKET_SUFFIX, shardBucketSuffix, type BucketLimits } from '../model/bucket.js';
import type { KeyRef } from '../model/cooldowns.js';
import { AdmissionSettingsError, bucketLimitsFor, type AdmissionSettings } from './settings.js';

/** Which side of a lane's admission a pool admits for: the queue's consumers, or live requests. */
export type PoolSide = 'queue' | 'live';

/** Every pool side. */
const POOL_SIDES: readonly PoolSide[] = ['queue', 'live'];

/** The largest reserve share the lane config allows (`LiveSettingsSchema`). */
const MAX_RESERVE_SHARE = 0.9;

/** One more bucket of each quota owner: its item is the owner followed by `suffix` ('': the owner itself). */
export interface BucketSide {
  suffix: string;
  limits: BucketLimits;
}

/** Both sides' buckets of each quota owner (after the safety margin), and the share they were split by. */
export interface ReserveLimits {
  /** The share of each limit kept for live requests (0..0.9). */
  reserveShare: number;
  /** The queue side's bucket: every limit times `1 - reserveShare` (at least 1 each). */
  queue: BucketLimits;
  /** The live side's bucket: every limit times `reserveShare` (at least 1 each); with a share of 0, the queue's. */
  live: BucketLimits;
}

/** What a pool's side sets in its `PoolConfig` (and `SharedKeyPoolOptions`). */
export interface PoolSideConfig {
  /** The bucket the pool takes from, per quota owner. */
  limits: BucketLimits;
  /** Its bucket is the owner followed by this (absent: the owner itself). */
  bucketSuffix?: string | undefined;
  /** The owner's other bucket, which its cooldowns are copied into (absent: none). */
  otherBuckets?: readonly BucketSide[] | undefined;
  /** Every shard's suffix, when the pool holds them all ({@link shardSideConfigs}; see `PoolConfig.shardSuffixes`). */
  shardSuffixes?: readonly string[] | undefined;
}

/**
 * The share a lane keeps for live requests by default: its `live.reserveShare` when the live lane is
 * enabled, else 0.
 */
function laneReserveShare(lane: Pick<LaneConfig, 'live'>): number {
  return lane.live.enabled ? lane.live.reserveShare : 0;
}

/** `share`, checked: a number in 0..{@link MAX_RESERVE_SHARE}. @throws {AdmissionSettingsError} */
function checkReserveShare(share: number): number {
  if (!(typeof share === 'number' && share >= 0 && share <= MAX_RESERVE_SHARE)) {
    throw new AdmissionSettingsError(`reserveShare must be in 0..${MAX_RESERVE_SHARE}, got ${String(share)}`);
  }
  return share;
}

/** `limits` with requests and tokens per window and requests per day times `factor`, at least 1 each. */
function scaled(limits: BucketLimits, factor: number): BucketLimits {
  return {
    ...limits,
    requestsPerWindow: Math.max(1, limits.requestsPerWindow * factor),
    tokensPerWindow: Math.max(1, limits.tokensPerWindow * factor),
    requestsPerDay: Math.max(1, limits.requestsPerDay * factor),
    ownerShare: (limits.ownerShare ?? 1) * factor,
  };
}

/**
 * Both sides' per-window and per-day limits of each quota owner of `lane`: `bucketLimitsFor` (the
 * provider's limits, their bursts less the safety margin) split by `reserveShare` (default {@link laneReserveShare}).
 * Pure: for documentation, the local run and {@link poolSideConfig}. With a share of 0 both sides
 * are `bucketLimitsFor`'s limits. The "at least 1" floors can make the sides sum above the limit
 * when a limit is tiny (e.g. 1 request a minute): keep such a lane's share at 0.
 * @throws {AdmissionSettingsError} for a share outside 0..0.9
 */
export function reserveLimits(
  lane: Pick<LaneConfig, 'provider' | 'live'>,
  settings: AdmissionSettings,
  reserveShare: number = laneReserveShare(lane),
): ReserveLimits {
  const share = checkReserveShare(reserveShare);
  const full = bucketLimitsFor(lane, settings);
  if (share === 0) return { reserveShare: 0, queue: full, live: full };
  return { reserveShare: share, queue: scaled(full, 1 - share), live: scaled(full, share) };
}

/**
 * `config` (a pool of `side`, from {@link poolSideConfig}) with the queue side's bucket of each owner split
 * into `shards` items, each with `1/shards` of every queue-side limit: a queue pool takes from shard
 * `shard` and copies an owner's cooldowns into the other shards (and the live bucket); a live pool with a
 * reserve copies them into every shard; without a reserve a live pool is a queue pool. One shard: `config`.
 * Passing the lane's `keys` checks that no owner's shard is another owner's bucket.
 * @throws {AdmissionSettingsError} for a shard outside 0..shards-1, or owners `o` and `o#s1` in one lane with shards
 */
export function shardedSideConfig(
  reserve: ReserveLimits,
  side: PoolSide,
  config: PoolSideConfig,
  shards: number,
  shard: number,
  keys?: readonly KeyRef[],
): PoolSideConfig {
  if (shards <= 1) return config;
  if (!(Number.isInteger(shard) && shard >= 0 && shard < shards)) throw new AdmissionSettingsError(`shard must be in 0..${shards - 1}, got ${shard}`);
  if (keys) {
    const owners = new Set(keys.map((k) => k.quotaOwner));
    const clash = [...owners].find((o) => Array.from({ length: shards - 1 }, (_, k) => o + shardBucketSuffix(k + 1)).some((id) => owners.has(id)));
    if (clash !== undefined)
      throw new AdmissionSettingsError(`quota owner ${clash} has a bucket shard that is another owner's bucket: rename it, or keep bucketShards at 1`);
  }
  const limits = scaled(reserve.queue, 1 / shards);
  const queueShards: BucketSide[] = Array.from({ length: shards }, (_, k) => ({ suffix: shardBucketSuffix(k), limits }));
  if (side === 'live' && reserve.reserveShare > 0) return { ...config, otherBuckets: queueShards };
  const live = reserve.reserveShare > 0 ? [{ suffix: LIVE_BUCKET_SUFFIX, limits: reserve.live }] : [];
  const suffix = shardBucketSuffix(shard);
  return { limits, ...(suffix ? { bucketSuffix: suffix } : {}), otherBuckets: [...queueShards.filter((_, k) => k !== shard), ...live] };
}

/**
 * Every bucket a pool of `side` may take from, one config each ({@link shardedSideConfig}): each of the
 * queue side's `shards`, or the one bucket of a side that is not sharded (a live pool with a reserve, or
 * one shard). A pool holding them all chooses one per group of takes, so that no consumer is tied to a
 * shard that falls behind.
 * @throws {AdmissionSettingsError} as {@link shardedSideConfig}
 */
export function shardSideConfigs(reserve: ReserveLimits, side: PoolSide, config: PoolSideConfig, shards: number, keys?: readonly KeyRef[]): PoolSideConfig[] {
  if (shards <= 1 || (side === 'live' && reserve.reserveShare > 0)) return [shardedSideConfig(reserve, side, config, shards, 0, keys)];
  // The owners' names are checked once (they are the same for every shard).
  const configs = Array.from({ length: shards }, (_, shard) => shardedSideConfig(reserve, side, config, shards, shard, shard === 0 ? keys : undefined));
  const shardSuffixes = configs.map((c) => c.bucketSuffix ?? '');
  return configs.map((c) => ({ ...c, shardSuffixes }));
}

/**
 * What a pool of `side` sets in its config, given both sides' limits: the queue side takes from the
 * owner's bucket and copies an owner's cooldowns into its live bucket; the live side takes from the
 * live bucket and copies them into the owner's bucket. With a share of 0: the owner's one bucket,
 * the full limits, nothing to copy (both sides alike). Passing the lane's `keys` checks that no
 * owner's live bucket is another owner's bucket.
 * @throws {AdmissionSettingsError} for an unknown side, or owners `o` and `o#live` in one lane with a reserve
 */
export function poolSideConfig(reserve: ReserveLimits, side: PoolSide, keys?: readonly KeyRef[]): PoolSideConfig {
  if (!POOL_SIDES.includes(side)) throw new AdmissionSettingsError(`pool side must be queue or live, got ${String(side)}`);
  if (reserve.reserveShare === 0) return { limits: reserve.queue };
  if (keys) {
    const owners = new Set(keys.map((k) => k.quotaOwner));
    const clash = [...owners].find((o) => owners.has(o + LIVE_BUCKET_SUFFIX));
    if (clash !== undefined) {
      throw new AdmissionSettingsError(
        `quota owner ${clash}${LIVE_BUCKET_SUFFIX} has the bucket that would be ${clash}'s live reserve: rename it, or set live.reserveShare to 0`,
      );
    }
  }
  return side === 'queue'
    ? { limits: reserve.queue, otherBuckets: [{ suffix: LIVE_BUCKET_SUFFIX, limits: reserve.live }] }
    : { limits: reserve.live, bucketSuffix: LIVE_BUCKET_SUFFIX, otherBuckets: [{ suffix: '', limits: reserve.queue }] };
}
