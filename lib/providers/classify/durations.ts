/**
 * Parsers for the ways providers state a wait or a reset time. All pure; each returns `null` for
 * anything it does not recognise (garbage, negative, non-finite), never throws.
 *
 * - Go-style durations (OpenAI / Groq `x-ratelimit-reset-*`, Gemini `retryDelay`): `6m0s`, `1m30.5s`,
 *   `20ms`, `1s`, `0.5s`, `9m38.016s`, `1h2m`.
 * - `retry-after`: delta-seconds (`20`, `1.5`) or an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`).
 * - RFC 3339 timestamps (Anthropic `anthropic-ratelimit-*-reset`). Every date is validated field by
 *   field (no `Date.UTC` roll-over: `2026-02-30` is no date).
 * - Epoch timestamps in seconds or milliseconds (OpenRouter `X-RateLimit-Reset`).
 * - A wait stated in prose: "Please try again in 20s", "Please retry after 36 seconds",
 *   "retry after 2 minutes", "Your quota will reset after 20s", "Please retry in 45.57s".
 */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const GO_DURATION = /^(?:\d+(?:\.\d+)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h|d)(?:(?:\d+(?:\.\d+)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h|d))*$/;
const GO_PART = /(\d+(?:\.\d+)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/g;

/**
 * Parses a Go-style duration (`6m0s`, `1m30.5s`, `20ms`, `0.5s`, `1h`) into milliseconds.
 * A bare number is not a Go duration (use {@link parseDeltaSeconds}); returns `null` for garbage.
 */
export function parseGoDuration(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const text = value.trim().toLowerCase();
  if (text === '' || !GO_DURATION.test(text)) return null;
  let total = 0;
  for (const match of text.matchAll(GO_PART)) {
    const amount = Number(match[1]);
    const unit = UNIT_MS[match[2] ?? ''];
    if (!Number.isFinite(amount) || unit === undefined) return null;
    total += amount * unit;
  }
  return Number.isFinite(total) && total >= 0 ? roundMs(total) : null;
}

/** Parses delta-seconds (`20`, `1.5`, `0`) into milliseconds; negative or garbage gives `null`. */
export function parseDeltaSeconds(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? roundMs(value * 1_000) : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (!/^\d+(?:\.\d+)?$/.test(text)) return null;
  const seconds = Number(text);
  return Number.isFinite(seconds) ? roundMs(seconds * 1_000) : null;
}

/** Parses a plain millisecond count (`retry-after-ms: 1500`). */
export function parseMilliseconds(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? roundMs(value) : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (!/^\d+(?:\.\d+)?$/.test(text)) return null;
  const ms = Number(text);
  return Number.isFinite(ms) ? roundMs(ms) : null;
}

const MONTH_INDEX: Record<string, number> = { jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, oct: 9, nov: 10, dec: 11 };

/** The index (0–11) of an English month name or its three-letter abbreviation, else `null`. */
export function monthIndex(name: string): number | null {
  return MONTH_INDEX[name.slice(0, 3).toLowerCase()] ?? null;
}

/**
 * A UTC date from its fields (`month` 1–12), or `null` when they name no real instant: month 1–12,
 * day valid for that month (leap years counted), hour < 24, minute < 60, second < 61 (a leap second
 * is read as :59), year 1970–9999. Never rolls over the way `Date.UTC` does (2026-02-30 is not
 * 2 March; it is no date at all).
 */
export function utcDate(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): Date | null {
  const whole = [year, month, day, hour, minute, second];
  if (!whole.every(Number.isInteger) || !Number.isFinite(ms) || ms < 0 || ms >= 1_000) return null;
  if (year < 1970 || year > 9999 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return null;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59), ms));
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** `GMT`, `UTC`, `UT`, `Z` or a numeric `+hhmm` / `+hh:mm` offset, in minutes east of UTC; else `null`. */
function zoneOffsetMinutes(zone: string | undefined): number | null {
  if (zone === undefined || /^(?:gmt|utc|ut|z)$/i.test(zone)) return 0;
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
  if (!m) return null;
  const hours = Number(m[2]);
  const minutes = Number(m[3]);
  if (hours > 23 || minutes > 59) return null;
  return (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

/** IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`). */
const HTTP_DATE = /^[a-z]{3,9},?\s+(\d{1,2})[\s-]([a-z]{3,9})[\s-](\d{4}|\d{2})\s+(\d{1,2}):(\d{2}):(\d{2})(?:\s+(gmt|utc|ut|z|[+-]\d{4}))?$/i;
/** asctime (`Sun Nov  6 08:49:37 1994`). */
const ASCTIME = /^[a-z]{3,9}\s+([a-z]{3,9})\s+(\d{1,2})\s+(\d{1,2}):(\d{2}):(\d{2})\s+(\d{4})(?:\s+(gmt|utc))?$/i;

/**
 * Parses an HTTP date (IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, and the obsolete RFC 850 and
 * asctime forms). Requires a day name and the shape of one of those forms, so that bare numbers and
 * other garbage are not mistaken for dates; a date that does not exist (`31 Feb`, `25:00:00`) gives
 * `null`. A two-digit RFC 850 year is 19xx from 50 up, else 20xx.
 */
export function parseHttpDate(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text.length < 20 || text.length > 40) return null;
  const http = HTTP_DATE.exec(text);
  if (http) {
    const month = monthIndex(http[2] ?? '');
    const shortYear = (http[3] ?? '').length === 2 ? Number(http[3]) : null;
    const year = shortYear === null ? Number(http[3]) : shortYear >= 50 ? 1900 + shortYear : 2000 + shortYear;
    const offset = zoneOffsetMinutes(http[7]);
    if (month === null || offset === null) return null;
    const at = utcDate(year, month + 1, Number(http[1]), Number(http[4]), Number(http[5]), Number(http[6]));
    return at === null ? null : new Date(at.getTime() - offset * 60_000);
  }
  const asc = ASCTIME.exec(text);
  if (asc) {
    const month = monthIndex(asc[1] ?? '');
    if (month === null) return null;
    return utcDate(Number(asc[6]), month + 1, Number(asc[2]), Number(asc[3]), Number(asc[4]), Number(asc[5]));
  }
  return null;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|z|[+-]\d{2}:?\d{2})$/;

/**
 * Parses an RFC 3339 timestamp (`2024-03-26T20:00:00Z`, `2025-01-01T00:01:00.5+02:00`); a date or
 * time that does not exist (`2026-99-99`, `2026-02-30`, `24:00:00`) gives `null`.
 */
export function parseRfc3339(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const m = RFC3339.exec(value.trim());
  if (!m) return null;
  const offset = zoneOffsetMinutes(m[8]);
  if (offset === null) return null;
  const ms = m[7] ? Math.floor(Number(`0${m[7]}`) * 1_000) : 0;
  const at = utcDate(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), ms);
  return at === null ? null : new Date(at.getTime() - offset * 60_000);
}

/** How far a response's `date` header may be from the caller's clock and still be believed. */
export const MAX_DATE_SKEW_MS = 5 * 60_000;

/**
 * The reference time for reading a response's waits: its `date` header (the server's clock, which
 * its reset times are stated in) when that parses and is within `maxSkewMs` of `nowMs`, else
 * `nowMs`: a stale cached response or a server clock hours off must not inflate (or erase) a wait.
 */
export function serverReferenceTime(dateHeader: unknown, nowMs: number, maxSkewMs: number = MAX_DATE_SKEW_MS): number {
  const date = parseHttpDate(dateHeader);
  if (date === null) return nowMs;
  return Math.abs(date.getTime() - nowMs) <= maxSkewMs ? date.getTime() : nowMs;
}

/**
 * Parses an epoch timestamp in seconds or milliseconds (`1741305600000`, `1741305600`) into a
 * Date; values too small to be a plausible absolute time (before 2001) give `null`.
 */
export function parseEpoch(value: unknown): Date | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+(?:\.\d+)?$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isFinite(n) || n <= 0) return null;
  if (n >= 1e12) return new Date(Math.round(n));
  if (n >= 1e9) return new Date(Math.round(n * 1_000));
  return null;
}

/** A wait read from one header value: a relative wait, and the absolute time when one was given. */
export interface StatedWait {
  ms: number;
  at: Date | null;
}

/**
 * Parses a `retry-after` value: delta-seconds, or an HTTP date read against `referenceMs` (the
 * response's `date` header, else now). A date in the past gives a wait of 0.
 */
export function parseRetryAfter(value: unknown, referenceMs: number): StatedWait | null {
  const seconds = parseDeltaSeconds(value);
  if (seconds !== null) return { ms: seconds, at: null };
  const date = parseHttpDate(value) ?? parseRfc3339(value);
  if (date === null) return null;
  return { ms: Math.max(0, date.getTime() - referenceMs), at: date };
}

/**
 * Parses a reset header of unknown dialect: a Go duration (`6m0s`), delta-seconds (`55`), an
 * RFC 3339 or HTTP date, or an epoch timestamp.
 */
export function parseResetValue(value: unknown, referenceMs: number): StatedWait | null {
  const go = parseGoDuration(value);
  if (go !== null) return { ms: go, at: null };
  const epoch = parseEpoch(value);
  if (epoch !== null) return { ms: Math.max(0, epoch.getTime() - referenceMs), at: epoch };
  const seconds = parseDeltaSeconds(value);
  if (seconds !== null) return { ms: seconds, at: null };
  const date = parseRfc3339(value) ?? parseHttpDate(value);
  if (date === null) return null;
  return { ms: Math.max(0, date.getTime() - referenceMs), at: date };
}

/** Parses a protobuf Duration as JSON renders it (`"37s"`, `"0.5s"`) or as an object. */
export function parseProtoDuration(value: unknown): number | null {
  if (typeof value === 'string') return parseGoDuration(value) ?? parseDeltaSeconds(value);
  if (value !== null && typeof value === 'object') {
    const record = value as { seconds?: unknown; nanos?: unknown };
    const seconds = Number(record.seconds ?? 0);
    const nanos = Number(record.nanos ?? 0);
    if (!Number.isFinite(seconds) || !Number.isFinite(nanos) || seconds < 0 || nanos < 0) return null;
    return roundMs(seconds * 1_000 + nanos / 1e6);
  }
  return null;
}

const WORD_UNIT_MS: Array<[RegExp, number]> = [
  [/^(?:milliseconds?|millis|msecs?|ms)$/, 1],
  [/^(?:seconds?|secs?|s)$/, 1_000],
  [/^(?:minutes?|mins?|m)$/, 60_000],
  [/^(?:hours?|hrs?|h)$/, 3_600_000],
  [/^(?:days?|d)$/, 86_400_000],
];

function wordUnitMs(unit: string): number | null {
  const lower = unit.toLowerCase();
  for (const [pattern, ms] of WORD_UNIT_MS) if (pattern.test(lower)) return ms;
  return null;
}

/**
 * "try again in", "retry after", "wait", "reset after", "available again in", "resets in". Not the
 * progressive "retrying in 4s" / "waiting for 10 seconds": that is a client announcing its own
 * backoff in a log line around the provider's body, not a wait the provider stated.
 */
const WAIT_LEAD =
  /\b(?:try\s+again|retry|wait|resets?|be\s+available(?:\s+again)?|available\s+again)\s+(?:in|after|for)\s+(?:about\s+|approximately\s+|roughly\s+|~\s*)?/gi;
const COMPACT = /^((?:(?:\d+(?:\.\d+)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h|d))+)(?![a-z0-9])/i;
const WORDED = /^(\d+(?:\.\d+)?)\s*([a-z]+)\b(?:\s*(?:and\s+)?(\d+(?:\.\d+)?)\s*([a-z]+)\b)?/i;

/**
 * Finds a wait stated in a message: "Please try again in 20s", "try again in 1.5s",
 * "Try again in 6m0s", "Please retry after 36 seconds", "retry after 2 minutes",
 * "Please retry in 45.578569677s", "Your quota will reset after 20s". Returns the first found, in
 * ms, or `null` when the text states no wait ("try again later").
 */
export function parseWaitFromText(text: unknown): number | null {
  if (typeof text !== 'string' || text === '') return null;
  for (const lead of text.matchAll(WAIT_LEAD)) {
    const rest = text.slice((lead.index ?? 0) + lead[0].length, (lead.index ?? 0) + lead[0].length + 48);
    const compact = COMPACT.exec(rest);
    if (compact?.[1]) {
      const ms = parseGoDuration(compact[1]);
      if (ms !== null) return ms;
    }
    const worded = WORDED.exec(rest);
    if (worded?.[1] && worded[2]) {
      const unit = wordUnitMs(worded[2]);
      if (unit !== null) {
        let ms = Number(worded[1]) * unit;
        if (worded[3] && worded[4]) {
          const second = wordUnitMs(worded[4]);
          if (second !== null && second < unit) ms += Number(worded[3]) * second;
        }
        if (Number.isFinite(ms) && ms >= 0) return roundMs(ms);
      }
    }
  }
  return null;
}

/** Whole milliseconds: sub-millisecond precision never matters for scheduling. */
function roundMs(ms: number): number {
  return Math.round(ms);
}
