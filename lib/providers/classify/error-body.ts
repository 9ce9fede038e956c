/**
 * Normalises what a provider sent back (a body that is parsed JSON, a JSON string, an SSE stream or
 * plain text) into the facts the classifier reads: the messages, the error codes/types, Google's
 * QuotaFailure, ErrorInfo and RetryInfo details, and headers a gateway (OpenRouter) embedded in the
 * body. Pure; never throws, and its cost is linear in the body whatever the body holds: every scan
 * is bounded, objects are walked once (cycles, getters that throw and hostile proxies are skipped),
 * and messages are capped ({@link MAX_TEXT} each, {@link MAX_TOTAL_TEXT} in all) so that no regex
 * over them can take long.
 */
import { findJson, looksLikeSse, sseErrorPayloads, tryParseJson } from './json-text.js';
import type { ErrorFacts } from './model.js';
import { quotaFactsFromText } from './quota-details.js';

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
/** Longest message kept (real messages are a few hundred characters; the longest fixture ~1.3 KB). */
const MAX_TEXT = 8 * 1024;
/** Most message characters kept in all: every regex of the classifier runs over at most this. */
export const MAX_TOTAL_TEXT = 32 * 1024;
/** Most messages kept. */
const MAX_TEXTS = 64;
/** Most values (objects, arrays, strings…) visited in one body. */
const MAX_NODES = 4096;
/** Most strings re-parsed as JSON (a message carrying a JSON body, wrapped a few times at most). */
const MAX_NESTED_PARSES = 16;
/** Most codes, quota ids/values, delays and embedded headers kept. */
const MAX_ITEMS = 64;

/** Extraction state: the facts, plus the budgets that keep the walk linear. */
interface Walk {
  facts: ErrorFacts;
  seenTexts: Set<string>;
  seenObjects: WeakSet<object>;
  textChars: number;
  nodes: number;
  nestedParses: number;
}

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
 * Error codes written as text rather than JSON: a Python repr (`'type': 'insufficient_quota'`),
 * a log line (`error_type=None`, `type: server_error`) or an SDK string. Only identifier-like
 * values count.
 */
function codesFromText(text: string, facts: ErrorFacts): void {
  const pattern = /["']?\b(type|code|status|reason|__type|error_type|error_code)["']?\s*[:=]\s*["']?([A-Za-z][A-Za-z0-9_.-]{2,63})["']?/g;
  for (const m of text.matchAll(pattern)) {
    const value = (m[2] ?? '').toLowerCase();
    if (value === 'none' || value === 'null') continue;
    addCode(facts, value);
  }
}

function addCode(facts: ErrorFacts, code: string): void {
  if (facts.codes.size < MAX_ITEMS) facts.codes.add(code);
}

function pushLimited<T>(list: T[], item: T): void {
  if (list.length < MAX_ITEMS) list.push(item);
}

/** Reads a property, or `undefined` when its getter (or a proxy trap) throws. */
function read(record: Record<string, unknown>, key: string): unknown {
  try {
    return record[key];
  } catch {
    return undefined;
  }
}

function keysOf(record: object): string[] {
  try {
    return Object.keys(record);
  } catch {
    return [];
  }
}

function isArray(value: unknown): value is unknown[] {
  try {
    return Array.isArray(value);
  } catch {
    return false;
  }
}

function walk(state: Walk, value: unknown, depth: number, parentKey: string): void {
  if (depth > MAX_DEPTH || value === null || value === undefined || state.nodes >= MAX_NODES) return;
  state.nodes++;
  const { facts } = state;
  if (typeof value === 'string') {
    if (TEXT_KEYS.has(parentKey) || parentKey === '' || parentKey === 'error') {
      pushText(state, value);
      if (state.nestedParses < MAX_NESTED_PARSES && value.includes('{')) {
        const trimmed = value.trim();
        if (trimmed.startsWith('{') || trimmed.startsWith('[') || /\{\s*"/.test(trimmed)) {
          state.nestedParses++;
          const nested = tryParseJson(trimmed);
          if (nested !== undefined && typeof nested === 'object') walk(state, nested, depth + 1, '');
        }
      }
    }
    return;
  }
  if (typeof value !== 'object') return;
  if (state.seenObjects.has(value)) return;
  state.seenObjects.add(value);
  if (isArray(value)) {
    const childKey = parentKey === 'details' || parentKey === 'violations' ? '' : parentKey;
    const length = Math.min(Number(read(value as unknown as Record<string, unknown>, 'length')) || 0, MAX_NODES);
    for (let i = 0; i < length && state.nodes < MAX_NODES; i++) walk(state, read(value as unknown as Record<string, unknown>, String(i)), depth + 1, childKey);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const rawKey of keysOf(record)) {
    if (state.nodes >= MAX_NODES) return;
    if (rawKey.length > 64) continue;
    const key = rawKey.toLowerCase();
    const child = read(record, rawKey);
    if (key === 'error' || key === 'errors') facts.hasError = true;
    if (CODE_KEYS.has(key)) {
      if (typeof child === 'string' && child.length <= 200) addCode(facts, child.toLowerCase());
      if (typeof child === 'number' || (typeof child === 'string' && /^\d{3}$/.test(child))) {
        const n = Number(child);
        if (n >= 400 && n <= 599 && (key === 'code' || key === 'status') && facts.embeddedStatus === null) facts.embeddedStatus = n;
        if (typeof child === 'number') addCode(facts, String(child));
      }
    }
    if ((key === 'quotaid' || key === 'quotametric' || key === 'quota_limit' || key === 'quota_metric') && typeof child === 'string' && child.length <= 200) {
      pushLimited(facts.quotaIds, child);
    }
    if ((key === 'quotavalue' || key === 'quota_limit_value') && (typeof child === 'string' || typeof child === 'number') && String(child).length <= 32) {
      pushLimited(facts.quotaValues, String(child));
    }
    if (key === 'retrydelay') {
      const ms = protoDurationMs(child);
      if (ms !== null) pushLimited(facts.retryDelaysMs, ms);
    }
    if (key === 'headers' && child !== null && typeof child === 'object' && !isArray(child)) {
      embeddedHeaders(state, child as Record<string, unknown>);
      continue;
    }
    if (key === 'metadata' && child !== null && typeof child === 'object' && !isArray(child)) {
      // Google ErrorInfo metadata: {quota_limit, quota_limit_value, quota_metric, ...} as strings.
      walk(state, child, depth + 1, 'metadata');
      continue;
    }
    if (key === 'links' || key === 'url' || key === 'description' || key === 'help') continue;
    walk(state, child, depth + 1, key);
  }
}

function embeddedHeaders(state: Walk, headers: Record<string, unknown>): void {
  const out = state.facts.embeddedHeaders;
  let count = 0;
  for (const h of keysOf(headers)) {
    if (++count > MAX_ITEMS || state.nodes >= MAX_NODES) return;
    state.nodes++;
    const v = read(headers, h);
    if ((typeof v === 'string' && v.length <= 4096) || typeof v === 'number') out[h.toLowerCase()] = String(v);
  }
}

function protoDurationMs(value: unknown): number | null {
  if (typeof value === 'string') {
    const m = /^(\d{1,12}(?:\.\d{1,12})?)s$/.exec(value.trim());
    return m?.[1] ? Math.round(Number(m[1]) * 1_000) : null;
  }
  if (value !== null && typeof value === 'object') {
    const r = value as Record<string, unknown>;
    const ms = Number(read(r, 'seconds') ?? 0) * 1_000 + Number(read(r, 'nanos') ?? 0) / 1e6;
    return Number.isFinite(ms) && ms >= 0 ? Math.round(ms) : null;
  }
  return null;
}

/** Keeps a message (trimmed, capped, once), and reads Google quota details written as text in it. */
function pushText(state: Walk, text: string): void {
  const { facts } = state;
  if (facts.texts.length >= MAX_TEXTS || state.textChars >= MAX_TOTAL_TEXT) return;
  const head = text.length > MAX_TEXT * 2 ? text.slice(0, MAX_TEXT * 2) : text;
  let trimmed = head.trim();
  if (trimmed.length > MAX_TEXT) trimmed = trimmed.slice(0, MAX_TEXT);
  if (trimmed.length > MAX_TOTAL_TEXT - state.textChars) trimmed = trimmed.slice(0, MAX_TOTAL_TEXT - state.textChars);
  if (trimmed === '' || state.seenTexts.has(trimmed)) return;
  state.seenTexts.add(trimmed);
  state.textChars += trimmed.length;
  facts.texts.push(trimmed);
  quotaFactsFromText(trimmed, facts);
}

/**
 * Reads the facts out of a body. For a success status (< 400) only error payloads count (an
 * error object at the top, or an SSE error event), so a model's generated text is never read as
 * an error message. Never throws: a body that cannot be read (a throwing getter, a hostile proxy)
 * gives the facts read so far.
 */
export function extractFacts(body: unknown, status: number): ErrorFacts {
  const state: Walk = { facts: emptyFacts(), seenTexts: new Set(), seenObjects: new WeakSet(), textChars: 0, nodes: 0, nestedParses: 0 };
  try {
    extractInto(state, body, status);
  } catch {
    // a hostile body: what was read so far
  }
  return state.facts;
}

/** Longest body text read: a real error body is a few KB; the rest of a longer one is not read. */
const MAX_BODY_CHARS = 256 * 1024;

/**
 * A body longer than {@link MAX_BODY_CHARS} is cut to its first `MAX_BODY_CHARS` characters, or to
 * its last ones (from a line start) when it is an SSE stream: a failed stream ends with its error.
 */
function boundedBody(body: string): string {
  if (body.length <= MAX_BODY_CHARS) return body;
  const head = body.slice(0, MAX_BODY_CHARS);
  if (!looksLikeSse(head)) return head;
  const tail = body.slice(body.length - MAX_BODY_CHARS);
  const lineStart = tail.indexOf('\n');
  return lineStart < 0 ? tail : tail.slice(lineStart + 1);
}

function extractInto(state: Walk, body: unknown, status: number): void {
  const { facts } = state;
  const failed = !(status > 0 && status < 400);
  let parsed: unknown = body;
  let wrapper: string | null = null;
  if (typeof body === 'string') {
    const text = boundedBody(body);
    if (looksLikeSse(text)) {
      const { payloads, sawErrorEvent } = sseErrorPayloads(text);
      if (sawErrorEvent || payloads.length > 0) facts.hasError = true;
      for (const payload of payloads) walk(state, payload, 0, '');
      if (failed && payloads.length === 0) pushText(state, text);
      return;
    }
    const found = findJson(text);
    const json = found?.value;
    if (json === undefined || json === null || typeof json !== 'object') {
      if (failed) {
        pushText(state, text);
        codesFromText(facts.texts.join('\n'), facts);
      }
      return;
    }
    parsed = json;
    // Text around the embedded JSON (a client's prefix or log line) is read after the JSON's own
    // messages, so a wait the provider stated wins over the wrapper's words.
    if (failed && !found?.whole) wrapper = text;
  } else if (body instanceof Uint8Array) {
    extractInto(state, new TextDecoder().decode(body.length > 4 * 1024 * 1024 ? body.subarray(0, 4 * 1024 * 1024) : body), status);
    return;
  } else if (body instanceof Error) {
    const error = body as Error & Record<string, unknown>;
    parsed = { name: read(error, 'name'), message: read(error, 'message'), code: read(error, 'code'), type: read(error, 'type'), error: read(error, 'error') };
  }
  if (parsed === null || parsed === undefined) return;
  if (!failed) {
    if (typeof parsed !== 'object') return;
    const record = parsed as Record<string, unknown>;
    if (isArray(parsed)) {
      const errors = parsed.slice(0, MAX_NODES).filter((item) => item !== null && typeof item === 'object' && read(item as Record<string, unknown>, 'error'));
      if (errors.length === 0) return;
      facts.hasError = true;
      walk(state, errors, 0, '');
      return;
    }
    const error = read(record, 'error');
    const hasErrorField = error !== undefined && error !== null && error !== false;
    if (!hasErrorField && read(record, 'type') !== 'error') return;
    facts.hasError = true;
  }
  walk(state, parsed, 0, '');
  if (wrapper !== null) pushText(state, wrapper);
}
