/**
 * The shapes of admission's token buckets, one per quota owner in the rate-state table (and one more
 * per owner for the live side of a reserve): their limits, their stored state, what a call costs and
 * what a lease sets aside. The arithmetic on them is in `bucket/`.
 */
import type { CooldownReason } from '../../policy/index.js';

/** Rates, capacities and refill windows of one bucket. */
export interface BucketLimits {
  /** Requests per window: the refill rate (and, times {@link burstShare}, the bucket's capacity). */
  requestsPerWindow: number;
  /** Tokens per window: the refill rate (and, times {@link burstShare}, the bucket's capacity). */
  tokensPerWindow: number;
  /**
   * The share of a window's requests and tokens the bucket holds at most (0..1, default 1): the safety
   * margin trims the burst, not the rate. Skew and jitter between this bucket and the provider's are
   * an offset in time; a sequence of calls this bucket admits stays within the provider's bucket of
   * the same rate and a whole window's capacity while that offset is under `(1 − burstShare)` of a
   * window (3 s of a minute at 5 %). Trimming the rate instead would leave that share of the quota
   * unused for as long as the lane is busy.
   */
  burstShare?: number | undefined;
  /** Length of the window in ms (60 000 in AWS; the scaled minute locally). */
  windowMs: number;
  /** Requests per day (capacity of the daily level). */
  requestsPerDay: number;
  /** Length of the day in ms (86 400 000 in AWS; 1440 scaled minutes locally). */
  dayMs: number;
  /**
   * How the daily level refills: `fixed` (default) comes back whole at each daily reset;
   * `continuous` refills at `requestsPerDay / dayMs`.
   */
  dailyWindow?: 'fixed' | 'continuous' | undefined;
  /**
   * Where fixed days start, in ms after a multiple of `dayMs` since the epoch (with the AWS day:
   * after 00:00 UTC). Default 0. A reset a provider states replaces it (see `withCooldown` in
   * `bucket/token-bucket.ts`).
   */
  dailyResetOffsetMs?: number | undefined;
  /**
   * The share of its quota owner's limits this bucket admits (default 1): `1 − reserveShare` or
   * `reserveShare` of a reserve's sides, over the queue side's shards. A per-window figure the provider
   * states for the whole owner counts for this bucket at this share (`ratedLimits`).
   */
  ownerShare?: number | undefined;
}

/**
 * The per-window limits a provider stated on an answer, for the whole quota owner (its "minute": the
 * window). Absent figures were not stated.
 */
export interface ProviderLimits {
  requestsPerWindow?: number | undefined;
  tokensPerWindow?: number | undefined;
}

/** How much is left of each level at some time (`levelsAt`). Negative while calls are booked ahead (debt). */
export interface BucketLevels {
  requests: number;
  tokens: number;
  daily: number;
}

/**
 * A bucket as stored. The per-window levels are kept as the time each is **full again** (GCRA's
 * theoretical arrival time of a whole burst): a level at `t` is its capacity less `max(0, fullAt − t)`
 * times its refill rate. A take moves `fullAt` on by the call's cost over the rate — an atomic `ADD`
 * under a condition that is the quota itself (`fullAt` no later than the call still fits), so takes
 * of many consumers all succeed while the quota allows, in any order (`bucket/item-update.ts`).
 */
export interface BucketState {
  /** Epoch ms the requests level is full again (≤ now: full; 0 when never taken). */
  requestsFullAt: number;
  /** Epoch ms the tokens level is full again. */
  tokensFullAt: number;
  /** Continuous daily window: epoch ms the daily level is full again. */
  dailyFullAt?: number | undefined;
  /** Epoch ms until which refills are promised to callers told to come back (0: none). */
  reservedUntil: number;
  /** Counts the writes (each adds one); no write is conditional on it. */
  version: number;
  /**
   * Fixed daily window: epoch ms the day {@link dailyUsed} counts ends (the daily level comes back
   * whole then); later resets follow every `dayMs`. Absent or 0: the configured reset.
   */
  dayResetAt?: number | undefined;
  /** Fixed daily window: requests taken in the day ending at {@link dayResetAt}. */
  dailyUsed?: number | undefined;
  /** Fixed daily window: requests promised to reserved slots in the day ending at {@link reservedDayEnd}. */
  reservedDaily?: number | undefined;
  /** Fixed daily window: the reset that ends the (future) day {@link reservedDaily} counts (0: none). */
  reservedDayEnd?: number | undefined;
  /**
   * The quota owner's cooldown (daily quota, billing, a rate limit of the owner), also kept here so
   * a consumer whose cached cooldowns are stale still learns it on its next take: every take is
   * conditional on the owner not cooling, and a failed one returns this.
   */
  cooldown?: { until: number; reason: CooldownReason } | undefined;
  /** Some call on this owner was answered since it was last cooled for billing or auth (`bucket/first-calls.ts`). */
  proven?: boolean | undefined;
  /** While unproven: epoch ms until which one call's probe holds the owner (0: none). */
  probeUntil?: number | undefined;
  /** Epoch ms of the last rate limit the provider answered on this owner (`bucket/token-bucket.ts`, `rateLimitedUpdate`). */
  rateLimitedAt?: number | undefined;
  /** The share of its configured rates the owner was cut to at {@link rateCutAt}, recovering since (`rateShareAt`). */
  rateCut?: number | undefined;
  /** Epoch ms of the last rate cut. */
  rateCutAt?: number | undefined;
  /**
   * The owner's requests per window as the provider stated them on an answer, kept while below the
   * configured ones (`statedLimitsUpdate`): the owner's takes admit at most that many ({@link BucketLimits.ownerShare} of them in this bucket).
   */
  statedRequests?: number | undefined;
  /** The owner's tokens per window as the provider stated them, kept like {@link statedRequests}. */
  statedTokens?: number | undefined;
  /**
   * The flows on this owner (`bucket/flows.ts`), by flow id: each one's retry timeline (replacing
   * {@link reservedUntil} for the takes that name a flow) and virtual time. Inactive ones are removed by later takes.
   */
  flows?: Record<string, FlowTimeline> | undefined;
}

/**
 * A field of a stored bucket a {@link BucketUpdate} changes or tests: one of {@link BucketState}'s
 * numbers or flags, the cooldown's two (`coolUntil`, `coolReason`), or one clock of a flow
 * (`flow:<id>:until|vt|weight`). Each is a top-level attribute of the bucket's item.
 */
export type BucketField =
  | 'requestsFullAt'
  | 'tokensFullAt'
  | 'dailyFullAt'
  | 'reservedUntil'
  | 'dayResetAt'
  | 'dailyUsed'
  | 'reservedDaily'
  | 'reservedDayEnd'
  | 'coolUntil'
  | 'coolReason'
  | 'proven'
  | 'probeUntil'
  | 'rateLimitedAt'
  | 'rateCut'
  | 'rateCutAt'
  | 'statedRequests'
  | 'statedTokens'
  | `flow:${string}:${'until' | 'vt' | 'weight'}`;

/** A value a bucket field holds. */
export type BucketValue = number | boolean | string;

/** One field's change: set to a value, add a number (a missing field counts as 0), or remove. */
export type FieldChange = { set: BucketValue } | { add: number } | { remove: true };

/**
 * A condition on the stored bucket, as DynamoDB evaluates one: a comparison is false on a missing
 * field (or a missing item); `missing` is true on it.
 */
export type BucketCondition =
  | { field: BucketField; cmp: '<=' | '<' | '>=' | '>' | '=' | '<>'; value: BucketValue }
  | { field: BucketField; missing: true }
  | { any: BucketCondition[] }
  | { all: BucketCondition[] };

/**
 * One conditional update of a bucket item: field changes applied at once if `condition` holds on the
 * stored item (absent: always). Every update also adds one to `version`.
 */
export interface BucketUpdate {
  changes: ReadonlyMap<BucketField, FieldChange>;
  condition?: BucketCondition | undefined;
}

/**
 * A flow of calls that admission shares a binding quota between: the calls of one priority class of
 * one tenant (`extraction/flow.ts` names them), and the flow's weight.
 */
export interface Flow {
  /** Short and stable: the class, and a hash of the tenant. */
  id: string;
  /** Its share of a binding quota against the other backlogged flows' weights (> 0). */
  weight: number;
}

/** One flow on an owner (`bucket/flows.ts`): its retry timeline, its virtual time of service, and its weight. */
export interface FlowTimeline {
  /** Epoch ms until which retry slots are promised to the flow's denied calls. */
  until: number;
  /** Epoch ms: the flow's virtual time, moved on by every call granted to it (a call's refill over its share). */
  vt: number;
  weight: number;
}

/** What one call spends. */
export interface BucketCost {
  requests: number;
  tokens: number;
}

/** Calls set aside for one consumer instance: what is left of them, and until when they may start. */
export interface Lease {
  /** Requests left (and daily requests: each request counts against the day too). */
  requests: number;
  /** Tokens left. */
  tokens: number;
  /** Epoch ms until which a leased call may start. */
  until: number;
  /** Fixed daily window: the reset ending the day the lease's requests were counted in (0: a continuous day). */
  dayEnd: number;
}

/**
 * What follows a quota owner in the id of its live side's bucket (`<owner>#live`, stored as
 * `bucket#<owner>#live`; see `config/reserve.ts` and `liveBucketId` in `dynamodb/rate-state.ts`).
 */
export const LIVE_BUCKET_SUFFIX = '#live';

/** The most items an owner's queue-side bucket is split into (`AdmissionSettings.bucketShards`). */
export const MAX_BUCKET_SHARDS = 64;

/** The item suffix of an owner's queue-side bucket shard `shard` (`AdmissionSettings.bucketShards`; shard 0 is the owner's own bucket). */
export function shardBucketSuffix(shard: number): string {
  return shard === 0 ? '' : `#s${shard}`;
}
