/**
 * The normalizer `normalize@1`: how an extracted value and its reviewed value are made comparable.
 * Amounts become integer minor units, dates ISO `YYYY-MM-DD`, strings trimmed, whitespace-collapsed
 * and case-folded; arrays of objects (line items) compare as a multiset. Pure: no clock, no locale.
 */

/** The normalizer's version, named by every release that uses it. */
export const NORMALIZER_VERSION = 'normalize@1';

/** A value after normalization: comparable with `===` once turned into its canonical string. */
type Normalized = string | number | boolean | null | Normalized[] | { [key: string]: Normalized };

const ISO_DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:$|[T ])/u;

/** A number as integer minor units (cents): 12.5 and 12.50 and 12.499999 are all 1250. */
export function toMinorUnits(value: number): number {
  return Math.round(value * 100);
}

/** An ISO date (`2026-3-4`, `2026-03-04T00:00:00Z`) as `YYYY-MM-DD`; anything else unchanged. */
export function toIsoDate(value: string): string | null {
  const match = ISO_DATE.exec(value.trim());
  if (match === null) return null;
  const [, year, month, day] = match;
  return `${year}-${month!.padStart(2, '0')}-${day!.padStart(2, '0')}`;
}

/** A string trimmed, with runs of whitespace as one space, NFC-normalized and case-folded. */
export function foldText(value: string): string {
  return value.normalize('NFC').trim().replace(/\s+/gu, ' ').toLowerCase();
}

/** Normalizes one value of any shape (see the module comment). `undefined` becomes `null`. */
function normalizeValue(value: unknown): Normalized {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? toMinorUnits(value) : String(value);
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return toIsoDate(value) ?? foldText(value);
  if (Array.isArray(value)) return value.map(normalizeValue);
  if (typeof value === 'object') {
    const out: Record<string, Normalized> = {};
    for (const key of Object.keys(value).sort()) out[key] = normalizeValue((value as Record<string, unknown>)[key]);
    return out;
  }
  return String(value);
}

/** The canonical string of a normalized value (object keys sorted by {@link normalizeValue}). */
function canonical(value: Normalized): string {
  return JSON.stringify(value);
}

/**
 * Whether two values are equal after normalization. Arrays compare as multisets (order ignored: line
 * items matched as a set, duplicates counted); everything else by its canonical form.
 */
export function sameAfterNormalizing(expected: unknown, actual: unknown): boolean {
  const a = normalizeValue(expected);
  const b = normalizeValue(actual);
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    const counts = new Map<string, number>();
    for (const item of a) counts.set(canonical(item), (counts.get(canonical(item)) ?? 0) + 1);
    for (const item of b) {
      const left = counts.get(canonical(item)) ?? 0;
      if (left === 0) return false;
      counts.set(canonical(item), left - 1);
    }
    return true;
  }
  return canonical(a) === canonical(b);
}
