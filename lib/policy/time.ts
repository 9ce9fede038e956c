/**
 * Instants as the policy sees them. The policy never reads a clock: every `now` is passed in.
 */

/** An instant: epoch milliseconds or a `Date`. */
export type Instant = number | Date;

/**
 * Epoch milliseconds of an {@link Instant}.
 * @throws RangeError when the instant is not a finite time (NaN, an invalid `Date`).
 */
export function toEpochMs(instant: Instant): number {
  const ms = typeof instant === 'number' ? instant : instant.getTime();
  if (!Number.isFinite(ms)) throw new RangeError(`not a valid instant: ${String(instant)}`);
  return ms;
}

/**
 * Epoch milliseconds of an ISO-8601 timestamp carried by a job (`eligibleAt`, `deadline`).
 * @throws RangeError when the text is not a timestamp (the job contract validates these upstream).
 */
export function parseIsoMs(iso: string, field: string): number {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) throw new RangeError(`${field} is not an ISO timestamp: ${JSON.stringify(iso)}`);
  return ms;
}

/** The ISO-8601 (UTC, `Z`) text of an epoch-ms instant. */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString();
}
