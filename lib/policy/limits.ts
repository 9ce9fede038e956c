/**
 * The SQS limits every delay and visibility timeout the policy produces must respect, and the
 * conversions from a wait in milliseconds to the whole seconds SQS accepts.
 */

/** SQS `DelaySeconds` maximum (15 minutes). Longer waits ride on the job's `eligibleAt` and hop. */
export const SQS_MAX_DELAY_SECONDS = 900;

/** SQS visibility timeout maximum (12 hours). */
export const SQS_MAX_VISIBILITY_TIMEOUT_SECONDS = 43_200;

/**
 * Whole seconds covering a wait: rounded **up**, so a message never arrives before it is due
 * (arriving a fraction early would cost one extra hop). Negative or zero waits give 0.
 */
export function ceilSeconds(waitMs: number): number {
  if (Number.isNaN(waitMs)) throw new RangeError('wait is NaN');
  return waitMs <= 0 ? 0 : Math.ceil(waitMs / 1000);
}

/** An SQS `DelaySeconds` for a wait: an integer in 0..900 (the part of a longer wait SQS can hold). */
export function toDelaySeconds(waitMs: number): number {
  return Math.min(SQS_MAX_DELAY_SECONDS, ceilSeconds(waitMs));
}

/** An SQS visibility timeout for a wait: an integer in 0..43200. */
export function toVisibilityTimeoutSeconds(waitMs: number): number {
  return Math.min(SQS_MAX_VISIBILITY_TIMEOUT_SECONDS, ceilSeconds(waitMs));
}
