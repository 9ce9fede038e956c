/**
 * The "hard shapes" of a document on which the fake model may err, detected from the document text
 * (and, for `missingField`, from the correct extraction) — never from a corpus file — and, per shape, a
 * plausible corruption of the correct object. The corruptions are generic over schemas: they go by field
 * names and value types (`*Date`/`date`, `currency`, `vatId`, the first array field, …), so `invoice@1`
 * and `receipt@1` objects are both covered.
 *
 * Corruptions, and which domain rule (if any) catches them on `invoice@1`:
 * - `ambiguousDate`: every top-level ISO date with day ≤ 12 and day ≠ month gets month and day swapped
 *   (the model read the slashed date by the other convention). Usually silent; may break `dueDate ≥ issueDate`.
 * - `decimalComma`: one amount is read with the decimal comma taken for a thousands separator (×100,
 *   `12,50` → `1250`): the first array element's `unitPrice`, else its `price`, else its `amount`, else the
 *   top-level `total`. Every invoice amount is cross-checked, so on invoices it breaks `line_amount` and
 *   leads to a repair call (which draws again) or review; on receipts `items[0].amount` breaks the total.
 * - `missingField`: one null field (top-level or one level nested, picked by a seeded draw among those it
 *   can fill) gets a hallucinated value: a `*Date`/`date` → another date of the object + 30 days; a `vatId`
 *   → a made-up VAT ID with the country prefix of its party (or the other party); an identifier
 *   (`*Number`, `*Order`, `*Id`, `*Ref`) → the object's first `*Number` string with a `-01` suffix; a `*time`
 *   → `12:00`; a money-like number (`tip`, `*Tax`, `subtotal`, …) → 0. Mostly silent.
 * - `longInput`: the last element of the first array with two or more elements is dropped (the items past
 *   the "first page"); on invoices this breaks `subtotal_sum`.
 * - `noCurrencySymbol`: a top-level `currency` becomes `USD`, or `EUR` when the correct one is `USD`. Silent.
 */

/** The shapes of a document the fake model finds hard. */
export type HardShapeName = 'ambiguousDate' | 'decimalComma' | 'missingField' | 'longInput' | 'noCurrencySymbol';

/** Every hard shape, in the order their corruptions are applied. */
export const HARD_SHAPE_NAMES: readonly HardShapeName[] = ['ambiguousDate', 'decimalComma', 'missingField', 'longInput', 'noCurrencySymbol'];

/** Error rates (0..1) per hard shape, by the `promptVersion` of the prompt that produced the request. */
export type ModelErrorRates = Record<string, Partial<Record<HardShapeName, number>>>;

/** Texts longer than this many characters are `longInput`. */
const LONG_INPUT_CHARACTERS = 8_000;

const SLASHED_DATE = /(?<!\d)(\d{1,2})\/(\d{1,2})\/\d{4}(?!\d)/g;
const STATED_CONVENTION = /DD\.?\/MM\.?\/YYYY|MM\.?\/DD\.?\/YYYY|TT\.?\/MM\.?\/JJJJ|JJ\.?\/MM\.?\/AAAA/i;
const DECIMAL_COMMA = /\d,\d{2}(?!\d)/;
const CURRENCY_MARK = /[$€£]|(?<![A-Za-z])(?:CHF|EUR|USD|GBP)(?![A-Za-z])|(?<![A-Za-z])Fr\./;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A slashed date `d/d/yyyy` with both parts ≤ 12, in a text that states no date convention. */
function hasAmbiguousDate(text: string): boolean {
  if (STATED_CONVENTION.test(text)) return false;
  for (const match of text.matchAll(SLASHED_DATE)) {
    const first = Number(match[1]);
    const second = Number(match[2]);
    if (first >= 1 && first <= 12 && second >= 1 && second <= 12) return true;
  }
  return false;
}

/** An amount printed with a decimal comma (`12,50`, `1.234,56`, `1 234,56`). */
function hasDecimalComma(text: string): boolean {
  return DECIMAL_COMMA.test(text);
}

/** No currency symbol (`$`, `€`, `£`, `Fr.`) and no ISO code (EUR, USD, GBP, CHF) anywhere in the text. */
function hasNoCurrencySymbol(text: string): boolean {
  return !CURRENCY_MARK.test(text);
}

/** Paths (`[key]` or `[key, nestedKey]`) of the null fields of an object, top-level first, in key order. */
function nullFieldPaths(correct: unknown): string[][] {
  if (!isObject(correct)) return [];
  const top = Object.keys(correct).filter((key) => correct[key] === null);
  const nested = Object.entries(correct).flatMap(([key, value]) =>
    isObject(value) ? Object.keys(value).flatMap((inner) => (value[inner] === null ? [[key, inner]] : [])) : [],
  );
  return [...top.map((key) => [key]), ...nested];
}

/** Which hard shapes a document has; `missingField` is decided from the correct extraction. */
export function detectHardShapes(documentText: string, correct: unknown): HardShapeName[] {
  const found: Record<HardShapeName, boolean> = {
    ambiguousDate: hasAmbiguousDate(documentText),
    decimalComma: hasDecimalComma(documentText),
    missingField: nullFieldPaths(correct).length > 0,
    longInput: documentText.length > LONG_INPUT_CHARACTERS,
    noCurrencySymbol: hasNoCurrencySymbol(documentText),
  };
  return HARD_SHAPE_NAMES.filter((shape) => found[shape]);
}

// ---------------------------------------------------------------------------------------------------------
// Corruptions. Each changes `target` (a copy of the correct object) in place and says whether it changed it.

function swapDayMonth(value: unknown): string | null {
  const match = typeof value === 'string' ? ISO_DATE.exec(value) : null;
  if (!match) return null;
  const [, year, month, day] = match;
  return Number(day) <= 12 && day !== month ? `${year}-${day}-${month}` : null;
}

function corruptAmbiguousDate(target: Json): boolean {
  let changed = false;
  for (const key of Object.keys(target)) {
    const swapped = swapDayMonth(target[key]);
    if (swapped !== null) {
      target[key] = swapped;
      changed = true;
    }
  }
  return changed;
}

function corruptDecimalComma(target: Json): boolean {
  const firstArray = Object.values(target).find((value) => Array.isArray(value) && isObject(value[0])) as Json[] | undefined;
  const element = firstArray?.[0];
  const holder = element && ['unitPrice', 'price', 'amount'].some((key) => typeof element[key] === 'number') ? element : target;
  const key = ['unitPrice', 'price', 'amount', 'total'].find((name) => typeof holder[name] === 'number');
  const value = key === undefined ? 0 : (holder[key] as number);
  if (key === undefined || value === 0) return false;
  holder[key] = Math.round(value * 100 * 100) / 100;
  return true;
}

function addDays(isoDate: string, days: number): string {
  const [year, month, day] = isoDate.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
}

function vatIdFor(country: string, digits: string): string {
  if (country === 'CH') return `CHE-${digits.slice(0, 3)}.${digits.slice(3, 6)}.${digits.slice(6, 9)} MWST`;
  if (country === 'AT') return `ATU${digits.slice(0, 8)}`;
  return `${country === 'GR' ? 'EL' : country}${digits.slice(0, 9)}`;
}

/** Everything a hallucinated value may be made of: the object and seeded digits. */
interface Hallucination {
  root: Json;
  holder: Json;
  key: string;
  digits: string;
}

function countryFor(h: Hallucination): string | undefined {
  if (typeof h.holder.country === 'string') return h.holder.country;
  const parties = Object.values(h.root).filter(isObject);
  const otherVat = parties.map((p) => p.vatId).find((v): v is string => typeof v === 'string' && /^[A-Z]{2}/.test(v));
  if (otherVat !== undefined) return otherVat.startsWith('CHE') ? 'CH' : otherVat.slice(0, 2);
  return parties.map((p) => p.country).find((c): c is string => typeof c === 'string');
}

/** A plausible value for a null field, or `undefined` when the field's name says nothing usable. */
function hallucinate(h: Hallucination): unknown {
  const { root, key } = h;
  if (/(?:^date|Date)$/.test(key)) {
    const other = Object.values(root).find((value): value is string => typeof value === 'string' && ISO_DATE.test(value));
    return other === undefined ? undefined : addDays(other, 30);
  }
  if (/vatId$/i.test(key)) {
    const country = countryFor(h);
    if (country === undefined) return undefined;
    let made = vatIdFor(country, h.digits);
    if (Object.values(root).some((p) => isObject(p) && p.vatId === made)) made = vatIdFor(country, h.digits.slice(1) + h.digits[0]);
    return made;
  }
  if (/(?:Number|Order|Id|Ref|Reference)$/.test(key)) {
    const source = Object.entries(root).find(([name, value]) => name !== key && /Number$/.test(name) && typeof value === 'string');
    return source === undefined ? `REF-${h.digits.slice(0, 6)}` : `${source[1]}-01`;
  }
  if (/time$/i.test(key)) return '12:00';
  if (/^(?:tip|subtotal|total|amount|discount)$|(?:Tax|Amount|Total|Fee)$/.test(key)) return 0;
  return undefined;
}

function corruptMissingField(target: Json, correct: unknown, pick: number, digits: string): boolean {
  const fillable = nullFieldPaths(correct).flatMap((path) => {
    const holder = path.length === 1 ? target : (target[path[0]!] as Json);
    const key = path[path.length - 1]!;
    const value = hallucinate({ root: target, holder, key, digits });
    return value === undefined ? [] : [{ holder, key, value }];
  });
  const chosen = fillable[Math.min(fillable.length - 1, Math.floor(pick * fillable.length))];
  if (chosen === undefined) return false;
  chosen.holder[chosen.key] = chosen.value;
  return true;
}

function corruptLongInput(target: Json): boolean {
  const key = Object.keys(target).find((name) => Array.isArray(target[name]) && (target[name] as unknown[]).length >= 2);
  if (key === undefined) return false;
  target[key] = (target[key] as unknown[]).slice(0, -1);
  return true;
}

function corruptCurrency(target: Json): boolean {
  if (typeof target.currency !== 'string') return false;
  target.currency = target.currency === 'USD' ? 'EUR' : 'USD';
  return true;
}

/** What a corruption may use besides the object: the correct object, a seeded pick in [0, 1) and seeded digits. */
export interface CorruptionInput {
  correct: unknown;
  pick: number;
  digits: string;
}

/**
 * Applies one shape's corruption to `target` (a deep copy of the correct object) in place.
 * @returns whether `target` changed (a corruption that finds nothing to corrupt leaves it as it was)
 */
export function corrupt(shape: HardShapeName, target: unknown, input: CorruptionInput): boolean {
  if (!isObject(target)) return false;
  switch (shape) {
    case 'ambiguousDate':
      return corruptAmbiguousDate(target);
    case 'decimalComma':
      return corruptDecimalComma(target);
    case 'missingField':
      return corruptMissingField(target, input.correct, input.pick, input.digits);
    case 'longInput':
      return corruptLongInput(target);
    case 'noCurrencySymbol':
      return corruptCurrency(target);
  }
}
