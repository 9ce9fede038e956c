/**
 * The invoice extractor's reading of plain text: printed numbers in four styles (1,234.56 / 1.234,56 /
 * 1'234.56 / 1 234,56), dates in the styles invoices use (slashed ones by a convention the caller decides),
 * and labelled values in English, German and French.
 */
import { FieldExtractionError } from './extraction-error.js';

/** Raised when a field `invoice@1` requires cannot be found. The message names the field, never document text. */
export class InvoiceExtractionError extends FieldExtractionError {
  constructor(field: string, options?: { cause?: unknown }) {
    super('InvoiceExtractionError', field, options);
  }
}

/** The document's language, as the extractor tells it from its words. */
export type Language = 'en' | 'de' | 'fr';
/** The mark a document separates decimals with. */
export type DecimalMark = '.' | ',';
/** How a slashed date reads: day first or month first. */
export type SlashConvention = 'dmy' | 'mdy';

// ---------------------------------------------------------------------------------------------------------
// Numbers

/**
 * A number as printed: thousands grouped with a space (also no-break and narrow no-break), `,` `.` or `'`,
 * optional decimals.
 */
const NUMBER_TOKEN = /\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?(?!\d)|\d{1,3}(?:['.,]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?/g;

/** An amount whose decimal mark is beyond doubt: a `.` or `,` followed by exactly two digits that end the number. */
const PLAIN_DECIMAL = /(?<![\d.,'])\d+(?:[.,' \u00a0\u202f]\d{3})*([.,])\d{2}(?![\d.,'])/gu;

/**
 * The document's decimal mark: the one its unambiguous amounts use (the majority, when both occur);
 * when none decides, the language's (`.` for English, `,` for German and French).
 */
export function detectDecimalMark(text: string, language: Language): DecimalMark {
  let dots = 0;
  let commas = 0;
  for (const match of text.matchAll(PLAIN_DECIMAL)) {
    if (match[1] === '.') dots++;
    else commas++;
  }
  if (dots !== commas) return dots > commas ? '.' : ',';
  return language === 'en' ? '.' : ',';
}

/**
 * Parses one printed number. Both marks present: the last one is the decimal mark. One mark, repeated:
 * thousands. One mark once, followed by exactly three digits (`1,250`, `1.250`): decimal when it is the
 * document's decimal mark, else thousands. Otherwise a lone mark is decimal. Spaces and `'` group thousands.
 * @param mark the document's decimal mark, or a language standing for its usual mark
 */
export function parseLocaleNumber(token: string, mark: DecimalMark | Language): number {
  const decimalMark: DecimalMark = mark === '.' || mark === ',' ? mark : mark === 'en' ? '.' : ',';
  const text = token.replace(/['\s\u00a0\u202f]/gu, '');
  const lastDot = text.lastIndexOf('.');
  const lastComma = text.lastIndexOf(',');
  if (lastDot >= 0 && lastComma >= 0) {
    const decimal = lastDot > lastComma ? '.' : ',';
    const thousands = decimal === '.' ? ',' : '.';
    return Number(text.split(thousands).join('').replace(decimal, '.'));
  }
  const separator = lastDot >= 0 ? '.' : lastComma >= 0 ? ',' : null;
  if (separator === null) return Number(text);
  const parts = text.split(separator);
  const isDecimal = parts.length === 2 && ((parts[1] ?? '').length !== 3 || separator === decimalMark);
  return Number(isDecimal ? parts.join('.') : parts.join(''));
}

export function numberTokens(text: string): string[] {
  return text.match(NUMBER_TOKEN) ?? [];
}

/** The last number printed in a piece of text (an amount after its label), or `null`. */
export function lastNumber(text: string, mark: DecimalMark): number | null {
  const token = numberTokens(text).at(-1);
  return token === undefined ? null : parseLocaleNumber(token, mark);
}

/** `value` rounded half up to `decimals` decimal places (as `Math.round` rounds). */
export function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

// ---------------------------------------------------------------------------------------------------------
// Dates

const MONTH = String.raw`(janvier|février|fevrier|mars|avril|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|Jan(?:uary|uar)?|Feb(?:ruary|ruar)?|Mar(?:ch)?|Mär(?:z)?|Maerz|Apr(?:il)?|Ma[iy]|Jun[ei]?|Jul[yi]?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|O[ck]t(?:ober)?|Nov(?:ember)?|De[cz](?:ember)?)\.?`;
const MONTH_BY_PREFIX: Record<string, number> = {
  jan: 1,
  feb: 2,
  fév: 2,
  fev: 2,
  avr: 4,
  juin: 6,
  juil: 7,
  aoû: 8,
  aou: 8,
  déc: 12,
  mar: 3,
  mär: 3,
  mae: 3,
  apr: 4,
  may: 5,
  mai: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  okt: 10,
  nov: 11,
  dec: 12,
  dez: 12,
};

interface DatePattern {
  regex: RegExp;
  toParts(match: RegExpExecArray, convention: SlashConvention): [year: number, month: number, day: number];
}

const monthOf = (name: string | undefined): number => {
  const lower = (name ?? '').toLowerCase();
  return MONTH_BY_PREFIX[lower.slice(0, 4)] ?? MONTH_BY_PREFIX[lower.slice(0, 3)] ?? 0;
};
const num = (text: string | undefined): number => Number(text ?? NaN);

const DATE_PATTERNS: DatePattern[] = [
  { regex: /\b(\d{4})-(\d{2})-(\d{2})\b/u, toParts: (m) => [num(m[1]), num(m[2]), num(m[3])] },
  { regex: /\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b/u, toParts: (m) => [num(m[3]), num(m[2]), num(m[1])] },
  { regex: new RegExp(String.raw`\b(\d{1,2})\.\s*${MONTH}\s+(\d{4})\b`, 'iu'), toParts: (m) => [num(m[3]), monthOf(m[2]), num(m[1])] },
  { regex: new RegExp(String.raw`\b${MONTH}\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b`, 'iu'), toParts: (m) => [num(m[3]), monthOf(m[1]), num(m[2])] },
  { regex: new RegExp(String.raw`\b(\d{1,2})(?:st|nd|rd|th|er)?\s+${MONTH}\s+(\d{4})\b`, 'iu'), toParts: (m) => [num(m[3]), monthOf(m[2]), num(m[1])] },
  { regex: new RegExp(String.raw`\b(\d{1,2})-${MONTH}-(\d{4})\b`, 'iu'), toParts: (m) => [num(m[3]), monthOf(m[2]), num(m[1])] },
  {
    regex: /\b(\d{1,2})\/(\d{1,2})\/(\d{4})\b/u,
    toParts: (m, convention) => {
      const first = num(m[1]);
      const second = num(m[2]);
      const dayFirst = first > 12 || (second <= 12 && convention === 'dmy');
      return dayFirst ? [num(m[3]), second, first] : [num(m[3]), first, second];
    },
  },
];

function isoDate(year: number, month: number, day: number): string | null {
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 31 && year >= 1900 && year <= 2200)) return null;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return date.toISOString().slice(0, 10);
}

interface FoundDate {
  iso: string;
  index: number;
  length: number;
}

/** The first valid date in a piece of text, in any supported format. */
function findDate(text: string, convention: SlashConvention): FoundDate | null {
  let best: FoundDate | null = null;
  for (const pattern of DATE_PATTERNS) {
    const match = pattern.regex.exec(text);
    if (match === null) continue;
    const iso = isoDate(...pattern.toParts(match, convention));
    if (iso !== null && (best === null || match.index < best.index)) best = { iso, index: match.index, length: match[0].length };
  }
  return best;
}

// ---------------------------------------------------------------------------------------------------------
// Labelled values

/** Regex source of labels; each is matched at a line start or after a wide gap (a second column). */
export const LABELS = {
  invoiceNumber: String.raw`Invoice\s*(?:No\.?|Number|#)|Inv\.\s*No\.?|Rechnungs?-?\s*(?:nummer|Nr\.?)|Re\.-Nr\.?|Facture\s*(?:N[°º]|No\.?|num[ée]ro)|N[°º]\s*de\s+facture|Num[ée]ro\s+de\s+facture`,
  issueDate: String.raw`Invoice\s+date|Date\s+of\s+issue|Issue\s+date|Issued(?:\s+on)?|Date\s+de\s+(?:la\s+)?facture|Date\s+d['’]émission|Date(?!\s+(?:d['’]échéance|de\s+livraison|limite|de\s+paiement|d['’]exécution))|Rechnungsdatum|Ausstellungsdatum|Belegdatum|Datum`,
  dueDate: String.raw`Due\s+date|Payment\s+due|Please\s+pay\s+by|Pay\s+by|Due|Fällig\s+am|Fälligkeitsdatum|Fälligkeit|Zahlbar\s+bis(?:\s+zum)?|Date\s+d['’]échéance|Échéance|Date\s+limite\s+de\s+(?:paiement|règlement)|(?:À|A)\s+payer\s+avant\s+le|Payable\s+avant\s+le`,
  purchaseOrder: String.raw`Purchase\s+order|PO\s+Number|P\.O\.\s*#|Your\s+PO|PO|Your\s+order\s+ref(?:erence)?|Ihre\s+Bestell-Nr\.?|Ihre\s+Bestellung|Bestellnummer|Bestell-Nr\.?|Bon\s+de\s+commande|N[°º]\s*de\s+commande|Réf(?:\.|érence)\s+commande|Votre\s+commande`,
  seller: String.raw`From|Seller|Supplier|Vendor|Issued\s+by|Rechnungssteller|Leistungserbringer|Lieferant|Verkäufer|Absender|Fournisseur|Vendeur|Émetteur|Prestataire`,
  buyer: String.raw`Bill\s+to|Billed\s+to|Invoice\s+to|Sold\s+to|To|Customer|Buyer|Client|Rechnungsempfänger|Rechnungsadresse|Kunde|Auftraggeber|An|Facturé\s+à|Adresse\s+de\s+facturation|Destinataire|Acheteur`,
} as const;

/** A label ends at a non-letter, or is followed by one (so `PO` does not match `Pos.`). */
const LABEL_END = String.raw`(?:(?<=[^\p{L}])|(?![\p{L}]))`;

function labelledValueRegex(label: string): RegExp {
  return new RegExp(String.raw`(?:^\s*|\s{3,})(?:${label})${LABEL_END}\s*(?:\((?:MM|DD)/(?:DD|MM)/YYYY\))?\s*[:#]?\s*(\S.*?)(?=\s{3,}|$)`, 'iu');
}

/** Every value printed after a label, in document order. */
function labelledValues(lines: readonly string[], label: string): string[] {
  const regex = labelledValueRegex(label);
  const values: string[] = [];
  for (const line of lines) {
    const value = regex.exec(line)?.[1];
    if (value !== undefined) values.push(value);
  }
  return values;
}

/** An identifier as printed (invoice or order number): must contain a digit. */
function identifier(value: string): string | null {
  const token = /^#?\s*([A-Za-z0-9][A-Za-z0-9\-/.]*[A-Za-z0-9]|[A-Za-z0-9])/u.exec(value)?.[1];
  return token !== undefined && /\d/.test(token) ? token : null;
}

export function firstIdentifier(lines: readonly string[], label: string): string | null {
  for (const value of labelledValues(lines, label)) {
    const id = identifier(value);
    if (id !== null) return id;
  }
  return null;
}

export function firstLabelledDate(lines: readonly string[], label: string, convention: SlashConvention): string | null {
  for (const value of labelledValues(lines, label)) {
    const found = findDate(value, convention);
    if (found !== null) return found.iso;
  }
  return null;
}

/** A letter's date line, e.g. `München, 4. März 2026`. */
export function placeDateLine(lines: readonly string[], convention: SlashConvention): string | null {
  for (const line of lines) {
    const rest = /^\s*\p{Lu}[\p{L} .-]*,\s+(.+?)\s*$/u.exec(line)?.[1];
    if (rest === undefined) continue;
    const found = findDate(rest, convention);
    if (found !== null && found.index === 0 && found.length === rest.length) return found.iso;
  }
  return null;
}

/** Whether a line is empty or whitespace. */
export const isBlank = (line: string): boolean => line.trim() === '';
