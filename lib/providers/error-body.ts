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
    (input as { forEach(cb: (value: string, key: string) => void): void }).forEach((value, key) => put(key, value));
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

/** Tries to read JSON out of a string: the whole string, or from its first `{`/`[` to its last. */
export function tryParseJson(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    // fall through: maybe JSON embedded after a prefix such as "429 {...}"
  }
  const starts = [trimmed.indexOf('{'), trimmed.indexOf('[')].filter((i) => i >= 0);
  if (starts.length === 0) return undefined;
  const start = Math.min(...starts);
  const end = Math.max(trimmed.lastIndexOf('}'), trimmed.lastIndexOf(']'));
  if (end <= start) return undefined;
  try {
    return JSON.parse(trimmed.slice(start, end + 1));
  } catch {
    return undefined;
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
      if (failed) pushText(facts, body);
      return facts;
    }
    parsed = json;
    if (failed && !body.trim().startsWith('{') && !body.trim().startsWith('[')) pushText(facts, body);
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
  return facts;
}
