/**
 * The invoice extractor's line items (column tables, pipe tables, also continued over several pages,
 * `qty x item @ price = amount` lines, two-line position blocks), totals and currency.
 */
import type { InvoiceV1LineItem } from '../../../lib/contract/schemas/invoice-v1.js';
import { type DecimalMark, isBlank, lastNumber, numberTokens, parseLocaleNumber, round, InvoiceExtractionError } from './text.js';

// ---------------------------------------------------------------------------------------------------------
// Line items

type Column = 'position' | 'description' | 'quantity' | 'unit' | 'unitPrice' | 'amount' | 'taxRate' | 'other';

const COLUMN_HEADERS: [RegExp, Column][] = [
  [/^(?:#|pos\.?|no\.?|nr\.?|réf\.?|n°)$/iu, 'position'],
  [/^(?:qty|quantity|hours|hrs|units|menge|anzahl|qté|quantité)$/iu, 'quantity'],
  [/^(?:unit|uom|einheit|unité)$/iu, 'unit'],
  [/^(?:vat|tax|ust\.?|mwst\.?|tva)\s*%$/iu, 'taxRate'],
  [/^(?:unit\s*price|price|rate|unit\s*cost|einzelpreis|e-preis|stückpreis|preis|prix(?:\s+unitaire)?|pu)\b/iu, 'unitPrice'],
  [/^(?:amount|total|line\s*total|net\s*amount|gesamtpreis|gesamt|betrag|summe|montant)\b/iu, 'amount'],
  [/^(?:description|item(?:\s+description)?|service|details|bezeichnung|beschreibung|leistung|artikel|désignation|libellé)(?![\p{L}])/iu, 'description'],
];

const RULE_LINE = /^[\s\-=_|+─—]+$/u;
/** A running total where a table breaks across pages (`Carried forward`, `Übertrag`, `Report`): not an item. */
const CARRY_CELL = /^(?:Carried\s+forward|Brought\s+forward|Übertrag|Report|(?:À|A)\s+reporter)(?![\p{L}])/iu;

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

function item(description: string, quantity: string, unitPrice: string, amount: string, mark: DecimalMark): InvoiceV1LineItem {
  const qty = lastNumber(quantity, mark);
  const price = lastNumber(unitPrice, mark);
  const total = lastNumber(amount, mark);
  if (qty === null || price === null || total === null || description.trim() === '') throw new InvoiceExtractionError('lineItems');
  return { description: description.trim(), quantity: round(qty, 3), unitPrice: round(price, 2), amount: round(total, 2) };
}

/** Items of every table with an item header, in order: a table continued on the next page repeats its header. */
export function tableItems(lines: readonly string[], mark: DecimalMark): InvoiceV1LineItem[] | null {
  const items: InvoiceV1LineItem[] = [];
  let i = 0;
  while (i < lines.length) {
    const columns = classifyHeader(lines[i] ?? '');
    i++;
    if (columns === null) continue;
    let found = 0;
    for (; i < lines.length; i++) {
      const line = lines[i] ?? '';
      if (isBlank(line)) {
        if (found > 0) break;
        continue;
      }
      if (RULE_LINE.test(line)) continue;
      const row = cells(line);
      if (row.some((cell) => CARRY_CELL.test(cell))) continue;
      if (row.length !== columns.length) break;
      const cell = (column: Column) => row[columns.indexOf(column)] ?? '';
      items.push(item(cell('description'), cell('quantity'), cell('unitPrice'), cell('amount'), mark));
      found++;
    }
  }
  return items.length > 0 ? items : null;
}

const TIMES_LINE = /^\s*(\d+(?:[.,]\d+)?)\s*[x×]\s+(.+?)\s+(?:@|à|je)\s+(.+?)\s*=\s*(.+?)\s*$/u;

export function timesLineItems(lines: readonly string[], mark: DecimalMark): InvoiceV1LineItem[] | null {
  const items: InvoiceV1LineItem[] = [];
  for (const line of lines) {
    const match = TIMES_LINE.exec(line);
    if (match !== null) items.push(item(match[2] ?? '', match[1] ?? '', match[3] ?? '', match[4] ?? '', mark));
  }
  return items.length > 0 ? items : null;
}

const POSITION_LINE = /^\s*(?:Pos\.?|Item|Position)\s*\d+[.:]?\s{2,}(.+?)\s*$/iu;

export function positionBlockItems(lines: readonly string[], mark: DecimalMark): InvoiceV1LineItem[] | null {
  const items: InvoiceV1LineItem[] = [];
  lines.forEach((line, index) => {
    const description = POSITION_LINE.exec(line)?.[1];
    if (description === undefined) return;
    const [quantity, unitPrice, amount] = numberTokens(lines[index + 1] ?? '');
    if (quantity === undefined || unitPrice === undefined || amount === undefined) throw new InvoiceExtractionError('lineItems');
    items.push(item(description, quantity, unitPrice, amount, mark));
  });
  return items.length > 0 ? items : null;
}

// ---------------------------------------------------------------------------------------------------------
// Totals and currency

const SUBTOTAL_LINE =
  /^\s*(?:Subtotal|Sub-total|Net\s+total|Total\s+net(?:\s+amount)?|Net\s+amount|Total\s+excl\.?\s+(?:VAT|tax)|Total\s+before\s+tax|Zwischensumme|Nettobetrag|Summe\s+netto|Gesamt\s+netto|Total\s+exkl\.?\s+MWST|Total\s+HTVA|Total\s+HT|Montant\s+HT|Sous-total(?:\s+HT)?|Total\s+hors\s+taxes?)(?![\p{L}])/iu;
const TAX_LINE =
  /^\s*(?:zzgl\.\s*|plus\s+|\+\s*)?(?:\d+(?:[.,]\d+)?\s*%\s*)?(?:VAT|Sales\s+tax|Tax|GST|USt\.?|MwSt\.?|MWST|Umsatzsteuer|Mehrwertsteuer|TVA)(?![\p{L}])/iu;
const TOTAL_LINE =
  /^\s*(?:Total|Grand\s+total|Invoice\s+total|Amount\s+due|Amount\s+payable|Balance\s+due|Gesamtbetrag|Rechnungsbetrag|Bruttobetrag|Summe\s+brutto|Gesamtsumme|Endbetrag|Zu\s+zahlen|Net\s+(?:à|a)\s+payer|Montant\s+TTC|Montant\s+total|Montant\s+dû)(?![\p{L}])/iu;
const RATE = /(\d+(?:[.,]\d+)?)\s*%/u;

export interface Totals {
  subtotal: number;
  taxRate: number;
  taxAmount: number;
  total: number;
  totalLine: string;
}

export function extractTotals(lines: readonly string[], mark: DecimalMark): Totals {
  let subtotal: number | null = null;
  let tax: { rate: number; amount: number } | null = null;
  let total: { amount: number; line: string } | null = null;
  for (const line of lines) {
    if (SUBTOTAL_LINE.test(line)) {
      subtotal ??= lastNumber(line, mark);
    } else if (TAX_LINE.test(line) && RATE.test(line)) {
      const rate = RATE.exec(line)?.[1];
      const amount = lastNumber(line.slice(line.search(RATE) + (RATE.exec(line)?.[0].length ?? 0)), mark);
      if (tax === null && rate !== undefined && amount !== null) tax = { rate: parseLocaleNumber(rate, mark), amount };
    } else if (TOTAL_LINE.test(line) && total === null) {
      const amount = lastNumber(line, mark);
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

/** The currency of a seller country: what an invoice that prints no currency is billed in. */
const COUNTRY_CURRENCY: Record<string, string> = { US: 'USD', GB: 'GBP', CH: 'CHF', LI: 'CHF', SE: 'SEK', NO: 'NOK', DK: 'DKK', PL: 'PLN', CZ: 'CZK' };
const EURO_COUNTRIES = new Set(['DE', 'AT', 'FR', 'BE', 'NL', 'LU', 'IE', 'IT', 'ES', 'PT', 'FI', 'GR', 'SK', 'SI', 'EE', 'LV', 'LT', 'MT', 'CY', 'HR']);

/**
 * The invoice currency: a stated `Currency:` line, else the code or symbol on the total line, else anywhere
 * in the text, else (nothing printed) the currency of the seller country.
 */
export function extractCurrency(lines: readonly string[], totalLine: string, sellerCountry: string): string {
  for (const line of lines) {
    const stated = /^\s*(?:Currency|Währung|Devise|Monnaie)\s*:?\s+([A-Z]{3})\b/u.exec(line)?.[1];
    if (stated !== undefined) return stated;
  }
  const currency =
    currencyIn(totalLine) ?? currencyIn(lines.join('\n')) ?? COUNTRY_CURRENCY[sellerCountry] ?? (EURO_COUNTRIES.has(sellerCountry) ? 'EUR' : null);
  if (currency === null) throw new InvoiceExtractionError('currency');
  return currency;
}
