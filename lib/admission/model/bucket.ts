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
}

/** How much is left of each level at `updatedAt`. May be negative after a reconcile (debt). */
export interface BucketLevels {
  requests: number;
  tokens: number;
  daily: number;
}

/** A bucket as stored. */
export interface BucketState {
  levels: BucketLevels;
  /** Epoch ms the levels were computed at. */
  updatedAt: number;
  /** Epoch ms until which refills are promised to callers told to come back (0: none). */
  reservedUntil: number;
  /** Incremented by every write; the conditional update checks it. */
  version: number;
  /**
   * Fixed daily window: epoch ms the daily level comes back whole (the end of the day `levels.daily`
   * belongs to); later resets follow every `dayMs`. Absent or 0: the configured reset after `updatedAt`.
   */
  dayResetAt?: number | undefined;
  /** Fixed daily window: requests promised to reserved slots in the day ending at {@link reservedDayEnd}. */
  reservedDaily?: number | undefined;
  /** Fixed daily window: the reset that ends the (future) day {@link reservedDaily} counts (0: none). */
  reservedDayEnd?: number | undefined;
  /**
   * The quota owner's cooldown (daily quota, billing, a rate limit of the owner), also kept here so
   * a consumer whose cached cooldowns are stale still learns it on its next take: every cooldown
   * write moves `version`, so the stale take's conditional update fails and returns this.
   */
  cooldown?: { until: number; reason: CooldownReason } | undefined;
  /** Some call on this owner was answered since it was last cooled for billing or auth (`bucket/first-calls.ts`). */
  proven?: boolean | undefined;
  /** While unproven: epoch ms until which one call's probe holds the owner (0: none). */
  probeUntil?: number | undefined;
  /**
   * The active flows on this owner (`bucket/flows.ts`), by flow id: each one's retry timeline (replacing
   * {@link reservedUntil} for the takes that name a flow) and virtual time. Only active flows are kept.
   */
  flows?: Record<string, FlowTimeline> | undefined;
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
