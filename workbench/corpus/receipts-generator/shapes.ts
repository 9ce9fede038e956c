/**
 * The hard-shape tags of a rendered receipt, read from its expected object, its text and the date as
 * printed (the same `HardShape` names as the rest of the corpus).
 */
import type { ReceiptV1 } from '../../../lib/contract/schemas/receipt-v1.js';
import type { HardShape } from '../index.js';
import type { RenderedReceipt } from './draw.js';

/** A currency symbol or code anywhere in a text. */
const CURRENCY_MARK = /[$€£]|\b(?:USD|EUR|GBP|CHF)\b/u;

/** A slashed date whose first two parts could each be the month (03/04/2026, not 13/04/2026 or 04/04/2026). */
export function isAmbiguousDate(dateToken: string): boolean {
  const match = /^(\d{1,2})\/(\d{1,2})\/\d{4}$/.exec(dateToken);
  if (match === null) return false;
  const [first, second] = [Number(match[1]), Number(match[2])];
  return first <= 12 && second <= 12 && first !== second;
}

/** Whether an optional field a receipt usually prints is null (a VAT ID only counts outside the US). */
export function hasMissingFields(receipt: ReceiptV1): boolean {
  return (
    receipt.receiptNumber === null ||
    receipt.time === null ||
    receipt.paymentMethod === null ||
    (receipt.merchant.vatId === null && receipt.merchant.country !== 'US')
  );
}

/** The hard shapes of one rendered receipt, in a fixed order. */
export function shapesOf(rendered: RenderedReceipt): HardShape[] {
  const shapes: HardShape[] = [];
  if (isAmbiguousDate(rendered.dateToken)) shapes.push('ambiguous-date');
  if (rendered.decimalComma) shapes.push('decimal-comma');
  if (hasMissingFields(rendered.receipt)) shapes.push('missing-fields');
  if (!CURRENCY_MARK.test(rendered.text)) shapes.push('no-currency-symbol');
  return shapes;
}
