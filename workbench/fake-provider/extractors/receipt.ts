/**
 * A deterministic, rule-based receipt parser: the "model" behind the local fake provider for `receipt@1`.
 * It reads the merchant block at the top (name, VAT ID, phone, postcode), the date line with its time,
 * labelled receipt numbers, the item lines between the first separator and the first totals label
 * (`x2` suffixes, quantity-first lines, quantity and weight lines under an item), the totals, tip and tax
 * lines in English, German and French, and the payment method printed after the total. It knows nothing
 * of the corpus: it only reads the text it is given.
 */
import type { ReceiptV1, ReceiptV1Item } from '../../../lib/contract/schemas/receipt-v1.js';
import {
  AMOUNT,
  type DecimalSeparator,
  ReceiptExtractionError,
  type ReceiptLanguage,
  decimalSeparator,
  detectLanguage,
  findDate,
  findTime,
  lastAmount,
  parseNumber,
} from './receipt-text.js';

export { ReceiptExtractionError } from './receipt-text.js';

// ---------------------------------------------------------------------------------------------------------
// Merchant

/** VAT ID shapes of the merchant countries, as printed. */
const VAT_ID =
  /(?<![A-Z0-9])(CHE-\d{3}\.\d{3}\.\d{3}(?: (?:MWST|TVA|IVA))?|ATU\d{8}|DE\d{9}|FR[0-9A-Z]{2}\d{9}|BE ?[01]\d{3}\.?\d{3}\.?\d{3}|GB ?\d{3} ?\d{4} ?\d{2})(?![A-Z0-9])/u;

const PHONE_COUNTRY: [RegExp, string][] = [
  [/\+49\b/u, 'DE'],
  [/\+43\b/u, 'AT'],
  [/\+41\b/u, 'CH'],
  [/\+33\b/u, 'FR'],
  [/\+32\b/u, 'BE'],
  [/\+44\b/u, 'GB'],
  [/\+1\b/u, 'US'],
];

const CURRENCY_OF_COUNTRY: Record<string, string> = { US: 'USD', GB: 'GBP', DE: 'EUR', AT: 'EUR', FR: 'EUR', BE: 'EUR', CH: 'CHF' };

function vatCountry(vatId: string): string {
  if (vatId.startsWith('ATU')) return 'AT';
  if (vatId.startsWith('CHE')) return 'CH';
  return vatId.slice(0, 2);
}

/** The merchant country: VAT ID prefix, else phone prefix, else the postcode shape in the merchant block. */
function merchantCountry(vatId: string | null, header: readonly string[], language: ReceiptLanguage, printedCurrency: string | null): string {
  if (vatId !== null) return vatCountry(vatId);
  const block = header.join('\n');
  for (const [regex, country] of PHONE_COUNTRY) if (regex.test(block)) return country;
  if (/\b[A-Z]{2} \d{5}(?:-\d{4})?\b/u.test(block)) return 'US';
  if (/\b[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}\b/u.test(block)) return 'GB';
  const postcode = /^\s*(?:[A-Z]{1,2}-)?(\d{4,5})\s+\p{L}/mu.exec(block)?.[1];
  if (postcode !== undefined) {
    if (language === 'fr') return postcode.length === 5 ? 'FR' : 'BE';
    if (language === 'de') return postcode.length === 5 ? 'DE' : printedCurrency === 'CHF' ? 'CH' : 'AT';
  }
  const byCurrency = Object.entries(CURRENCY_OF_COUNTRY).find(([, currency]) => currency === printedCurrency && currency !== 'EUR')?.[0];
  return byCurrency ?? (language === 'fr' ? 'FR' : language === 'de' ? 'DE' : 'US');
}

/** The currency printed anywhere (symbol or ISO code), or `null`. */
function printedCurrency(text: string): string | null {
  const mark = /[$€£]|\b(?:USD|EUR|GBP|CHF)\b/u.exec(text)?.[0];
  if (mark === undefined) return null;
  return { $: 'USD', '€': 'EUR', '£': 'GBP' }[mark] ?? mark;
}

// ---------------------------------------------------------------------------------------------------------
// Labels

const SEPARATOR = /^\s*([-=*_])\1{4,}\s*$/u;
const SUBTOTAL = /^\s*(?:sub-?total|zwischensumme|zwischentotal|sous-total)\b/iu;
const TOTAL = /^\s*(?:total|summe|gesamtbetrag|gesamt)\b(?!\s+items)/iu;
const ADDED_TAX = /^\s*(?:sales\s+)?tax\b/iu;
const TIP = /^\s*(?:tip|gratuity|trinkgeld|pourboire)\b/iu;
const TOTALS_LABEL = [SUBTOTAL, TOTAL, ADDED_TAX, TIP];

const RECEIPT_NUMBER =
  /(?:^|\s)(?:receipt\s*(?:no\.?|#|number)|trans(?:action)?\s*#|check\s*#|bill\s+no\.?|bon-nr\.?|beleg-nr\.?|rechnung\s+nr\.?|quittung\s+nr\.?|ticket\s+n°|reçu\s+n°|addition\s+n°)\s*[:#]?\s*([A-Za-z0-9][A-Za-z0-9\-/.]*[A-Za-z0-9]|\d)/iu;

/** Lines that print a date which is not the purchase date (return windows, validity). */
const NOT_PURCHASE_DATE = /\b(?:until|valid|bis|gültig|jusqu)/iu;

const INCLUDED_TAX_LINE = /(?:VAT|MwSt|MWST|TVA)/u;
const INCLUDED_WORD = /(?:^|\s)(?:incl|inkl|enth|dont|included|includes)/iu;
const VAT_ROW = new RegExp(String.raw`^\s*(?:[A-Z0-9]\s+)?\d{1,2}(?:[.,]\d{1,2})?\s*%\s+(${AMOUNT})\s+(${AMOUNT})\s+(${AMOUNT})\s*$`, 'u');

const PAYMENT: [RegExp, 'cash' | 'card' | 'other'][] = [
  [/\b(?:gift\s+card|gift\s+voucher|voucher|gutschein|twint|titre-restaurant|app|application)\b/iu, 'other'],
  [/(?<![\p{L}])(?:cash|bar|espèces|especes)(?![\p{L}])/iu, 'cash'],
  [/(?<![\p{L}])(?:card|visa|mastercard|amex|debit|credit|girocard|ec-karte|karte|kreditkarte|bankomat|cb|carte)(?![\p{L}])/iu, 'card'],
];

// ---------------------------------------------------------------------------------------------------------
// Items

const ITEM_LINE = new RegExp(String.raw`^\s*(\S.*?)\s{2,}(?:[$£€]\s?)?(${AMOUNT})(?:\s*(?:€|EUR|CHF|\$|£))?(?:\s+[A-Z])?\s*$`, 'u');
const QUANTITY_LINE = /^\s+(\d+(?:[.,]\d+)?)\s*(?:kg|l|Stk\.?)?\s*[x×]\s*\d+(?:[.,]\d+)?\s*(?:€|EUR|CHF)?\s*(?:\/\s*(?:kg|l))?\s*$/u;
const QUANTITY_FIRST = /^(\d{1,3})\s*x?\s+(\S.*)$/u;
const QUANTITY_SUFFIX = /^(.*?\S)\s+x(\d{1,3})$/u;

function parseItems(region: readonly string[], separator: DecimalSeparator): ReceiptV1Item[] {
  const items: ReceiptV1Item[] = [];
  for (const line of region) {
    const quantity = QUANTITY_LINE.exec(line);
    const previous = items.at(-1);
    if (quantity !== null && previous !== undefined) {
      previous.quantity = parseNumber(quantity[1] ?? '', separator);
      continue;
    }
    const item = ITEM_LINE.exec(line);
    if (item === null) continue;
    let description = (item[1] ?? '').trim();
    let count = 1;
    const first = QUANTITY_FIRST.exec(description);
    const suffix = QUANTITY_SUFFIX.exec(description);
    if (first !== null) [count, description] = [Number(first[1]), first[2] ?? ''];
    else if (suffix !== null) [description, count] = [suffix[1] ?? '', Number(suffix[2])];
    items.push({ description: description.trim(), quantity: count, amount: Math.round(parseNumber(item[2] ?? '', separator) * 100) / 100 });
  }
  return items;
}

// ---------------------------------------------------------------------------------------------------------

function firstAmountAfter(lines: readonly string[], label: RegExp, separator: DecimalSeparator): { value: number; index: number } | null {
  for (const [index, line] of lines.entries()) {
    if (!label.test(line)) continue;
    const value = lastAmount(line, separator);
    if (value !== null) return { value, index };
  }
  return null;
}

function includedTax(lines: readonly string[], separator: DecimalSeparator): number | null {
  let cents: number | null = null;
  for (const line of lines) {
    const row = VAT_ROW.exec(line);
    const value =
      row !== null ? parseNumber(row[2] ?? '', separator) : INCLUDED_TAX_LINE.test(line) && INCLUDED_WORD.test(line) ? lastAmount(line, separator) : null;
    if (value !== null) cents = (cents ?? 0) + Math.round(value * 100);
  }
  return cents === null ? null : cents / 100;
}

function paymentMethod(lines: readonly string[]): ReceiptV1['paymentMethod'] {
  for (const line of lines) {
    const method = PAYMENT.find(([regex]) => regex.test(line))?.[1];
    if (method !== undefined) return method;
  }
  return null;
}

/**
 * Extracts a `receipt@1` object from receipt text by rules alone (no model, no lookup).
 * @throws {ReceiptExtractionError} when a required field (merchant name, date, items, total) cannot be found
 */
export function extractReceipt(text: string): ReceiptV1 {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(/\s+$/u, ''));
  const language = detectLanguage(text);
  const separator = decimalSeparator(text);
  const firstSeparator = lines.findIndex((line) => SEPARATOR.test(line));
  const header = lines.slice(0, firstSeparator < 0 ? lines.length : firstSeparator);

  const name = lines.find((line) => line.trim() !== '')?.trim();
  if (name === undefined) throw new ReceiptExtractionError('merchant.name');
  const vatId = VAT_ID.exec(text)?.[1] ?? null;
  const currencyMark = printedCurrency(text);
  const country = merchantCountry(vatId, header, language, currencyMark);

  const dateLine = lines.map((line) => (NOT_PURCHASE_DATE.test(line) ? null : { line, found: findDate(line, country === 'US') })).find((d) => d?.found != null);
  if (dateLine?.found == null) throw new ReceiptExtractionError('date');

  const totalsStart = lines.findIndex((line, index) => index > firstSeparator && TOTALS_LABEL.some((label) => label.test(line)));
  if (firstSeparator < 0 || totalsStart < 0) throw new ReceiptExtractionError('items');
  const items = parseItems(
    lines.slice(firstSeparator + 1, totalsStart).filter((line) => !SEPARATOR.test(line)),
    separator,
  );
  if (items.length === 0) throw new ReceiptExtractionError('items');
  const total = firstAmountAfter(lines, TOTAL, separator);
  if (total === null) throw new ReceiptExtractionError('total');

  return {
    merchant: { name, vatId, country },
    receiptNumber: lines.map((line) => RECEIPT_NUMBER.exec(line)?.[1]).find((id) => id !== undefined && /\d/.test(id)) ?? null,
    date: dateLine.found.iso,
    time: findTime(dateLine.line.slice(dateLine.found.end)),
    currency: currencyMark ?? CURRENCY_OF_COUNTRY[country] ?? 'EUR',
    items,
    subtotal: firstAmountAfter(lines, SUBTOTAL, separator)?.value ?? null,
    addedTax: firstAmountAfter(lines, ADDED_TAX, separator)?.value ?? null,
    includedTax: includedTax(lines, separator),
    tip: firstAmountAfter(lines, TIP, separator)?.value ?? null,
    total: total.value,
    paymentMethod: paymentMethod(lines.slice(total.index + 1)),
    language,
  };
}
