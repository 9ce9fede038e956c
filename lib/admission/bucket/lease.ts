/**
 * Leases: a take that leaves an owner's bucket with ample headroom also sets a few more calls aside
 * for its consumer instance, in the same conditional write; the instance then grants them without a
 * write while the lease lasts, and gives back what it did not use with its next write of the bucket.
 * A consumer that is not contending for its quota then pays one bucket write per lease, not per call.
 * Pure (the caller passes the clock); which key an instance grants from its leases is `leasedKey`'s
 * choice, in `decisions/pool-core.ts`.
 *
 * Why it stays within the provider's limits: a leased call is counted in the bucket when the lease is
 * taken and made at most the lease's validity later. Shifting calls later by at most `V` can make the
 * provider see, in any interval, at most `rate × V` more than the bucket admitted over the same
 * interval — whatever the number of instances. That shift comes out of the skew the safety margin
 * absorbs: the validity is `leaseMs` (1 s by default, of the 3 s a 5 % margin gives a minute; the
 * local stack widens its margin by its lease), never more than half the margin's share of a window
 * (so half the margin always stays for skew and jitter), never longer than the cooldown cache (a
 * lease is as fresh as what the instance knows of cooldowns), and never past the fixed day's reset
 * (a day's calls are made in that day). The lease is taken only when every
 * level keeps at least half its capacity after it: in a lane whose quota binds, takes are made one
 * call at a time.
 */
import type { BucketCost, BucketLimits, BucketState, Lease } from '../model/bucket.js';
import { advance, bucketCapacity, burstShareOf, isFixedDay } from './token-bucket.js';

/** How much a take may lease: at most `calls` more calls, valid for `validityMs`. */
export interface LeaseTerms {
  calls: number;
  validityMs: number;
}

const EPSILON = 1e-9;

/**
 * How long a lease of a bucket with `limits` lasts: `leaseMs`, at most half the safety margin's share
 * of a window and `cooldownCacheMs` (0 without a margin: no lease).
 */
export function leaseValidityMs(limits: BucketLimits, settings: { leaseMs: number; cooldownCacheMs: number }): number {
  return Math.max(0, Math.min(settings.leaseMs, settings.cooldownCacheMs, ((1 - burstShareOf(limits)) * limits.windowMs) / 2));
}

/**
 * `next`, the state an admitted take of `need` writes, with a lease of up to `terms.calls` more calls
 * of `need` taken from it too, when every level keeps at least half its capacity after the lease;
 * else `undefined`.
 */
export function withLease(limits: BucketLimits, next: BucketState, need: BucketCost, terms: LeaseTerms): { next: BucketState; lease: Lease } | undefined {
  if (terms.calls < 1 || terms.validityMs <= 0 || need.requests <= 0) return undefined;
  const at = next.updatedAt;
  const dayEnd = isFixedDay(limits) ? (next.dayResetAt ?? 0) : 0;
  const until = Math.min(at + terms.validityMs, dayEnd > 0 ? dayEnd : Infinity);
  if (until <= at) return undefined;
  const capacity = bucketCapacity(limits);
  const spare = (level: number, held: number, perCall: number): number => (perCall <= 0 ? Infinity : Math.floor((level - held / 2) / perCall + EPSILON));
  const { levels } = next;
  const calls = Math.min(
    Math.floor(terms.calls),
    spare(levels.requests, capacity.requests, need.requests),
    spare(levels.tokens, capacity.tokens, need.tokens),
    spare(levels.daily, limits.requestsPerDay, need.requests),
  );
  if (!(calls >= 1)) return undefined;
  const requests = calls * need.requests;
  const tokens = calls * need.tokens;
  return {
    next: { ...next, levels: { requests: levels.requests - requests, tokens: levels.tokens - tokens, daily: levels.daily - requests } },
    lease: { requests, tokens, until, dayEnd },
  };
}

/** Spends one call of `need` from `lease` at `now` when it holds one (it is changed in place); whether it did. */
export function spendLease(lease: Lease | undefined, need: BucketCost, now: number): boolean {
  if (lease === undefined || now >= lease.until || lease.requests + EPSILON < need.requests || lease.tokens + EPSILON < need.tokens) return false;
  lease.requests -= need.requests;
  lease.tokens -= need.tokens;
  return true;
}

/**
 * `bucket` at `now` with what is left of `lease` given back (never above a level's capacity; the
 * daily requests only while the day they were counted in lasts). Version unchanged.
 */
export function givenBack(bucket: BucketState, limits: BucketLimits, lease: Lease, now: number): BucketState {
  const moved = advance(bucket, limits, Math.max(now, bucket.updatedAt));
  const capacity = bucketCapacity(limits);
  const sameDay = lease.dayEnd === 0 || moved.dayResetAt === lease.dayEnd;
  const { levels } = moved;
  return {
    ...moved,
    levels: {
      requests: Math.min(capacity.requests, levels.requests + lease.requests),
      tokens: Math.min(capacity.tokens, levels.tokens + lease.tokens),
      daily: sameDay ? Math.min(limits.requestsPerDay, levels.daily + lease.requests) : levels.daily,
    },
  };
}
