/**
 * Admission for strategy (c): the key pool's own decisions (`lib/admission/decisions/pool-core.ts`, the ones
 * `SharedKeyPool` runs against DynamoDB) run synchronously, one pool instance per consumer, over an
 * in-memory rate-state table that answers at once ({@link SimRateState}) and counts the DynamoDB
 * request units each operation would consume.
 *
 * What is idealized: the table has no latency and writes never race inside one instant, so a take
 * needs at most two writes here (a stale cache's failed write returns the current bucket, and the
 * retry succeeds) where the real table may need more under contention.
 */
import { updateInMemory } from '../../lib/admission/bucket/item-update.js';
import type { BucketLimits, BucketState, BucketUpdate } from '../../lib/admission/model/bucket.js';
import { EMPTY_SNAPSHOT, type CooldownRecord, type CooldownSnapshot, type KeyRef } from '../../lib/admission/model/cooldowns.js';
import { addCooldown } from '../../lib/admission/decisions/choice.js';
import {
  acquireOps,
  coolOps,
  keysLeftOps,
  laneCapacityOps,
  laneOutOf,
  settleOps,
  type CoreAdmission,
  type LaneOut,
} from '../../lib/admission/decisions/pool-core.js';
import { chooseShard, newPoolState, type PoolConfig, type PoolState } from '../../lib/admission/decisions/pool-state.js';
import { acquireGroupOps } from '../../lib/admission/decisions/group-take.js';
import { runSync, type SyncRateState } from '../../lib/admission/drivers/sync.js';
import type { BucketWrite } from '../../lib/admission/model/store.js';
import { admissionSettings, bucketLimitsFor, type AdmissionSettings } from '../../lib/admission/config/settings.js';
import { shardSideConfigs } from '../../lib/admission/config/reserve.js';
import type { LaneConfig } from '../../lib/config/lanes.js';
import type { Cooldown } from '../../lib/policy/index.js';
import type { KeyLimits } from './provider-model.js';

/** DynamoDB request units admission spent, and its answers. */
export interface AdmissionCounters {
  /** Strongly consistent reads (1 read request unit per item < 4 KB): cooldown items (one BatchGetItem per read) and buckets (GetItem). */
  cooldownReads: number;
  /** Conditional bucket writes that succeeded. */
  bucketWrites: number;
  /** Conditional bucket writes that failed (another instance wrote first); still 1 write unit each. */
  bucketConflicts: number;
  /** Cooldown puts (conditional; 1 write unit each, recorded or not). */
  cooldownWrites: number;
  grants: number;
  denials: number;
  /** Bucket updates given up after `maxBucketAttempts` conflicts. */
  contended: number;
  /**
   * Per bucket item: the most conditional writes (those that failed too: each consumes the item's write
   * throughput) in any one second of virtual time. DynamoDB serves about {@link ITEM_WRITE_CEILING}
   * write units per second to one item.
   */
  peakItemWritesPerSecond: Record<string, number>;
  /** Per bucket item: the second (epoch ms) its peak was first reached. */
  peakItemWritesAt: Record<string, number>;
}

/** Write units per second DynamoDB serves to one item (one partition's limit, an item being in one partition). */
export const ITEM_WRITE_CEILING = 1000;

/** Counters before anything was counted. */
export function newAdmissionCounters(): AdmissionCounters {
  return {
    cooldownReads: 0,
    bucketWrites: 0,
    bucketConflicts: 0,
    cooldownWrites: 0,
    grants: 0,
    denials: 0,
    contended: 0,
    peakItemWritesPerSecond: {},
    peakItemWritesAt: {},
  };
}

/** The lane's keys as admission sees them: `key-1` … `key-N`, each its own quota owner. */
function simKeys(count: number): KeyRef[] {
  return Array.from({ length: count }, (_, i) => ({ id: `key-${i + 1}`, quotaOwner: `owner-${i + 1}` }));
}

/**
 * The lane's rate-state table in memory, with the DynamoDB table's rules (a bucket update lands only
 * when its condition holds and a failed one returns the current bucket; cooldowns only extend),
 * counting request units into `counters`.
 */
export class SimRateState implements SyncRateState {
  private cooldowns: CooldownSnapshot = EMPTY_SNAPSHOT;
  private readonly buckets = new Map<string, BucketState>();
  /** Per bucket item: the second (virtual, epoch s) its writes are being counted in, and how many so far. */
  private readonly writesThisSecond = new Map<string, { second: number; writes: number }>();
  /** Items of one cooldown read: one per key id and one per quota owner. */
  private readonly cooldownItems: number;

  constructor(
    keys: readonly KeyRef[],
    private readonly counters: AdmissionCounters,
  ) {
    this.cooldownItems = new Set(keys.map((k) => k.id)).size + new Set(keys.map((k) => k.quotaOwner)).size;
  }

  /** The owner's bucket as stored (for tests). */
  bucketOf(owner: string): BucketState | undefined {
    return this.buckets.get(owner);
  }

  /** Every cooldown read costs a read unit per key id and per owner (one BatchGetItem); a new snapshot object each time. */
  readCooldowns(): CooldownSnapshot {
    this.counters.cooldownReads += this.cooldownItems;
    return { keys: this.cooldowns.keys, owners: this.cooldowns.owners };
  }

  /** One GetItem. */
  readBucket(owner: string): BucketState | undefined {
    this.counters.cooldownReads++;
    return this.buckets.get(owner);
  }

  /** One conditional UpdateItem: a write unit whether it succeeds or not, counted in its item's second. */
  writeBucket(owner: string, update: BucketUpdate, now: number): BucketWrite {
    this.countItemWrite(owner, now);
    const outcome = updateInMemory(this.buckets.get(owner), update);
    if (!outcome.ok) {
      this.counters.bucketConflicts++;
      return outcome;
    }
    this.counters.bucketWrites++;
    this.buckets.set(owner, outcome.after);
    return { ok: true, before: outcome.before };
  }

  private countItemWrite(owner: string, now: number): void {
    const second = Math.floor(now / 1000);
    let current = this.writesThisSecond.get(owner);
    if (current === undefined || current.second !== second) {
      current = { second, writes: 0 };
      this.writesThisSecond.set(owner, current);
    }
    current.writes += 1;
    const peaks = this.counters.peakItemWritesPerSecond;
    if (current.writes > (peaks[owner] ?? 0)) {
      peaks[owner] = current.writes;
      this.counters.peakItemWritesAt[owner] = second * 1000;
    }
  }

  /** One conditional PutItem: a write unit whether a longer cooldown was there or not. */
  putCooldown(record: CooldownRecord): void {
    this.counters.cooldownWrites++;
    this.cooldowns = addCooldown(this.cooldowns, record);
  }
}

/** Admission shared by `consumers` pool instances of one lane, each with its own cache and estimate. */
export class SimKeyPool {
  /** The lane's keys (their index is the simulator's key number). */
  readonly keys: readonly KeyRef[];
  /** Each quota owner's bucket: the scenario's limits, their bursts less the safety margin. */
  readonly limits: BucketLimits;
  /** The admission settings every instance runs with. */
  readonly settings: AdmissionSettings;
  /** The table (for tests). */
  readonly store: SimRateState;
  private readonly totals: AdmissionCounters = newAdmissionCounters();
  /** After a denial: when to come back (epoch ms). */
  retryAt = 0;
  /** After a denial: why (as `SharedKeyPool`'s denial says it). */
  detail = '';
  /** After a denial: when every key is out for a long reset, until when (else `null`). */
  laneOut: LaneOut | null = null;
  /** After a grant: the tokens taken (to settle later). */
  grantedTokens = 0;
  /** After a take (or a group of them): the bucket shard it was decided on (to settle there). */
  takenShard = 0;

  /**
   * The pool config of each bucket shard (`AdmissionSettings.bucketShards`): as `SharedKeyPool` with
   * every shard, an instance chooses one for each take or group of takes.
   */
  private readonly configs: PoolConfig[];
  private readonly states: PoolState[];
  private readonly random: () => number;
  /** Per instance: the shard of its last take (at first consumer `c`'s is `c mod shards`, so the fleet starts spread). */
  private readonly shardOf: Uint8Array;
  /** The virtual time the decision in progress runs at. */
  private clock = 0;

  /** `random`: uniform in [0, 1), draws the shard each take weighs against its last (default `Math.random`). */
  constructor(options: {
    keys: number | readonly KeyRef[];
    limits: KeyLimits;
    consumers: number;
    settings?: Partial<AdmissionSettings>;
    random?: () => number;
  }) {
    this.keys = typeof options.keys === 'number' ? simKeys(options.keys) : options.keys;
    this.settings = admissionSettings(options.settings);
    this.limits = bucketLimitsFor({ provider: { limits: options.limits } } as unknown as Pick<LaneConfig, 'provider'>, this.settings);
    this.store = new SimRateState(this.keys, this.totals);
    const reserve = { reserveShare: 0, queue: this.limits, live: this.limits };
    const shards = this.settings.bucketShards;
    const sides = shardSideConfigs(reserve, 'queue', { limits: this.limits }, shards, this.keys);
    this.configs = sides.map((side) => ({ keys: this.keys, ...side, settings: this.settings, now: () => this.clock, serial: true }));
    this.states = Array.from({ length: options.consumers }, () => newPoolState(this.settings));
    this.random = options.random ?? Math.random;
    this.shardOf = Uint8Array.from({ length: options.consumers }, (_, c) => c % shards);
  }

  /**
   * `SharedKeyPool.prime`'s start of the round robin, which every consumer instance makes at its INIT: instance
   * `consumer` starts at a random key, so a fleet that starts together spreads over the owners instead of every
   * instance taking the same owners in the same order. (The reads it primes with are not modelled: the
   * simulated store answers a first take's read at once.) `random` draws the key (default: the pool's own stream).
   */
  prime(consumer: number, random = this.random): void {
    this.states[consumer]!.cursor = Math.floor(random() * this.keys.length);
  }

  /** The shard of instance `consumer`'s next take or group (`chooseShard`, as `SharedKeyPool` chooses it), kept in {@link takenShard}. */
  private nextShard(consumer: number): PoolConfig {
    this.takenShard = chooseShard(this.configs, this.states[consumer]!, this.clock, this.shardOf[consumer]!, this.random);
    this.shardOf[consumer] = this.takenShard;
    return this.configs[this.takenShard]!;
  }

  /** The config of decisions not tied to a shard (cooldowns, the lane's capacity): the first shard's, as `SharedKeyPool`'s. */
  private get anyShard(): PoolConfig {
    return this.configs[0]!;
  }

  /** DynamoDB request units spent and answers given, summed over every instance. */
  get counters(): AdmissionCounters {
    this.totals.contended = this.states.reduce((sum, s) => sum + s.contended, 0);
    return this.totals;
  }

  /** Instance `consumer`'s output-token estimate now. */
  outputEstimateOf(consumer: number): number {
    return this.states[consumer]!.outputEstimate;
  }

  /**
   * `SharedKeyPool.acquire` for instance `consumer` at `now`: the index of the granted key (with
   * {@link grantedTokens} and {@link takenShard} set), or -1 with {@link retryAt}, {@link detail} and {@link laneOut} set.
   */
  acquire(consumer: number, estimatedTokens: number, now: number): number {
    this.clock = now;
    const answer = runSync(acquireOps(this.nextShard(consumer), this.states[consumer]!, { estimatedTokens }), this.store);
    if (answer.admitted) {
      this.totals.grants++;
      this.grantedTokens = answer.cost.tokens;
      return answer.index;
    }
    this.totals.denials++;
    this.retryAt = answer.retryAt;
    this.detail = answer.detail;
    this.laneOut = answer.laneOut;
    return -1;
  }

  /**
   * The takes of one batch's calls made together (`group-take.ts`, as `SharedKeyPool` groups the
   * acquires that meet in one instance): the answers in `estimatedTokens`' order. A call may be booked
   * on a slot up to `bookWithinMs` after `now` (the grant's `startAt`). The group's shard is left in {@link takenShard}.
   */
  acquireGroup(consumer: number, estimatedTokens: readonly number[], now: number, bookWithinMs = 0): CoreAdmission<KeyRef>[] {
    this.clock = now;
    const answers = runSync(
      acquireGroupOps(
        this.nextShard(consumer),
        this.states[consumer]!,
        estimatedTokens.map((tokens) => ({ estimatedTokens: tokens, bookWithinMs })),
      ),
      this.store,
    );
    for (const answer of answers) {
      if (answer.admitted) this.totals.grants++;
      else this.totals.denials++;
    }
    return answers;
  }

  /**
   * The grant's settle, on the shard it was taken from: learns the output-token estimate and how long
   * calls last (from `callAt`, when the call started), corrects the owner's token level by the real usage.
   */
  settle(consumer: number, shard: number, keyIndex: number, takenTokens: number, inputTokens: number, outputTokens: number, callAt: number, now: number): void {
    this.clock = now;
    const { quotaOwner } = this.keys[keyIndex]!;
    runSync(settleOps(this.configs[shard]!, this.states[consumer]!, quotaOwner, takenTokens, { inputTokens, outputTokens }, now - callAt), this.store);
  }

  /** `SharedKeyPool.keysLeftAfter`: keys still usable once `keyIndex` (or its owner) cools (a fresh read). */
  keysLeftAfter(consumer: number, keyIndex: number, target: Pick<Cooldown, 'scope' | 'reason'>, now: number): number {
    this.clock = now;
    return runSync(keysLeftOps(this.anyShard, this.states[consumer]!, this.keys[keyIndex]!, target), this.store);
  }

  /** `SharedKeyPool.cool`: records the policy's cooldown in the instance's cache, the table and the owner's bucket. */
  cool(consumer: number, keyIndex: number, cooldown: Cooldown, now: number): void {
    this.clock = now;
    runSync(coolOps(this.anyShard, this.states[consumer]!, this.keys[keyIndex]!, cooldown), this.store);
  }

  /** `SharedKeyPool.laneOut`: when every key is out for a long reset, as every instance recorded it (a fresh read). */
  laneOutFor(consumer: number, now: number): LaneOut | null {
    this.clock = now;
    return laneOutOf(runSync(laneCapacityOps(this.anyShard, this.states[consumer]!), this.store));
  }
}
