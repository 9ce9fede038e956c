/**
 * The per-minute limits a provider states on its answers: the quota owner's (the organization's), read
 * from a successful response's headers so admission can take the provider's own figure where it is
 * lower than the lane's configured one (`bucket/token-bucket.ts`, `statedLimitsUpdate`). Untrusted like
 * every header: only whole numbers from 1 to 10^12 are kept.
 *
 * Which headers count a minute, by dialect:
 * - `openai`: `x-ratelimit-limit-requests` (RPM) and `x-ratelimit-limit-tokens` (TPM);
 * - `groq`: `x-ratelimit-limit-tokens` (TPM) only — its `x-ratelimit-limit-requests` counts a day;
 * - `anthropic`: `anthropic-ratelimit-requests-limit` (RPM) and `anthropic-ratelimit-tokens-limit` (the
 *   most restrictive token limit in effect, input and output together, as admission counts tokens).
 * Other dialects state none that admission reads (Bedrock and Gemini send no such headers).
 */
import type { ProviderName } from './classify/model.js';
import { type HeaderInput, normalizeHeaders } from './classify/headers.js';

/** A provider's own per-minute limits, as its answer stated them (absent: not stated). */
export interface StatedLimits {
  requestsPerMinute?: number | undefined;
  tokensPerMinute?: number | undefined;
}

/** The headers that state each per-minute limit, by dialect. */
const LIMIT_HEADERS: Partial<Record<ProviderName, { requests?: string; tokens?: string }>> = {
  openai: { requests: 'x-ratelimit-limit-requests', tokens: 'x-ratelimit-limit-tokens' },
  groq: { tokens: 'x-ratelimit-limit-tokens' },
  anthropic: { requests: 'anthropic-ratelimit-requests-limit', tokens: 'anthropic-ratelimit-tokens-limit' },
};

/** The largest figure believed (no provider states more than a trillion a minute). */
const MAX_STATED = 1e12;

/** A header's value as a whole number in 1..{@link MAX_STATED}, else `undefined`. */
function wholeNumber(text: string | undefined): number | undefined {
  if (text === undefined || !/^\s*\d{1,13}\s*$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= MAX_STATED ? n : undefined;
}

/**
 * The per-minute limits `headers` state in `provider`'s dialect, or `undefined` when they state none.
 * Never throws.
 */
export function statedLimitsOf(provider: ProviderName, headers: HeaderInput): StatedLimits | undefined {
  const names = LIMIT_HEADERS[provider];
  if (!names) return undefined;
  const read = normalizeHeaders(headers);
  const requestsPerMinute = names.requests ? wholeNumber(read[names.requests]) : undefined;
  const tokensPerMinute = names.tokens ? wholeNumber(read[names.tokens]) : undefined;
  if (requestsPerMinute === undefined && tokensPerMinute === undefined) return undefined;
  return { ...(requestsPerMinute !== undefined ? { requestsPerMinute } : {}), ...(tokensPerMinute !== undefined ? { tokensPerMinute } : {}) };
}
