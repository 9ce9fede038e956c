/**
 * What the key pool's decisions (`pool-core.ts`) run on: the rate-state operations a decision yields
 * to its driver, what a pool instance reads (its config) and remembers (its state).
 */
import type { BucketSide } from '../config/reserve.js';
import type { AdmissionSettings } from '../config/settings.js';
import { levelsAt } from '../bucket/token-bucket.js';
import type { BucketLimits, BucketState, BucketUpdate, Lease } from '../model/bucket.js';
import type { CooldownRecord, CooldownSnapshot, KeyRef } from '../model/cooldowns.js';

/**
 * One rate-state operation a decision needs, answered by the driver: `readCooldowns` → the lane's
 * {@link CooldownSnapshot} (with `ahead`, the driver may answer `undefined` at once and cache the
 * read when it lands, with `cacheCooldownsRead`; with `first` too — the instance's first read, begun
 * beside its first decision — every driver answers `undefined`, and the decision asks again for it);
 * `readBucket` → the `BucketState` of bucket `owner` (a quota owner, or one followed by a side's
 * suffix: {@link PoolConfig.bucketSuffix}), or `undefined`; `writeBucket` → a {@link BucketWrite}:
 * `update` applied if its condition holds, with the bucket it found, else the bucket as it is now; `putCooldown` → nothing (recorded unless a longer one is); `lock` /
 * `unlock` → nothing: bracket one owner's bucket update, which a concurrent driver runs one at a time
 * per owner within the instance.
 */
export type StoreOp =
  | { readonly kind: 'readCooldowns'; readonly ahead?: true; readonly first?: true }
  | { readonly kind: 'readBucket'; readonly owner: string }
  | { readonly kind: 'writeBucket'; readonly owner: string; readonly update: BucketUpdate; readonly now: number }
  | { readonly kind: 'putCooldown'; readonly record: CooldownRecord; readonly now: number }
  | { readonly kind: 'lock'; readonly owner: string }
  | { readonly kind: 'unlock'; readonly owner: string };

/** A decision in progress: yields {@link StoreOp}s, is resumed with their answers, returns `T`. */
export type PoolOps<T> = Generator<StoreOp, T, unknown>;

/** What every decision of one pool instance reads and never changes (a reserve's side too: `config/reserve.ts`). */
export interface PoolConfig<K extends KeyRef = KeyRef> {
  /** The lane's keys, in round-robin order. */
  keys: readonly K[];
  /** Each quota owner's bucket this pool takes from (see `bucketLimitsFor`, `reserveLimits`). */
  limits: BucketLimits;
  /** The bucket this pool takes from is the owner followed by this (absent or '': the owner itself). */
  bucketSuffix?: string | undefined;
  /** The owner's other buckets (the other side of a reserve): an owner's cooldown is copied into each too. */
  otherBuckets?: readonly BucketSide[] | undefined;
  /**
   * The suffixes of every bucket of an owner the instance takes from (its shards, this config's among them):
   * what share of an owner's quota is left when some of them are spent for the day. Absent: this config's alone.
   */
  shardSuffixes?: readonly string[] | undefined;
  settings: AdmissionSettings;
  /** The clock, epoch ms (read at the same points by every driver). */
  now: () => number;
  /**
   * The driver runs each decision of an instance to its end before the next one starts (`drivers/sync.ts`):
   * no decision asks for a bucket's lock (the simulator's millions of looks at forty owners' buckets skip
   * two operations each). Absent: the decisions of an instance may interleave, and lock what they update.
   */
  serial?: boolean | undefined;
}

/** What one pool instance remembers between decisions (see the file's comment). */
export interface PoolState {
  /** Where the next round robin starts. */
  cursor: number;
  /** The cooldowns as this instance knows them (read, plus what it learned since). */
  cooldowns: CooldownSnapshot | undefined;
  /** When {@link cooldowns} was read (epoch ms). */
  cooldownsAt: number;
  /** The snapshot as last read: a read answered with this very object (a shared load) changes nothing. */
  cooldownsRead: CooldownSnapshot | undefined;
  /** Last bucket state seen per bucket item (see `bucketSuffix`); absent: unknown (the first write finds out). */
  buckets: Map<string, BucketState | undefined>;
  /** Output tokens assumed for a call before it answers. */
  outputEstimate: number;
  /**
   * The tokens' refill (ms) of the largest call this instance asked for since {@link headroomAt}, among the
   * calls a booking window keeps room for (`tokensHeadroom` in `pool-core.ts`).
   */
  headroomMs: number;
  /** When {@link headroomMs} was last set (epoch ms); older than a window, it lapses. */
  headroomAt: number;
  /** How long this instance's calls last, from grant to answer (ms; learned like {@link outputEstimate}); `undefined` before its first answer. */
  callMsEstimate: number | undefined;
  /**
   * The tokens this instance's calls used, input and output (learned like {@link outputEstimate});
   * `undefined` before its first answer. The lane's call rate where tokens bind is worked out from it,
   * not from one call's size (`bookedAhead` in `pool-core.ts`).
   */
  callTokensEstimate: number | undefined;
  /** Bucket updates given up after `maxBucketAttempts` failed writes (for metrics). */
  contended: number;
  /**
   * Per bucket item: token corrections (real usage minus what was taken) not yet written. The next
   * take of that bucket writes them with its own conditional write; they are written alone only once
   * they reach {@link SETTLE_CARRY_SHARE} of a window's tokens.
   */
  carried: Map<string, number>;
  /**
   * Per bucket item: the calls a take leased for this instance (`bucket/lease.ts`), granted without a write
   * until the lease ends; what is left is given back with the instance's next take of that bucket.
   */
  leases: Map<string, Lease>;
  /**
   * When this instance's latest calls asked for admission (epoch ms, oldest first; at most `leaseCalls`
   * of them): a take leases no more calls than the instance asked for in a lease's validity before it
   * ({@link noteAsks}, `leaseTermsFor` in `pool-core.ts`).
   */
  asks: number[];
  /** Bucket items whose probe (`bucket/first-calls.ts`) this instance's call holds, until it answers or fails. */
  probes: Set<string>;
  /**
   * Per bucket item: when this instance's write of it last failed because another instance wrote
   * first. Within a window of that, its cached state is taken as stale: the bucket is read (a
   * strongly consistent GetItem, a fifth of a failed write's price) before it is written.
   */
  conflictAt: Map<string, number>;
  /** How many decisions (or groups of them) this instance began: the number of the latest (see {@link beginDecision}). */
  decisionsBegun: number;
  /**
   * Per bucket item: the latest decision begun when its cached state was last learned from the table
   * (a read, or a conditional write's outcome: the state written, or the state that refused it). A
   * decision begun no later reads it no more: it already has what a read would return (`refreshContended`).
   */
  learnedAt: Map<string, number>;
  /** Per bucket item: the daily reset (epoch ms) until which this instance's takes found its day spent (`noteDaily` in `pool-core.ts`). */
  dailySpent: Map<string, number>;
  /** Bucket items whose cached state does not say their owner is proven (`bucket/first-calls.ts`); kept by {@link learnBucket}. */
  notProven: Set<string>;
  /**
   * The decision (see {@link decisionsBegun}) in which this instance last learned a bucket proven that its cache
   * did not know proven: the lane's first calls have begun answering, so a bucket still cached unproven from
   * before may well have been probed and taken from since (`staleSinceProof`).
   */
  provenLearnedAt: number;
}

/** The item of the owner's bucket this pool takes from (see {@link PoolConfig.bucketSuffix}). */
export function bucketIdOf(config: Pick<PoolConfig, 'bucketSuffix'>, owner: string): string {
  return config.bucketSuffix ? owner + config.bucketSuffix : owner;
}

/** Numbers a new decision (or group): what {@link learnedSince} compares with. */
export function beginDecision(state: PoolState): number {
  state.decisionsBegun += 1;
  return state.decisionsBegun;
}

/** Caches `bucket` as the table's state of bucket item `id`, learned now. */
export function learnBucket(state: PoolState, id: string, bucket: BucketState | undefined): void {
  const before = state.buckets.get(id);
  state.buckets.set(id, bucket);
  state.learnedAt.set(id, state.decisionsBegun);
  if (bucket?.proven !== true) {
    state.notProven.add(id);
    return;
  }
  if (before?.proven !== true) state.provenLearnedAt = state.decisionsBegun;
  state.notProven.delete(id);
}

/**
 * Whether bucket item `id`, cached not proven, was learned before this instance learned another owner proven:
 * a take from that cache would likely race the probe's take and the calls after it (read it first).
 */
export function staleSinceProof(state: PoolState, id: string): boolean {
  return state.notProven.has(id) && (state.learnedAt.get(id) ?? -1) < state.provenLearnedAt;
}

/** Forgets bucket item `id`'s cached state (a write that threw may or may not have landed). */
export function forgetBucket(state: PoolState, id: string): void {
  state.buckets.delete(id);
  state.learnedAt.delete(id);
  state.notProven.delete(id);
}

/**
 * The share of a window's tokens an instance may owe its bucket before it writes the correction alone
 * instead of with its next take: the bucket may be off by this much per consumer instance for as long
 * as the instance takes nothing (a provider's 429 still cools the key if it binds).
 */
export const SETTLE_CARRY_SHARE = 0.02;

/** A fresh instance's state: nothing read yet, the configured output-token estimate within its bounds. */
export function newPoolState(settings: AdmissionSettings): PoolState {
  return {
    cursor: 0,
    cooldowns: undefined,
    cooldownsAt: -Infinity,
    cooldownsRead: undefined,
    buckets: new Map(),
    outputEstimate: Math.min(settings.outputTokenEstimateMax, Math.max(settings.outputTokenEstimateMin, settings.outputTokenEstimate)),
    headroomMs: 0,
    headroomAt: -Infinity,
    callMsEstimate: undefined,
    callTokensEstimate: undefined,
    contended: 0,
    carried: new Map(),
    leases: new Map(),
    asks: [],
    probes: new Set(),
    conflictAt: new Map(),
    decisionsBegun: 0,
    learnedAt: new Map(),
    dailySpent: new Map(),
    notProven: new Set(),
    provenLearnedAt: -1,
  };
}

/** Notes that `count` calls of this instance asked for admission at `at` (keeping the latest `keep`). */
export function noteAsks(state: PoolState, at: number, count: number, keep: number): void {
  for (let i = 0; i < count; i++) state.asks.push(at);
  if (state.asks.length > keep) state.asks.splice(0, state.asks.length - keep);
}

/** Whether bucket item `id`'s cached state was learned from the table after decision `since` began. */
export function learnedSince(state: PoolState, id: string, since: number): boolean {
  return (state.learnedAt.get(id) ?? 0) >= since;
}

/** Per keys array, its quota owners once each (in key order). */
const ownersOfKeys = new WeakMap<readonly KeyRef[], readonly string[]>();

/** The quota owners of `keys`, once each in key order (worked out once per keys array: decisions ask for it often). */
export function ownersOf(keys: readonly KeyRef[]): readonly string[] {
  let owners = ownersOfKeys.get(keys);
  if (owners === undefined) {
    owners = [...new Set(keys.map((k) => k.quotaOwner))];
    ownersOfKeys.set(keys, owners);
  }
  return owners;
}

/** The requests `state` knows the buckets of `config` can start now: the window's and the day's, whichever is less (an unknown bucket counts as full). */
function knownHeadroom(config: PoolConfig, state: PoolState, now: number): number {
  let headroom = 0;
  for (const owner of ownersOf(config.keys)) {
    const levels = levelsAt(state.buckets.get(bucketIdOf(config, owner)), config.limits, now);
    headroom += Math.min(levels.requests, levels.daily);
  }
  return headroom;
}

/**
 * Which of `shards` (an owner's bucket shards, one config each) the next take or group of takes is
 * decided on, by an instance that took its last ones from shard `current`: `current`, unless another
 * one drawn at random holds more requests now in the buckets this instance knows (an unknown bucket
 * counts as full). An instance stays where its cached buckets are fresh, and leaves a shard that fell
 * behind for one with room instead of spending its denials (each a write) there.
 */
export function chooseShard(shards: readonly PoolConfig[], state: PoolState, now: number, current: number, random: () => number): number {
  if (shards.length === 1) return 0;
  let other = Math.floor(random() * (shards.length - 1));
  if (other >= current) other += 1;
  return knownHeadroom(shards[other]!, state, now) > knownHeadroom(shards[current]!, state, now) ? other : current;
}
