/**
 * The hard-shape tags of a rendered receipt, read from its expected object, its text and the date as
 * printed (the same `HardShape` names and text checks as the invoices', `../shapes.ts`).
 */
import type { ReceiptV1 } from '../../../../lib/contract/schemas/receipt-v1.js';
import type { HardShape } from '../../index.js';
import { CURRENCY_MARKS, hasAmbiguousSlashedDate } from '../shapes.js';
import type { RenderedReceipt } from './draw.js';

/** Whether an optional field a receipt usually prints is null (a VAT ID only counts outside the US). */
function hasMissingFields(receipt: ReceiptV1): boolean {
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
  if (hasAmbiguousSlashedDate(rendered.dateToken)) shapes.push('ambiguous-date');
  if (rendered.decimalComma) shapes.push('decimal-comma');
  if (hasMissingFields(rendered.receipt)) shapes.push('missing-fields');
  if (!CURRENCY_MARKS.test(rendered.text)) shapes.push('no-currency-symbol');
  return shapes;
}
