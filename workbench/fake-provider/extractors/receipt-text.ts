/**
 * The receipt extractor's reading of plain text: the typed error, the document language, printed amounts
 * (the decimal separator is read from the document itself), dates in the styles receipts print (slashed
 * ones by the merchant country's convention) and the time printed with the date.
 */
import { FieldExtractionError } from './extraction-error.js';
import { type DecimalMark, round } from './text.js';

/** Raised when a field `receipt@1` requires cannot be found. The message names the field, never document text. */
export class ReceiptExtractionError extends FieldExtractionError {
  constructor(field: string, options?: { cause?: unknown }) {
    super('ReceiptExtractionError', field, options);
  }
}

/** The languages the receipt extractor tells apart. */
export type ReceiptLanguage = 'en' | 'de' | 'fr';

const WORDS: Record<ReceiptLanguage, readonly string[]> = {
  en: [
    'thank',
    'you',
    'paid',
    'receipt',
    'subtotal',
    'sub-total',
    'tax',
    'tip',
    'gratuity',
    'cash',
    'change',
    'cashier',
    'server',
    'fare',
    'pickup',
    'items',
    'bill',
    'with',
  ],
  de: [
    ...['summe', 'mwst', 'bar', 'rückgeld', 'zwischensumme', 'trinkgeld', 'datum', 'uhrzeit', 'danke', 'vielen', 'quittung', 'rechnung', 'tisch', 'betrag'],
    ...['gesamtbetrag', 'inkl', 'bezahlt', 'für', 'ihren', 'einkauf', 'zahlungsart', 'kasse', 'uhr', 'verkäufer', 'enthaltene'],
  ],
  fr: [
    ...[
      'tva',
      'merci',
      'espèces',
      'rendu',
      'pourboire',
      'sous-total',
      'ticket',
      'caisse',
      'reçu',
      'course',
      'paiement',
      'addition',
      'dont',
      'ttc',
      'réglé',
      'heure',
    ],
    ...['couverts', 'départ', 'arrivée', 'de', 'et', 'votre', 'articles', 'nombre'],
  ],
};

/** The language with the most of its receipt words in the text (English on a tie). */
export function detectLanguage(text: string): ReceiptLanguage {
  const words = text.toLowerCase().match(/[\p{L}-]+/gu) ?? [];
  const count = (language: ReceiptLanguage) => words.filter((word) => WORDS[language].includes(word)).length;
  const scores = (['en', 'de', 'fr'] as const).map((language) => [language, count(language)] as const);
  return scores.reduce((best, next) => (next[1] > best[1] ? next : best))[0];
}

// ---------------------------------------------------------------------------------------------------------
// Amounts

/** Regex source of a printed amount with exactly two decimals: `12.50`, `1,234.56`, `1.234,56`, `1'234.50`. */
export const AMOUNT = String.raw`(?<![\d.,'])(?:\d{1,3}(?:['.,]\d{3})+|\d+)[.,]\d{2}(?![\d.,'])`;

/** The decimal separator of a document (the invoice reader's {@link DecimalMark}). */
export type DecimalSeparator = DecimalMark;

/** The separator most printed amounts use before their two decimals. */
export function decimalSeparator(text: string): DecimalSeparator {
  const tokens = text.match(new RegExp(AMOUNT, 'g')) ?? [];
  const commas = tokens.filter((token) => token.at(-3) === ',').length;
  return commas > tokens.length - commas ? ',' : '.';
}

/** Parses a printed number (amount, quantity, unit price) given the document's decimal separator. */
export function parseNumber(token: string, separator: DecimalSeparator): number {
  const kept = [...token].filter((char) => /\d/.test(char) || char === separator).join('');
  return Number(separator === ',' ? kept.replace(',', '.') : kept);
}

/** The last amount printed on a line, or `null`. */
export function lastAmount(line: string, separator: DecimalSeparator): number | null {
  const token = line.match(new RegExp(AMOUNT, 'g'))?.at(-1);
  return token === undefined ? null : round(parseNumber(token, separator), 2);
}

// ---------------------------------------------------------------------------------------------------------
// Dates and times

const MONTH_NUMBERS: Record<string, number> = {};
const monthNames: [number, string[]][] = [
  [1, ['january', 'jan', 'januar', 'janvier']],
  [2, ['february', 'feb', 'februar', 'février', 'fevrier']],
  [3, ['march', 'mar', 'märz', 'mars']],
  [4, ['april', 'apr', 'avril']],
  [5, ['may', 'mai']],
  [6, ['june', 'jun', 'juni', 'juin']],
  [7, ['july', 'jul', 'juli', 'juillet']],
  [8, ['august', 'aug', 'août', 'aout']],
  [9, ['september', 'sep', 'sept', 'septembre']],
  [10, ['october', 'oct', 'oktober', 'okt', 'octobre']],
  [11, ['november', 'nov', 'novembre']],
  [12, ['december', 'dec', 'dezember', 'dez', 'décembre', 'decembre']],
];
for (const [month, names] of monthNames) for (const name of names) MONTH_NUMBERS[name] = month;
const MONTH = `(${Object.keys(MONTH_NUMBERS)
  .sort((a, b) => b.length - a.length)
  .join('|')})\\.?`;

interface DatePattern {
  regex: RegExp;
  parts(match: RegExpExecArray, monthFirst: boolean): [year: number, month: number, day: number];
}

const n = (text: string | undefined): number => Number(text ?? Number.NaN);
const monthOf = (name: string | undefined): number => MONTH_NUMBERS[(name ?? '').toLowerCase()] ?? 0;

const DATE_PATTERNS: DatePattern[] = [
  { regex: /\b(\d{4})-(\d{2})-(\d{2})\b/u, parts: (m) => [n(m[1]), n(m[2]), n(m[3])] },
  { regex: /\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b/u, parts: (m) => [n(m[3]), n(m[2]), n(m[1])] },
  { regex: /\b(\d{1,2})\.(\d{1,2})\.(\d{2})(?![\d.,])/u, parts: (m) => [2000 + n(m[3]), n(m[2]), n(m[1])] },
  {
    regex: /\b(\d{1,2})\/(\d{1,2})\/(\d{4})\b/u,
    parts: (m, monthFirst) => (monthFirst && n(m[1]) <= 12 ? [n(m[3]), n(m[1]), n(m[2])] : [n(m[3]), n(m[2]), n(m[1])]),
  },
  { regex: new RegExp(String.raw`(?<![\p{L}])${MONTH}\s+(\d{1,2}),?\s+(\d{4})\b`, 'iu'), parts: (m) => [n(m[3]), monthOf(m[1]), n(m[2])] },
  { regex: new RegExp(String.raw`\b(\d{1,2})(?:er)?\.?\s+${MONTH}\s+(\d{4})\b`, 'iu'), parts: (m) => [n(m[3]), monthOf(m[2]), n(m[1])] },
];

function isoDate(year: number, month: number, day: number): string | null {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (!(month >= 1 && month <= 12) || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return date.toISOString().slice(0, 10);
}

/** A date found on a line: its ISO form and where the printed date ends. */
export interface FoundDate {
  iso: string;
  end: number;
}

/** The earliest valid date printed on a line; slashed dates read month first when `monthFirst`. */
export function findDate(line: string, monthFirst: boolean): FoundDate | null {
  let best: (FoundDate & { start: number }) | null = null;
  for (const pattern of DATE_PATTERNS) {
    const match = pattern.regex.exec(line);
    if (match === null) continue;
    const iso = isoDate(...pattern.parts(match, monthFirst));
    if (iso !== null && (best === null || match.index < best.start)) best = { iso, start: match.index, end: match.index + match[0].length };
  }
  return best === null ? null : { iso: best.iso, end: best.end };
}

/** The first time printed in a piece of text (`14:32`, `14:32:07`, `2:32 PM`, `14h32`) as 24-hour `HH:MM`, or `null`. */
export function findTime(text: string): string | null {
  const match = /(?<!\d)(\d{1,2})[:h](\d{2})(?::\d{2})?(?:\s*([AaPp])\.?[Mm]\.?)?(?!\d)/u.exec(text);
  if (match === null) return null;
  let hours = n(match[1]);
  const minutes = n(match[2]);
  const meridiem = match[3]?.toUpperCase();
  if (meridiem !== undefined) hours = (hours % 12) + (meridiem === 'P' ? 12 : 0);
  if (hours > 23 || minutes > 59) return null;
  return `${String(hours).padStart(2, '0')}:${String(minutes).padStart(2, '0')}`;
}
