/**
 * `classifyProviderError(input)`: what one provider error response means for scheduling.
 *
 * One status code (429) means at least four different things: a short-window limit (wait seconds),
 * an exhausted daily/monthly quota (wait until its reset), being out of credit or behind a plan
 * gate (wait for a person), and provider overload. This classifier reads each provider's real
 * responses — status, headers, the error body (JSON, a JSON string, an SSE stream) — and returns the
 * kind, the wait the response itself states, and the absolute reset time when one is given.
 *
 * Decisions (documented because the return type is fixed):
 * - A single request larger than the whole per-minute budget (OpenAI/Groq "Request too large …
 *   tokens per min", HTTP 413) is `not_rate_limit` with no wait: waiting never helps. Use
 *   {@link isRequestTooLarge} to tell it apart from other `not_rate_limit` failures.
 * - Spend/usage caps that reset monthly (OpenAI `organization_spend_limit_exceeded`, Anthropic
 *   "You have reached your specified API usage limits", `enforced_spend_limit_reached`) are
 *   `quota_exhausted`; running out of credit and plan gates (`insufficient_quota`, "credit balance is
 *   too low", 402, Gemini `limit: 0`) are `billing`.
 * - A stated wait of 15 minutes or more on a throttle (e.g. `retry-after: 86400`) is a quota, not a
 *   short window.
 * - `retryAfterMs` is the wait the response states whatever the kind; precedence: `retry-after-ms`,
 *   `retry-after`, Gemini `RetryInfo`, a wait in the message text, then the reset header of the
 *   exceeded limit (`x-ratelimit-reset-*`, `anthropic-ratelimit-*-reset`, `X-RateLimit-Reset`).
 * - `resetAt` is an absolute time the response gives (HTTP-date `retry-after`, RFC 3339 reset header
 *   of an exhausted limit, epoch reset, "regain access on …"); for a `quota_exhausted` whose stated
 *   wait is at least a minute it is computed as now + wait.
 */
import type { ProviderErrorClassification, ThrottleKind } from '../policy/classification.js';
import { parseHttpDate } from './durations.js';
import { extractFacts, normalizeHeaders, type ErrorFacts, type HeaderInput } from './error-body.js';
import { absoluteResetFromText, statedWait } from './stated-wait.js';

/** The providers whose error dialects the classifier knows. */
export const PROVIDER_NAMES = ['openai', 'azure-openai', 'anthropic', 'gemini', 'vertex', 'bedrock', 'mistral', 'groq', 'openrouter', 'cohere'] as const;

export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** One provider response to classify. */
export interface ProviderErrorInput {
  provider: ProviderName;
  /** HTTP status (a stream that failed after a 200 passes 200). */
  status: number;
  /** Response headers: a record (names in any case) or a fetch `Headers`. */
  headers?: HeaderInput;
  /** The parsed JSON body, or the raw body text (JSON, SSE stream or plain text). */
  body?: unknown;
  /** Reference time: a Date or epoch ms. Default: the `date` header, else the current time. */
  now?: Date | number;
}

const QUOTA_WAIT_THRESHOLD_MS = 15 * 60_000;
const COMPUTED_RESET_MIN_MS = 60_000;

/**
 * Classifies a provider error response. Pure except that, with neither `now` nor a `date` header,
 * it reads the current time.
 */
export function classifyProviderError(input: ProviderErrorInput): ProviderErrorClassification {
  const headers = normalizeHeaders(input.headers);
  const nowMs = resolveNow(input.now, headers) ?? Date.now();
  return classifyAt(input, nowMs);
}

/**
 * True when the response rejects one request as larger than a whole limit window (OpenAI/Groq
 * "Request too large … on tokens per min (TPM): Limit 30000, Requested 36055", HTTP 413 or
 * Anthropic `request_too_large`): waiting never helps, the request must be shrunk or rejected. Such
 * responses classify as `not_rate_limit` with `retryAfterMs: null`.
 */
export function isRequestTooLarge(input: Pick<ProviderErrorInput, 'provider' | 'status' | 'body'> & { headers?: HeaderInput }): boolean {
  const status = toStatus(input.status);
  const facts = extractFacts(input.body, status);
  return detectTooLarge(status, facts, lowerText(facts));
}

/** The pure core: `nowMs` is the caller's reference time. */
export function classifyAt(input: ProviderErrorInput, nowMs: number): ProviderErrorClassification {
  const provider = input.provider;
  const headers = normalizeHeaders(input.headers);
  let rawStatus = toStatus(input.status);
  // An AWS event-stream exception frame (`:message-type: exception`, `:exception-type: …`) is an
  // error even inside a 200 stream.
  if (rawStatus < 400 && isAwsExceptionFrame(headers)) rawStatus = 0;
  const facts = extractFacts(input.body, rawStatus);
  const status = rawStatus >= 400 ? rawStatus : (facts.embeddedStatus ?? (facts.hasError || rawStatus === 0 ? 0 : rawStatus));
  if (status > 0 && status < 400) return result('not_rate_limit', null, null);

  const dateMs = parseHttpDate(headers.date)?.getTime() ?? null;
  const serverNow = dateMs ?? nowMs;
  const text = lowerText(facts);
  const codes = facts.codes;
  for (const code of awsErrorTypes(headers)) codes.add(code);

  if (detectTooLarge(status, facts, text)) return result('not_rate_limit', null, null);

  const billing = detectBilling(provider, status, text, codes, facts);
  const throttle = detectThrottle(status, text, codes);
  const quotaExplicit = !billing && detectExplicitQuota(text, codes);
  const overloaded = !billing && !quotaExplicit && detectOverload(provider, status, text, codes);
  const quotaWindow = !billing && !overloaded && (quotaExplicit || (throttle && detectQuotaWindow(text, codes, facts)));

  let kind: ThrottleKind = billing ? 'billing' : quotaWindow ? 'quota_exhausted' : overloaded ? 'overloaded' : throttle ? 'rate_limit' : 'not_rate_limit';

  const wait = statedWait({ headers, facts, text, serverNow, kind, provider });
  if (kind === 'rate_limit' && wait.ms !== null && wait.ms >= QUOTA_WAIT_THRESHOLD_MS) kind = 'quota_exhausted';

  let resetAt = wait.at ?? absoluteResetFromText(facts, codes, nowMs);
  if (resetAt === null && kind === 'quota_exhausted' && wait.ms !== null && wait.ms >= COMPUTED_RESET_MIN_MS) {
    resetAt = new Date(nowMs + wait.ms);
  }
  let retryAfterMs = wait.ms;
  if (retryAfterMs === null && resetAt !== null && kind !== 'not_rate_limit') {
    retryAfterMs = Math.max(0, resetAt.getTime() - serverNow);
  }
  return result(kind, retryAfterMs, resetAt);
}

function result(kind: ThrottleKind, retryAfterMs: number | null, resetAt: Date | null): ProviderErrorClassification {
  return { kind, retryAfterMs, resetAt };
}

function resolveNow(now: Date | number | undefined, headers: Record<string, string>): number | null {
  if (now instanceof Date && Number.isFinite(now.getTime())) return now.getTime();
  if (typeof now === 'number' && Number.isFinite(now)) return now;
  return parseHttpDate(headers.date)?.getTime() ?? null;
}

function toStatus(status: unknown): number {
  const n = typeof status === 'number' ? status : typeof status === 'string' ? Number(status) : NaN;
  return Number.isFinite(n) ? Math.trunc(n) : 0;
}

function lowerText(facts: ErrorFacts): string {
  return facts.texts.join('\n').toLowerCase();
}

function isAwsExceptionFrame(headers: Record<string, string>): boolean {
  return headers[':message-type']?.trim().toLowerCase() === 'exception' || Boolean(headers[':exception-type']);
}

/** `x-amzn-errortype: ThrottlingException:http://internal.amazon.com/…` and event-stream headers. */
function awsErrorTypes(headers: Record<string, string>): string[] {
  const out: string[] = [];
  for (const name of ['x-amzn-errortype', ':exception-type', 'x-amzn-error-type']) {
    const value = headers[name];
    if (value) out.push((value.split(':')[0] ?? value).trim().toLowerCase());
  }
  return out;
}

function hasCode(codes: Set<string>, ...wanted: string[]): boolean {
  return wanted.some((w) => codes.has(w));
}

function isGoogle(provider: ProviderName): boolean {
  return provider === 'gemini' || provider === 'vertex';
}

// ---------------------------------------------------------------------------------------------
// Request too large for a whole window: reject, do not wait.

function detectTooLarge(status: number, facts: ErrorFacts, text: string): boolean {
  if (status === 413) return true;
  if (facts.codes.has('request_too_large')) return true;
  if (/request too large\b/.test(text) && /(tokens? per min|\btpm\b|per[- ]minute|tokens? per day|\btpd\b)/.test(text)) return true;
  // "Limit 7000, Used 0, Requested ~12903": the one request asks for more than the whole limit.
  if (requestedExceedsLimit(text)) return true;
  // "Limit 30000, Requested 36055. The input or output tokens must be reduced" (no "Used": not a burst).
  if (/must be reduced|reduce your message size|reduce the size of your request/.test(text) && /\blimit:? ?[\d,]+, requested:? ?[\d,]+/.test(text)) {
    return true;
  }
  return false;
}

/**
 * A limit statement ("Limit 7000, Used 0, Requested ~12903", "Limit: 30000, Requested: 36055")
 * whose request alone is larger than the limit: no wait lets it through.
 */
function requestedExceedsLimit(text: string): boolean {
  for (const m of text.matchAll(/\blimit:?\s*([\d,]+)\s*(?:\/\s*[a-z]+)?,\s*(?:used:?\s*[\d,]+,\s*)?requested:?\s*~?\s*([\d,]+)/g)) {
    const limit = Number((m[1] ?? '').replace(/,/g, ''));
    const requested = Number((m[2] ?? '').replace(/,/g, ''));
    if (Number.isFinite(limit) && Number.isFinite(requested) && limit > 0 && requested > limit) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Billing: out of credit or a plan gate; no automatic retry until a person acts.

const BILLING_CODES = [
  'insufficient_quota',
  'credit_balance_exhausted',
  'billing_error',
  'billing_not_active',
  'insufficient_credits',
  'insufficient_balance',
  'payment_required',
  'openrouter_credits',
  'account_deactivated',
];

const SPEND_CAP_CODES = [
  'organization_spend_limit_exceeded',
  'project_spend_limit_exceeded',
  'organization_usage_limit_exceeded',
  'enforced_spend_limit_reached',
  'billing_hard_limit_reached',
];

function detectBilling(provider: ProviderName, status: number, text: string, codes: Set<string>, facts: ErrorFacts): boolean {
  if (hasCode(codes, ...SPEND_CAP_CODES)) return false;
  if (status === 402) return true;
  if (hasCode(codes, ...BILLING_CODES)) return true;
  if (
    /credit balance is too low|insufficient credits?|insufficient (?:account )?balance|requires more credits|credits are required|can only afford|never purchased credits|out of credits|purchase (?:more )?credits|add (?:more )?credits to continue|your account is not active|billing (?:is )?not active|requires billing to be enabled|enable billing|billing account (?:is )?(?:disabled|closed)|payment (?:is )?required|update your payment method|add a payment method to continue|free trial (?:has )?(?:expired|ended)|trial (?:has )?expired/.test(
      text,
    )
  ) {
    return true;
  }
  // OpenAI's insufficient_quota message; Google uses the same words for ordinary quotas, so only
  // outside Gemini/Vertex.
  if (!isGoogle(provider) && /exceeded your current quota|check your plan and billing details/.test(text)) return true;
  // Plan gates: a quota whose limit is 0 (Gemini free tier for a paid-only model or region).
  if (isGoogle(provider) || provider === 'openrouter') {
    if (/\blimit:\s*0(?![\d.])/.test(text)) return true;
    if (facts.quotaValues.some((v) => v.trim() === '0')) return true;
    // The same ErrorInfo rendered as text by the older gRPC clients.
    if (/quota_limit_value"?\s*(?:value:|:)\s*"?0"?(?![\d.])/.test(text)) return true;
    if (/(?:does not|doesn't) have a free (?:quota )?tier|not available (?:on|in|for) the free tier|free tier (?:is )?not (?:available|supported)/.test(text)) {
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Throttle: any limit was hit (the kind is refined by window, billing and overload).

const THROTTLE_CODES = [
  'rate_limit_exceeded',
  'rate_limit_error',
  'rate_limited',
  'ratelimitexceeded',
  'rate_limit',
  'throttlingexception',
  'throttling',
  'throttled',
  'resource_exhausted',
  'too_many_requests',
  'toomanyrequests',
  'slow_down',
  'requests',
  'tokens',
  '1300',
  'quota_exceeded',
  'servicequotaexceededexception',
];

function detectThrottle(status: number, text: string, codes: Set<string>): boolean {
  if (status === 429) return true;
  if (hasCode(codes, ...THROTTLE_CODES)) return true;
  if (
    /rate ?limit(?:ed)? (?:reached|exceeded|is exceeded)|rate[- ]limited|too many requests|quota exceeded|exceeded (?:your |the )?(?:[a-z ]+ )?quota|resource (?:has been )?exhausted|exceeded (?:your )?(?:token |call )?rate limit|request rate is too high/.test(
      text,
    )
  ) {
    return true;
  }
  // "Too many tokens" is Bedrock's throttle wording (429 / ThrottlingException, caught above); on
  // another client error it is a request-size validation ("Too many tokens in batch. Max is 16384").
  return !(status >= 400 && status < 500) && /too many tokens(?!\s+in\b)/.test(text);
}

// ---------------------------------------------------------------------------------------------
// Quota: daily, monthly or project quota exhausted.

function detectExplicitQuota(text: string, codes: Set<string>): boolean {
  if (hasCode(codes, ...SPEND_CAP_CODES)) return true;
  if (hasCode(codes, 'openrouter_free_tier_daily', 'servicequotaexceededexception')) return true;
  return /you have reached your specified (?:workspace )?api usage limits|billing hard limit has been reached|(?:monthly|daily) (?:spend|spending|usage) limit|spend(?:ing)? limit (?:reached|exceeded|has been reached)|you will regain access on/.test(
    text,
  );
}

const WINDOW_TEXT =
  /per[\s_-]?day\b|perday|\bdaily\b|\((?:rpd|tpd)\)|\b(?:rpd|tpd)\b|per[\s_-]?month\b|permonth|\bmonthly\b|\/\s*month\b|per 24 ?h(?:ours)?\b|per[\s_-]?week\b|weekly/;

function detectQuotaWindow(text: string, codes: Set<string>, facts: ErrorFacts): boolean {
  if (facts.quotaIds.some((id) => /perday|per_day|per-day|daily|permonth|per_month/i.test(id))) return true;
  if (WINDOW_TEXT.test(text)) return true;
  for (const code of codes) if (WINDOW_TEXT.test(code)) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Overload: provider capacity, a real and retryable failure.

const OVERLOAD_CODES = [
  'overloaded_error',
  'server_is_overloaded',
  'overloaded',
  'capacity_exceeded',
  'serviceunavailableexception',
  'modelnotreadyexception',
  'model_capacity_exhausted',
  'service_unavailable',
  'provider_overloaded',
  'engine_overloaded',
];

function detectOverload(provider: ProviderName, status: number, text: string, codes: Set<string>): boolean {
  if (status === 529 || status === 503) return true;
  if (provider === 'groq' && status === 498) return true;
  if (hasCode(codes, ...OVERLOAD_CODES)) return true;
  if (hasCode(codes, 'unavailable') && (status === 0 || status >= 500)) return true;
  if (
    /overloaded|experiencing high demand|high demand|(?:service tier )?capacity exceeded|no capacity available|insufficient capacity|out of capacity|at capacity|over capacity|too many connections|temporarily unable to process|model is not ready|not ready for inference|currently unavailable due to|please try again later\.? (?:the )?(?:server|service) is busy/.test(
      text,
    )
  ) {
    return true;
  }
  // Google's shared pool had no capacity ("Resource exhausted. Please try again later. Please refer
  // to …/error-code-429"): Vertex pay-as-you-go, and the Gemini API / Code Assist backends that
  // answer with the same wording. Not a quota of the caller's ("Quota exceeded for …").
  if (isGoogle(provider) && /resource exhausted[.,]? please try again later/.test(text) && !/quota exceeded/.test(text)) return true;
  return false;
}
