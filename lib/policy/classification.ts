/**
 * What a provider's error response means for scheduling. Produced by the provider classifier
 * (`lib/providers/classify/classify.ts`), consumed by the pure policy. No imports: policy depends on nothing.
 */

/** The kinds of provider errors that matter for scheduling. */
export type ThrottleKind =
  /** short window (per second / per minute): wait seconds */
  | 'rate_limit'
  /** daily, monthly or project quota exhausted: wait until its reset */
  | 'quota_exhausted'
  /** out of credit or a plan gate: no automatic retry until a person acts */
  | 'billing'
  /** the key itself is invalid, revoked or lacks permission: that key waits for a person, the others carry on */
  | 'auth'
  /** provider capacity (e.g. Anthropic 529, "overloaded"): a real, retryable failure */
  | 'overloaded'
  /** anything else: normal failure rules */
  | 'not_rate_limit';

/** The classifier's verdict on one provider response. */
export interface ProviderErrorClassification {
  kind: ThrottleKind;
  /** The wait the response itself states, in ms; `null` when it states none. */
  retryAfterMs: number | null;
  /** An absolute reset time the response gives (epoch ms as a Date), else `null`. */
  resetAt: Date | null;
}
