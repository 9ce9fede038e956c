/**
 * Reading JSON out of text the way error bodies arrive: a whole JSON document, JSON embedded in a
 * client's prefix or log line, an SSE stream's error events. Every scan is bounded, so the cost is
 * linear in the input whatever it holds (20,000 unbalanced `{` cost a scan of 65 characters each
 * for at most {@link MAX_JSON_SCANS} of them, not a re-scan to the end per bracket). Pure; never throws.
 */

/** Most opening brackets tried as the start of embedded JSON (each costs at most one bounded scan). */
const MAX_JSON_SCANS = 32;
/** Longest embedded JSON looked for: a real error body is a few KB. */
const MAX_JSON_SCAN_CHARS = 64 * 1024;
/** Most characters scanned for embedded JSON in one string, over all the brackets tried. */
const MAX_JSON_SCAN_BUDGET = 4 * MAX_JSON_SCAN_CHARS;
/** Most SSE events whose data is parsed (only error-looking events are). */
const MAX_SSE_PARSES = 64;
/** Most SSE error payloads returned. */
const MAX_SSE_PAYLOADS = 16;

/** Deepest nesting read: error bodies are a few levels deep; `JSON.parse` of 500,000 `[` is not cheap. */
const MAX_JSON_DEPTH = 64;

/**
 * Tries to read JSON out of a string: the whole string, else the first balanced `{…}`/`[…]` that
 * parses (so a prefix such as `"[CloudCode] Stream error at …: 503 - {…}"` or `"429 {…}"` and a
 * trailing log line do not hide the body). At most {@link MAX_JSON_SCANS} bracket positions are
 * tried, each scanning at most {@link MAX_JSON_SCAN_CHARS} characters; JSON nested deeper than
 * {@link MAX_JSON_DEPTH} is not read.
 */
export function tryParseJson(text: string): unknown {
  return findJson(text)?.value;
}

/**
 * {@link tryParseJson}, saying also whether the JSON was the whole text (`whole`) or embedded in
 * other text (a client's prefix, a log line), whose words then count too.
 */
export function findJson(text: string): { value: unknown; whole: boolean } | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  if (nestingWithin(trimmed, MAX_JSON_DEPTH)) {
    try {
      return { value: JSON.parse(trimmed), whole: true };
    } catch {
      // fall through: maybe JSON embedded in other text
    }
  }
  let nextCurly = trimmed.indexOf('{');
  let nextSquare = trimmed.indexOf('[');
  let budget = MAX_JSON_SCAN_BUDGET;
  for (let scans = 0; scans < MAX_JSON_SCANS && budget > 0; scans++) {
    const start = nextCurly < 0 ? nextSquare : nextSquare < 0 ? nextCurly : Math.min(nextCurly, nextSquare);
    if (start < 0) return undefined;
    if (start === nextCurly) nextCurly = trimmed.indexOf('{', start + 1);
    else nextSquare = trimmed.indexOf('[', start + 1);
    const scan = scanBalanced(trimmed, start, Math.min(MAX_JSON_SCAN_CHARS, budget));
    budget -= scan.scanned;
    const end = scan.end;
    if (end < 0) continue;
    try {
      const parsed: unknown = JSON.parse(trimmed.slice(start, end + 1));
      if (parsed !== null && typeof parsed === 'object') return { value: parsed, whole: false };
    } catch {
      // not JSON (e.g. "[CloudCode]" or a Python repr): try the next opening bracket
    }
  }
  return undefined;
}

/** Whether brackets outside JSON strings never nest deeper than `maxDepth` (stops at the first that does). */
function nestingWithin(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c /* \ */) i++;
      else if (ch === 0x22 /* " */) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      if (++depth > maxDepth) return false;
    } else if ((ch === 0x7d || ch === 0x5d) && depth > 0) depth--;
  }
  return true;
}

/**
 * Index of the bracket closing the one at `start` (JSON string-aware), or -1 when there is none
 * within `maxChars` characters or the brackets nest deeper than {@link MAX_JSON_DEPTH}.
 */
export function balancedEnd(text: string, start: number, maxChars: number): number {
  return scanBalanced(text, start, maxChars).end;
}

function scanBalanced(text: string, start: number, maxChars: number): { end: number; scanned: number } {
  const stack = new Uint8Array(MAX_JSON_DEPTH);
  let depth = 0;
  let inString = false;
  const stop = Math.min(text.length, start + maxChars);
  for (let i = start; i < stop; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c /* \ */) i++;
      else if (ch === 0x22 /* " */) inString = false;
      continue;
    }
    if (ch === 0x22) inString = true;
    else if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      if (depth === MAX_JSON_DEPTH) return { end: -1, scanned: i - start + 1 };
      stack[depth++] = ch === 0x7b ? 0x7d : 0x5d;
    } else if (ch === 0x7d || ch === 0x5d) {
      if (depth === 0 || stack[--depth] !== ch) return { end: -1, scanned: i - start + 1 };
      if (depth === 0) return { end: i, scanned: i - start + 1 };
    }
  }
  return { end: -1, scanned: stop - start };
}

/** The payloads of an SSE stream's error events (`event: error`, or data carrying `{error}` / `type: error`). */
export function sseErrorPayloads(text: string): { payloads: unknown[]; sawErrorEvent: boolean } {
  const payloads: unknown[] = [];
  let sawErrorEvent = false;
  let parses = 0;
  let event = '';
  let data: string[] = [];
  const flush = () => {
    const isErrorEvent = event.trim().toLowerCase() === 'error';
    if (isErrorEvent && data.length > 0) sawErrorEvent = true;
    if (data.length > 0 && payloads.length < MAX_SSE_PAYLOADS) {
      const raw = data.join('\n');
      // Only error-looking events are parsed: a long successful stream costs one pass, no parse.
      const parsed = (isErrorEvent || /error/i.test(raw)) && parses++ < MAX_SSE_PARSES ? tryParseJson(raw) : undefined;
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
  // A stream without the word "error" has no error event: one pass of a native search, no parse.
  if (!/error/i.test(text)) return { payloads, sawErrorEvent };
  let from = 0;
  while (from <= text.length && payloads.length < MAX_SSE_PAYLOADS) {
    const newline = text.indexOf('\n', from);
    const lineEnd = newline < 0 ? text.length : newline;
    const line = text.charCodeAt(lineEnd - 1) === 0x0d && lineEnd > from ? text.slice(from, lineEnd - 1) : text.slice(from, lineEnd);
    from = lineEnd + 1;
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

/** Whether a body looks like an SSE stream (a line starting `event:` or `data:`). */
export function looksLikeSse(text: string): boolean {
  return /^(?:event|data):/m.test(text);
}
