/**
 * Response headers as the classifier reads them: names lower-cased, repeated values joined, and
 * anything hostile dropped (throwing getters or iterators, absurdly long names or values, millions
 * of entries). Pure; never throws.
 */

/** Headers as callers hold them: a fetch `Headers`, a plain record, or entries. */
export type HeaderInput =
  | { forEach(callback: (value: string, key: string) => void): void }
  | Record<string, string | string[] | number | boolean | null | undefined>
  | Iterable<readonly [string, string]>
  | null
  | undefined;

/** Longest header name kept (real names are a few dozen characters). */
const MAX_HEADER_NAME = 256;
/** Longest header value kept; a longer one is dropped, never truncated (a cut number is a wrong number). */
const MAX_HEADER_VALUE = 4096;
/** Most header entries read. */
const MAX_HEADERS = 256;

/**
 * Lower-cases header names; joins repeated values with ", ". Entries whose name or value cannot be
 * read, or is longer than {@link MAX_HEADER_NAME} / {@link MAX_HEADER_VALUE}, are dropped; at most
 * {@link MAX_HEADERS} entries are read. Never throws: a hostile input gives the headers read so far.
 */
export function normalizeHeaders(input: HeaderInput): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  let seen = 0;
  const put = (key: unknown, value: unknown): boolean => {
    seen++;
    if (seen > MAX_HEADERS) return false;
    try {
      if (typeof key !== 'string' || key.length > MAX_HEADER_NAME || value === undefined || value === null) return true;
      const text = headerText(value);
      if (text === null) return true;
      const name = key.toLowerCase();
      const joined = out[name] === undefined ? text : `${out[name]}, ${text}`;
      if (joined.length <= MAX_HEADER_VALUE) out[name] = joined;
    } catch {
      // a value whose conversion throws is no header at all
    }
    return true;
  };
  try {
    if (input === null || input === undefined || typeof input !== 'object') return out;
    if (typeof (input as { forEach?: unknown }).forEach === 'function' && !Array.isArray(input)) {
      (input as { forEach(cb: (value: string, key: string) => void): void }).forEach((value, key) => {
        put(key, value);
      });
      return out;
    }
    if (Symbol.iterator in (input as object)) {
      for (const entry of input as Iterable<readonly [string, string]>) {
        if (Array.isArray(entry) && !put(entry[0], entry[1])) break;
      }
      return out;
    }
    const record = input as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      let value: unknown;
      try {
        value = record[key];
      } catch {
        continue;
      }
      if (!put(key, value)) break;
    }
  } catch {
    // a throwing iterator, getter or proxy trap: keep what was read
  }
  return out;
}

function headerText(value: unknown): string | null {
  if (typeof value === 'string') return value.length > MAX_HEADER_VALUE ? null : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    if (value.length > MAX_HEADERS) return null;
    const parts: string[] = [];
    let length = 0;
    for (const part of value) {
      const text = typeof part === 'string' || typeof part === 'number' || typeof part === 'boolean' ? String(part) : null;
      if (text === null) continue;
      length += text.length + 2;
      if (length > MAX_HEADER_VALUE) return null;
      parts.push(text);
    }
    return parts.join(', ');
  }
  return null;
}
