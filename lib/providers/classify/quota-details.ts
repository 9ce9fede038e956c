/**
 * Google's structured quota details — `google.rpc.QuotaFailure` violations (`quotaId`,
 * `quotaMetric`, `quotaValue`), `google.rpc.ErrorInfo` metadata (`quota_limit`, `quota_metric`,
 * `quota_limit_value`) and `google.rpc.RetryInfo.retryDelay` — and what they say about a throttle.
 *
 * Gemini sends the same message ("You exceeded your current quota, please check your plan and
 * billing details") whichever quota was hit, so the message cannot tell a per-minute limit from a
 * spent daily quota or a plan gate; the details can. They decide first, whatever dialect the lane
 * classifies in (Gemini reached through an OpenAI-compatible endpoint or OpenRouter sends the same
 * details). Pure.
 */
import type { ErrorFacts } from './model.js';

/** What the structured details say, or `null` when there are none that tell. */
export type QuotaVerdict = 'billing' | 'quota_exhausted' | 'rate_limit' | null;

const LONG_WINDOW = /per[\s_-]?day|perday|daily|per[\s_-]?month|permonth|monthly|per[\s_-]?week|perweek/i;
const SHORT_WINDOW = /per[\s_-]?minute|perminute|per[\s_-]?min\b|per[\s_-]?second|persecond/i;

/**
 * The verdict of the structured quota details:
 * - a violated quota whose limit is 0 (the free tier excludes the model or region: retrying can
 *   never help until a person changes the plan) → `billing`;
 * - else any violated per-day / per-week / per-month quota → `quota_exhausted`;
 * - else any violated per-minute / per-second quota → `rate_limit`;
 * - else `null` (no details, or none that name a window): the caller reads the rest of the response.
 */
export function quotaVerdict(facts: ErrorFacts): QuotaVerdict {
  if (facts.quotaValues.some((v) => v.trim() === '0')) return 'billing';
  if (facts.quotaIds.some((id) => LONG_WINDOW.test(id))) return 'quota_exhausted';
  if (facts.quotaIds.some((id) => SHORT_WINDOW.test(id))) return 'rate_limit';
  return null;
}

/** Whether the response carries Google's structured error details (QuotaFailure, ErrorInfo quota, RetryInfo). */
export function hasGoogleDetails(facts: ErrorFacts): boolean {
  return facts.quotaIds.length > 0 || facts.quotaValues.length > 0 || facts.retryDelaysMs.length > 0;
}

const MAX_ITEMS = 64;

/**
 * The same details when a client rendered them as text rather than JSON: a Python repr
 * (`'quotaId': 'GenerateRequestsPerDayPerProjectPerModel'`, `'retryDelay': '59s'`), a Go map
 * (`quotaId:GenerateRequestsPerDayPerProjectPerModel`) or the gRPC text form
 * (`key: "quota_limit_value" value: "0"`). Adds what it finds to `facts`. `text` is one capped message.
 */
export function quotaFactsFromText(text: string, facts: ErrorFacts): void {
  if (!/quota|retrydelay/i.test(text)) return;
  for (const m of text.matchAll(/\b(quotaId|quotaMetric|quota_limit|quota_metric)["']?\s{0,8}[:=]\s{0,8}["']?([A-Za-z0-9_./-]{1,200})/g)) {
    if (m[2] && facts.quotaIds.length < MAX_ITEMS && !facts.quotaIds.includes(m[2])) facts.quotaIds.push(m[2]);
  }
  for (const m of text.matchAll(/\b(?:quotaValue|quota_limit_value)["']?\s{0,8}[:=]\s{0,8}["']?(\d{1,20})(?![\d.])/g)) {
    if (m[1] && facts.quotaValues.length < MAX_ITEMS) facts.quotaValues.push(m[1]);
  }
  for (const m of text.matchAll(/key:\s{0,8}"(quota_limit|quota_metric|quota_limit_value)"\s{0,8}value:\s{0,8}"([A-Za-z0-9_./-]{1,200})"/g)) {
    const value = m[2] ?? '';
    if (m[1] === 'quota_limit_value') {
      if (/^\d{1,20}$/.test(value) && facts.quotaValues.length < MAX_ITEMS) facts.quotaValues.push(value);
    } else if (facts.quotaIds.length < MAX_ITEMS && !facts.quotaIds.includes(value)) {
      facts.quotaIds.push(value);
    }
  }
  for (const m of text.matchAll(/\bretryDelay["']?\s{0,8}[:=]\s{0,8}["']?(\d{1,9}(?:\.\d{1,9})?)s\b/g)) {
    const ms = Math.round(Number(m[1]) * 1_000);
    if (Number.isFinite(ms) && facts.retryDelaysMs.length < MAX_ITEMS) facts.retryDelaysMs.push(ms);
  }
}
