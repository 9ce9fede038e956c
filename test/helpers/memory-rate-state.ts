/**
 * An in-memory {@link RateStateStore} with the DynamoDB table's rules (a bucket update lands only
 * when its condition holds, a failed one returns the current bucket; cooldowns only extend; a pause
 * is claimed only when none has not ended), for unit tests of the key pool without DynamoDB Local.
 */
import { updateInMemory } from '../../lib/admission/bucket/item-update.js';
import { LIVE_BUCKET_SUFFIX, MAX_BUCKET_SHARDS, shardBucketSuffix, type BucketState, type BucketUpdate } from '../../lib/admission/model/bucket.js';
import type { CooldownRecord, CooldownSnapshot, KeyRef } from '../../lib/admission/model/cooldowns.js';
import { replacesLimit, type BucketWrite, type LimitRecord, type PauseRecord, type RateStateStore } from '../../lib/admission/model/store.js';

/** The lane's rate-state table in memory. */
export class MemoryRateStateStore implements RateStateStore {
  /** Cooldowns by `key#<key id>` / `owner#<quota owner>`. */
  readonly cooldowns = new Map<string, CooldownRecord>();
  /** Buckets by quota owner. */
  readonly buckets = new Map<string, BucketState>();
  /** The recorded pause. */
  pause: PauseRecord | undefined;
  /** The recorded limit. */
  limit: LimitRecord | undefined;
  /** Bucket writes that succeeded. */
  writes = 0;
  /** Bucket writes whose condition failed. */
  conflicts = 0;

  async readCooldowns(keys: readonly KeyRef[]): Promise<CooldownSnapshot> {
    const snapshot = { keys: new Map<string, CooldownRecord>(), owners: new Map<string, CooldownRecord>() };
    for (const key of keys) {
      const k = this.cooldowns.get(`key#${key.id}`);
      if (k) snapshot.keys.set(key.id, k);
      const o = this.cooldowns.get(`owner#${key.quotaOwner}`);
      if (o) snapshot.owners.set(key.quotaOwner, o);
    }
    return snapshot;
  }

  async putCooldown(record: CooldownRecord): Promise<void> {
    const id = `${record.scope === 'key' ? 'key' : 'owner'}#${record.id}`;
    const existing = this.cooldowns.get(id);
    if (!existing || existing.until < record.until) this.cooldowns.set(id, record);
  }

  async listCooldowns(): Promise<CooldownRecord[]> {
    return [...this.cooldowns.values()];
  }

  async deleteCooldown(scope: CooldownRecord['scope'], id: string): Promise<void> {
    this.cooldowns.delete(`${scope === 'key' ? 'key' : 'owner'}#${id}`);
  }

  async readBucket(owner: string): Promise<BucketState | undefined> {
    return this.buckets.get(owner);
  }

  async writeBucket(owner: string, update: BucketUpdate): Promise<BucketWrite> {
    const outcome = updateInMemory(this.buckets.get(owner), update);
    if (!outcome.ok) {
      this.conflicts++;
      return outcome;
    }
    this.writes++;
    this.buckets.set(owner, outcome.after);
    return { ok: true, before: outcome.before };
  }

  async clearBucketCooldown(owner: string): Promise<void> {
    // The owner's bucket (shard 0), its live bucket and its other shards, as `DynamoRateStateStore` clears them.
    const ids = [owner + LIVE_BUCKET_SUFFIX, ...Array.from({ length: MAX_BUCKET_SHARDS }, (_, shard) => owner + shardBucketSuffix(shard))];
    for (const id of ids) {
      const stored = this.buckets.get(id);
      if (!stored) continue;
      const { cooldown: _cleared, ...rest } = stored;
      this.buckets.set(id, { ...rest, version: stored.version + 1 });
    }
  }

  async claimPause(record: PauseRecord, now: number): Promise<boolean> {
    if (this.pause && this.pause.until > now) return false;
    this.pause = record;
    return true;
  }

  async claimLimit(record: LimitRecord, now: number): Promise<boolean> {
    if (!replacesLimit(this.limit, record, now)) return false;
    this.limit = record;
    return true;
  }

  async readLimit(): Promise<LimitRecord | undefined> {
    return this.limit;
  }

  async clearLimit(): Promise<void> {
    this.limit = undefined;
  }

  async readPause(): Promise<PauseRecord | undefined> {
    return this.pause;
  }

  async clearPause(): Promise<void> {
    this.pause = undefined;
  }
}
