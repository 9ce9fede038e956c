/**
 * Drawing receipts: dates, times, item lines and numbers from the receipt corpus's own seeded stream
 * (separate from the invoice generators', so the two corpora never shift each other), the taxes of the
 * lines, and the expected `receipt@1` object assembled from what was drawn (the object is drawn first,
 * then rendered).
 */
import type { ReceiptV1 } from '../../../../lib/contract/schemas/receipt-v1.js';
import type { CorpusLanguage } from '../../index.js';
import { CURRENCY_OF, type Good, type Merchant } from './catalogue.js';
import { seededDraws } from '../random.js';

/** The receipt corpus seed: changing it (or the order of draws) changes every committed receipt file. */
const RECEIPT_SEED = 20261104;

/** The receipt corpus stream's draws (see `SeededDraws`); every receipt layout draws from it. */
export const { int, chance, pick, sample } = seededDraws(RECEIPT_SEED);

/** One drawn item line: what the expected object keeps, plus what the renderer prints beside it. */
export interface DrawnLine {
  description: string;
  quantity: number;
  unitCents: number;
  amountCents: number;
  /** VAT (or sales tax) rate of the line in percent. */
  rate: number;
  /** Printed unit of a measured quantity (`kg`, `l`), else null. */
  unit: 'kg' | 'l' | null;
}

/** A rendered receipt: its expected object, its text, and what the shape tags are read from. */
export interface RenderedReceipt {
  receipt: ReceiptV1;
  text: string;
  /** The date exactly as printed. */
  dateToken: string;
  /** Whether amounts are printed with a decimal comma. */
  decimalComma: boolean;
}

/** One receipt template. */
export interface ReceiptLayout {
  name: string;
  language: CorpusLanguage;
  render(round: number): RenderedReceipt;
}

/** A date between 2025-09-01 and 2026-08-28; `ambiguous` forces a day of 1..12 that is not the month. */
export function drawDate(ambiguous: boolean): string {
  const year = chance(0.35) ? 2025 : 2026;
  const month = year === 2025 ? int(9, 12) : int(1, 8);
  let day = ambiguous ? int(1, 12) : int(13, 28);
  if (ambiguous && day === month) day = month === 12 ? 1 : month + 1;
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** A time `HH:MM` between `fromHour`:00 and `toHour`:59. */
export function drawTime(fromHour: number, toHour: number): string {
  return `${String(int(fromHour, toHour)).padStart(2, '0')}:${String(int(0, 59)).padStart(2, '0')}`;
}

/** Draws `count` distinct goods as lines: pieces up to `maxQuantity` (with probability `multiple`), weighed goods by the kg. */
export function drawLines(goods: readonly Good[], count: number, maxQuantity: number, multiple: number, rateOf: (good: Good) => number): DrawnLine[] {
  return sample(goods, count).map((good) => {
    if (good.perKg === true) {
      const quantity = int(250, 1800) / 1000;
      return { description: good.description, quantity, unitCents: good.cents, amountCents: Math.round(quantity * good.cents), rate: rateOf(good), unit: 'kg' };
    }
    const quantity = chance(multiple) ? int(2, maxQuantity) : 1;
    return { description: good.description, quantity, unitCents: good.cents, amountCents: quantity * good.cents, rate: rateOf(good), unit: null };
  });
}

/** The VAT contained in a gross amount at `rate` percent, in cents. */
export function includedVat(grossCents: number, rate: number): number {
  return Math.round((grossCents * rate) / (100 + rate));
}

/** Sales tax added on a net amount at `rate` percent, in cents. */
export function addedSalesTax(netCents: number, rate: number): number {
  return Math.round((netCents * rate) / 100);
}

/** One row of a VAT breakdown. */
export interface VatRow {
  rate: number;
  netCents: number;
  taxCents: number;
  grossCents: number;
}

/** The VAT contained in the lines, per rate above zero, highest rate first. */
export function vatBreakdown(lines: readonly DrawnLine[]): VatRow[] {
  const rates = [...new Set(lines.map((l) => l.rate))].filter((r) => r > 0).sort((a, b) => b - a);
  return rates.map((rate) => {
    const grossCents = lines.filter((l) => l.rate === rate).reduce((sum, l) => sum + l.amountCents, 0);
    const taxCents = includedVat(grossCents, rate);
    return { rate, netCents: grossCents - taxCents, taxCents, grossCents };
  });
}

/** The VAT of a breakdown, summed over its rates, in cents. */
export const vatTotal = (rows: readonly VatRow[]): number => rows.reduce((sum, r) => sum + r.taxCents, 0);

/** Sum of the line amounts in cents. */
export const sumCents = (lines: readonly DrawnLine[]): number => lines.reduce((sum, l) => sum + l.amountCents, 0);

/** A tip of about 10 to 20 % of `cents`, rounded to a whole unit. */
export function drawTip(cents: number): number {
  return Math.max(100, Math.round((cents * int(10, 20)) / 10000) * 100);
}

/** What a cash customer hands over: the next multiple of 5, 10, 20 or 50 above the total, in cents. */
export function cashGiven(totalCents: number): number {
  const step = pick([500, 1000, 2000, 5000].filter((s) => s > totalCents / 4 || s === 5000));
  return Math.ceil((totalCents + 1) / step) * step;
}

/** A receipt number: `parts` groups of digits joined by `joiner`, with an optional prefix. */
export function receiptNo(prefix: string, digits: number[], joiner = '-'): string {
  return prefix + digits.map((d) => String(int(10 ** (d - 1), 10 ** d - 1))).join(joiner);
}

/** What the expected object is assembled from; the amounts a receipt does not print default to none. */
export interface ReceiptDraw {
  merchant: Merchant;
  receiptNumber: string | null;
  date: string;
  time: string | null;
  lines: readonly DrawnLine[];
  /** Whether the subtotal is printed (default: no). */
  subtotalPrinted?: boolean;
  /** Sales tax added on top of the items (default: none). */
  addedTaxCents?: number | null;
  /** VAT contained in the items (default: none). */
  includedTaxCents?: number | null;
  /** Tip (default: none). */
  tipCents?: number | null;
  paymentMethod: ReceiptV1['paymentMethod'];
  language: CorpusLanguage;
}

/** The expected `receipt@1` object of a draw; the total is items + added tax + tip. */
export function assemble(draw: ReceiptDraw): ReceiptV1 {
  const { addedTaxCents = null, includedTaxCents = null, tipCents = null } = draw;
  const itemsCents = sumCents(draw.lines);
  const totalCents = itemsCents + (addedTaxCents ?? 0) + (tipCents ?? 0);
  const money = (cents: number | null) => (cents === null ? null : cents / 100);
  return {
    merchant: { name: draw.merchant.name, vatId: draw.merchant.vatId, country: draw.merchant.country },
    receiptNumber: draw.receiptNumber,
    date: draw.date,
    time: draw.time,
    currency: CURRENCY_OF[draw.merchant.country],
    items: draw.lines.map((l) => ({ description: l.description, quantity: l.quantity, amount: l.amountCents / 100 })),
    subtotal: draw.subtotalPrinted === true ? itemsCents / 100 : null,
    addedTax: money(addedTaxCents),
    includedTax: money(includedTaxCents),
    tip: money(tipCents),
    total: totalCents / 100,
    paymentMethod: draw.paymentMethod,
    language: draw.language,
  };
}

/** The cents of a total as the expected object holds it. */
export const totalCentsOf = (receipt: ReceiptV1): number => Math.round(receipt.total * 100);
