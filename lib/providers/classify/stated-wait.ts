/**
 * The waits and reset times an error response states: the `retry-after` family, Google's RetryInfo,
 * a wait in the message, the reset header of the exceeded limit, and absolute resets given in the
 * message or implied by a documented code. Used by `classify.ts`; pure.
 */
import type { ThrottleKind } from '../../policy/classification.js';
import {
  monthIndex,
  parseDeltaSeconds,
  parseHttpDate,
  parseMilliseconds,
  parseResetValue,
  parseRetryAfter,
  parseRfc3339,
  parseWaitFromText,
  utcDate,
} from './durations.js';
import type { ErrorFacts } from './model.js';

// ---------------------------------------------------------------------------------------------
// The stated wait.

/** What the wait is read from. */
export interface WaitContext {
  headers: Record<string, string>;
  facts: ErrorFacts;
  text: string;
  serverNow: number;
  kind: ThrottleKind;
  provider: string;
}

/** A stated wait (ms from the server's now) and the absolute time it ends, when given. */
export interface Wait {
  ms: number | null;
  at: Date | null;
}

/** The wait the response states (see `classify.ts` for the precedence). */
export function statedWait(ctx: WaitContext): Wait {
  const { headers, facts, serverNow } = ctx;
  const header = (name: string): string | undefined => headers[name] ?? facts.embeddedHeaders[name];

  const limitReset = ctx.kind === 'rate_limit' || ctx.kind === 'quota_exhausted' ? resetHeaderWait(ctx) : null;
  const absolute = limitReset?.at && limitReset.exhausted ? limitReset.at : null;

  const ms = parseMilliseconds(header('retry-after-ms'));
  if (ms !== null) return { ms, at: absolute };
  const retryAfter = parseRetryAfter(header('retry-after'), serverNow);
  if (retryAfter !== null) return { ms: retryAfter.ms, at: retryAfter.at ?? absolute };
  const xRetry = parseDeltaSeconds(header('x-retry-after')) ?? parseDeltaSeconds(header('x-ratelimit-retry-after'));
  if (xRetry !== null) return { ms: xRetry, at: absolute };

  if (facts.retryDelaysMs.length > 0) return { ms: facts.retryDelaysMs.reduce((a, b) => Math.max(a, b), 0), at: absolute };

  for (const message of facts.texts) {
    const fromText = parseWaitFromText(message);
    if (fromText !== null) return { ms: fromText, at: absolute };
  }

  if (limitReset !== null) return { ms: limitReset.ms, at: limitReset.at };
  return { ms: null, at: null };
}

interface ResetCandidate {
  ms: number;
  at: Date | null;
  /** Which limit: requests, tokens, input-tokens, output-tokens, or '' for a generic header. */
  limit: string;
  /** The matching `remaining` header said 0. */
  exhausted: boolean;
}

/** The reset header of the exceeded limit (tokens vs requests), else the longest exhausted, else the longest. */
function resetHeaderWait(ctx: WaitContext): (ResetCandidate & { exhausted: boolean }) | null {
  const { headers, facts, serverNow, text } = ctx;
  const all = { ...facts.embeddedHeaders, ...headers };
  const candidates: ResetCandidate[] = [];
  for (const [name, value] of Object.entries(all)) {
    const m =
      /^anthropic-ratelimit-(requests|tokens|input-tokens|output-tokens)-reset$/.exec(name) ??
      /^x-rate-?limit-reset-(requests|tokens)(?:-(?:minute|min|day|hour))?$/.exec(name) ??
      /^x-rate-?limit-reset$/.exec(name);
    if (!m) continue;
    const limit = m[1] ?? '';
    const parsed = name.startsWith('anthropic-') ? rfc3339Wait(value, serverNow) : (parseResetValue(value, serverNow) ?? null);
    if (parsed === null) continue;
    const remainingName = name.replace(/-reset/, '-remaining');
    const remaining = all[remainingName];
    candidates.push({ ms: parsed.ms, at: parsed.at, limit, exhausted: remaining !== undefined && Number(remaining) <= 0 });
  }
  if (candidates.length === 0) return null;

  const mentioned = mentionedLimit(text, facts.codes);
  const pick = (list: ResetCandidate[]) => list.reduce((a, b) => (b.ms > a.ms ? b : a));
  if (mentioned !== null) {
    const named = candidates.filter((c) => c.limit === mentioned || (mentioned.endsWith('tokens') && c.limit === 'tokens'));
    const exact = named.filter((c) => c.limit === mentioned);
    if (exact.length > 0) return pick(exact);
    if (named.length > 0) return pick(named);
  }
  const exhausted = candidates.filter((c) => c.exhausted);
  if (exhausted.length > 0) return pick(exhausted);
  return pick(candidates);
}

function rfc3339Wait(value: string, serverNow: number): { ms: number; at: Date } | null {
  const at = parseRfc3339(value) ?? parseHttpDate(value);
  if (at === null) return null;
  return { ms: Math.max(0, at.getTime() - serverNow), at };
}

/** Which limit the message names: "input tokens per minute", "on tokens per min (TPM)", "requests per". */
function mentionedLimit(text: string, codes: Set<string>): string | null {
  if (/input tokens/.test(text)) return 'input-tokens';
  if (/output tokens/.test(text)) return 'output-tokens';
  if (/\bon tokens\b|tokens per (?:min|minute|day)|\b(?:tpm|tpd)\b|request tokens|token rate limit/.test(text) || codes.has('tokens')) return 'tokens';
  if (/\bon requests\b|requests per (?:min|minute|day)|\b(?:rpm|rpd)\b|call rate limit/.test(text) || codes.has('requests')) return 'requests';
  return null;
}

// ---------------------------------------------------------------------------------------------
// Absolute reset times stated in the message or implied by a documented code.

/** An absolute reset stated in a message ("regain access on …", "resets at …") or implied by a code. */
export function absoluteResetFromText(facts: ErrorFacts, codes: Set<string>, nowMs: number): Date | null {
  for (const message of facts.texts) {
    // Anthropic: "You will regain access on 2026-04-01 at 00:00 UTC."
    const regain = /regain access on (\d{4})-(\d{2})-(\d{2})(?: at (\d{1,2}):(\d{2})(?::(\d{2}))?)?\s*(?:utc|gmt|z)?/i.exec(message);
    if (regain) {
      const [, y, mo, d, h, mi, s] = regain;
      // A date that does not exist ("2026-99-99") is no reset at all, never a rolled-over one.
      const at = utcDate(Number(y), Number(mo), Number(d), Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0));
      if (at) return at;
    }
    // "resets at 2026-05-15T15:00:00Z", "reset at: 2025-01-01T00:00:00Z"
    const iso = /\breset(?:s)?\s+(?:at|on)\s*:?\s*(\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:z|[+-]\d{2}:?\d{2}))/i.exec(message);
    if (iso?.[1]) {
      const at = parseRfc3339(iso[1]);
      if (at) return at;
    }
    // "… until Jan 1, 2026" is rare; accept "until <Mon> <d>, <yyyy>" as UTC midnight.
    const until = /\buntil (jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* (\d{1,2}),? (\d{4})\b/i.exec(message);
    if (until?.[1] && until[2] && until[3]) {
      const month = monthIndex(until[1]);
      const at = month === null ? null : utcDate(Number(until[3]), month + 1, Number(until[2]));
      if (at) return at;
    }
  }
  // Anthropic's tier spend cap: access resumes at 00:00 UTC on the first day of the next month.
  if (codes.has('enforced_spend_limit_reached')) {
    const now = new Date(nowMs);
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  }
  return null;
}
