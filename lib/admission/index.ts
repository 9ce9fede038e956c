/**
 * Admission before the call: the shared key pool (cooldowns and token buckets in the lane's
 * rate-state table) and the lane pause. See README.md, section "Admission"; the key pool's decisions
 * are in `pool-core.ts`, run by `SharedKeyPool` (`key-pool.ts`) and by the simulator.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LaneConfig } from '../config/lanes.js';
import type { ProviderKey } from './keys.js';
import { SharedKeyPool } from './key-pool.js';
import { LanePauser, type LanePauseController } from './pause.js';
import { DynamoRateStateStore, type RateStateStore } from './rate-state.js';
import { admissionSettings, bucketLimitsFor, type AdmissionSettings } from './settings.js';

export * from './bucket.js';
export * from './choice.js';
export { SharedKeyPool, type SharedKeyPoolOptions } from './key-pool.js';
export * from './pool-core.js';
export * from './pool-sync.js';
export * from './pause.js';
export * from './rate-state.js';
export * from './settings.js';

/** One lane's admission: the store shared by all its consumers, a pool per consumer instance, the pauser. */
export interface LaneAdmission {
  store: RateStateStore;
  settings: AdmissionSettings;
  /** A new key pool (one per consumer instance: each keeps its own short cache). */
  newPool(now?: () => number): SharedKeyPool;
  /** Pauses the lane through `controller`; absent without a controller. */
  pauser: LanePauser | undefined;
}

/** Wires admission for `lane` on its rate-state table. */
export function createLaneAdmission(options: {
  lane: LaneConfig;
  dynamodb: DynamoDBClient;
  keys: readonly ProviderKey[];
  settings?: Partial<AdmissionSettings>;
  controller?: LanePauseController | undefined;
  /** Use this store instead of the lane's table (tests). */
  store?: RateStateStore;
}): LaneAdmission {
  const settings = admissionSettings({ billingRecheckMs: options.lane.backoff.throttleCapSeconds * 1000, ...options.settings });
  const store = options.store ?? new DynamoRateStateStore({ dynamodb: options.dynamodb, tableName: options.lane.resources.rateStateTable });
  const limits = bucketLimitsFor(options.lane, settings);
  return {
    store,
    settings,
    newPool: (now) => new SharedKeyPool({ keys: options.keys, store, limits, settings, ...(now ? { now } : {}) }),
    pauser: options.controller ? new LanePauser({ store, controller: options.controller }) : undefined,
  };
}
