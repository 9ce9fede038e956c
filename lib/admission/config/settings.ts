/**
 * Admission settings of a lane. The lane config (lib/config/lanes.ts) carries the provider's limits;
 * how admission applies them (safety margin, window length, estimates, cache) lives here, with
 * defaults for AWS. The local stack passes its scaled minute as `windowMs`.
 */
import type { LaneConfig } from '../../config/lanes.js';
import { RatelaneError } from '../../platform/errors.js';
import { MAX_BUCKET_SHARDS, type BucketLimits } from '../model/bucket.js';

/** How admission applies a lane's provider limits. */
export interface AdmissionSettings {
  /**
   * Share of each per-minute limit's burst admission leaves unused (0..0.5), so clock skew and in-flight
   * jitter between our bucket and the provider's do not turn into 429s. Default 0.05. It trims the
   * bucket's capacity, not its refill rate (`BucketLimits.burstShare`): skew is an offset in time,
   * which that headroom absorbs up to the margin's share of a window; a trimmed rate would leave the
   * margin's share of the quota unused for as long as the lane is busy. The daily quota
   * is not trimmed: it is a count over a day, not a rate a few ms of skew can overrun, and trimming it
   * would push the day's last 5 % of jobs past the reset for nothing.
   */
  safetyMargin: number;
  /**
   * Output tokens assumed for a call before it answers, until the pool has seen real ones: each pool
   * instance then learns the estimate from the usage calls report (an exponentially weighted average,
   * see `outputTokenEstimateWeight`), and every take is still reconciled with the real usage. Default 512.
   */
  outputTokenEstimate: number;
  /** Weight of each reported call in the learned output-token estimate (0: never learn; 1: the last call). Default 0.1. */
  outputTokenEstimateWeight: number;
  /** Bounds of the learned output-token estimate. Defaults 16 and 32 768. */
  outputTokenEstimateMin: number;
  outputTokenEstimateMax: number;
  /** Length of the provider's per-minute window in ms. Default 60 000; locally the scaled minute. */
  windowMs: number;
  /** Length of the provider's day in ms. Default 86 400 000; locally 1440 scaled minutes. */
  dayMs: number;
  /**
   * How the provider's daily quota comes back: `fixed` (default), whole at each daily reset, as most
   * providers' per-day quotas do; `continuous`, refilling over the day (OpenAI's RPD).
   */
  dailyWindow: 'fixed' | 'continuous';
  /**
   * The provider's daily reset, in ms after 00:00 UTC (with a scaled day: after each multiple of
   * `dayMs` since the epoch). Default 0 (midnight UTC). A reset the provider states with a quota error
   * replaces it for that quota owner.
   */
  dailyResetOffsetMs: number;
  /**
   * How long a consumer uses the cooldowns it read as they are (ms). Default 1000. After that, while
   * they are less than half as old again ({@link COOLDOWN_READ_AHEAD_SHARE}), a decision still uses them
   * and a fresh read runs beside it, for the next decisions; older, a decision waits for a read.
   */
  cooldownCacheMs: number;
  /** Conditional-update attempts on a contended bucket before a take counts as denied. Default 12. */
  maxBucketAttempts: number;
  /**
   * A job denied because of a billing cooldown comes back after at most this long (ms), not at the
   * cooldown's end: a person may resume the lane any time. Only while no key with credit has a slot to
   * offer: a dead key never holds back the jobs the working keys can take. Default 300 000 (the lane's throttle cap
   * when wired by `createLaneAdmission`).
   */
  billingRecheckMs: number;
  /**
   * Probe an owner before spending more calls on it: while no consumer has seen the owner answer a
   * call (at start, or since a billing or auth cooldown), one call at a time goes to it, across every
   * consumer (a lease in its bucket item), and the others wait for its answer within their booking
   * window or take another owner, so a key out of credit costs one call, not one per concurrent
   * record (`bucket/first-calls.ts`). Default true.
   */
  probeFirstCalls: boolean;
  /**
   * Calls a take may set aside for its consumer instance beyond its own (0: never): the same
   * conditional write takes them, and the instance grants them without a write while the lease lasts
   * (`bucket/lease.ts`). Only on a proven owner whose every level keeps at least half its capacity
   * after the lease, so a lease never holds back other consumers' calls in a busy lane, and no more than
   * the instance asked admission for in a lease's validity before (a lease that ends unused drops its
   * calls). Default 10.
   */
  leaseCalls: number;
  /**
   * How long a lease lasts at most (ms; 0: no lease). A leased call may reach the provider this much
   * later than it was counted, so this comes out of the skew the safety margin absorbs: it is also
   * never more than half the margin's share of a window, nor `cooldownCacheMs`. Default 1000 (of the
   * 3 s a 5 % margin gives a minute, 2 s stay for skew).
   */
  leaseMs: number;
  /**
   * Items each quota owner's queue-side bucket is split into (1: one item). DynamoDB serves about 1,000
   * write units a second to one item, and every take writes it: a lane whose consumers would write an
   * owner's item more than about 500 times a second splits it. Each shard admits `1/bucketShards` of every
   * limit; a consumer instance takes from one shard (chosen when its pool is made), cooldowns are copied
   * into all. What it costs: a shard's unused share is not lent to the others, and each shard probes an
   * unproven owner once. Default 1; `shardsFor` sizes it from the lane's consumers and owners.
   */
  bucketShards: number;
  /**
   * The records the lane's event source mapping holds at most (`maximumConcurrency` × `batchSize`; 0: no
   * mapping, the default; `createLaneAdmission` sets it for the queue side). With it, a denial whose slot
   * lies more than a window ahead says the lane is `booked_ahead` when the mapping holds more records
   * than the quota keeps busy (those it starts within their booking window, and those in their calls, as
   * long as this instance has seen calls last): its consumers then limit the mapping to that share for
   * 900 s, instead of receiving records only to re-send them to their slots.
   */
  mappingRecords: number;
  /**
   * How far ahead a record fresh from the mapping may book its call (ms): the queue lane's booking window
   * at an invocation's start (`createLaneAdmission` sets it). The share a `booked_ahead` limit keeps is
   * worked out with at least this window, not only the denied record's (less, late in its invocation), so
   * one late record does not hold the lane below what its quota keeps busy for 900 s. Default 0.
   */
  mappingWindowMs: number;
}

/** The AWS defaults. */
export const DEFAULT_ADMISSION_SETTINGS: AdmissionSettings = Object.freeze({
  safetyMargin: 0.05,
  outputTokenEstimate: 512,
  outputTokenEstimateWeight: 0.1,
  outputTokenEstimateMin: 16,
  outputTokenEstimateMax: 32_768,
  windowMs: 60_000,
  dayMs: 86_400_000,
  dailyWindow: 'fixed',
  dailyResetOffsetMs: 0,
  cooldownCacheMs: 1_000,
  maxBucketAttempts: 12,
  billingRecheckMs: 300_000,
  probeFirstCalls: true,
  leaseCalls: 10,
  leaseMs: 1_000,
  bucketShards: 1,
  mappingRecords: 0,
  mappingWindowMs: 0,
});

/** Raised for settings admission cannot work with. */
export class AdmissionSettingsError extends RatelaneError {
  override name = 'AdmissionSettingsError';
  readonly kind = 'config';
  readonly retryable = false;
}

/**
 * How much longer than `cooldownCacheMs` (as a share of it) a consumer keeps using the cooldowns it
 * read while a fresh read runs beside its decisions: a busy consumer still reads them about once per
 * `cooldownCacheMs`, and no take waits for the read.
 */
export const COOLDOWN_READ_AHEAD_SHARE = 0.5;

/**
 * Bucket writes a second one busy consumer instance makes at most, over all its lane's owners: measured in
 * the simulator (`npm run sim`, 2026-12-06), 1,000 consumers pulling ten records each, four owners' quotas
 * binding, wrote the four items 2,695 times in their busiest second, two thirds of it the reservations of
 * denied records.
 */
const WRITES_PER_CONSUMER_PER_SECOND = 3;

/** Writes a second one bucket item takes at most by design: half DynamoDB's per-item ceiling (about 1,000). */
const ITEM_WRITES_PER_SECOND = 500;

/**
 * The bucket shards (`AdmissionSettings.bucketShards`) a lane of `consumers` concurrent consumer instances
 * and `owners` quota owners needs so that no item is written more than half its ceiling.
 */
export function shardsFor(consumers: number, owners: number): number {
  const perOwner = (Math.max(0, consumers) * WRITES_PER_CONSUMER_PER_SECOND) / Math.max(1, owners);
  return Math.min(MAX_BUCKET_SHARDS, Math.max(1, Math.ceil(perOwner / ITEM_WRITES_PER_SECOND)));
}

/** The defaults with `overrides` applied, checked. */
export function admissionSettings(overrides: Partial<AdmissionSettings> = {}): AdmissionSettings {
  const settings = { ...DEFAULT_ADMISSION_SETTINGS, ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)) } as AdmissionSettings;
  if (!(settings.safetyMargin >= 0 && settings.safetyMargin <= 0.5))
    throw new AdmissionSettingsError(`safetyMargin must be in 0..0.5, got ${settings.safetyMargin}`);
  for (const name of ['windowMs', 'dayMs', 'maxBucketAttempts', 'billingRecheckMs'] as const) {
    if (!(settings[name] > 0 && Number.isFinite(settings[name]))) throw new AdmissionSettingsError(`${name} must be a positive number, got ${settings[name]}`);
  }
  for (const name of [
    'outputTokenEstimate',
    'cooldownCacheMs',
    'leaseCalls',
    'leaseMs',
    'outputTokenEstimateMin',
    'outputTokenEstimateMax',
    'dailyResetOffsetMs',
    'mappingRecords',
    'mappingWindowMs',
  ] as const) {
    if (!(settings[name] >= 0 && Number.isFinite(settings[name]))) throw new AdmissionSettingsError(`${name} must be 0 or more, got ${settings[name]}`);
  }
  if (!(settings.outputTokenEstimateWeight >= 0 && settings.outputTokenEstimateWeight <= 1)) {
    throw new AdmissionSettingsError(`outputTokenEstimateWeight must be in 0..1, got ${settings.outputTokenEstimateWeight}`);
  }
  if (settings.outputTokenEstimateMin > settings.outputTokenEstimateMax) {
    throw new AdmissionSettingsError(
      `outputTokenEstimateMin (${settings.outputTokenEstimateMin}) is above outputTokenEstimateMax (${settings.outputTokenEstimateMax})`,
    );
  }
  if (!(Number.isInteger(settings.bucketShards) && settings.bucketShards >= 1 && settings.bucketShards <= MAX_BUCKET_SHARDS)) {
    throw new AdmissionSettingsError(`bucketShards must be an integer in 1..${MAX_BUCKET_SHARDS}, got ${settings.bucketShards}`);
  }
  if (settings.dailyWindow !== 'fixed' && settings.dailyWindow !== 'continuous')
    throw new AdmissionSettingsError(`dailyWindow must be fixed or continuous, got ${String(settings.dailyWindow)}`);
  return settings;
}

/**
 * The safety margin that absorbs `toleranceMs` of skew on a window of `windowMs` (the margin is a
 * share of the window's burst, refilled in that share of the window): at least the default, at most 0.5.
 * A scaled minute needs it: 5 % of a 3 s minute is 150 ms, less than a loaded machine's timers drift.
 */
export function marginForSkew(windowMs: number, toleranceMs: number): number {
  return Math.min(0.5, Math.max(DEFAULT_ADMISSION_SETTINGS.safetyMargin, toleranceMs / windowMs));
}

/**
 * The bucket of one quota owner of `lane`: the provider's per-minute limits as its refill rate, its
 * capacity (burst) less the safety margin, and its whole daily quota, refilling over the settings'
 * window and day (the day as a fixed window by default).
 */
export function bucketLimitsFor(lane: Pick<LaneConfig, 'provider'>, settings: AdmissionSettings): BucketLimits {
  const { requestsPerMinute, tokensPerMinute, requestsPerDay } = lane.provider.limits;
  return {
    requestsPerWindow: requestsPerMinute,
    tokensPerWindow: tokensPerMinute,
    burstShare: 1 - settings.safetyMargin,
    windowMs: settings.windowMs,
    requestsPerDay,
    dayMs: settings.dayMs,
    dailyWindow: settings.dailyWindow,
    dailyResetOffsetMs: settings.dailyResetOffsetMs,
  };
}

/**
 * The output-token estimate after a call reported `outputTokens`: an exponentially weighted average
 * moving `weight` of the way from `current` to the report, within `[min, max]`. A report that is not
 * a finite number of 0 or more leaves it as it is.
 */
export function learnOutputEstimate(
  current: number,
  outputTokens: number,
  settings: Pick<AdmissionSettings, 'outputTokenEstimateWeight' | 'outputTokenEstimateMin' | 'outputTokenEstimateMax'>,
): number {
  if (!(Number.isFinite(outputTokens) && outputTokens >= 0)) return current;
  const next = current + settings.outputTokenEstimateWeight * (outputTokens - current);
  return Math.min(settings.outputTokenEstimateMax, Math.max(settings.outputTokenEstimateMin, next));
}
