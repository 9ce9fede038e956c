/**
 * Capped exponential backoff with AWS "full jitter": `random × min(cap, base × 2^exponent)`.
 * See https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/.
 * Randomness is injected, so the function is pure and tests pass a fixed `random`.
 */

/** Inputs of {@link fullJitterBackoffMs}. */
export interface FullJitterBackoffOptions {
  /** The step: 0 for the first retry. Negative values count as 0; `Infinity` means "at the cap". */
  exponent: number;
  /** The first step's ceiling, in ms (>= 0). */
  baseMs: number;
  /** The largest ceiling, in ms (>= 0). */
  capMs: number;
  /** A uniform random number in [0, 1), e.g. `Math.random` (injected by the caller). */
  random: () => number;
}

/**
 * Above this exponent `2^exponent` is astronomically larger than any cap; clamping keeps the
 * product finite (`2^1000` ≈ 1e301) and avoids `0 × Infinity = NaN` for a zero base.
 */
const MAX_EXPONENT = 1000;

/**
 * The un-jittered ceiling `min(cap, base × 2^exponent)` in ms, safe for any exponent.
 * @throws RangeError for a NaN exponent or a negative / non-finite base or cap.
 */
export function backoffCeilingMs({ exponent, baseMs, capMs }: Omit<FullJitterBackoffOptions, 'random'>): number {
  if (Number.isNaN(exponent)) throw new RangeError('backoff exponent is NaN');
  if (!Number.isFinite(baseMs) || baseMs < 0) throw new RangeError(`backoff base must be a finite number >= 0, got ${baseMs}`);
  if (!Number.isFinite(capMs) || capMs < 0) throw new RangeError(`backoff cap must be a finite number >= 0, got ${capMs}`);
  const step = Math.min(MAX_EXPONENT, Math.max(0, exponent));
  return Math.min(capMs, baseMs * 2 ** step);
}

/**
 * AWS "full jitter" backoff in ms: `random() × min(capMs, baseMs × 2^exponent)`, a value in
 * `[0, min(cap, base × 2^exponent))`. Never overflows, whatever the exponent.
 * @throws RangeError when `random()` returns a value outside [0, 1], or for invalid settings.
 */
export function fullJitterBackoffMs(options: FullJitterBackoffOptions): number {
  const ceiling = backoffCeilingMs(options);
  const r = options.random();
  if (!(r >= 0 && r <= 1)) throw new RangeError(`random() must return a number in [0, 1), got ${r}`);
  return r * ceiling;
}
