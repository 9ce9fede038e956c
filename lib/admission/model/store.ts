/**
 * What admission needs from the lane's rate-state table ({@link RateStateStore}): the port the
 * asynchronous driver, the lane pause and the key ring use. `DynamoRateStateStore`
 * (`dynamodb/rate-state.ts`) implements it on DynamoDB; the tests' and the simulator's tables in memory.
 */
import type { LaneLimitReason, LaneOutReason } from '../../policy/index.js';
import type { BucketState, BucketUpdate } from './bucket.js';
import type { CooldownRecord, CooldownSnapshot, KeyRef } from './cooldowns.js';

/**
 * Why a lane pauses: every key is out until a quota's reset (`quota_exhausted`) or until a person acts
 * (`billing`, `auth`), or the lane's configuration is unusable (`configuration`: its provider secret is
 * unset or malformed).
 */
export type LanePauseReason = LaneOutReason | 'configuration';

/** The lane's pause, as recorded. */
export interface PauseRecord {
  /** Epoch ms the lane resumes (or a person resumes it sooner). */
  until: number;
  reason: LanePauseReason;
  /** Epoch ms the pause was claimed. */
  pausedAt: number;
}

/**
 * Whether the lane limit `next` replaces `held` (the one recorded, or known) at `now`: when none is held or it
 * has ended, or `next` is lower — or as low and longer, for owners out (they come back later than recorded). A
 * limit for slots booked ahead replaces only a higher one for owners out: each far denial carries its own
 * share (its record's booking window), and replacing one such limit by the next would change the mapping and
 * its restore schedule at every denial; it ends after 900 s, and the next far denial limits the lane anew.
 */
export function replacesLimit(
  held: Pick<LimitRecord, 'share' | 'until' | 'reason'> | undefined,
  next: Pick<LimitRecord, 'share' | 'until' | 'reason'>,
  now: number,
): boolean {
  if (held === undefined || held.until <= now) return true;
  if (next.reason === 'booked_ahead') return held.reason !== 'booked_ahead' && next.share < held.share;
  return next.share < held.share || (next.share === held.share && next.until > held.until);
}

/** The lane's reduced concurrency, as recorded: at `share` of it until `until` (epoch ms), for `reason`. */
export interface LimitRecord {
  share: number;
  until: number;
  reason: LaneLimitReason;
  /** Epoch ms the limit was claimed. */
  limitedAt: number;
}

/**
 * Result of a conditional bucket update: applied, with the bucket it was applied to (`undefined`: none
 * was stored); or not (its condition did not hold), with the bucket as it is.
 */
export type BucketWrite = { ok: true; before: BucketState | undefined } | { ok: false; current: BucketState | undefined };

/** The cooldowns and the buckets of {@link RateStateStore.readCooldownsAndBuckets}: a bucket id absent from `buckets` has none stored. */
export interface CooldownsAndBuckets {
  cooldowns: CooldownSnapshot;
  buckets: Map<string, BucketState>;
}

/** What admission needs from the rate-state table. */
export interface RateStateStore {
  /** The cooldowns of these keys and their quota owners (strongly consistent reads), as a new snapshot object every call. */
  readCooldowns(keys: readonly KeyRef[]): Promise<CooldownSnapshot>;
  /** Records a cooldown, unless a longer one is already recorded. */
  putCooldown(record: CooldownRecord, now: number): Promise<void>;
  /** Every cooldown recorded (for the resume command and tests). */
  listCooldowns(): Promise<CooldownRecord[]>;
  /** Deletes one cooldown. */
  deleteCooldown(scope: CooldownRecord['scope'], id: string): Promise<void>;
  /** A quota owner's bucket, or `undefined` when none is stored. */
  readBucket(owner: string): Promise<BucketState | undefined>;
  /**
   * {@link readCooldowns} of `keys` and {@link readBucket} of each of `bucketIds` (quota owners, or their
   * shards' and live sides' bucket ids) in one request where the table allows it (an instance's priming:
   * one round trip, not one per item). Optional: without it the reads are made one by one.
   */
  readCooldownsAndBuckets?(keys: readonly KeyRef[], bucketIds: readonly string[]): Promise<CooldownsAndBuckets>;
  /** Applies `update` to the owner's bucket item if its condition holds (`bucket/item-update.ts` says how). */
  writeBucket(owner: string, update: BucketUpdate, now: number): Promise<BucketWrite>;
  /**
   * Removes the cooldown copy from a quota owner's bucket (a person resumed it), and from its live
   * side's bucket (`liveBucketId`) and its bucket shards (`shardBucketSuffix`) too.
   */
  clearBucketCooldown(owner: string): Promise<void>;
  /** Claims the lane pause; `false` when a pause that has not ended is already recorded. */
  claimPause(record: PauseRecord, now: number): Promise<boolean>;
  /** The recorded pause, if any (ended or not). */
  readPause(): Promise<PauseRecord | undefined>;
  /** Removes the pause record. */
  clearPause(): Promise<void>;
  /**
   * Claims the lane's reduced concurrency: `true` when `record` replaces the one recorded
   * ({@link replacesLimit}); else `false` (another consumer limited the lane so).
   */
  claimLimit(record: LimitRecord, now: number): Promise<boolean>;
  /** The recorded limit, if any (ended or not). */
  readLimit(): Promise<LimitRecord | undefined>;
  /** Removes the limit record. */
  clearLimit(): Promise<void>;
}
