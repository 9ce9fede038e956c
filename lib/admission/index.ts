/**
 * Admission before the call: the shared key pool (cooldowns and token buckets in the lane's
 * rate-state table) and the lane pause. See docs/admission.md. From the bottom up:
 * - `model/`: the shared types and constants (cooldowns, bucket shapes, the rate-state store's port);
 * - `config/`: how admission applies a lane's limits (`settings.ts`) and the capacity kept for the live
 *   lane, split into a queue side and a live side (`reserve.ts`);
 * - `bucket/`: the pure bucket arithmetic (token bucket, leases, first-call probes, the bucket changes);
 * - `decisions/`: the key pool's decisions, I/O-free, yielding the store operations they need
 *   (`pool-core.ts`, `group-take.ts`, and what they run on);
 * - `drivers/`: their asynchronous driver over the rate-state store, `SharedKeyPool`
 *   (`shared-key-pool.ts`), and the synchronous one the simulator uses (`sync.ts`);
 * - `dynamodb/`: the rate-state table in DynamoDB;
 * - `keys/`: the `KeyPool` a lane calls through, and the provider keys' secrets;
 * - `pause/`: the lane pause and its AWS controller.
 * This file wires them for one lane.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LaneConfig } from '../config/lanes.js';
import { bookingWindowAtStartMs } from '../extraction/budget.js';
import { poolSideConfig, reserveLimits, shardedSideConfig, shardSideConfigs, type PoolSide, type ReserveLimits } from './config/reserve.js';
import { admissionSettings, shardsFor, type AdmissionSettings } from './config/settings.js';
import { SharedKeyPool } from './drivers/shared-key-pool.js';
import { DynamoRateStateStore } from './dynamodb/rate-state.js';
import type { ProviderKey } from './keys/key-pool.js';
import type { RateStateStore } from './model/store.js';
import type { Sleep } from '../platform/sleep.js';
import { LanePauser, type LanePauseController } from './pause/lane-pause.js';

export type { AdmissionSettings } from './config/settings.js';

/** One lane's admission: the store shared by all its consumers, a pool per consumer instance, the pauser. */
export interface LaneAdmission {
  store: RateStateStore;
  settings: AdmissionSettings;
  /** The side every pool of this admission admits for (`'queue'`: the lane's consumers). */
  side: PoolSide;
  /** Both sides' limits per quota owner, and the share kept for live requests (0: none kept). */
  reserve: ReserveLimits;
  /**
   * A new key pool of {@link side} (one per consumer instance: each keeps its own short cache), on the
   * given clock in epoch ms and its sleep (default: the real ones). With `AdmissionSettings.bucketShards`
   * above 1 it holds every shard, starts on one drawn at random and decides each group of calls on the shard
   * `chooseShard` picks (so no instance is tied to a shard that falls behind); or only on shard `shard` when given.
   */
  newPool(now?: () => number, sleep?: Sleep, shard?: number): SharedKeyPool;
  /** Pauses the lane through `controller`; absent without a controller. */
  pauser: LanePauser | undefined;
}

/**
 * Wires admission for `lane` on its rate-state table, for one side of its reserve (`config/reserve.ts`):
 * the queue side (default; every pool admits against `1 - reserveShare` of each quota owner's limits)
 * or the live side (against `reserveShare`, in a bucket of its own). Cooldowns are shared by both.
 * With a share of 0 both sides use the owner's one bucket with the full limits. The settings' bucket
 * shards and the records the queue side's mapping holds come from the lane unless given.
 * @throws {AdmissionSettingsError} for settings or a share admission cannot work with, or a quota
 *   owner named like another owner's live bucket (`o` and `o#live`) while a reserve is kept
 */
export function createLaneAdmission(options: {
  lane: LaneConfig;
  dynamodb: DynamoDBClient;
  keys: readonly ProviderKey[];
  settings?: Partial<AdmissionSettings>;
  controller?: LanePauseController | undefined;
  /** Use this store instead of the lane's table (tests). */
  store?: RateStateStore;
  /** Which side the pools admit for. Default `'queue'`. */
  side?: PoolSide | undefined;
  /** The share kept for live requests (0..0.9). Default: `lane.live.reserveShare` when `lane.live.enabled`, else 0. */
  reserveShare?: number | undefined;
}): LaneAdmission {
  const expected = options.lane.provider.expectedOutputTokens;
  const owners = new Set(options.keys.map((k) => k.quotaOwner)).size;
  const side = options.side ?? 'queue';
  const settings = admissionSettings({
    billingRecheckMs: options.lane.backoff.throttleCapSeconds * 1000,
    ...(expected !== undefined ? { outputTokenEstimate: expected } : {}),
    bucketShards: shardsFor(options.lane.consumer.maximumConcurrency, owners),
    mappingRecords: side === 'queue' ? options.lane.consumer.maximumConcurrency * options.lane.queue.batchSize : 0,
    mappingWindowMs: side === 'queue' ? bookingWindowAtStartMs(options.lane) : 0,
    ...options.settings,
  });
  const reserve = reserveLimits(options.lane, settings, options.reserveShare);
  const poolSide = poolSideConfig(reserve, side, options.keys);
  const store = options.store ?? new DynamoRateStateStore({ dynamodb: options.dynamodb, tableName: options.lane.resources.rateStateTable });
  return {
    store,
    settings,
    side,
    reserve,
    newPool: (now, sleep, shard) => {
      const sides =
        shard === undefined
          ? shardSideConfigs(reserve, side, poolSide, settings.bucketShards, options.keys)
          : [shardedSideConfig(reserve, side, poolSide, settings.bucketShards, shard, options.keys)];
      return new SharedKeyPool({ keys: options.keys, store, ...sides[0]!, shards: sides, settings, ...(now ? { now } : {}), sleep });
    },
    pauser: options.controller ? new LanePauser({ store, controller: options.controller }) : undefined,
  };
}

/**
 * A new key pool of `admission`, primed (`SharedKeyPool.prime`): what an execution environment's INIT
 * makes, so its first take knows the lane's cooldowns and buckets. Never throws for the table.
 */
export async function primedPool(admission: Pick<LaneAdmission, 'newPool'>): Promise<SharedKeyPool> {
  const pool = admission.newPool();
  await pool.prime();
  return pool;
}
