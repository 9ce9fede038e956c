/**
 * A model provider with per-key limits, in virtual time, with the fake provider's semantics
 * (`workbench/fake-provider/limits.ts`): requests and tokens per minute are token buckets that refill
 * continuously (capacity = the limit, refill = limit per minute), and the daily quota is a fixed
 * window that comes back whole at the daily reset (e.g. 00:00 UTC). A refused call spends nothing.
 *
 * A call is answered with one of:
 * - `OK`;
 * - `RATE_LIMIT` with a retry hint (ms until the minute buckets allow the call, as OpenAI's "Please
 *   try again in 20ms" does), classified `rate_limit`;
 * - `QUOTA` with the reset time (epoch ms), classified `quota_exhausted`;
 * - `FAILURE`: a real failure (5xx / timeout), drawn with `failureRate`, classified `not_rate_limit`.
 * Each key is its own quota owner.
 */

/** Limits of one key. */
export interface KeyLimits {
  requestsPerMinute: number;
  tokensPerMinute: number;
  requestsPerDay: number;
}

/** Construction options of {@link ProviderModel}. */
export interface ProviderModelOptions {
  keys: number;
  limits: KeyLimits;
  /** Milliseconds after UTC midnight when the daily quota resets (0: 00:00 UTC). */
  dailyResetOffsetMs: number;
  /** Chance that a call admitted by the limits fails for real (5xx, timeout). */
  failureRate: number;
  /** Virtual start (epoch ms): the buckets start full. */
  start: number;
}

/** The call succeeded. */
export const CALL_OK = 0;
/** 429: the key's per-minute requests or tokens are spent (with a retry hint). */
export const CALL_RATE_LIMIT = 1;
/** 429: the key's daily quota is spent (with the reset time). */
export const CALL_QUOTA = 2;
/** A real failure (5xx, timeout). */
const CALL_FAILURE = 3;
/** How a simulated call was answered: one of the `CALL_*` numbers. */
export type CallResult = typeof CALL_OK | typeof CALL_RATE_LIMIT | typeof CALL_QUOTA | typeof CALL_FAILURE;

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Calls answered, by result. */
export interface ProviderCounters {
  calls: number;
  ok: number;
  rateLimited: number;
  quotaExhausted: number;
  failures: number;
}

/** The provider: call {@link call}, then read {@link retryAfterMs} / {@link resetAt} for a 429. */
export class ProviderModel {
  readonly options: ProviderModelOptions;
  readonly counters: ProviderCounters = { calls: 0, ok: 0, rateLimited: 0, quotaExhausted: 0, failures: 0 };
  /** The retry hint of the last `RATE_LIMIT` (ms). */
  retryAfterMs = 0;
  /** The reset time of the last `QUOTA` (epoch ms). */
  resetAt = 0;
  private readonly requests: Float64Array;
  private readonly tokens: Float64Array;
  private readonly updatedAt: Float64Array;
  private readonly dailyUsed: Float64Array;
  private readonly dailyWindow: Float64Array;

  constructor(options: ProviderModelOptions) {
    const { keys, limits } = options;
    if (!Number.isInteger(keys) || keys < 1) throw new RangeError(`keys must be a positive integer, got ${keys}`);
    for (const [name, value] of Object.entries(limits)) {
      if (!(value > 0)) throw new RangeError(`${name} must be positive, got ${value}`);
    }
    if (!(options.failureRate >= 0 && options.failureRate < 1)) throw new RangeError(`failureRate must be in [0, 1), got ${options.failureRate}`);
    this.options = options;
    this.requests = new Float64Array(keys).fill(limits.requestsPerMinute);
    this.tokens = new Float64Array(keys).fill(limits.tokensPerMinute);
    this.updatedAt = new Float64Array(keys).fill(options.start);
    this.dailyUsed = new Float64Array(keys);
    this.dailyWindow = new Float64Array(keys).fill(this.windowIndex(options.start));
  }

  /** Index of the daily window `now` falls in. */
  windowIndex(now: number): number {
    return Math.floor((now - this.options.dailyResetOffsetMs) / DAY_MS);
  }

  /** The first daily reset after `now` (epoch ms). */
  nextReset(now: number): number {
    return (this.windowIndex(now) + 1) * DAY_MS + this.options.dailyResetOffsetMs;
  }

  /**
   * One call on `key` at `now` spending `tokens` (prompt + completion) when admitted; `uniform` is
   * a number in [0, 1) drawn by the caller for the real-failure chance.
   */
  call(key: number, tokens: number, now: number, uniform: number): CallResult {
    const { limits } = this.options;
    this.counters.calls++;
    const window = this.windowIndex(now);
    if (window !== this.dailyWindow[key]) {
      this.dailyWindow[key] = window;
      this.dailyUsed[key] = 0;
    }
    if (this.dailyUsed[key]! + 1 > limits.requestsPerDay) {
      this.counters.quotaExhausted++;
      this.resetAt = this.nextReset(now);
      return CALL_QUOTA;
    }
    const elapsed = Math.max(0, now - this.updatedAt[key]!);
    const requests = Math.min(limits.requestsPerMinute, this.requests[key]! + (elapsed * limits.requestsPerMinute) / MINUTE_MS);
    const tokenLevel = Math.min(limits.tokensPerMinute, this.tokens[key]! + (elapsed * limits.tokensPerMinute) / MINUTE_MS);
    if (elapsed > 0) {
      this.requests[key] = requests;
      this.tokens[key] = tokenLevel;
      this.updatedAt[key] = now;
    }
    const need = Math.min(tokens, limits.tokensPerMinute);
    const requestWait = requests >= 1 - 1e-9 ? 0 : ((1 - requests) * MINUTE_MS) / limits.requestsPerMinute;
    const tokenWait = tokenLevel >= need - 1e-9 ? 0 : ((need - tokenLevel) * MINUTE_MS) / limits.tokensPerMinute;
    if (requestWait > 0 || tokenWait > 0) {
      this.counters.rateLimited++;
      this.retryAfterMs = Math.max(1, Math.ceil(Math.max(requestWait, tokenWait)));
      return CALL_RATE_LIMIT;
    }
    if (uniform < this.options.failureRate) {
      // A 5xx or a timeout: the request was admitted and counts against the limits.
      this.spend(key, need);
      this.counters.failures++;
      return CALL_FAILURE;
    }
    this.spend(key, need);
    this.counters.ok++;
    return CALL_OK;
  }

  private spend(key: number, tokens: number): void {
    this.requests[key] = this.requests[key]! - 1;
    this.tokens[key] = this.tokens[key]! - tokens;
    this.dailyUsed[key] = this.dailyUsed[key]! + 1;
  }
}
