/**
 * The shared key pool: every consumer of a lane uses one, and they share what they learn through
 * the lane's rate-state table. For each model call it goes round robin over the keys that are not
 * cooling and takes the call's cost from the key's quota-owner bucket with a conditional update;
 * when no key can take the call it says when the earliest one is due, so the job is deferred without
 * calling the provider.
 *
 * A denied call reserves the next free slot on the owner whose slot comes first (the bucket's
 * `retryAt`, which counts the slots already promised on it), so denied calls spread over every key's
 * refill instead of queueing on one. When every key is out for a long reset — cooling for a daily
 * quota or billing, or with its daily quota spent in its bucket until a reset at least 15 windows
 * away (SQS's longest delay; a shorter wait is one deferral anyway) — the denial says the lane is out.
 *
 * In memory (per consumer instance): the cooldowns read, for `cooldownCacheMs`; the last bucket
 * state seen per quota owner (a take is one conditional write; a stale cache costs one failed write
 * that returns the current bucket, never a separate read); and the output-token estimate, learned
 * from the usage each call reports (see `AdmissionSettings.outputTokenEstimate`). Takes on one owner
 * are serialized within the instance, so only other instances contend.
 */
import type { Cooldown } from '../policy/index.js';
import type { CooldownTarget, KeyAdmission, KeyPool, KeyRequest, KeyUsage, ProviderKey } from './keys.js';
import { NoProviderKeyError } from './keys.js';
import { adjustTokens, takeFromBucket, withCooldown, type BucketCost, type BucketLimits, type BucketState, type TakeVerdict } from './bucket.js';
import { addCooldown, chooseKeys, keysLeftAfter, laneOutUntil, type CooldownRecord, type CooldownSnapshot } from './choice.js';
import type { RateStateStore } from './rate-state.js';
import { learnOutputEstimate, type AdmissionSettings } from './settings.js';

/** Construction options of {@link SharedKeyPool}. */
export interface SharedKeyPoolOptions {
  keys: readonly ProviderKey[];
  store: RateStateStore;
  /** Each quota owner's bucket (see `bucketLimitsFor`). */
  limits: BucketLimits;
  settings: AdmissionSettings;
  /** Clock in epoch ms (default `Date.now`). */
  now?: () => number;
}

/** Cooldown scope of the policy → the record's. */
function recordOf(key: ProviderKey, cooldown: Pick<Cooldown, 'scope' | 'reason'> & { until: number }): CooldownRecord {
  return cooldown.scope === 'key'
    ? { scope: 'key', id: key.id, reason: cooldown.reason, until: cooldown.until }
    : { scope: 'quota_owner', id: key.quotaOwner, reason: cooldown.reason, until: cooldown.until };
}

/**
 * A key whose owner's daily quota is spent counts as out for the lane pause only when its reset is at
 * least this many windows away: 15 minutes in AWS, SQS's longest `DelaySeconds` (a shorter wait is
 * one deferral, no bouncing to save).
 */
export const DAILY_PAUSE_MIN_WINDOWS = 15;

/** A {@link KeyPool} backed by the lane's rate-state table. */
export class SharedKeyPool implements KeyPool {
  readonly size: number;
  private readonly keys: readonly ProviderKey[];
  private readonly store: RateStateStore;
  private readonly limits: BucketLimits;
  private readonly settings: AdmissionSettings;
  private readonly now: () => number;
  private cursor = 0;
  private snapshot: { at: number; value: CooldownSnapshot } | undefined;
  private snapshotLoading: Promise<CooldownSnapshot> | undefined;
  /** Last bucket state seen per owner; absent: unknown (the first write finds out). */
  private readonly buckets = new Map<string, BucketState | undefined>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private outputEstimate: number;

  constructor(options: SharedKeyPoolOptions) {
    if (options.keys.length === 0) throw new NoProviderKeyError('no provider key configured for this lane');
    this.keys = options.keys;
    this.size = options.keys.length;
    this.store = options.store;
    this.limits = options.limits;
    this.settings = options.settings;
    this.now = options.now ?? Date.now;
    this.outputEstimate = Math.min(this.settings.outputTokenEstimateMax, Math.max(this.settings.outputTokenEstimateMin, this.settings.outputTokenEstimate));
  }

  /** Output tokens this instance assumes for a call before it answers (learned from reported usage). */
  get outputTokenEstimate(): number {
    return this.outputEstimate;
  }

  /** The cooldowns, from the cache while it is fresh. */
  private async cooldowns(fresh = false): Promise<CooldownSnapshot> {
    const now = this.now();
    if (!fresh && this.snapshot && now - this.snapshot.at < this.settings.cooldownCacheMs) return this.snapshot.value;
    this.snapshotLoading ??= this.store
      .readCooldowns(this.keys)
      .then((value) => {
        this.snapshot = { at: now, value };
        return value;
      })
      .finally(() => {
        this.snapshotLoading = undefined;
      });
    return this.snapshotLoading;
  }

  private learn(record: CooldownRecord): void {
    if (this.snapshot) this.snapshot = { at: this.snapshot.at, value: addCooldown(this.snapshot.value, record) };
    else this.snapshot = { at: this.now(), value: addCooldown({ keys: new Map(), owners: new Map() }, record) };
  }

  /** Runs `fn` after every earlier call on `owner` in this instance finished. */
  private serialized<T>(owner: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(owner) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(owner, tail);
    void tail.then(() => {
      if (this.locks.get(owner) === tail) this.locks.delete(owner);
    });
    return run;
  }

  /**
   * Applies `change` to the owner's bucket with a conditional write, retrying on conflicts with the
   * bucket the failed write returned. `change` returns its result and the state to write, or no
   * state when there is nothing to write.
   */
  private async update<T>(owner: string, change: (state: BucketState | undefined, now: number) => { result: T; write?: BucketState | undefined }): Promise<T | 'contended'> {
    return this.serialized(owner, async () => {
      for (let attempt = 0; attempt < this.settings.maxBucketAttempts; attempt++) {
        const known = this.buckets.has(owner);
        const cached = this.buckets.get(owner);
        const now = this.now();
        const { result, write } = change(cached, now);
        if (write === undefined) return result;
        const outcome = await this.store.writeBucket(owner, write, known ? cached?.version : undefined, now);
        if (outcome.ok) {
          this.buckets.set(owner, write);
          return result;
        }
        this.buckets.set(owner, outcome.current);
      }
      return 'contended' as const;
    });
  }

  private async take(owner: string, cost: BucketCost, reserve: boolean): Promise<TakeVerdict | 'contended'> {
    const attempt = (): Promise<TakeVerdict | 'contended'> =>
      this.update(owner, (state, now) => {
        const verdict = takeFromBucket(state, this.limits, cost, now, { reserve });
        // A denial without a reservation writes nothing: the cached bucket can only be fuller than
        // the stored one (others take), so "not enough" holds for the stored one too.
        if (!verdict.admitted && (!reserve || verdict.limitedBy === 'cooldown')) return { result: verdict };
        return { result: verdict, write: verdict.next };
      });
    const verdict = await attempt();
    if (verdict === 'contended' || verdict.admitted || verdict.limitedBy !== 'cooldown') return verdict;
    // A cooldown may have been lifted (a person resumed the lane) since this bucket was cached: read it.
    this.buckets.set(owner, await this.store.readBucket(owner));
    return attempt();
  }

  async acquire(request: KeyRequest): Promise<KeyAdmission> {
    const snapshot = await this.cooldowns();
    const started = this.now();
    const choice = chooseKeys(this.keys, this.cursor, snapshot, started);
    const cost: BucketCost = { requests: 1, tokens: Math.max(0, request.estimatedTokens) + Math.round(this.outputEstimate) };
    // Billing waits for a person, who may resume any time: re-check after a while, not at its end.
    const dueOf = (until: number, reason: string): number => (reason === 'billing' ? Math.min(until, started + this.settings.billingRecheckMs) : until);
    let coolingRetry = choice.cooling.reduce((min, c) => Math.min(min, dueOf(c.blocker.until, c.blocker.reason)), Infinity);
    let best: { owner: string; retryAt: number } | undefined;
    let contendedRetry = Infinity;
    const tried = new Set<string>();
    // Owners whose daily quota is spent until a reset far enough away to pause the lane for.
    const dailyOut = new Map<string, number>();
    const pauseMinMs = DAILY_PAUSE_MIN_WINDOWS * this.limits.windowMs;
    for (const { key, index } of choice.free) {
      if (tried.has(key.quotaOwner)) continue;
      tried.add(key.quotaOwner);
      const verdict = await this.take(key.quotaOwner, cost, false);
      if (verdict === 'contended') {
        // Other consumers are writing this bucket right now: it is busy, not out. Come back after one
        // request slot rather than at some cooling key's (possibly far) reset.
        contendedRetry = started + this.limits.windowMs / Math.max(1, this.limits.requestsPerWindow);
        continue;
      }
      if (verdict.admitted) {
        this.cursor = index + 1;
        return this.grant(key, cost);
      }
      if (verdict.limitedBy === 'cooldown' && verdict.next.cooldown) {
        // Another consumer cooled this owner after our cooldowns were read: learn it.
        this.learn({ scope: 'quota_owner', id: key.quotaOwner, reason: verdict.next.cooldown.reason, until: verdict.next.cooldown.until });
        coolingRetry = Math.min(coolingRetry, dueOf(verdict.next.cooldown.until, verdict.next.cooldown.reason));
        continue;
      }
      if (verdict.limitedBy === 'daily' && verdict.dueAt - started >= pauseMinMs) dailyOut.set(key.quotaOwner, verdict.dueAt);
      // The owner whose next free slot comes first, counting the slots already reserved on it.
      if (!best || verdict.retryAt < best.retryAt) best = { owner: key.quotaOwner, retryAt: verdict.retryAt };
    }
    let retryAt = Math.min(coolingRetry, contendedRetry);
    let detail = best ? 'no budget' : contendedRetry < coolingRetry ? 'bucket contended' : `all ${this.size} key(s) cooling`;
    if (best) {
      // Reserve that slot, so callers denied together come back spread out over every key.
      const verdict = await this.take(best.owner, cost, true);
      if (verdict !== 'contended' && verdict.admitted) {
        const key = choice.free.find((f) => f.key.quotaOwner === best.owner)!;
        this.cursor = key.index + 1;
        return this.grant(key.key, cost);
      }
      let slot = verdict === 'contended' ? best.retryAt : verdict.retryAt;
      if (verdict !== 'contended') {
        // The write read the stored bucket: what it says is fresher than the cached one.
        if (verdict.limitedBy === 'daily' && verdict.dueAt - started >= pauseMinMs) dailyOut.set(best.owner, verdict.dueAt);
        else dailyOut.delete(best.owner);
        if (verdict.limitedBy === 'cooldown' && verdict.next.cooldown) {
          // Another consumer cooled this owner since our cooldowns were read: learn it.
          this.learn({ scope: 'quota_owner', id: best.owner, reason: verdict.next.cooldown.reason, until: verdict.next.cooldown.until });
          slot = dueOf(verdict.next.cooldown.until, verdict.next.cooldown.reason);
        }
      }
      if (slot < retryAt) {
        retryAt = slot;
        detail = verdict === 'contended' ? 'bucket contended' : `no budget (${verdict.limitedBy})`;
      }
    }
    const now = this.now();
    if (!Number.isFinite(retryAt)) retryAt = now + this.limits.windowMs / Math.max(1, this.limits.requestsPerWindow);
    const out = laneOutUntil(this.keys, this.snapshot?.value ?? snapshot, now, dailyOut);
    return {
      admitted: false,
      retryAt: new Date(Math.max(now, retryAt)),
      detail,
      ...(out ? { laneOut: { until: new Date(out.until), reason: out.reason } } : {}),
    };
  }

  private grant(key: ProviderKey, cost: BucketCost): KeyAdmission {
    let settled = false;
    return {
      admitted: true,
      key,
      settle: async (usage: KeyUsage | null) => {
        if (settled || usage === null) return;
        settled = true;
        this.outputEstimate = learnOutputEstimate(this.outputEstimate, usage.outputTokens, this.settings);
        const delta = usage.inputTokens + usage.outputTokens - cost.tokens;
        if (Math.abs(delta) < 1) return;
        await this.update(key.quotaOwner, (state, now) => ({ result: null, write: state === undefined ? undefined : adjustTokens(state, this.limits, delta, now) })).catch(
          () => undefined,
        );
      },
    };
  }

  async keysLeftAfter(key: ProviderKey, target: CooldownTarget): Promise<number | undefined> {
    // Only after a 429: worth a fresh read, so a cooldown another consumer recorded within the cache's
    // lifetime still counts (otherwise the last key out may not see the others and the lane not pause).
    const snapshot = await this.cooldowns(true);
    const now = this.now();
    return keysLeftAfter(this.keys, snapshot, recordOf(key, { ...target, until: Number.MAX_SAFE_INTEGER }), now);
  }

  async cool(key: ProviderKey, cooldown: Cooldown): Promise<void> {
    const until = Date.parse(cooldown.until);
    if (!Number.isFinite(until)) return;
    const record = recordOf(key, { scope: cooldown.scope, reason: cooldown.reason, until });
    this.learn(record);
    await this.store.putCooldown(record, this.now());
    if (record.scope === 'quota_owner') {
      const written = await this.update(key.quotaOwner, (state, now) => {
        const next = withCooldown(state, this.limits, { until, reason: cooldown.reason }, now);
        return { result: 'written' as const, write: next === state ? undefined : next };
      });
      if (written === 'contended') throw new Error(`bucket of ${key.quotaOwner} stayed contended while recording its cooldown`);
    }
  }

  /** The lane's state as this instance knows it: when every key is out for a long reset, until when. */
  async laneOut(): Promise<{ until: Date; reason: 'quota_exhausted' | 'billing' } | null> {
    // Asked only after a quota or billing 429: read what every consumer recorded, not the cache.
    const out = laneOutUntil(this.keys, await this.cooldowns(true), this.now());
    return out ? { until: new Date(out.until), reason: out.reason } : null;
  }
}
