/**
 * Normalises what a provider sent back (headers in any shape, a body that is parsed JSON, a JSON
 * string, an SSE stream or plain text) into the facts the classifier reads: the messages, the
 * error codes/types, Google's QuotaFailure and RetryInfo details, and headers a gateway (OpenRouter)
 * embedded in the body. Pure; never throws.
 */

/** Headers as callers hold them: a fetch `Headers`, a plain record, or entries. */
export type HeaderInput =
  | { forEach(callback: (value: string, key: string) => void): void }
  | Record<string, string | string[] | number | boolean | null | undefined>
  | Iterable<readonly [string, string]>
  | null
  | undefined;

/** Lower-cases header names; joins repeated values with ", ". */
export function normalizeHeaders(input: HeaderInput): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (key: unknown, value: unknown) => {
    if (typeof key !== 'string' || value === undefined || value === null) return;
    const text = Array.isArray(value) ? value.map(String).join(', ') : String(value);
    const name = key.toLowerCase();
    out[name] = out[name] === undefined ? text : `${out[name]}, ${text}`;
  };
  if (input === null || input === undefined || typeof input !== 'object') return out;
  if (typeof (input as { forEach?: unknown }).forEach === 'function' && !Array.isArray(input)) {
    (input as { forEach(cb: (value: string, key: string) => void): void }).forEach((value, key) => {
      put(key, value);
    });
    return out;
  }
  if (Symbol.iterator in (input as object)) {
    for (const entry of input as Iterable<readonly [string, string]>) {
      if (Array.isArray(entry)) put(entry[0], entry[1]);
    }
    return out;
  }
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) put(key, value);
  return out;
}

/** What the classifier reads out of a response body. */
export interface ErrorFacts {
  /** Every human-readable message found (error.message, message, metadata.raw, plain text...). */
  texts: string[];
  /** Lower-cased type/code/status/reason/name/__type/error_code/limit_source values. */
  codes: Set<string>;
  /** Google QuotaFailure quotaId and quotaMetric values (and quota_limit names), as sent. */
  quotaIds: string[];
  /** Google quota values (`quotaValue`, `quota_limit_value`). */
  quotaValues: string[];
  /** Google RetryInfo delays found, in ms. */
  retryDelaysMs: number[];
  /** An HTTP status carried inside the body (`error.code: 429`), when there was one. */
  embeddedStatus: number | null;
  /** Headers embedded in the body (OpenRouter `error.metadata.headers`), lower-cased. */
  embeddedHeaders: Record<string, string>;
  /** An error object or error event was found (e.g. inside a 200 stream). */
  hasError: boolean;
}

const TEXT_KEYS = new Set(['message', 'msg', 'detail', 'raw', 'errormessage', 'error_message', 'error_description', 'title']);
const CODE_KEYS = new Set([
  'type',
  'code',
  'status',
  'reason',
  'name',
  '__type',
  'error_code',
  'errortype',
  'error_type',
  'limit_source',
  'exception-type',
  ':exception-type',
]);
const MAX_DEPTH = 10;
const MAX_TEXT = 20_000;

function emptyFacts(): ErrorFacts {
  return {
    texts: [],
    codes: new Set(),
    quotaIds: [],
    quotaValues: [],
    retryDelaysMs: [],
    embeddedStatus: null,
    embeddedHeaders: {},
    hasError: false,
  };
}

/**
 * Tries to read JSON out of a string: the whole string, else the first balanced `{…}`/`[…]` that
 * parses (so a prefix such as `"[CloudCode] Stream error at …: 503 - {…}"` or `"429 {…}"` and a
 * trailing log line do not hide the body).
 */
export function tryParseJson(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    // fall through: maybe JSON embedded in other text
  }
  let attempts = 0;
  for (let start = 0; start < trimmed.length && attempts < 20; start++) {
    const ch = trimmed[start];
    if (ch !== '{' && ch !== '[') continue;
    const end = balancedEnd(trimmed, start);
    if (end < 0) continue;
    attempts++;
    try {
      const parsed: unknown = JSON.parse(trimmed.slice(start, end + 1));
      if (parsed !== null && typeof parsed === 'object') return parsed;
    } catch {
      // not JSON (e.g. "[CloudCode]" or a Python repr): try the next opening bracket
    }
  }
  return undefined;
}

/** Index of the bracket closing the one at `start` (JSON string-aware), or -1. */
function balancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{') stack.push('}');
    else if (ch === '[') stack.push(']');
    else if (ch === '}' || ch === ']') {
      if (stack.pop() !== ch) return -1;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

/**
 * Error codes written as text rather than JSON: a Python repr (`'type': 'insufficient_quota'`),
 * a log line (`error_type=None`, `type: server_error`) or an SDK string. Only identifier-like
 * values count.
 */
function codesFromText(text: string, facts: ErrorFacts): void {
  const pattern = /["']?\b(type|code|status|reason|__type|error_type|error_code)["']?\s*[:=]\s*["']?([A-Za-z][A-Za-z0-9_.-]{2,63})["']?/g;
  for (const m of text.matchAll(pattern)) {
    const value = (m[2] ?? '').toLowerCase();
    if (value === 'none' || value === 'null') continue;
    facts.codes.add(value);
  }
}

/** Parses an SSE stream and returns the payloads of its error events (`event: error`, `{error}`). */
function sseErrorPayloads(text: string): { payloads: unknown[]; sawErrorEvent: boolean } {
  const payloads: unknown[] = [];
  let sawErrorEvent = false;
  let event = '';
  let data: string[] = [];
  const flush = () => {
    if (data.length > 0) {
      const raw = data.join('\n');
      const parsed = tryParseJson(raw);
      const isErrorEvent = event.trim().toLowerCase() === 'error';
      if (isErrorEvent) sawErrorEvent = true;
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        const record = parsed as Record<string, unknown>;
        if (isErrorEvent || record.type === 'error' || (record.error !== undefined && record.error !== null)) {
          payloads.push(parsed);
        }
      } else if (isErrorEvent) {
        payloads.push(raw);
      }
    }
    event = '';
    data = [];
  };
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') {
      flush();
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  flush();
  return { payloads, sawErrorEvent };
}

function looksLikeSse(text: string): boolean {
  return /^(?:event|data):/m.test(text);
}

function walk(value: unknown, facts: ErrorFacts, depth: number, parentKey: string): void {
  if (depth > MAX_DEPTH || value === null || value === undefined) return;
  if (typeof value === 'string') {
    if (TEXT_KEYS.has(parentKey) || parentKey === '' || parentKey === 'error') {
      pushText(facts, value);
      const trimmed = value.trim();
      if (trimmed.includes('{') && (trimmed.startsWith('{') || trimmed.startsWith('[') || /\{\s*"/.test(trimmed))) {
        const nested = tryParseJson(trimmed);
        if (nested !== undefined && typeof nested === 'object') walk(nested, facts, depth + 1, '');
      }
    }
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) walk(item, facts, depth + 1, parentKey === 'details' || parentKey === 'violations' ? '' : parentKey);
    return;
  }
  if (typeof value !== 'object') return;
  const record = value as Record<string, unknown>;
  for (const [rawKey, child] of Object.entries(record)) {
    const key = rawKey.toLowerCase();
    if (key === 'error' || key === 'errors') facts.hasError = true;
    if (CODE_KEYS.has(key)) {
      if (typeof child === 'string' && child.length <= 200) facts.codes.add(child.toLowerCase());
      if (typeof child === 'number' || (typeof child === 'string' && /^\d{3}$/.test(child))) {
        const n = Number(child);
        if (n >= 400 && n <= 599 && (key === 'code' || key === 'status') && facts.embeddedStatus === null) facts.embeddedStatus = n;
        if (typeof child === 'number') facts.codes.add(String(child));
      }
    }
    if ((key === 'quotaid' || key === 'quotametric' || key === 'quota_limit' || key === 'quota_metric') && typeof child === 'string') {
      facts.quotaIds.push(child);
    }
    if ((key === 'quotavalue' || key === 'quota_limit_value') && (typeof child === 'string' || typeof child === 'number')) {
      facts.quotaValues.push(String(child));
    }
    if (key === 'retrydelay') {
      const ms = protoDurationMs(child);
      if (ms !== null) facts.retryDelaysMs.push(ms);
    }
    if (key === 'headers' && child !== null && typeof child === 'object' && !Array.isArray(child)) {
      for (const [h, v] of Object.entries(child as Record<string, unknown>)) {
        if (typeof v === 'string' || typeof v === 'number') facts.embeddedHeaders[h.toLowerCase()] = String(v);
      }
      continue;
    }
    if (key === 'metadata' && child !== null && typeof child === 'object' && !Array.isArray(child)) {
      // Google ErrorInfo metadata: {quota_limit, quota_limit_value, quota_metric, ...} as strings.
      walk(child, facts, depth + 1, 'metadata');
      continue;
    }
    if (key === 'links' || key === 'url' || key === 'description' || key === 'help') continue;
    walk(child, facts, depth + 1, key);
  }
}

function protoDurationMs(value: unknown): number | null {
  if (typeof value === 'string') {
    const m = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
    return m?.[1] ? Math.round(Number(m[1]) * 1_000) : null;
  }
  if (value !== null && typeof value === 'object') {
    const r = value as { seconds?: unknown; nanos?: unknown };
    const ms = Number(r.seconds ?? 0) * 1_000 + Number(r.nanos ?? 0) / 1e6;
    return Number.isFinite(ms) && ms >= 0 ? Math.round(ms) : null;
  }
  return null;
}

function pushText(facts: ErrorFacts, text: string): void {
  const trimmed = text.trim();
  if (trimmed === '' || facts.texts.includes(trimmed)) return;
  facts.texts.push(trimmed.length > MAX_TEXT ? trimmed.slice(0, MAX_TEXT) : trimmed);
}

/**
 * Reads the facts out of a body. For a success status (< 400) only error payloads count (an
 * error object at the top, or an SSE error event), so a model's generated text is never read as
 * an error message.
 */
export function extractFacts(body: unknown, status: number): ErrorFacts {
  const facts = emptyFacts();
  const failed = !(status > 0 && status < 400);
  let parsed: unknown = body;
  let wrapper: string | null = null;
  if (typeof body === 'string') {
    if (looksLikeSse(body)) {
      const { payloads, sawErrorEvent } = sseErrorPayloads(body);
      if (sawErrorEvent || payloads.length > 0) facts.hasError = true;
      for (const payload of payloads) walk(payload, facts, 0, '');
      if (failed && payloads.length === 0) pushText(facts, body);
      return facts;
    }
    const json = tryParseJson(body);
    if (json === undefined || typeof json !== 'object') {
      if (failed) {
        pushText(facts, body);
        codesFromText(body, facts);
      }
      return facts;
    }
    parsed = json;
    // Text around the embedded JSON (a client's prefix or log line) is read after the JSON's own
    // messages, so a wait the provider stated wins over the wrapper's words.
    if (failed && !body.trim().startsWith('{') && !body.trim().startsWith('[')) wrapper = body;
  } else if (body instanceof Uint8Array) {
    return extractFacts(new TextDecoder().decode(body), status);
  } else if (body instanceof Error) {
    const error = body as Error & Record<string, unknown>;
    parsed = { name: error.name, message: error.message, code: error.code, type: error.type, error: error.error };
  }
  if (parsed === null || parsed === undefined) return facts;
  if (!failed) {
    if (typeof parsed !== 'object') return facts;
    const record = parsed as Record<string, unknown>;
    const hasErrorField = record.error !== undefined && record.error !== null && record.error !== false;
    if (Array.isArray(parsed)) {
      const errors = parsed.filter((item) => item !== null && typeof item === 'object' && (item as Record<string, unknown>).error);
      if (errors.length === 0) return facts;
      facts.hasError = true;
      walk(errors, facts, 0, '');
      return facts;
    }
    if (!hasErrorField && record.type !== 'error') return facts;
    facts.hasError = true;
  }
  walk(parsed, facts, 0, '');
  if (wrapper !== null) pushText(facts, wrapper);
  return facts;
}
