/**
 * Admission for strategy (c), synchronous: the algorithm of `lib/admission/key-pool.ts`
 * (`SharedKeyPool.acquire` / `cool` / `keysLeftAfter` / `laneOut`) run over the admission module's
 * own pure functions (`takeFromBucket`, `adjustTokens`, `withCooldown` from `bucket.ts`;
 * `chooseKeys`, `keysLeftAfter`, `laneOutUntil`, `addCooldown` from `choice.ts`; the bucket limits
 * from `settings.ts`), with the rate-state table replaced by an in-memory store that answers at once.
 *
 * What is kept from the real pool: one pool per consumer instance, each with its own cooldown cache
 * (`cooldownCacheMs`), its own last-seen bucket state per quota owner and its own output-token
 * estimate learned from the usage its calls report; a denied call reserves on the owner whose next
 * free slot comes first; every key out for a long reset (cooling, or daily quota spent in its
 * bucket) makes the denial say the lane is out; a take is a conditional
 * write that fails when another instance wrote since (the failed write returns the current bucket
 * and the take is recomputed); denials reserve the next slot; every store call is counted as the
 * DynamoDB request units it would consume (a failed conditional write still consumes a write unit).
 * What is idealized: the store has no latency and writes never race inside one instant, so a take
 * needs at most two writes here where the real table may need more under contention.
 *
 * The SharedKeyPool itself is asynchronous (a promise per store call): running 1,000 instances of
 * it at a million jobs would cost more wall time than the whole simulation, hence this mirror. If
 * `key-pool.ts` changes its algorithm, this file must follow.
 */
import { adjustTokens, takeFromBucket, withCooldown, type BucketCost, type BucketLimits, type BucketState, type TakeVerdict } from '../admission/bucket.js';
import { addCooldown, chooseKeys, keysLeftAfter, laneOutUntil, type CooldownRecord, type CooldownSnapshot, type KeyRef } from '../admission/choice.js';
import { DAILY_PAUSE_MIN_WINDOWS } from '../admission/key-pool.js';
import { admissionSettings, bucketLimitsFor, learnOutputEstimate, type AdmissionSettings } from '../admission/settings.js';
import type { LaneConfig } from '../config/lanes.js';
import type { Cooldown } from '../policy/index.js';
import type { KeyLimits } from './provider-model.js';

/** DynamoDB request units admission spent. */
export interface AdmissionCounters {
  /** Strongly consistent GetItem calls (1 read request unit each, items < 4 KB). */
  cooldownReads: number;
  /** Conditional bucket writes that succeeded. */
  bucketWrites: number;
  /** Conditional bucket writes that failed (another instance wrote first); still 1 write unit each. */
  bucketConflicts: number;
  /** Cooldown puts (conditional; 1 write unit each). */
  cooldownWrites: number;
  grants: number;
  denials: number;
  /** Takes given up after `maxBucketAttempts` conflicts. */
  contended: number;
}

/** The lane's keys as admission sees them: `key-1` … `key-N`, each its own quota owner. */
export function simKeys(count: number): KeyRef[] {
  return Array.from({ length: count }, (_, i) => ({ id: `key-${i + 1}`, quotaOwner: `owner-${i + 1}` }));
}

const EMPTY: CooldownSnapshot = { keys: new Map(), owners: new Map() };

/** Admission shared by `consumers` instances of one lane. */
export class AdmissionModel {
  readonly keys: readonly KeyRef[];
  readonly limits: BucketLimits;
  readonly settings: AdmissionSettings;
  readonly counters: AdmissionCounters = { cooldownReads: 0, bucketWrites: 0, bucketConflicts: 0, cooldownWrites: 0, grants: 0, denials: 0, contended: 0 };
  /** After a denial: when to come back (epoch ms). */
  retryAt = 0;
  /** After a denial: when every key is out for a long reset, until when (else `null`). */
  laneOut: { until: number; reason: 'quota_exhausted' | 'billing' } | null = null;
  /** After a grant: the tokens taken (to settle later). */
  grantedTokens = 0;

  private readonly ownerIndex = new Map<string, number>();
  private readonly keyOwner: Int32Array;
  /** The store: cooldowns and buckets as the table holds them. */
  private storeCooldowns: CooldownSnapshot = EMPTY;
  private readonly storeBuckets: (BucketState | undefined)[];
  /** Per instance: the cached cooldowns and when they were read. */
  private readonly snapshots: (CooldownSnapshot | undefined)[];
  private readonly snapshotAt: Float64Array;
  private readonly cursors: Int32Array;
  /** Per instance × owner: the bucket last seen, and whether one was seen at all. */
  private readonly seen: (BucketState | undefined)[];
  private readonly known: Uint8Array;
  private readonly owners: number;
  /** Per instance: the output-token estimate (SharedKeyPool.outputTokenEstimate). */
  private readonly outputEstimates: Float64Array;

  constructor(options: { keys: number; limits: KeyLimits; consumers: number; settings?: Partial<AdmissionSettings> }) {
    this.keys = simKeys(options.keys);
    this.settings = admissionSettings(options.settings);
    this.limits = bucketLimitsFor({ provider: { limits: options.limits } } as unknown as Pick<LaneConfig, 'provider'>, this.settings);
    this.keyOwner = new Int32Array(this.keys.length);
    this.keys.forEach((key, i) => {
      if (!this.ownerIndex.has(key.quotaOwner)) this.ownerIndex.set(key.quotaOwner, this.ownerIndex.size);
      this.keyOwner[i] = this.ownerIndex.get(key.quotaOwner)!;
    });
    this.owners = this.ownerIndex.size;
    this.storeBuckets = new Array(this.owners).fill(undefined);
    this.snapshots = new Array(options.consumers).fill(undefined);
    this.snapshotAt = new Float64Array(options.consumers).fill(-Infinity);
    this.cursors = new Int32Array(options.consumers);
    this.seen = new Array(options.consumers * this.owners).fill(undefined);
    this.known = new Uint8Array(options.consumers * this.owners);
    const { outputTokenEstimate, outputTokenEstimateMin, outputTokenEstimateMax } = this.settings;
    this.outputEstimates = new Float64Array(options.consumers).fill(Math.min(outputTokenEstimateMax, Math.max(outputTokenEstimateMin, outputTokenEstimate)));
  }

  /** Instance `consumer`'s output-token estimate now. */
  outputEstimateOf(consumer: number): number {
    return this.outputEstimates[consumer]!;
  }

  /** The instance's cooldowns, re-read from the store when its cache is older than `cooldownCacheMs`. */
  private cooldowns(consumer: number, now: number): CooldownSnapshot {
    const cached = this.snapshots[consumer];
    if (cached && now - this.snapshotAt[consumer]! < this.settings.cooldownCacheMs) return cached;
    // readCooldowns: one strongly consistent GetItem per key id and per quota owner.
    this.counters.cooldownReads += this.keys.length + this.owners;
    this.snapshots[consumer] = this.storeCooldowns;
    this.snapshotAt[consumer] = now;
    return this.storeCooldowns;
  }

  private learn(consumer: number, record: CooldownRecord, now: number): void {
    const cached = this.snapshots[consumer];
    this.snapshots[consumer] = addCooldown(cached ?? EMPTY, record);
    if (!cached) this.snapshotAt[consumer] = now;
  }

  /** SharedKeyPool.update: a conditional write of `change`'s state, recomputed after a conflict. */
  private update<T>(consumer: number, owner: number, now: number, change: (state: BucketState | undefined) => { result: T; write?: BucketState | undefined }): T | 'contended' {
    const slot = consumer * this.owners + owner;
    for (let attempt = 0; attempt < this.settings.maxBucketAttempts; attempt++) {
      const known = this.known[slot] === 1;
      const cached = this.seen[slot];
      const { result, write } = change(cached);
      if (write === undefined) return result;
      const expected = known ? cached?.version : undefined;
      const stored = this.storeBuckets[owner];
      const ok = expected === undefined ? stored === undefined : stored !== undefined && stored.version === expected;
      this.known[slot] = 1;
      if (ok) {
        this.counters.bucketWrites++;
        this.storeBuckets[owner] = write;
        this.seen[slot] = write;
        return result;
      }
      this.counters.bucketConflicts++;
      this.seen[slot] = stored;
    }
    this.counters.contended++;
    return 'contended';
  }

  private take(consumer: number, owner: number, cost: BucketCost, reserve: boolean, now: number): TakeVerdict | 'contended' {
    const attempt = (): TakeVerdict | 'contended' =>
      this.update(consumer, owner, now, (state) => {
        const verdict = takeFromBucket(state, this.limits, cost, now, { reserve });
        if (!verdict.admitted && (!reserve || verdict.limitedBy === 'cooldown')) return { result: verdict };
        return { result: verdict, write: verdict.next };
      });
    const verdict = attempt();
    if (verdict === 'contended' || verdict.admitted || verdict.limitedBy !== 'cooldown') return verdict;
    // SharedKeyPool.take: a cooldown may have been lifted since the bucket was cached: read it (a GetItem).
    this.counters.cooldownReads++;
    const slot = consumer * this.owners + owner;
    this.seen[slot] = this.storeBuckets[owner];
    this.known[slot] = 1;
    return attempt();
  }

  /**
   * SharedKeyPool.acquire for instance `consumer` at `now`: the index of the granted key, or -1
   * with {@link retryAt} and {@link laneOut} set.
   */
  acquire(consumer: number, estimatedTokens: number, now: number): number {
    const snapshot = this.cooldowns(consumer, now);
    const choice = chooseKeys(this.keys, this.cursors[consumer]!, snapshot, now);
    const cost: BucketCost = { requests: 1, tokens: Math.max(0, estimatedTokens) + Math.round(this.outputEstimates[consumer]!) };
    // Billing waits for a person, who may resume any time: re-check after a while, not at its end.
    const billingRecheckAt = now + this.settings.billingRecheckMs;
    const dueOf = (until: number, reason: string): number => (reason === 'billing' ? Math.min(until, billingRecheckAt) : until);
    let coolingRetry = Infinity;
    for (const c of choice.cooling) coolingRetry = Math.min(coolingRetry, dueOf(c.blocker.until, c.blocker.reason));
    let bestOwner = -1;
    let bestDue = Infinity;
    let dailyOut: Map<string, number> | undefined;
    const pauseMinMs = DAILY_PAUSE_MIN_WINDOWS * this.limits.windowMs;
    let tried = 0; // bit set of owners tried (owners < 31 in any sane lane)
    for (const { key, index } of choice.free) {
      const owner = this.keyOwner[index]!;
      if (owner < 31 && (tried & (1 << owner)) !== 0) continue;
      if (owner < 31) tried |= 1 << owner;
      const verdict = this.take(consumer, owner, cost, false, now);
      if (verdict === 'contended') continue;
      if (verdict.admitted) {
        this.cursors[consumer] = index + 1;
        return this.grant(index, cost);
      }
      if (verdict.limitedBy === 'cooldown' && verdict.next.cooldown) {
        this.learn(consumer, { scope: 'quota_owner', id: key.quotaOwner, reason: verdict.next.cooldown.reason, until: verdict.next.cooldown.until }, now);
        coolingRetry = Math.min(coolingRetry, dueOf(verdict.next.cooldown.until, verdict.next.cooldown.reason));
        continue;
      }
      if (verdict.limitedBy === 'daily' && verdict.dueAt - now >= pauseMinMs) (dailyOut ??= new Map()).set(key.quotaOwner, verdict.dueAt);
      if (verdict.retryAt < bestDue) {
        bestDue = verdict.retryAt;
        bestOwner = owner;
      }
    }
    let retryAt = coolingRetry;
    if (bestOwner >= 0) {
      const verdict = this.take(consumer, bestOwner, cost, true, now);
      if (verdict !== 'contended' && verdict.admitted) {
        const granted = choice.free.find((f) => this.keyOwner[f.index] === bestOwner)!;
        this.cursors[consumer] = granted.index + 1;
        return this.grant(granted.index, cost);
      }
      let slot = verdict === 'contended' ? bestDue : verdict.retryAt;
      if (verdict !== 'contended') {
        const owner = this.keys[choice.free.find((f) => this.keyOwner[f.index] === bestOwner)!.index]!.quotaOwner;
        if (verdict.limitedBy === 'daily' && verdict.dueAt - now >= pauseMinMs) (dailyOut ??= new Map()).set(owner, verdict.dueAt);
        else dailyOut?.delete(owner);
        if (verdict.limitedBy === 'cooldown' && verdict.next.cooldown) {
          this.learn(consumer, { scope: 'quota_owner', id: owner, reason: verdict.next.cooldown.reason, until: verdict.next.cooldown.until }, now);
          slot = dueOf(verdict.next.cooldown.until, verdict.next.cooldown.reason);
        }
      }
      if (slot < retryAt) retryAt = slot;
    }
    if (!Number.isFinite(retryAt)) retryAt = now + this.limits.windowMs / Math.max(1, this.limits.requestsPerWindow);
    this.counters.denials++;
    this.retryAt = Math.max(now, retryAt);
    this.laneOut = laneOutUntil(this.keys, this.snapshots[consumer] ?? snapshot, now, dailyOut);
    return -1;
  }

  private grant(keyIndex: number, cost: BucketCost): number {
    this.counters.grants++;
    this.grantedTokens = cost.tokens;
    return keyIndex;
  }

  /** The grant's settle: learns the output-token estimate, corrects the owner's token level by the real usage. */
  settle(consumer: number, keyIndex: number, takenTokens: number, inputTokens: number, outputTokens: number, now: number): void {
    this.outputEstimates[consumer] = learnOutputEstimate(this.outputEstimates[consumer]!, outputTokens, this.settings);
    const delta = inputTokens + outputTokens - takenTokens;
    if (Math.abs(delta) < 1) return;
    this.update(consumer, this.keyOwner[keyIndex]!, now, (state) => ({ result: null, write: state === undefined ? undefined : adjustTokens(state, this.limits, delta, now) }));
  }

  /** SharedKeyPool.keysLeftAfter: keys still usable once `keyIndex` (or its owner) cools. */
  keysLeftAfter(consumer: number, keyIndex: number, target: { scope: 'key' | 'quota_owner'; reason: Cooldown['reason'] }, now: number): number {
    const key = this.keys[keyIndex]!;
    const record: CooldownRecord =
      target.scope === 'key'
        ? { scope: 'key', id: key.id, reason: target.reason, until: Number.MAX_SAFE_INTEGER }
        : { scope: 'quota_owner', id: key.quotaOwner, reason: target.reason, until: Number.MAX_SAFE_INTEGER };
    return keysLeftAfter(this.keys, this.cooldowns(consumer, now), record, now);
  }

  /** SharedKeyPool.cool: records the policy's cooldown in the instance's cache and the store. */
  cool(consumer: number, keyIndex: number, cooldown: Cooldown, now: number): void {
    const until = Date.parse(cooldown.until);
    if (!Number.isFinite(until)) return;
    const key = this.keys[keyIndex]!;
    const record: CooldownRecord =
      cooldown.scope === 'key'
        ? { scope: 'key', id: key.id, reason: cooldown.reason, until }
        : { scope: 'quota_owner', id: key.quotaOwner, reason: cooldown.reason, until };
    this.learn(consumer, record, now);
    this.counters.cooldownWrites++;
    this.storeCooldowns = addCooldown(this.storeCooldowns, record);
    if (record.scope === 'quota_owner') {
      this.update(consumer, this.keyOwner[keyIndex]!, now, (state) => {
        const next = withCooldown(state, this.limits, { until, reason: cooldown.reason }, now);
        return { result: null, write: next === state ? undefined : next };
      });
    }
  }

  /** SharedKeyPool.laneOut: when every key is out for a long reset (as the instance knows it). */
  laneOutFor(consumer: number, now: number): { until: number; reason: 'quota_exhausted' | 'billing' } | null {
    return laneOutUntil(this.keys, this.cooldowns(consumer, now), now);
  }
}
