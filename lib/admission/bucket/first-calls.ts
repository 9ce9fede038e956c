/**
 * First calls: a quota owner no consumer has seen answer a call (at start, or since a billing or auth
 * cooldown) is **probed** — one call at a time, across every consumer — before more calls go to it. A
 * key out of credit then costs the lane the one call that found it out, not one per concurrent
 * record; a working owner is proven by its first answer, a fraction of a second later. The probe is
 * a lease in the owner's bucket item (`probeUntil`), taken with the take's own conditional write, and
 * proven (`proven`) by the first answer's settlement; a probe whose outcome is never reported frees
 * the owner when its lease ends. Pure (the caller passes the clock).
 */
import type { BucketState, BucketUpdate } from '../model/bucket.js';
import { UpdateBuilder } from './item-update.js';

/** While `bucket`'s owner is unproven and another call's probe is out at `now`: until when; else `undefined`. */
export function probeHeldUntil(bucket: BucketState | undefined, now: number): number | undefined {
  if (bucket === undefined || bucket.proven === true) return undefined;
  return (bucket.probeUntil ?? 0) > now ? bucket.probeUntil : undefined;
}

/**
 * What an admitted take on an owner not known proven (`before`, as cached) adds: the probe's lease until
 * `startAt + leaseMs`, on condition that the owner is proven or no other probe is out at `now`
 * (`undefined` for an owner known proven).
 */
export function probeUpdate(before: BucketState | undefined, startAt: number, leaseMs: number, now: number): BucketUpdate | undefined {
  if (before?.proven === true) return undefined;
  return new UpdateBuilder()
    .set('probeUntil', startAt + leaseMs)
    .require({
      any: [
        { field: 'proven', cmp: '=', value: true },
        { field: 'probeUntil', missing: true },
        { field: 'probeUntil', cmp: '<=', value: now },
      ],
    })
    .build();
}

/** Whether a written state holds a probe (this instance's grant, when it just wrote it). */
export function isProbe(bucket: BucketState | undefined): boolean {
  return bucket !== undefined && bucket.proven !== true && (bucket.probeUntil ?? 0) > 0;
}

/** The owner answered a call: proven, the probe over. */
export const proved = (u: UpdateBuilder): UpdateBuilder => u.set('proven', true).set('probeUntil', 0);

/**
 * The probe's outcome as a cooldown says it: a billing or auth one (`recheck`) leaves the owner
 * unproven (its call after the cooldown probes again); any other (a rate limit, a spent daily quota)
 * means the key answered: proven.
 */
export const cooledProbe = (u: UpdateBuilder, recheck: boolean): UpdateBuilder => u.set('proven', !recheck).set('probeUntil', 0);

/** The probe ended without an answer (the call failed or never went): the next call probes (`undefined`: no probe cached). */
export function released(bucket: BucketState): BucketUpdate | undefined {
  return isProbe(bucket) ? new UpdateBuilder().set('probeUntil', 0).build() : undefined;
}
