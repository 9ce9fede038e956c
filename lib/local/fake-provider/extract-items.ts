/**
 * The invoice extractor's line items (column tables, pipe tables, `qty x item @ price = amount` lines,
 * two-line position blocks), totals and currency.
 */
import type { InvoiceV1LineItem } from '../../contract/schemas/invoice-v1.js';
import { isBlank, type Language, lastNumber, numberTokens, parseLocaleNumber, round, InvoiceExtractionError } from './extract-text.js';

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

export function tableItems(lines: readonly string[], language: Language): InvoiceV1LineItem[] | null {
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

export function timesLineItems(lines: readonly string[], language: Language): InvoiceV1LineItem[] | null {
  const items: InvoiceV1LineItem[] = [];
  for (const line of lines) {
    const match = TIMES_LINE.exec(line);
    if (match !== null) items.push(item(match[2] ?? '', match[1] ?? '', match[3] ?? '', match[4] ?? '', language));
  }
  return items.length > 0 ? items : null;
}

const POSITION_LINE = /^\s*(?:Pos\.?|Item|Position)\s*\d+[.:]?\s{2,}(.+?)\s*$/iu;

export function positionBlockItems(lines: readonly string[], language: Language): InvoiceV1LineItem[] | null {
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

const SUBTOTAL_LINE =
  /^\s*(?:Subtotal|Sub-total|Net\s+total|Total\s+net(?:\s+amount)?|Net\s+amount|Total\s+excl\.?\s+(?:VAT|tax)|Total\s+before\s+tax|Zwischensumme|Nettobetrag|Summe\s+netto|Gesamt\s+netto|Total\s+exkl\.?\s+MWST)\b/iu;
const TAX_LINE =
  /^\s*(?:zzgl\.\s*|plus\s+|\+\s*)?(?:\d+(?:[.,]\d+)?\s*%\s*)?(?:VAT|Sales\s+tax|Tax|GST|USt\.?|MwSt\.?|MWST|Umsatzsteuer|Mehrwertsteuer)(?![\p{L}])/iu;
const TOTAL_LINE =
  /^\s*(?:Total|Grand\s+total|Invoice\s+total|Amount\s+due|Amount\s+payable|Balance\s+due|Gesamtbetrag|Rechnungsbetrag|Bruttobetrag|Summe\s+brutto|Gesamtsumme|Endbetrag|Zu\s+zahlen)\b/iu;
const RATE = /(\d+(?:[.,]\d+)?)\s*%/u;

export interface Totals {
  subtotal: number;
  taxRate: number;
  taxAmount: number;
  total: number;
  totalLine: string;
}

export function extractTotals(lines: readonly string[], language: Language): Totals {
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

export function extractCurrency(lines: readonly string[], totalLine: string): string {
  for (const line of lines) {
    const stated = /^\s*(?:Currency|Währung)\s*:?\s+([A-Z]{3})\b/u.exec(line)?.[1];
    if (stated !== undefined) return stated;
  }
  const currency = currencyIn(totalLine) ?? currencyIn(lines.join('\n'));
  if (currency === null) throw new InvoiceExtractionError('currency');
  return currency;
}
