/**
 * Rate-limit budgets of the fake provider, kept per quota owner.
 *
 * Window semantics (chosen to match what OpenAI's own numbers show):
 * - RPM and TPM are token buckets that refill continuously at `limit / minuteMs`, with capacity
 *   `limit`. OpenAI's messages fit exactly this model: "RPM: Limit 3, Used 3, Requested 1. Please
 *   try again in 20s" (60 s / 3), "RPM: Limit 3000 … try again in 20ms" (60 s / 3000), and
 *   "TPM: Limit 30000, Used 29937, Requested 385. Please try again in 644ms"
 *   ((385 − 63) tokens at 500 tokens/s). Sources: github.com/OpenBMB/ChatDev/issues/26,
 *   github.com/openai/codex/issues/10060, github.com/BuilderIO/micro-agent/issues/86.
 *   `x-ratelimit-reset-*` is the time until the bucket is full again ("reset-requests: 12ms" after
 *   one request on a 5000 RPM limit: community.openai.com/t/…/1268905).
 * - RPD is a fixed window by default (the whole budget returns when the scaled day ends, like a
 *   quota that resets at midnight), or a continuous bucket like OpenAI's ("RPD: Limit 1000, Used
 *   1000, Requested 1. Please try again in 1m26.4s" = 86 400 s / 1000,
 *   github.com/openai/openai-agents-js/issues/1022) with `dailyWindow: 'continuous'`.
 * - An admitted request spends 1 request and, up front, its prompt tokens plus
 *   `max_completion_tokens` when given; without that cap the completion tokens are spent after the
 *   answer (the bucket may go below zero, so the next caller waits).
 * - A refused request (429 on RPM/TPM/RPD, or too large for the TPM budget) spends what its
 *   dialect's {@link RefusedRequestRule} says, and only where the provider documents it:
 *   - openai: 1 request of RPM, no tokens, no RPD. OpenAI's rate-limit guide ("Retrying with
 *     exponential backoff", developers.openai.com/api/docs/guides/rate-limits, also the cookbook
 *     "How to handle rate limits"): "unsuccessful requests contribute to your per-minute limit, so
 *     continuously resending a request won't work". It names no tokens, so none are spent.
 *   - gemini: nothing. Google's "Rate limits" page (ai.google.dev/gemini-api/docs/rate-limits) says
 *     how RPM/TPM/RPD are evaluated and nothing about refused requests.
 *   - (No Anthropic dialect here. Anthropic's "Rate limits" page, platform.claude.com/docs/en/api/rate-limits,
 *     documents a token bucket and `retry-after` — "Earlier retries will fail." — but not whether a
 *     refused request spends anything: an Anthropic dialect would spend nothing.)
 *   The charge comes after the refusal: its body and headers ("Used", retry hint, `x-ratelimit-*`)
 *   show the budget before it. The RPM bucket may then go below zero, so every later check (the next
 *   caller's admission, "Used", retry hint and headers) includes it. A client that keeps resending
 *   keeps itself refused, and one that retries exactly at its own hint finds the bucket one refill
 *   short (OpenAI: treat `Retry-After` "as a minimum … and add a small random delay", same guide).
 */
import type { DailyWindowKind, FakeProviderLimits, RefusedRequestRule } from './types.js';

/** A budget that can be spent and that refills over time. */
interface Budget {
  /** The configured limit (bucket capacity or requests per window). */
  readonly limit: number;
  /** How much of the limit is spent now (shown as "Used N"). */
  used(now: number): number;
  /** How much may still be spent now, never below 0 (the `x-ratelimit-remaining-*` header). */
  remaining(now: number): number;
  /** Milliseconds until `amount` can be spent; 0 when it can now; `Infinity` when it never can. */
  waitMs(amount: number, now: number): number;
  /** Spends `amount` without checking. */
  take(amount: number, now: number): void;
  /** Milliseconds until the budget is whole again (the `x-ratelimit-reset-*` header). */
  msUntilFull(now: number): number;
  /** Makes the budget whole again, starting a new window now. */
  refillAll(now: number): void;
}

/** A bucket of `capacity` that refills continuously, `capacity` per `windowMs`. */
class ContinuousBucket implements Budget {
  private level: number;
  private updatedAt: number;
  private readonly refillPerMs: number;

  constructor(
    readonly limit: number,
    windowMs: number,
    now: number,
  ) {
    this.level = limit;
    this.updatedAt = now;
    this.refillPerMs = limit / windowMs;
  }

  private levelAt(now: number): number {
    if (now > this.updatedAt) {
      this.level = Math.min(this.limit, this.level + (now - this.updatedAt) * this.refillPerMs);
      this.updatedAt = now;
    }
    return this.level;
  }

  used(now: number): number {
    return Math.max(0, Math.ceil(this.limit - this.levelAt(now) - 1e-9));
  }

  remaining(now: number): number {
    return Math.max(0, Math.floor(this.levelAt(now) + 1e-9));
  }

  waitMs(amount: number, now: number): number {
    if (amount > this.limit) return Infinity;
    const missing = amount - this.levelAt(now);
    return missing <= 1e-9 ? 0 : missing / this.refillPerMs;
  }

  take(amount: number, now: number): void {
    this.level = this.levelAt(now) - amount;
  }

  msUntilFull(now: number): number {
    return (this.limit - this.levelAt(now)) / this.refillPerMs;
  }

  refillAll(now: number): void {
    this.level = this.limit;
    this.updatedAt = now;
  }
}

/** At most `limit` per window of `windowMs`; windows follow each other from `epoch`. */
class FixedWindow implements Budget {
  private windowIndex = 0;
  private spent = 0;

  constructor(
    readonly limit: number,
    private readonly windowMs: number,
    private epoch: number,
  ) {}

  private spentAt(now: number): number {
    const index = Math.max(0, Math.floor((now - this.epoch) / this.windowMs));
    if (index !== this.windowIndex) {
      this.windowIndex = index;
      this.spent = 0;
    }
    return this.spent;
  }

  private msUntilWindowEnds(now: number): number {
    return this.epoch + (this.windowIndex + 1) * this.windowMs - now;
  }

  used(now: number): number {
    return this.spentAt(now);
  }

  remaining(now: number): number {
    return Math.max(0, this.limit - this.spentAt(now));
  }

  waitMs(amount: number, now: number): number {
    if (amount > this.limit) return Infinity;
    return this.spentAt(now) + amount <= this.limit ? 0 : this.msUntilWindowEnds(now);
  }

  take(amount: number, now: number): void {
    this.spent = this.spentAt(now) + amount;
  }

  msUntilFull(now: number): number {
    return this.spentAt(now) === 0 ? 0 : this.msUntilWindowEnds(now);
  }

  refillAll(now: number): void {
    this.epoch = now;
    this.windowIndex = 0;
    this.spent = 0;
  }
}

/** What one owner's budgets say about a request. */
export type Admission =
  | { admitted: true }
  | {
      admitted: false;
      /** Which budget refused. `too_large`: the request alone exceeds the whole TPM limit. */
      kind: 'rpm' | 'tpm' | 'rpd' | 'too_large';
      limit: number;
      used: number;
      requested: number;
      /** When the request could pass; `null` when waiting can never help (`too_large`). */
      waitMs: number | null;
    };

/** Values for the `x-ratelimit-*` headers of one owner (absent parts are unlimited). */
export interface RateLimitSnapshot {
  requests?: { limit: number; remaining: number; resetMs: number };
  tokens?: { limit: number; remaining: number; resetMs: number };
}

interface OwnerBudgets {
  rpm?: Budget;
  tpm?: Budget;
  rpd?: Budget;
}

/** Timing of the budgets: scaled minute and day, and how the daily budget refills. */
export interface LedgerTiming {
  minuteMs: number;
  dayMs: number;
  dailyWindow: DailyWindowKind;
  /** Where the first fixed day starts (epoch ms, at most `now`); default: at construction. */
  dayStartMs?: number | undefined;
}

/**
 * Every quota owner's budgets; owners appear on first use. Fixed daily windows of all owners start
 * together (at construction or the given `dayStartMs`, or at the last {@link QuotaLedger.resetDay}),
 * like a midnight reset.
 */
export class QuotaLedger {
  private readonly owners = new Map<string, OwnerBudgets>();
  private dayEpoch: number;

  constructor(
    private readonly limits: FakeProviderLimits,
    private readonly timing: LedgerTiming,
    now: number,
  ) {
    this.dayEpoch = Math.min(now, timing.dayStartMs ?? now);
  }

  private budgetsOf(owner: string, now: number): OwnerBudgets {
    let budgets = this.owners.get(owner);
    if (!budgets) {
      const { requestsPerMinute, tokensPerMinute, requestsPerDay } = this.limits;
      const { minuteMs, dayMs, dailyWindow } = this.timing;
      budgets = {
        rpm: requestsPerMinute === undefined ? undefined : new ContinuousBucket(requestsPerMinute, minuteMs, now),
        tpm: tokensPerMinute === undefined ? undefined : new ContinuousBucket(tokensPerMinute, minuteMs, now),
        rpd:
          requestsPerDay === undefined
            ? undefined
            : dailyWindow === 'continuous'
              ? new ContinuousBucket(requestsPerDay, dayMs, now)
              : new FixedWindow(requestsPerDay, dayMs, this.dayEpoch),
      };
      this.owners.set(owner, budgets);
    }
    return budgets;
  }

  /** Checks, without spending, whether `owner` may send one request of `tokens` tokens now. */
  check(owner: string, tokens: number, now: number): Admission {
    const { rpm, tpm, rpd } = this.budgetsOf(owner, now);
    if (tpm && tokens > tpm.limit) {
      return { admitted: false, kind: 'too_large', limit: tpm.limit, used: tpm.used(now), requested: tokens, waitMs: null };
    }
    const checks: Array<['rpd' | 'rpm' | 'tpm', Budget | undefined, number]> = [
      ['rpd', rpd, 1],
      ['rpm', rpm, 1],
      ['tpm', tpm, tokens],
    ];
    for (const [kind, budget, amount] of checks) {
      if (!budget) continue;
      const waitMs = budget.waitMs(amount, now);
      if (waitMs > 0) return { admitted: false, kind, limit: budget.limit, used: budget.used(now), requested: amount, waitMs };
    }
    return { admitted: true };
  }

  /** Spends one request and `tokens` tokens of `owner`'s budgets. */
  spendRequest(owner: string, tokens: number, now: number): void {
    const { rpm, tpm, rpd } = this.budgetsOf(owner, now);
    rpm?.take(1, now);
    rpd?.take(1, now);
    tpm?.take(tokens, now);
  }

  /**
   * Charges a request of `tokens` tokens that the budgets just refused, as `rule` says (after its
   * answer was made): RPM and TPM may go below zero, so the next check of `owner` waits for it.
   */
  spendRefused(owner: string, tokens: number, rule: RefusedRequestRule, now: number): void {
    const { rpm, tpm } = this.budgetsOf(owner, now);
    if (rule.spendsRequest) rpm?.take(1, now);
    if (rule.spendsTokens) tpm?.take(tokens, now);
  }

  /** Spends `tokens` more tokens of `owner`'s TPM budget (completion tokens known only after the answer). */
  spendTokens(owner: string, tokens: number, now: number): void {
    this.budgetsOf(owner, now).tpm?.take(tokens, now);
  }

  /** The per-minute budgets of `owner`, for the `x-ratelimit-*` headers. */
  snapshot(owner: string, now: number): RateLimitSnapshot {
    const { rpm, tpm } = this.budgetsOf(owner, now);
    const describe = (budget: Budget) => ({ limit: budget.limit, remaining: budget.remaining(now), resetMs: budget.msUntilFull(now) });
    return { requests: rpm ? describe(rpm) : undefined, tokens: tpm ? describe(tpm) : undefined };
  }

  /** Starts a new day for every owner: daily budgets are whole again. */
  resetDay(now: number): void {
    this.dayEpoch = now;
    for (const budgets of this.owners.values()) budgets.rpd?.refillAll(now);
  }
}
