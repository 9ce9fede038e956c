/**
 * The detectors the classifier combines (`classify.ts`): a request too large for a whole window,
 * billing, a throttle, an explicit or windowed quota, provider overload. Each reads the lower-cased
 * messages (capped by `error-body.ts`, so every regex here runs over at most a few dozen KB and none
 * can backtrack super-linearly), the codes and the facts. Pure.
 */
import type { ProviderName } from './model.js';
import type { ErrorFacts } from './model.js';

function hasCode(codes: Set<string>, ...wanted: string[]): boolean {
  return wanted.some((w) => codes.has(w));
}

/** Gemini API or Vertex AI. */
export function isGoogle(provider: ProviderName): boolean {
  return provider === 'gemini' || provider === 'vertex';
}

// ---------------------------------------------------------------------------------------------
// Request too large for a whole window: reject, do not wait.

/** A single request larger than a whole window's budget (413, "Request too large … tokens per min", Requested > Limit). */
export function detectTooLarge(status: number, facts: ErrorFacts, text: string): boolean {
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

/**
 * Out of credit or a plan gate. `googleShaped`: the response is Google's (a Gemini/Vertex lane, a
 * `RESOURCE_EXHAUSTED` status or Google's structured details, e.g. Gemini reached through an
 * OpenAI-compatible endpoint): Google words every quota "You exceeded your current quota, please
 * check your plan and billing details", so those words are billing only in other dialects (OpenAI's
 * `insufficient_quota`).
 */
export function detectBilling(provider: ProviderName, status: number, text: string, codes: Set<string>, facts: ErrorFacts, googleShaped: boolean): boolean {
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
  if (!googleShaped && /exceeded your current quota|check your plan and billing details/.test(text)) return true;
  // Plan gates: a quota whose limit is 0 (Gemini free tier for a paid-only model or region).
  if (googleShaped || provider === 'openrouter') {
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

/** Any limit was hit (429, a throttle code or wording); the kind is refined by window, billing and overload. */
export function detectThrottle(status: number, text: string, codes: Set<string>): boolean {
  if (status === 429) return true;
  if (hasCode(codes, ...THROTTLE_CODES)) return true;
  if (
    /rate ?limit(?:ed)? (?:reached|exceeded|is exceeded)|rate[- ]limited|too many requests|quota exceeded|exceeded (?:your |the )?(?:[a-z]{1,24} ){0,4}quota|resource (?:has been )?exhausted|exceeded (?:your )?(?:token |call )?rate limit|request rate is too high/.test(
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

/** A spend cap or a quota with an explicit reset ("You will regain access on …"): `quota_exhausted`. */
export function detectExplicitQuota(text: string, codes: Set<string>): boolean {
  if (hasCode(codes, ...SPEND_CAP_CODES)) return true;
  if (hasCode(codes, 'openrouter_free_tier_daily', 'servicequotaexceededexception')) return true;
  return /you have reached your specified (?:workspace )?api usage limits|billing hard limit has been reached|(?:monthly|daily) (?:spend|spending|usage) limit|spend(?:ing)? limit (?:reached|exceeded|has been reached)|you will regain access on/.test(
    text,
  );
}

const WINDOW_TEXT =
  /per[\s_-]?day\b|perday|\bdaily\b|\((?:rpd|tpd)\)|\b(?:rpd|tpd)\b|per[\s_-]?month\b|permonth|\bmonthly\b|\/\s*month\b|per 24 ?h(?:ours)?\b|per[\s_-]?week\b|weekly/;

/** The exceeded limit is per day / week / month (a quota id, the wording or a code). */
export function detectQuotaWindow(text: string, codes: Set<string>, facts: ErrorFacts): boolean {
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

/** Provider capacity (529, 503, Groq 498, "overloaded", Vertex's shared pool): a real, retryable failure. */
export function detectOverload(provider: ProviderName, status: number, text: string, codes: Set<string>): boolean {
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
