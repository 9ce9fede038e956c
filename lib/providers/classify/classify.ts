/**
 * `classifyProviderError(input)`: what one provider error response means for scheduling.
 *
 * One status code (429) means at least four different things: a short-window limit (wait seconds),
 * an exhausted daily/monthly quota (wait until its reset), being out of credit or behind a plan
 * gate (wait for a person), and provider overload; and a rejected key (401/403) is a fifth: that key
 * waits for a person while the others carry on. This classifier reads each provider's real
 * responses — status, headers, the error body (JSON, a JSON string, an SSE stream) — and returns the
 * kind, the wait the response itself states, and the absolute reset time when one is given.
 *
 * Decisions (documented because the return type is fixed):
 * - A single request larger than the whole per-minute budget (OpenAI/Groq "Request too large …
 *   tokens per min", HTTP 413) is `not_rate_limit` with no wait: waiting never helps. Use
 *   {@link isRequestTooLarge} to tell it apart from other `not_rate_limit` failures.
 * - Google's structured details decide a throttle first, whatever the `provider` dialect (Gemini
 *   reached through an OpenAI-compatible endpoint or OpenRouter sends the same details; its message
 *   "You exceeded your current quota, please check your plan and billing details" is the same for
 *   every quota): a `QuotaFailure` / `ErrorInfo` quota limit of 0 (the free tier excludes the model
 *   or region) is `billing`; a violated PerDay/PerMonth quota is `quota_exhausted`; PerMinute /
 *   PerSecond is `rate_limit` (see `quota-details.ts`). Explicit out-of-credit evidence (402, "credit
 *   balance is too low", `insufficient_quota`) is still `billing`.
 * - Spend/usage caps that reset monthly (OpenAI `organization_spend_limit_exceeded`, Anthropic
 *   "You have reached your specified API usage limits", `enforced_spend_limit_reached`) are
 *   `quota_exhausted`; running out of credit and plan gates (`insufficient_quota`, "credit balance is
 *   too low", 402, a quota limit of 0, "not available on the free tier") are `billing`.
 * - An invalid, revoked, leaked or suspended key, or credentials without permission (401; 400/403
 *   with `invalid_api_key`, `authentication_error`, `permission_error`, Gemini `API_KEY_INVALID` /
 *   `PERMISSION_DENIED`, Bedrock `UnrecognizedClientException` / `AccessDeniedException` for the
 *   caller, Azure "invalid subscription key"…) is `auth` with no wait. A region or country the
 *   provider does not serve, a model the account has no access to, a content-policy refusal, a 404
 *   or a plain 400 is not `auth` (see `auth.ts`). Billing is decided before auth.
 * - A stated wait of 15 minutes or more on a throttle (e.g. `retry-after: 86400`) is a quota, not a
 *   short window.
 * - `retryAfterMs` is the wait the response states whatever the kind (none for `auth`); precedence:
 *   `retry-after-ms`, `retry-after`, Gemini `RetryInfo`, a wait in the message text, then the reset
 *   header of the exceeded limit (`x-ratelimit-reset-*`, `anthropic-ratelimit-*-reset`, `X-RateLimit-Reset`).
 * - `resetAt` is an absolute time the response gives (HTTP-date `retry-after`, RFC 3339 reset header
 *   of an exhausted limit, epoch reset, "regain access on …"); for a `quota_exhausted` whose stated
 *   wait is at least a minute it is computed as now + wait. Every date is validated (a month 13 or
 *   a 30 February is no date, never rolled over), and the response's `date` header is believed as the
 *   server's clock only within ±5 minutes of `now` (else `now` is used).
 * - Hostile input: the classifier never throws and runs in time linear in the input (bounded scans,
 *   capped messages, objects walked once); a body it cannot read is `not_rate_limit` with no wait.
 */
import type { ProviderErrorClassification, ThrottleKind } from '../../policy/classification.js';
import { detectAuth } from './auth.js';
import { detectBilling, detectExplicitQuota, detectOverload, detectQuotaWindow, detectThrottle, detectTooLarge, isGoogle } from './detectors.js';
import { parseHttpDate, serverReferenceTime } from './durations.js';
import { extractFacts } from './error-body.js';
import type { ErrorFacts, ProviderName } from './model.js';

import { type HeaderInput, normalizeHeaders } from './headers.js';
import { hasGoogleDetails, quotaVerdict } from './quota-details.js';
import { absoluteResetFromText, statedWait } from './stated-wait.js';

export { PROVIDER_NAMES, type ProviderName } from './model.js';

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
const NOT_A_THROTTLE: ProviderErrorClassification = Object.freeze({ kind: 'not_rate_limit', retryAfterMs: null, resetAt: null }) as ProviderErrorClassification;

/**
 * Classifies a provider error response. Pure except that, with neither `now` nor a `date` header,
 * it reads the current time. Never throws.
 */
export function classifyProviderError(input: ProviderErrorInput): ProviderErrorClassification {
  try {
    const headers = normalizeHeaders(input.headers);
    const nowMs = resolveNow(input.now, headers) ?? Date.now();
    return classifyAt(input, nowMs);
  } catch {
    return { ...NOT_A_THROTTLE };
  }
}

/**
 * True when the response rejects one request as larger than a whole limit window (OpenAI/Groq
 * "Request too large … on tokens per min (TPM): Limit 30000, Requested 36055", HTTP 413 or
 * Anthropic `request_too_large`): waiting never helps, the request must be shrunk or rejected. Such
 * responses classify as `not_rate_limit` with `retryAfterMs: null`. Never throws.
 */
export function isRequestTooLarge(input: Pick<ProviderErrorInput, 'provider' | 'status' | 'body'> & { headers?: HeaderInput }): boolean {
  try {
    const status = toStatus(input.status);
    const facts = extractFacts(input.body, status);
    return detectTooLarge(status, facts, lowerText(facts));
  } catch {
    return false;
  }
}

/** The pure core: `nowMs` is the caller's reference time. Never throws. */
export function classifyAt(input: ProviderErrorInput, nowMs: number): ProviderErrorClassification {
  try {
    return classifyUnguarded(input, nowMs);
  } catch {
    return { ...NOT_A_THROTTLE };
  }
}

function classifyUnguarded(input: ProviderErrorInput, nowMs: number): ProviderErrorClassification {
  const provider = input.provider;
  const headers = normalizeHeaders(input.headers);
  let rawStatus = toStatus(input.status);
  // An AWS event-stream exception frame (`:message-type: exception`, `:exception-type: …`) is an
  // error even inside a 200 stream.
  if (rawStatus < 400 && isAwsExceptionFrame(headers)) rawStatus = 0;
  const facts = extractFacts(input.body, rawStatus);
  const status = rawStatus >= 400 ? rawStatus : (facts.embeddedStatus ?? (facts.hasError || rawStatus === 0 ? 0 : rawStatus));
  if (status > 0 && status < 400) return result('not_rate_limit', null, null);

  // The server's clock when its `date` header is within a sane skew of ours, else ours.
  const serverNow = serverReferenceTime(headers.date, nowMs);
  const text = lowerText(facts);
  const codes = facts.codes;
  for (const code of awsErrorTypes(headers)) codes.add(code);

  if (detectTooLarge(status, facts, text)) return result('not_rate_limit', null, null);

  const structured = status < 500 && (status === 429 || codes.has('resource_exhausted')) ? quotaVerdict(facts) : null;
  const googleShaped = isGoogle(provider) || codes.has('resource_exhausted') || hasGoogleDetails(facts);
  const billing = structured === 'billing' || detectBilling(provider, status, text, codes, facts, googleShaped);
  if (!billing && detectAuth(status, text, codes)) return result('auth', null, null);
  const throttle = structured !== null || detectThrottle(status, text, codes);
  const quotaExplicit = !billing && structured === null && detectExplicitQuota(text, codes);
  const overloaded = !billing && structured === null && !quotaExplicit && detectOverload(provider, status, text, codes);
  const quotaWindow =
    !billing &&
    !overloaded &&
    (structured === 'quota_exhausted' || (structured === null && (quotaExplicit || (throttle && detectQuotaWindow(text, codes, facts)))));

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
  const n = typeof status === 'number' ? status : typeof status === 'string' && status.length <= 16 ? Number(status) : NaN;
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
