/**
 * A deterministic, rule-based invoice parser: the "model" behind the local fake provider. It reads labels
 * in English and German, three number styles (1,234.56 / 1.234,56 / 1'234.56), ISO, German, English and
 * slashed dates (by the convention the document states), party blocks (labelled, letterhead, or a
 * DIN-5008 sender line), and line items from column tables, pipe tables, `qty x item @ price = amount`
 * lines and two-line position blocks. It knows nothing of the corpus: it only reads the text it is given.
 */
import type { InvoiceV1, InvoiceV1LineItem } from '../contract/schemas/invoice-v1.js';

/** Raised when a field the schema requires cannot be found. The message names the field, never document text. */
export class InvoiceExtractionError extends Error {
  override name = 'InvoiceExtractionError';
  constructor(
    readonly field: string,
    options?: { cause?: unknown },
  ) {
    super(`could not extract ${field}`, options);
  }
}

type Language = 'en' | 'de';
type SlashConvention = 'dmy' | 'mdy';

// ---------------------------------------------------------------------------------------------------------
// Numbers

/** A number as printed: grouped thousands with `,` `.` or `'`, optional decimals. */
const NUMBER_TOKEN = /\d{1,3}(?:['.,]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?/g;

/** Parses one printed number; `language` decides what a lone `,` or `.` means. */
export function parseLocaleNumber(token: string, language: Language): number {
  const text = token.replace(/'/g, '');
  const lastDot = text.lastIndexOf('.');
  const lastComma = text.lastIndexOf(',');
  let normalized: string;
  if (lastDot >= 0 && lastComma >= 0) {
    const decimal = lastDot > lastComma ? '.' : ',';
    const thousands = decimal === '.' ? ',' : '.';
    normalized = text.split(thousands).join('').replace(decimal, '.');
  } else if (lastComma >= 0) {
    const grouped = /^\d{1,3}(?:,\d{3})+$/.test(text);
    normalized = language === 'en' && grouped ? text.replace(/,/g, '') : text.replace(',', '.');
  } else if (lastDot >= 0) {
    const grouped = /^\d{1,3}(?:\.\d{3})+$/.test(text);
    normalized = language === 'de' && grouped ? text.replace(/\./g, '') : text;
  } else {
    normalized = text;
  }
  return Number(normalized);
}

function numberTokens(text: string): string[] {
  return text.match(NUMBER_TOKEN) ?? [];
}

/** The last number printed in a piece of text (an amount after its label), or `null`. */
function lastNumber(text: string, language: Language): number | null {
  const token = numberTokens(text).at(-1);
  return token === undefined ? null : parseLocaleNumber(token, language);
}

function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

// ---------------------------------------------------------------------------------------------------------
// Dates

const MONTH = String.raw`(Jan(?:uary|uar)?|Feb(?:ruary|ruar)?|Mar(?:ch)?|Mär(?:z)?|Maerz|Apr(?:il)?|Ma[iy]|Jun[ei]?|Jul[yi]?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|O[ck]t(?:ober)?|Nov(?:ember)?|De[cz](?:ember)?)\.?`;
const MONTH_BY_PREFIX: Record<string, number> = {
  jan: 1, feb: 2, mar: 3, mär: 3, mae: 3, apr: 4, may: 5, mai: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, okt: 10, nov: 11, dec: 12, dez: 12,
};

interface DatePattern {
  regex: RegExp;
  toParts(match: RegExpExecArray, convention: SlashConvention): [year: number, month: number, day: number];
}

const monthOf = (name: string | undefined): number => MONTH_BY_PREFIX[(name ?? '').slice(0, 3).toLowerCase()] ?? 0;
const num = (text: string | undefined): number => Number(text ?? NaN);

const DATE_PATTERNS: DatePattern[] = [
  { regex: /\b(\d{4})-(\d{2})-(\d{2})\b/u, toParts: (m) => [num(m[1]), num(m[2]), num(m[3])] },
  { regex: /\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b/u, toParts: (m) => [num(m[3]), num(m[2]), num(m[1])] },
  { regex: new RegExp(String.raw`\b(\d{1,2})\.\s*${MONTH}\s+(\d{4})\b`, 'iu'), toParts: (m) => [num(m[3]), monthOf(m[2]), num(m[1])] },
  { regex: new RegExp(String.raw`\b${MONTH}\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b`, 'iu'), toParts: (m) => [num(m[3]), monthOf(m[1]), num(m[2])] },
  { regex: new RegExp(String.raw`\b(\d{1,2})(?:st|nd|rd|th)?\s+${MONTH}\s+(\d{4})\b`, 'iu'), toParts: (m) => [num(m[3]), monthOf(m[2]), num(m[1])] },
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
const LABELS = {
  invoiceNumber: String.raw`Invoice\s*(?:No\.?|Number|#)|Inv\.\s*No\.?|Rechnungs?-?\s*(?:nummer|Nr\.?)|Re\.-Nr\.?`,
  issueDate: String.raw`Invoice\s+date|Date\s+of\s+issue|Issue\s+date|Issued(?:\s+on)?|Date|Rechnungsdatum|Ausstellungsdatum|Belegdatum|Datum`,
  dueDate: String.raw`Due\s+date|Payment\s+due|Please\s+pay\s+by|Pay\s+by|Due|Fällig\s+am|Fälligkeitsdatum|Fälligkeit|Zahlbar\s+bis(?:\s+zum)?`,
  purchaseOrder: String.raw`Purchase\s+order|PO\s+Number|P\.O\.\s*#|Your\s+PO|PO|Your\s+order\s+ref(?:erence)?|Ihre\s+Bestell-Nr\.?|Ihre\s+Bestellung|Bestellnummer|Bestell-Nr\.?`,
  seller: String.raw`From|Seller|Supplier|Vendor|Issued\s+by|Rechnungssteller|Leistungserbringer|Lieferant|Verkäufer|Absender`,
  buyer: String.raw`Bill\s+to|Billed\s+to|Invoice\s+to|Sold\s+to|To|Customer|Buyer|Client|Rechnungsempfänger|Rechnungsadresse|Kunde|Auftraggeber|An`,
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

function firstIdentifier(lines: readonly string[], label: string): string | null {
  for (const value of labelledValues(lines, label)) {
    const id = identifier(value);
    if (id !== null) return id;
  }
  return null;
}

function firstLabelledDate(lines: readonly string[], label: string, convention: SlashConvention): string | null {
  for (const value of labelledValues(lines, label)) {
    const found = findDate(value, convention);
    if (found !== null) return found.iso;
  }
  return null;
}

/** A letter's date line, e.g. `München, 4. März 2026`. */
function placeDateLine(lines: readonly string[], convention: SlashConvention): string | null {
  for (const line of lines) {
    const rest = /^\s*\p{Lu}[\p{L} .-]*,\s+(.+?)\s*$/u.exec(line)?.[1];
    if (rest === undefined) continue;
    const found = findDate(rest, convention);
    if (found !== null && found.index === 0 && found.length === rest.length) return found.iso;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------------------
// Parties

interface Block {
  /** Line indexes the block covers. */
  start: number;
  end: number;
  /** Text of the block, one entry per line (first column only). */
  lines: string[];
}

const isBlank = (line: string): boolean => line.trim() === '';
const firstColumn = (line: string): string => line.trim().split(/\s{3,}/)[0] ?? '';

function labelledBlock(lines: readonly string[], label: string, stopLabels: string): Block | null {
  const start = new RegExp(String.raw`^\s*(?:${label})\s*:\s*(.*)$`, 'iu');
  const stop = new RegExp(String.raw`^\s*(?:${stopLabels})\s*:`, 'iu');
  for (let i = 0; i < lines.length; i++) {
    const match = start.exec(lines[i] ?? '');
    if (match === null) continue;
    const blockLines: string[] = [];
    if ((match[1] ?? '').trim() !== '') blockLines.push(firstColumn(match[1] ?? ''));
    let end = i;
    for (let j = i + 1; j < lines.length; j++) {
      const line = lines[j] ?? '';
      if (isBlank(line) || stop.test(line)) break;
      blockLines.push(firstColumn(line));
      end = j;
    }
    return { start: i, end, lines: blockLines.filter((l) => l !== '') };
  }
  return null;
}

/** Index of a DIN-5008 sender line (`Name · Street · City`) near the top, or -1. */
function senderLineIndex(lines: readonly string[]): number {
  return lines.slice(0, 8).findIndex((line) => line.split(' · ').length >= 3);
}

function blockAfter(lines: readonly string[], index: number): Block | null {
  let start = index + 1;
  while (start < lines.length && isBlank(lines[start] ?? '')) start++;
  if (start >= lines.length) return null;
  let end = start;
  while (end + 1 < lines.length && !isBlank(lines[end + 1] ?? '')) end++;
  const blockLines = lines.slice(start, end + 1).map(firstColumn).filter((l) => l !== '');
  return { start, end, lines: blockLines };
}

const TITLE_LINE = /^\s*(?:TAX\s+)?(?:INVOICE|RECHNUNG)\s*$/iu;

function letterheadBlock(lines: readonly string[]): Block | null {
  let start = 0;
  while (start < lines.length && (isBlank(lines[start] ?? '') || TITLE_LINE.test(lines[start] ?? ''))) start++;
  return blockAfter(lines, start - 1);
}

/** Splits a one-line party (`Name, Street, City, Country`) into parts; other blocks stay line by line. */
function partyParts(block: Block): string[] {
  const [first = '', ...rest] = block.lines;
  const commaParts = first.split(/,\s+/);
  return commaParts.length >= 3 ? [...commaParts, ...rest] : block.lines;
}

const COUNTRY_NAMES: [RegExp, string][] = [
  [/\b(?:United States(?: of America)?|USA|Vereinigte Staaten)\b/u, 'US'],
  [/\b(?:United Kingdom|Vereinigtes Königreich|Great Britain|England|Scotland|Wales)\b/u, 'GB'],
  [/\b(?:Germany|Deutschland)\b/u, 'DE'],
  [/\b(?:Austria|Österreich)\b/u, 'AT'],
  [/\b(?:Switzerland|Schweiz|Suisse|Svizzera)\b/u, 'CH'],
  [/\b(?:Ireland|Irland)\b/u, 'IE'],
  [/\b(?:France|Frankreich)\b/u, 'FR'],
  [/\b(?:Netherlands|Niederlande)\b/u, 'NL'],
  [/\b(?:Belgium|Belgien)\b/u, 'BE'],
  [/\b(?:Italy|Italien)\b/u, 'IT'],
  [/\b(?:Spain|Spanien)\b/u, 'ES'],
];

const US_STATE_ZIP = /\b[A-Z]{2} \d{5}(?:-\d{4})?\b/u;

function countryFromVatId(vatId: string): string | null {
  if (vatId.startsWith('CHE')) return 'CH';
  const prefix = vatId.slice(0, 2);
  if (prefix === 'EL') return 'GR';
  if (prefix === 'XI') return 'GB';
  return /^[A-Z]{2}$/.test(prefix) ? prefix : null;
}

function countryOf(addressParts: readonly string[], vatId: string | null): string | null {
  for (const part of addressParts) {
    for (const [pattern, code] of COUNTRY_NAMES) if (pattern.test(part)) return code;
  }
  if (vatId !== null) {
    const fromVat = countryFromVatId(vatId);
    if (fromVat !== null) return fromVat;
  }
  return addressParts.some((part) => US_STATE_ZIP.test(part)) ? 'US' : null;
}

const VAT_REFERENCE = new RegExp(
  String.raw`(?:^|[\s|·,;(])((?:Ihre|Your|Customer|Buyer)\s+)?(?:VAT(?:\s+Reg\.?)?(?:\s+(?:ID|No\.?|number|registration\s+number))?|USt-?Id(?:Nr)?\.?|UID(?:-Nr\.?)?|MWST-Nr\.?)\s*:?\s*(CHE-\d{3}\.\d{3}\.\d{3}(?:\s(?:MWST|TVA|IVA))?|[A-Z]{2}U?\d[0-9A-Z]{1,12})(?![0-9A-Za-z])`,
  'u',
);

interface VatReference {
  line: number;
  vatId: string;
  addressedToReader: boolean;
}

function vatReferences(lines: readonly string[]): VatReference[] {
  const found: VatReference[] = [];
  lines.forEach((line, index) => {
    const match = VAT_REFERENCE.exec(line);
    if (match?.[2] !== undefined) found.push({ line: index, vatId: match[2], addressedToReader: match[1] !== undefined });
  });
  return found;
}

interface Parties {
  seller: InvoiceV1['seller'];
  buyer: InvoiceV1['buyer'];
}

function extractParties(lines: readonly string[]): Parties {
  const stops = `${LABELS.seller}|${LABELS.buyer}`;
  let sellerBlock = labelledBlock(lines, LABELS.seller, stops);
  let buyerBlock = labelledBlock(lines, LABELS.buyer, stops);
  let sellerParts: string[] | null = null;
  const sender = senderLineIndex(lines);
  if (sellerBlock === null && sender >= 0) {
    sellerParts = (lines[sender] ?? '').split(' · ').map((part) => part.trim());
    sellerBlock = { start: sender, end: sender, lines: sellerParts };
    buyerBlock ??= blockAfter(lines, sender);
  }
  sellerBlock ??= letterheadBlock(lines);
  if (sellerBlock === null) throw new InvoiceExtractionError('seller');
  if (buyerBlock === null) throw new InvoiceExtractionError('buyer');
  const sellerLines: Block = sellerBlock;
  const buyerLines: Block = buyerBlock;
  sellerParts ??= partyParts(sellerLines);
  const buyerParts = partyParts(buyerLines);

  const inside = (block: Block, line: number) => line >= block.start && line <= block.end;
  const references = vatReferences(lines);
  const buyerVat = references.find((ref) => inside(buyerLines, ref.line) || ref.addressedToReader)?.vatId ?? null;
  const sellerVat =
    references.find((ref) => inside(sellerLines, ref.line) && !ref.addressedToReader)?.vatId ??
    references.find((ref) => !inside(buyerLines, ref.line) && !ref.addressedToReader)?.vatId ??
    null;

  const [sellerName, ...sellerAddress] = sellerParts;
  const [buyerName] = buyerParts;
  if (!sellerName) throw new InvoiceExtractionError('seller.name');
  if (!buyerName) throw new InvoiceExtractionError('buyer.name');
  const country = countryOf(sellerAddress, sellerVat);
  if (country === null) throw new InvoiceExtractionError('seller.country');
  return {
    seller: { name: sellerName, vatId: sellerVat, country },
    buyer: { name: buyerName, vatId: buyerVat },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Line items

type Column = 'position' | 'description' | 'quantity' | 'unit' | 'unitPrice' | 'amount' | 'taxRate' | 'other';

const COLUMN_HEADERS: [RegExp, Column][] = [
  [/^(?:#|pos\.?|no\.?|nr\.?)$/iu, 'position'],
  [/^(?:qty|quantity|hours|hrs|units|menge|anzahl)$/iu, 'quantity'],
  [/^(?:unit|uom|einheit)$/iu, 'unit'],
  [/^(?:vat|tax|ust\.?|mwst\.?)\s*%$/iu, 'taxRate'],
  [/^(?:unit\s*price|price|rate|unit\s*cost|einzelpreis|e-preis|stückpreis|preis)\b/iu, 'unitPrice'],
  [/^(?:amount|total|line\s*total|net\s*amount|gesamtpreis|gesamt|betrag|summe)\b/iu, 'amount'],
  [/^(?:description|item(?:\s+description)?|service|details|bezeichnung|beschreibung|leistung|artikel)\b/iu, 'description'],
];

const RULE_LINE = /^[\s\-=_|+─—]+$/u;

function cells(line: string): string[] {
  if (line.includes('|')) {
    const parts = line.split('|').map((cell) => cell.trim());
    if (parts[0] === '') parts.shift();
    if (parts.at(-1) === '') parts.pop();
    return parts;
  }
  return line.trim().split(/\s{2,}/);
}

function classifyHeader(line: string): Column[] | null {
  const columns = cells(line).map((cell) => COLUMN_HEADERS.find(([pattern]) => pattern.test(cell))?.[1] ?? 'other');
  const required: Column[] = ['description', 'quantity', 'unitPrice', 'amount'];
  return required.every((column) => columns.includes(column)) ? columns : null;
}

function item(description: string, quantity: string, unitPrice: string, amount: string, language: Language): InvoiceV1LineItem {
  const qty = lastNumber(quantity, language);
  const price = lastNumber(unitPrice, language);
  const total = lastNumber(amount, language);
  if (qty === null || price === null || total === null || description.trim() === '') throw new InvoiceExtractionError('lineItems');
  return { description: description.trim(), quantity: round(qty, 3), unitPrice: round(price, 2), amount: round(total, 2) };
}

function tableItems(lines: readonly string[], language: Language): InvoiceV1LineItem[] | null {
  for (let i = 0; i < lines.length; i++) {
    const columns = classifyHeader(lines[i] ?? '');
    if (columns === null) continue;
    const items: InvoiceV1LineItem[] = [];
    for (let j = i + 1; j < lines.length; j++) {
      const line = lines[j] ?? '';
      if (isBlank(line)) {
        if (items.length > 0) break;
        continue;
      }
      if (RULE_LINE.test(line)) continue;
      const row = cells(line);
      if (row.length !== columns.length) break;
      const cell = (column: Column) => row[columns.indexOf(column)] ?? '';
      items.push(item(cell('description'), cell('quantity'), cell('unitPrice'), cell('amount'), language));
    }
    if (items.length > 0) return items;
  }
  return null;
}

const TIMES_LINE = /^\s*(\d+(?:[.,]\d+)?)\s*[x×]\s+(.+?)\s+(?:@|à|je)\s+(.+?)\s*=\s*(.+?)\s*$/u;

function timesLineItems(lines: readonly string[], language: Language): InvoiceV1LineItem[] | null {
  const items: InvoiceV1LineItem[] = [];
  for (const line of lines) {
    const match = TIMES_LINE.exec(line);
    if (match !== null) items.push(item(match[2] ?? '', match[1] ?? '', match[3] ?? '', match[4] ?? '', language));
  }
  return items.length > 0 ? items : null;
}

const POSITION_LINE = /^\s*(?:Pos\.?|Item|Position)\s*\d+[.:]?\s{2,}(.+?)\s*$/iu;

function positionBlockItems(lines: readonly string[], language: Language): InvoiceV1LineItem[] | null {
  const items: InvoiceV1LineItem[] = [];
  lines.forEach((line, index) => {
    const description = POSITION_LINE.exec(line)?.[1];
    if (description === undefined) return;
    const [quantity, unitPrice, amount] = numberTokens(lines[index + 1] ?? '');
    if (quantity === undefined || unitPrice === undefined || amount === undefined) throw new InvoiceExtractionError('lineItems');
    items.push(item(description, quantity, unitPrice, amount, language));
  });
  return items.length > 0 ? items : null;
}

// ---------------------------------------------------------------------------------------------------------
// Totals and currency

const SUBTOTAL_LINE = /^\s*(?:Subtotal|Sub-total|Net\s+total|Total\s+net(?:\s+amount)?|Net\s+amount|Total\s+excl\.?\s+(?:VAT|tax)|Total\s+before\s+tax|Zwischensumme|Nettobetrag|Summe\s+netto|Gesamt\s+netto|Total\s+exkl\.?\s+MWST)\b/iu;
const TAX_LINE = /^\s*(?:zzgl\.\s*|plus\s+|\+\s*)?(?:\d+(?:[.,]\d+)?\s*%\s*)?(?:VAT|Sales\s+tax|Tax|GST|USt\.?|MwSt\.?|MWST|Umsatzsteuer|Mehrwertsteuer)(?![\p{L}])/iu;
const TOTAL_LINE = /^\s*(?:Total|Grand\s+total|Invoice\s+total|Amount\s+due|Amount\s+payable|Balance\s+due|Gesamtbetrag|Rechnungsbetrag|Bruttobetrag|Summe\s+brutto|Gesamtsumme|Endbetrag|Zu\s+zahlen)\b/iu;
const RATE = /(\d+(?:[.,]\d+)?)\s*%/u;

interface Totals {
  subtotal: number;
  taxRate: number;
  taxAmount: number;
  total: number;
  totalLine: string;
}

function extractTotals(lines: readonly string[], language: Language): Totals {
  let subtotal: number | null = null;
  let tax: { rate: number; amount: number } | null = null;
  let total: { amount: number; line: string } | null = null;
  for (const line of lines) {
    if (SUBTOTAL_LINE.test(line)) {
      subtotal ??= lastNumber(line, language);
    } else if (TAX_LINE.test(line) && RATE.test(line)) {
      const rate = RATE.exec(line)?.[1];
      const amount = lastNumber(line.slice(line.search(RATE) + (RATE.exec(line)?.[0].length ?? 0)), language);
      if (tax === null && rate !== undefined && amount !== null) tax = { rate: parseLocaleNumber(rate, language), amount };
    } else if (TOTAL_LINE.test(line) && total === null) {
      const amount = lastNumber(line, language);
      if (amount !== null) total = { amount, line };
    }
  }
  if (subtotal === null) throw new InvoiceExtractionError('subtotal');
  if (tax === null) throw new InvoiceExtractionError('taxAmount');
  if (total === null) throw new InvoiceExtractionError('total');
  return { subtotal: round(subtotal, 2), taxRate: round(tax.rate, 2), taxAmount: round(tax.amount, 2), total: round(total.amount, 2), totalLine: total.line };
}

const CURRENCY_CODE = /\b(USD|EUR|GBP|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN|CZK)\b/u;
const CURRENCY_SYMBOLS: [RegExp, string][] = [
  [/€/u, 'EUR'],
  [/£/u, 'GBP'],
  [/\$/u, 'USD'],
];

function currencyIn(text: string): string | null {
  const code = CURRENCY_CODE.exec(text)?.[1];
  if (code !== undefined) return code;
  return CURRENCY_SYMBOLS.find(([symbol]) => symbol.test(text))?.[1] ?? null;
}

function extractCurrency(lines: readonly string[], totalLine: string): string {
  for (const line of lines) {
    const stated = /^\s*(?:Currency|Währung)\s*:?\s+([A-Z]{3})\b/u.exec(line)?.[1];
    if (stated !== undefined) return stated;
  }
  const currency = currencyIn(totalLine) ?? currencyIn(lines.join('\n'));
  if (currency === null) throw new InvoiceExtractionError('currency');
  return currency;
}

// ---------------------------------------------------------------------------------------------------------
// Language and conventions

const GERMAN_WORDS = /\b(?:Rechnung|Rechnungs\w*|Datum|Menge|Betrag|Summe|Zwischensumme|zahlbar|Bezeichnung|Einzelpreis|Kunde|Gesamtbetrag|MwSt|USt|Umsatzsteuer|Sehr geehrte|Mit freundlichen)\b/giu;
const ENGLISH_WORDS = /\b(?:Invoice|Date|Due|Total|Subtotal|Amount|Description|Qty|Quantity|Price|Bill to|Customer|Payment|Tax|VAT)\b/giu;

function detectLanguage(text: string): Language {
  const german = text.match(GERMAN_WORDS)?.length ?? 0;
  const english = text.match(ENGLISH_WORDS)?.length ?? 0;
  return german > english ? 'de' : 'en';
}

function slashConvention(text: string, language: Language, currency: string | null): SlashConvention {
  if (/DD\/MM\/YYYY|TT\.?\/MM\.?\/JJJJ/iu.test(text)) return 'dmy';
  if (/MM\/DD\/YYYY/iu.test(text)) return 'mdy';
  return language === 'en' && currency === 'USD' ? 'mdy' : 'dmy';
}

// ---------------------------------------------------------------------------------------------------------

/**
 * Extracts an `invoice@1` object from invoice text by rules alone (no model, no lookup).
 * @throws {InvoiceExtractionError} when a required field cannot be found
 */
export function extractInvoice(text: string): InvoiceV1 {
  const lines = text.replace(/\r\n?/g, '\n').split('\n').map((line) => line.replace(/\s+$/u, ''));
  const language = detectLanguage(text);
  const totals = extractTotals(lines, language);
  const currency = extractCurrency(lines, totals.totalLine);
  const convention = slashConvention(text, language, currency);

  const invoiceNumber = firstIdentifier(lines, LABELS.invoiceNumber);
  if (invoiceNumber === null) throw new InvoiceExtractionError('invoiceNumber');
  const issueDate = firstLabelledDate(lines, LABELS.issueDate, convention) ?? placeDateLine(lines, convention);
  if (issueDate === null) throw new InvoiceExtractionError('issueDate');
  const dueDate = firstLabelledDate(lines, LABELS.dueDate, convention);
  const purchaseOrder = firstIdentifier(lines, LABELS.purchaseOrder);
  const { seller, buyer } = extractParties(lines);
  const lineItems = tableItems(lines, language) ?? timesLineItems(lines, language) ?? positionBlockItems(lines, language);
  if (lineItems === null) throw new InvoiceExtractionError('lineItems');

  return {
    invoiceNumber,
    issueDate,
    dueDate,
    currency,
    seller,
    buyer,
    lineItems,
    subtotal: totals.subtotal,
    taxRate: totals.taxRate,
    taxAmount: totals.taxAmount,
    total: totals.total,
    purchaseOrder,
    language,
  };
}
