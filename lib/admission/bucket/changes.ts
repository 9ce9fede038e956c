/**
 * The bucket changes of the key pool's decisions (`decisions/pool-core.ts`): what a take, a settlement, a
 * cooldown and a probe's release do to an owner's bucket as last seen, and what to write. Pure.
 */
import type { BucketCost, BucketLimits, BucketState, BucketUpdate, Flow, Lease, ProviderLimits } from '../model/bucket.js';
import { RECHECKED } from '../model/cooldowns.js';
import { cooledProbe, probeHeldUntil, probeUpdate, proved, released } from './first-calls.js';
import { applyUpdate, composeUpdates, UpdateBuilder } from './item-update.js';
import { givenBack, withLease, type LeaseTerms } from './lease.js';
import {
  adjustTokens,
  clampCost,
  cooldownUpdate,
  ratedLimits,
  rateLimitedUpdate,
  statedLimitsUpdate,
  takeFromBucket,
  type TakeVerdict,
} from './token-bucket.js';

/** A bucket change's result, and the conditional update to write (none: nothing to write). */
interface ChangeOutcome<T> {
  result: T;
  write?: BucketUpdate | undefined;
}

/**
 * What a bucket update does with the bucket (of these limits) as last seen, given `arg` (module-level
 * functions, not closures: a decision creates no function objects, which keeps the simulator's million runs cheap).
 */
export type BucketChange<A, T> = (limits: BucketLimits, bucket: BucketState | undefined, now: number, arg: A, onStored?: boolean) => ChangeOutcome<T>;

/** A take: the call's cost, whether a denial reserves the next free slot, and how far ahead a call may be booked. */
export interface TakeArg {
  cost: BucketCost;
  reserve: boolean;
  bookWithinMs?: number | undefined;
  /** A grant decided on the cached bucket lands as a booking this far ahead on the stored one (`TakeOptions.bookIfStoredMs`). */
  bookIfStoredMs?: number | undefined;
  /** Token corrections owed to the bucket (see `PoolState.carried`), written with the take. */
  carried?: number | undefined;
  /** Probe unproven owners (`first-calls.ts`), a probe leased this long; absent: never. */
  probeLeaseMs?: number | undefined;
  /** A grant on a proven owner may also lease calls for the instance on these terms (`lease.ts`); absent: never. */
  lease?: LeaseTerms | undefined;
  /** What is left of the instance's lease of this bucket, given back with the take's write. */
  givenBack?: Lease | undefined;
  /** The call's flow (`flows.ts`); absent: the bucket's shared timeline. */
  flow?: Flow | undefined;
  /** The start horizon shared with larger calls where tokens bind (`TakeOptions.tokensHeadroomMs`); absent: none. */
  tokensHeadroomMs?: number | undefined;
  /** With `reserve`: the latest slot worth reserving here (`TakeOptions.reserveBy`); absent: any. */
  reserveBy?: number | undefined;
}

/** A cached bucket plus the token corrections an instance owes it: the update, and the bucket it makes. */
interface PlusCarried {
  limits: BucketLimits;
  carried: number;
  owed: BucketUpdate | undefined;
  restored: BucketState;
}

/**
 * Per cached bucket object, the last {@link PlusCarried} made of it: a denied call looks at every owner's
 * bucket, and the next decision at the same ones again, while neither the bucket nor what is owed to it
 * changed (buckets are never changed in place: a new state is a new object).
 */
const plusCarriedOf = new WeakMap<BucketState, PlusCarried>();

/** `bucket` with `carried` tokens corrected, as {@link takeChange} decides on it (kept in {@link plusCarriedOf}). */
function plusCarried(limits: BucketLimits, bucket: BucketState, carried: number): PlusCarried {
  const known = plusCarriedOf.get(bucket);
  if (known !== undefined && known.carried === carried && known.limits === limits) return known;
  const owed = adjustTokens(limits, carried);
  const made = { limits, carried, owed, restored: owed ? applyUpdate(bucket, owed) : bucket };
  plusCarriedOf.set(bucket, made);
  return made;
}

/** A take: the call's cost from the bucket (booked or reserved as `arg` says), an unproven owner's probe leased with it. */
export const takeChange: BucketChange<TakeArg, TakeVerdict> = (limits, bucket, now, arg, onStored) => {
  const { cost, reserve, carried, probeLeaseMs, lease, givenBack: rest, flow, bookIfStoredMs, tokensHeadroomMs, reserveBy } = arg;
  // Decided again on the stored bucket a write landed on: within the room its condition gave.
  const bookWithinMs = onStored ? Math.max(arg.bookWithinMs ?? 0, bookIfStoredMs ?? 0) : arg.bookWithinMs;
  // The owner's rates as a rate cut and the limits the provider stated leave them (`ratedLimits`): what the
  // take, a lease, a lease's rest and the token corrections are counted in, as the clocks were moved at them.
  const rated = ratedLimits(limits, bucket, now);
  // Token corrections and a lease's rest this instance still owes the bucket go in with the take's own write.
  let owed: BucketUpdate | undefined;
  let restored = bucket;
  if (carried && bucket) ({ owed, restored } = plusCarried(rated, bucket, carried));
  if (rest && bucket) {
    owed = composeUpdates(owed, givenBack(bucket, rated, rest, now));
    restored = owed ? applyUpdate(bucket, owed) : bucket;
  }
  const verdict = takeFromBucket(restored, rated, cost, now, { reserve, bookWithinMs, bookIfStoredMs, flow, onStored, tokensHeadroomMs, reserveBy });
  if (!verdict.admitted) {
    return takeWrites(verdict, reserve) && verdict.update ? { result: verdict, write: composeUpdates(owed, verdict.update) } : { result: verdict };
  }
  // An unproven owner takes one call at a time: another call's probe out passes it over (nothing written).
  const heldUntil = probeLeaseMs === undefined ? undefined : probeHeldUntil(restored, now);
  if (heldUntil !== undefined) return { result: { admitted: false, dueAt: heldUntil, retryAt: heldUntil, limitedBy: 'probing', next: restored! } };
  const proven = probeLeaseMs === undefined || restored?.proven === true;
  const leased = proven && lease ? withLease(rated, verdict.next, clampCost(cost, rated), lease, now) : undefined;
  const probe = probeLeaseMs === undefined ? undefined : probeUpdate(restored, verdict.startAt, probeLeaseMs, now);
  const write = composeUpdates(composeUpdates(composeUpdates(owed, verdict.update), leased?.update), probe);
  const next = write ? applyUpdate(bucket, write) : verdict.next;
  return { result: { ...verdict, next, update: write, ...(leased ? { lease: leased.lease } : {}) }, write };
};

/**
 * Whether a take with `verdict` writes the bucket: a grant, or a reservation — never on a cooling or
 * probed owner, nor where the slot was passed over (`reserveBy`). A denial without a reservation writes
 * nothing: the cached bucket can only be fuller than the stored one (others take), so "not enough" holds
 * for the stored one too.
 */
export function takeWrites(verdict: TakeVerdict, reserve: boolean): boolean {
  return verdict.admitted || (reserve && verdict.limitedBy !== 'cooldown' && verdict.limitedBy !== 'probing' && !verdict.passedOver);
}

/**
 * A result decided on a cached bucket, with the times the stored one gives (`onStored`: the same
 * change decided on the bucket as it was when the write landed): other consumers' takes may have moved
 * the levels' and timelines' clocks on since the cache was learned. Only a take's times change; what
 * was written (a lease's size, the key) stands.
 */
export function retimed<T>(decided: T, onStored: T): T {
  const a = decided as unknown as TakeVerdict;
  const b = onStored as unknown as TakeVerdict;
  if (typeof a !== 'object' || a === null || !('admitted' in a) || typeof b !== 'object' || b === null) return decided;
  if (a.admitted && b.admitted) return { ...a, startAt: b.startAt } as T;
  if (!a.admitted && !b.admitted) return { ...a, retryAt: b.retryAt, dueAt: b.dueAt } as T;
  return decided;
}

/** A settlement: the token correction owed, whether the owner is proven by it, and the limits the answer stated. */
export interface SettleArg {
  delta: number;
  prove: boolean;
  stated?: ProviderLimits | undefined;
}

/**
 * The token level corrected by `delta` (real usage minus what was taken; at the rates the bucket admits), the
 * owner `prove`d, the limits the provider `stated` recorded (`statedLimitsUpdate`); nothing to write for an
 * unknown bucket.
 */
export const settleChange: BucketChange<SettleArg, null> = (limits, bucket, now, { delta, prove, stated }) => {
  if (bucket === undefined) return { result: null };
  // The correction at the rates the bucket admits (`ratedLimits`), as its take moved the clock.
  const adjusted = composeUpdates(adjustTokens(ratedLimits(limits, bucket, now), delta), stated ? statedLimitsUpdate(bucket, limits, stated) : undefined);
  return { result: null, write: prove ? composeUpdates(adjusted, proved(new UpdateBuilder()).build()) : adjusted };
};

/** The owner's cooldown kept in its bucket too, ending its probe (nothing to write when a longer one is there). */
export const coolChange: BucketChange<NonNullable<BucketState['cooldown']>, 'written'> = (limits, bucket, now, cooldown) => {
  const update = cooldownUpdate(bucket, limits, cooldown, now);
  return { result: 'written', write: update ? cooledProbe(update, RECHECKED.has(cooldown.reason)).build() : undefined };
};

/**
 * A rate limit the provider answered, its requests back at `until` (`rateLimitedUpdate`): the share of its
 * configured rates the owner was cut to, when this write cuts them, else `null`.
 */
export const rateLimitedChange: BucketChange<number, number | null> = (limits, bucket, now, until) => {
  const write = rateLimitedUpdate(bucket, limits, now, until);
  const cut = write.changes.get('rateCut');
  return { result: cut !== undefined && 'set' in cut && typeof cut.set === 'number' ? cut.set : null, write };
};

/** A probe that ended without an answer, given back (nothing to write when the bucket holds none). */
export const releaseChange: BucketChange<null, null> = (_limits, bucket) => ({ result: null, write: bucket === undefined ? undefined : released(bucket) });
