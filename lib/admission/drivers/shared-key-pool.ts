/**
 * The shared key pool: every consumer of a lane uses one, and they share what they learn through
 * the lane's rate-state table. For each model call it goes round robin over the keys that are not
 * cooling and takes the call's cost from the key's quota-owner bucket with a conditional update;
 * when no key can take the call it says when the earliest one is due, so the job is deferred without
 * calling the provider (see docs/admission.md).
 *
 * The decisions are `decisions/pool-core.ts`'s, shared with the virtual-time simulator; this class is
 * their asynchronous driver: it awaits each rate-state operation against a {@link RateStateStore},
 * answers concurrent cooldown reads of the instance with one load, and runs the bucket updates of one
 * quota owner one at a time within the instance, so only other instances contend.
 */
import { AWS_LIMITS } from '../../config/lanes.js';
import type { Cooldown, LaneOutReason } from '../../policy/index.js';
import type { BucketSide, PoolSideConfig } from '../config/reserve.js';
import type { AdmissionSettings } from '../config/settings.js';
import { blockerOf } from '../decisions/choice.js';
import { cacheCooldownsRead } from '../decisions/cooldown-cache.js';
import { acquireGroupOps } from '../decisions/group-take.js';
import type { LaneCapacity } from '../decisions/choice.js';
import { coolOps, keysLeftOps, laneCapacityOps, laneOutOf, releaseOps, settleOps, type CoreAdmission } from '../decisions/pool-core.js';
import { bucketIdOf, chooseShard, learnBucket, newPoolState, type PoolConfig, type PoolOps, type PoolState, type StoreOp } from '../decisions/pool-state.js';
import {
  NoProviderKeyError,
  type CooldownTarget,
  type KeyAdmission,
  type KeyPool,
  type KeyRequest,
  type KeyUsage,
  type LaneCapacityState,
  type ProviderKey,
} from '../keys/key-pool.js';
import { secretFingerprint } from '../keys/key-ring.js';
import type { BucketLimits, BucketState } from '../model/bucket.js';
import type { CoolOutcome, CooldownSnapshot } from '../model/cooldowns.js';
import type { RateStateStore } from '../model/store.js';
import { realSleep, type Sleep } from '../../platform/sleep.js';

/** Construction options of {@link SharedKeyPool}. */
export interface SharedKeyPoolOptions {
  keys: readonly ProviderKey[];
  store: RateStateStore;
  /** Each quota owner's bucket this pool takes from (see `bucketLimitsFor`; a reserve's side: `poolSideConfig`). */
  limits: BucketLimits;
  /** A reserve's side (`poolSideConfig`): the pool's bucket is the owner followed by this (absent: the owner itself). */
  bucketSuffix?: string | undefined;
  /** A reserve's side (`poolSideConfig`): the owner's other bucket, which its cooldowns are copied into. */
  otherBuckets?: readonly BucketSide[] | undefined;
  /**
   * The buckets to choose from instead (`shardSideConfigs`: each of an owner's bucket shards): each
   * group of takes is decided on one (`chooseShard`), and a grant settles on the bucket it was taken
   * from. Absent or one: the bucket of `limits`, `bucketSuffix` and `otherBuckets`.
   */
  shards?: readonly PoolSideConfig[] | undefined;
  settings: AdmissionSettings;
  /** Clock in epoch ms (default `Date.now`). */
  now?: () => number;
  /** Waits on the clock of {@link now} (default: the real sleep): for another call's first answer. */
  sleep?: Sleep | undefined;
  /** Uniform in [0, 1) (default `Math.random`): where in {@link PROBE_WAIT_SPREAD} this instance's waits end, and the shards it weighs. */
  random?: () => number;
}

/**
 * How much sooner than its due time (about one request slot: a share of it) an instance comes back
 * from waiting for a first call's answer, at most: each instance draws its share once, so the
 * instances that found one probe out together (the consumers' start) come back apart instead of
 * reading and writing the owner's bucket all at once, and none later than it would alone (an early one
 * that finds the probe still out waits again); the waiters of one instance still come back together
 * and take as one group.
 */
export const PROBE_WAIT_SPREAD = 0.5;

/** One mutex per quota owner: waiters run in the order they came. */
class OwnerLocks {
  private readonly tails = new Map<string, Promise<void>>();

  /** Resolves with the release function once every earlier holder of `owner` released it. */
  async acquire(owner: string): Promise<() => void> {
    const previous = this.tails.get(owner) ?? Promise.resolve();
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => released);
    this.tails.set(owner, tail);
    void tail.then(() => {
      if (this.tails.get(owner) === tail) this.tails.delete(owner);
    });
    await previous;
    return release;
  }
}

/** A take's answer, and the config of the bucket (shard) it was decided on: its grant settles there. */
interface Taken {
  answer: CoreAdmission<ProviderKey>;
  config: PoolConfig<ProviderKey>;
}

/** An acquire waiting for its group: the end of its booking window (epoch ms), and its answer's callbacks. */
interface WaitingTake {
  estimatedTokens: number;
  flow: KeyRequest['flow'];
  windowEnd: number;
  resolve: (taken: Taken) => void;
  reject: (error: unknown) => void;
}

/** A {@link KeyPool} backed by the lane's rate-state table. */
export class SharedKeyPool implements KeyPool {
  /** How many keys the lane has. */
  readonly size: number;
  /** One config per bucket shard the pool takes from (see {@link SharedKeyPoolOptions.shards}). */
  private readonly configs: readonly PoolConfig<ProviderKey>[];
  /** The first shard's: what decisions not tied to a shard (cooldowns, the lane's capacity) run with. */
  private readonly config: PoolConfig<ProviderKey>;
  /** The index in {@link configs} of the shard of the last group (at first one drawn, so a fleet starts spread). */
  private shard: number;
  /** One state for every shard: the cooldowns, the estimate and the round robin are the instance's; the rest is kept per bucket item. */
  private readonly state: PoolState;
  private readonly store: RateStateStore;
  private readonly locks = new OwnerLocks();
  private cooldownsLoading: Promise<CooldownSnapshot> | undefined;
  private readonly probeWaiters = new Set<() => void>();
  /** Acquires waiting for the next group (see {@link takeInGroup}). */
  private readonly waiting: WaitingTake[] = [];
  private grouping = false;
  /** This instance's share of {@link PROBE_WAIT_SPREAD}. */
  private readonly probeWaitShare: number;
  private readonly random: () => number;
  private readonly sleep: Sleep;

  constructor(options: SharedKeyPoolOptions) {
    if (options.keys.length === 0) throw new NoProviderKeyError('no provider key configured for this lane');
    this.size = options.keys.length;
    this.store = options.store;
    const now = options.now ?? Date.now;
    const sides: readonly PoolSideConfig[] = options.shards?.length ? options.shards : [options];
    this.configs = sides.map((side) => ({
      keys: options.keys,
      limits: side.limits,
      ...(side.bucketSuffix ? { bucketSuffix: side.bucketSuffix } : {}),
      ...(side.otherBuckets?.length ? { otherBuckets: side.otherBuckets } : {}),
      ...(side.shardSuffixes ? { shardSuffixes: side.shardSuffixes } : {}),
      settings: options.settings,
      now,
    }));
    this.config = this.configs[0]!;
    this.state = newPoolState(options.settings);
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? realSleep;
    this.probeWaitShare = this.random() * PROBE_WAIT_SPREAD;
    this.shard = this.configs.length === 1 ? 0 : Math.floor(this.random() * this.configs.length);
  }

  /**
   * Learns, before the instance's first take, what that take would otherwise find out on its way:
   * the lane's cooldowns and each quota owner's bucket of every shard (strongly consistent, in one
   * request where the store has one: {@link readForPriming}), and starts the round robin at a random
   * key, so instances that start together spread over the owners instead of all writing the first one.
   * Meant for the execution environment's INIT (the consumer Lambda primes before its first batch): the
   * first take is then one conditional write on a known state, on a connection already open. A read
   * that fails is left to the first decision, as without priming; never throws.
   */
  async prime(): Promise<void> {
    const at = this.config.now();
    const ids = [...new Set(this.configs.flatMap((config) => config.keys.map((k) => bucketIdOf(config, k.quotaOwner))))];
    const read = await this.readForPriming(ids).catch(() => undefined);
    if (read?.cooldowns) cacheCooldownsRead(this.state, read.cooldowns, at);
    for (const [id, bucket] of read?.buckets ?? []) {
      // A take that ran meanwhile learned a newer state: keep it.
      if (!this.state.buckets.has(id)) learnBucket(this.state, id, bucket);
    }
    this.state.cursor = Math.floor(this.random() * this.config.keys.length);
  }

  /**
   * The cooldowns and the buckets `ids` for {@link prime}: one request where the store has one, else a read
   * each (a read that fails leaves its part out).
   */
  private async readForPriming(ids: readonly string[]): Promise<{ cooldowns?: CooldownSnapshot; buckets: [string, BucketState | undefined][] }> {
    if (this.store.readCooldownsAndBuckets) {
      const { cooldowns, buckets } = await this.store.readCooldownsAndBuckets(this.config.keys, ids);
      return { cooldowns, buckets: ids.map((id) => [id, buckets.get(id)]) };
    }
    const [cooldowns, ...buckets] = await Promise.allSettled([this.store.readCooldowns(this.config.keys), ...ids.map((id) => this.store.readBucket(id))]);
    return {
      ...(cooldowns?.status === 'fulfilled' ? { cooldowns: cooldowns.value } : {}),
      buckets: ids.flatMap((id, i) => (buckets[i]?.status === 'fulfilled' ? [[id, buckets[i].value] as [string, BucketState | undefined]] : [])),
    };
  }

  /** Output tokens this instance assumes for a call before it answers (learned from reported usage). */
  get outputTokenEstimate(): number {
    return this.state.outputEstimate;
  }

  /** Token corrections this instance owes its buckets, not yet written (written with its next take of each). */
  get tokensOwed(): number {
    let owed = 0;
    for (const tokens of this.state.carried.values()) owed += tokens;
    return owed;
  }

  /** Bucket updates this instance gave up after `maxBucketAttempts` conflicts. */
  get contendedUpdates(): number {
    return this.state.contended;
  }

  /**
   * What this instance's takes cost in conflicts: acquires answered (`takes`), and conditional bucket
   * writes of any decision that failed because another instance wrote first (`conditionFailures`).
   */
  readonly counts = { takes: 0, conditionFailures: 0 };

  /** Answers one operation of a decision; `held` collects the releases of the locks it holds. */
  private async perform(op: StoreOp, held: Map<string, () => void>): Promise<unknown> {
    switch (op.kind) {
      case 'readCooldowns': {
        // Concurrent reads of this instance share one load (the core takes its answer once).
        const loading = this.cooldownsLoading;
        this.cooldownsLoading ??= this.store.readCooldowns(this.config.keys).finally(() => {
          this.cooldownsLoading = undefined;
        });
        if (!op.ahead) return this.cooldownsLoading;
        // Read ahead (or the instance's first read, `first`): the decision goes on with the cache (or without
        // one, and asks again); the read lands in the state when it comes.
        if (loading === undefined) {
          const at = this.config.now();
          this.cooldownsLoading.then((read) => cacheCooldownsRead(this.state, read, at)).catch(() => undefined);
        }
        return undefined;
      }
      case 'readBucket':
        return this.store.readBucket(op.owner);
      case 'writeBucket': {
        const outcome = await this.store.writeBucket(op.owner, op.update, op.now);
        if (!outcome.ok) this.counts.conditionFailures++;
        return outcome;
      }
      case 'putCooldown':
        return this.store.putCooldown(op.record, op.now);
      case 'lock':
        held.set(op.owner, await this.locks.acquire(op.owner));
        return undefined;
      case 'unlock':
        held.get(op.owner)?.();
        held.delete(op.owner);
        return undefined;
    }
  }

  /** Runs a decision to its end, awaiting each operation; a failed one is thrown into the decision. */
  private async run<T>(ops: PoolOps<T>): Promise<T> {
    const held = new Map<string, () => void>();
    try {
      let step = ops.next();
      while (!step.done) {
        let answer: unknown;
        try {
          answer = await this.perform(step.value, held);
        } catch (error) {
          step = ops.throw(error);
          continue;
        }
        step = ops.next(answer);
      }
      return step.value;
    } finally {
      for (const release of held.values()) release();
    }
  }

  /** Wakes every acquire waiting for a first call's answer (see `bucket/first-calls.ts`). */
  private probeEnded(): void {
    for (const wake of [...this.probeWaiters]) wake();
  }

  /** Resolves when some first call answers, or after `ms`. */
  private async waitForProbe(ms: number): Promise<void> {
    const answered = new AbortController();
    const wake = (): void => answered.abort();
    this.probeWaiters.add(wake);
    try {
      await this.sleep(ms, answered.signal);
    } catch {
      // woken by a first call's answer
    } finally {
      this.probeWaiters.delete(wake);
    }
  }

  /**
   * The take of one call, made with the others that meet it in this instance
   * (`decisions/group-take.ts`): the first acquire starts a group at once (after the current tick, so
   * the acquires of that tick join it); acquires that come while a group is being written form the next one.
   */
  private takeInGroup({ estimatedTokens, flow }: KeyRequest, windowEnd: number): Promise<Taken> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ estimatedTokens, flow, windowEnd, resolve, reject });
      if (!this.grouping) void this.takeGroups();
    });
  }

  /** The bucket shard of the next group (`chooseShard`): the last one, unless another holds more as far as this instance knows. */
  private nextShard(): PoolConfig<ProviderKey> {
    this.shard = chooseShard(this.configs, this.state, this.config.now(), this.shard, this.random);
    return this.configs[this.shard]!;
  }

  /** Runs groups until no acquire waits, each on the shard {@link nextShard} chooses. */
  private async takeGroups(): Promise<void> {
    this.grouping = true;
    try {
      await Promise.resolve();
      while (this.waiting.length > 0) {
        const group = this.waiting.splice(0, AWS_LIMITS.maxBatchEntries); // at most an SQS batch's calls
        const now = this.config.now();
        const requests = group.map((w) => ({ estimatedTokens: w.estimatedTokens, bookWithinMs: Math.max(0, w.windowEnd - now), flow: w.flow }));
        const config = this.nextShard();
        try {
          const answers = await this.run(acquireGroupOps(config, this.state, requests));
          for (const [i, w] of group.entries()) w.resolve({ answer: answers[i]!, config });
        } catch (error) {
          for (const w of group) w.reject(error);
        }
      }
    } finally {
      this.grouping = false;
    }
  }

  /**
   * A key for one call, or a denial with the time to come back (and whether the lane is out). A take
   * passed over owners only because their first call is in flight waits for that answer within its
   * booking window (`bookWithinMs`), then takes again.
   */
  async acquire(request: KeyRequest): Promise<KeyAdmission> {
    const windowEnd = this.config.now() + (request.bookWithinMs ?? 0);
    let { answer, config } = await this.takeInGroup(request, windowEnd);
    let waitedMs = 0;
    while (!answer.admitted && answer.probing && windowEnd - this.config.now() > 0) {
      const started = performance.now();
      const now = this.config.now();
      const due = Math.min(windowEnd, answer.retryAt) - now;
      await this.waitForProbe(Math.max(1, due * (1 - this.probeWaitShare)));
      waitedMs += performance.now() - started;
      ({ answer, config } = await this.takeInGroup(request, windowEnd));
    }
    const waited = waitedMs > 0 ? { waitedMs } : {};
    this.counts.takes++;
    const laneCapacity = answer.capacity ? { laneCapacity: capacityState(answer.capacity) } : {};
    if (!answer.admitted) {
      const { laneOut } = answer;
      return {
        admitted: false,
        retryAt: new Date(answer.retryAt),
        detail: answer.detail,
        ...(laneOut ? { laneOut: { until: new Date(laneOut.until), reason: laneOut.reason } } : {}),
        ...waited,
        ...laneCapacity,
      };
    }
    const { key, cost, startAt } = answer;
    const grantedAt = this.config.now();
    let settled = false;
    return {
      admitted: true,
      key,
      ...(startAt > this.config.now() ? { startAt: new Date(startAt) } : {}),
      ...waited,
      ...laneCapacity,
      settle: async (usage: KeyUsage | null) => {
        if (settled) return;
        settled = true;
        // No answer (the call failed or never went): the owner's first call, if this was it, proved nothing.
        const callMs = this.config.now() - Math.max(startAt, grantedAt);
        const ops = usage === null ? releaseOps(config, this.state, key.quotaOwner) : settleOps(config, this.state, key.quotaOwner, cost.tokens, usage, callMs);
        await this.run(ops).catch(() => undefined);
        this.probeEnded();
      },
      coolingUntil: () => {
        const known = this.state.cooldowns;
        const blocker = known === undefined ? undefined : blockerOf(key, known, this.config.now());
        return blocker === undefined ? undefined : new Date(blocker.until);
      },
    };
  }

  /** How many keys stay usable once `key` (or its quota owner) cools as `target` says (a fresh read). */
  async keysLeftAfter(key: ProviderKey, target: CooldownTarget): Promise<number | undefined> {
    return this.run(keysLeftOps(this.config, this.state, key, target));
  }

  /** Records the policy's cooldown, so no consumer spends a call to learn it again. */
  async cool(key: ProviderKey, cooldown: Cooldown): Promise<CoolOutcome> {
    // An invalid key is recorded with its secret's fingerprint, so a replaced secret lifts the cooldown.
    const fingerprint = cooldown.reason === 'auth' && key.secret ? secretFingerprint(key.secret) : undefined;
    try {
      return await this.run(coolOps(this.config, this.state, key, cooldown, fingerprint));
    } finally {
      this.probeEnded();
    }
  }

  /** The lane's capacity as every consumer recorded it (a fresh read of the cooldowns). */
  async laneCapacity(): Promise<LaneCapacityState | null> {
    const capacity = await this.run(laneCapacityOps(this.config, this.state));
    return capacity ? capacityState(capacity) : null;
  }

  /** The lane's state as every consumer recorded it: when every key is out for a long reset, until when. */
  async laneOut(): Promise<{ until: Date; reason: LaneOutReason } | null> {
    const out = laneOutOf(await this.run(laneCapacityOps(this.config, this.state)));
    return out ? { until: new Date(out.until), reason: out.reason } : null;
  }
}

function capacityState(capacity: LaneCapacity): LaneCapacityState {
  return { share: capacity.share, until: new Date(capacity.until), reason: capacity.reason };
}
