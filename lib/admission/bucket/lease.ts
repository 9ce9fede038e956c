/**
 * Leases: a take that leaves an owner's bucket with ample headroom also sets a few more calls aside
 * for its consumer instance, in the same conditional write — no more than the instance asked for in a
 * lease's validity before (`leaseTermsFor` in `decisions/pool-core.ts`); the instance then grants them
 * without a write while the lease lasts, and gives back what it did not use with its next write of the
 * bucket while the lease lasts (see {@link givenBackWhileValid}).
 * A consumer that calls often and is not contending for its quota then pays one bucket write per lease, not per call.
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
import type { BucketCost, BucketLimits, BucketState, BucketUpdate, Lease } from '../model/bucket.js';
import { advanceClock, UpdateBuilder } from './item-update.js';
import { burstShareOf, costMs, dayEndAt, holdMs, isFixedDay, levelsAt } from './token-bucket.js';

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
 * A lease of up to `terms.calls` more calls of `need` on the bucket `next` leaves after an admitted take
 * at `at`, when every level keeps at least half its capacity after the lease: the update that takes
 * them (conditional on that headroom) and the lease; else `undefined`.
 */
export function withLease(
  limits: BucketLimits,
  next: BucketState,
  need: BucketCost,
  terms: LeaseTerms,
  at: number,
): { update: BucketUpdate; lease: Lease } | undefined {
  if (terms.calls < 1 || terms.validityMs <= 0 || need.requests <= 0) return undefined;
  const fixedDay = isFixedDay(limits);
  const dayEnd = fixedDay ? dayEndAt(next, limits, at) : 0;
  const until = Math.min(at + terms.validityMs, dayEnd > 0 ? dayEnd : Infinity);
  if (until <= at) return undefined;
  const levels = levelsAt(next, limits, at);
  const hold = holdMs(limits);
  const perCall = costMs(need, limits);
  // Whole calls of `perCallMs` a clock full again at `fullAt` takes before it is more than half of `periodMs` ahead.
  const spare = (fullAt: number | undefined, perCallMs: number, periodMs: number): number =>
    perCallMs <= 0 ? Infinity : Math.floor((at + periodMs / 2 - Math.max(at, fullAt ?? 0)) / perCallMs + EPSILON);
  const calls = Math.min(
    Math.floor(terms.calls),
    spare(next.requestsFullAt, perCall.requests, hold),
    spare(next.tokensFullAt, perCall.tokens, hold),
    fixedDay ? Math.floor((levels.daily - limits.requestsPerDay / 2) / need.requests + EPSILON) : spare(next.dailyFullAt, perCall.daily, limits.dayMs),
  );
  if (!(calls >= 1)) return undefined;
  const requests = calls * need.requests;
  const tokens = calls * need.tokens;
  const u = new UpdateBuilder();
  advanceClock(u, 'requestsFullAt', next.requestsFullAt, at, calls * perCall.requests, 0, at + hold / 2 - calls * perCall.requests);
  if (tokens > 0) advanceClock(u, 'tokensFullAt', next.tokensFullAt, at, calls * perCall.tokens, 0, at + hold / 2 - calls * perCall.tokens);
  if (fixedDay) {
    u.add('dailyUsed', requests);
    u.require({ field: 'dayResetAt', cmp: '=', value: dayEnd });
    u.require({ field: 'dailyUsed', cmp: '<=', value: limits.requestsPerDay / 2 - requests + EPSILON });
  } else advanceClock(u, 'dailyFullAt', next.dailyFullAt, at, calls * perCall.daily, 0, at + limits.dayMs / 2 - calls * perCall.daily);
  return { update: u.build()!, lease: { requests, tokens, until, dayEnd } };
}

/** Spends one call of `need` from `lease` at `now` when it holds one (it is changed in place); whether it did. */
export function spendLease(lease: Lease | undefined, need: BucketCost, now: number): boolean {
  if (lease === undefined || now >= lease.until || lease.requests + EPSILON < need.requests || lease.tokens + EPSILON < need.tokens) return false;
  lease.requests -= need.requests;
  lease.tokens -= need.tokens;
  return true;
}

/**
 * What is left of `lease` to give back at `now`: the lease itself while it lasts, else nothing. An
 * expired lease's rest is dropped: while it was out, the bucket refilled as if its calls had been made,
 * where the provider's bucket, if it sat full, refilled nothing; a rest given back later can then count
 * that refill twice. The simulator's lane ramping up as the event source scales (a thousand instances
 * leasing while the buckets are near full) drew 320 rate-limit answers in 200,000 calls with late
 * give-backs and none without (`npm run sim`, minute scenario). Dropped, a lease costs at most its
 * unused calls, taken while the bucket kept at least half its capacity.
 */
export function givenBackWhileValid(lease: Lease | undefined, now: number): Lease | undefined {
  return lease !== undefined && now < lease.until ? lease : undefined;
}

/**
 * The update giving back what is left of `lease` to `bucket` (as cached) at `now`: each clock moved back
 * by the rest's refill time (a level given back past full is full: the next take starts its clock from
 * the present); the daily requests only while the day they were counted in lasts.
 */
export function givenBack(bucket: BucketState, limits: BucketLimits, lease: Lease, now: number): BucketUpdate | undefined {
  const back = costMs({ requests: lease.requests, tokens: lease.tokens }, limits);
  const u = new UpdateBuilder().add('requestsFullAt', -back.requests).add('tokensFullAt', -back.tokens);
  if (lease.dayEnd === 0) u.add('dailyFullAt', -back.daily);
  else if (lease.dayEnd > now && bucket.dayResetAt === lease.dayEnd) {
    u.add('dailyUsed', -lease.requests);
    u.require({ field: 'dayResetAt', cmp: '=', value: lease.dayEnd });
  }
  return u.build();
}
