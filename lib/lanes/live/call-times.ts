/**
 * How long recent model calls and commits took, per quota owner: the live lane's estimate of what one
 * more try costs. One instance per function instance (a warm Lambda environment, or the local server);
 * it keeps the last {@link RECENT_SAMPLES} durations of each and answers their 95th percentile.
 */

/** Durations kept per quota owner (and for commits). */
export const RECENT_SAMPLES = 50;

/**
 * What a retry's model call is assumed to take before any call was measured (ms): long enough that a
 * retry is tried only with a comfortable deadline, short enough that a fresh function still retries.
 * A request's first call is always tried when there is time left at all (it is cut when the work must end).
 */
export const UNMEASURED_CALL_MS = 3_000;

/** What a commit is assumed to take before any was measured (ms). */
export const UNMEASURED_COMMIT_MS = 200;

/** A bounded window of recent durations. */
class Window {
  readonly #samples: number[] = [];
  #next = 0;

  add(ms: number): void {
    if (!(Number.isFinite(ms) && ms >= 0)) return;
    if (this.#samples.length < RECENT_SAMPLES) this.#samples.push(ms);
    else this.#samples[this.#next] = ms;
    this.#next = (this.#next + 1) % RECENT_SAMPLES;
  }

  p95(): number | undefined {
    if (this.#samples.length === 0) return undefined;
    const sorted = [...this.#samples].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)];
  }
}

/** Recent model-call and commit durations of one function instance. */
export class RecentCallTimes {
  readonly #calls = new Map<string, Window>();
  readonly #commits = new Window();

  /** Notes one answered model call made with a key of `quotaOwner`. */
  observeCall(quotaOwner: string, ms: number): void {
    let window = this.#calls.get(quotaOwner);
    if (!window) {
      window = new Window();
      this.#calls.set(quotaOwner, window);
    }
    window.add(ms);
  }

  /** Notes one commit's duration. */
  observeCommit(ms: number): void {
    this.#commits.add(ms);
  }

  /**
   * The expected time of the next model call (ms): the recent p95 of `quotaOwner` when given and
   * measured; otherwise the slowest owner's recent p95 (admission picks the key, so the next call may
   * go to any owner); `undefined` before any call was measured.
   */
  measuredCallMs(quotaOwner?: string): number | undefined {
    const own = quotaOwner === undefined ? undefined : this.#calls.get(quotaOwner)?.p95();
    if (own !== undefined) return own;
    const all = [...this.#calls.values()].map((w) => w.p95()).filter((v): v is number => v !== undefined);
    return all.length > 0 ? Math.max(...all) : undefined;
  }

  /** What a retry's model call is priced at (ms): {@link measuredCallMs}, or {@link UNMEASURED_CALL_MS} before any was measured. */
  expectedCallMs(quotaOwner?: string): number {
    return this.measuredCallMs(quotaOwner) ?? UNMEASURED_CALL_MS;
  }

  /** The expected time of a commit (ms): the recent p95, or {@link UNMEASURED_COMMIT_MS}. */
  expectedCommitMs(): number {
    return this.#commits.p95() ?? UNMEASURED_COMMIT_MS;
  }
}
