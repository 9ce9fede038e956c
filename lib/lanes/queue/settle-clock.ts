/**
 * How long settling a record takes in this execution environment, learned as it goes. A record the
 * invocation's work leaves is sent back in the time kept at the end (the settle margin); when the
 * provider, the tables or the queue are slow — or the machine is — that takes longer, and a margin
 * that no longer holds it would fail records whose re-send was already on its way (a second copy of
 * the job). So the margin grows with the settling times seen: slowness costs some work at the end of
 * an invocation instead of multiplying messages.
 */

/** How many times the typical settling time the margin keeps. */
const SAFETY_FACTOR = 3;
/** Weight of each new observation in the moving average. */
const WEIGHT = 0.2;
/** The margin never takes more than this share of an invocation's time. */
const MAX_SHARE = 0.5;

/** The settling times of one execution environment. */
export class SettleClock {
  #averageMs: number | undefined;

  /** Records how long one record's settling took (ms). */
  observe(ms: number): void {
    if (!(Number.isFinite(ms) && ms >= 0)) return;
    this.#averageMs = this.#averageMs === undefined ? ms : this.#averageMs + WEIGHT * (ms - this.#averageMs);
  }

  /** The moving average of the settling times seen (ms), if any. */
  get averageMs(): number | undefined {
    return this.#averageMs;
  }

  /**
   * The settle margin for an invocation of `invocationMs`: at least `baseMs`, else a few times the
   * typical settling time, never more than half the invocation.
   */
  marginMs(baseMs: number, invocationMs: number): number {
    const learned = this.#averageMs === undefined ? 0 : SAFETY_FACTOR * this.#averageMs;
    return Math.min(Math.max(baseMs, learned), Number.isFinite(invocationMs) ? invocationMs * MAX_SHARE : Number.POSITIVE_INFINITY);
  }
}
