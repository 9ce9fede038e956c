/**
 * The evaluation corpus's expected objects: like {@link drawInvoice}, but with the controls the French and
 * hard-shape layouts need (any item count, repeated catalogue items with a variant suffix, extra lines,
 * a fixed issue date, e.g. an ambiguous one such as 2026-04-03).
 */
import type { InvoiceV1 as Invoice, InvoiceV1LineItem } from '../../../lib/contract/schemas/invoice-v1.js';
import type { HardShape } from '../index.js';
import type { CatalogueItem } from './catalogue.js';
import { assembleInvoice, drawPrice, drawQuantity, type InvoiceHead, lineAmount, randomIssueDate } from './draw.js';
import { int, pick, sample } from './random.js';

/** What an evaluation invoice is drawn from. */
export interface EvalDraw extends InvoiceHead {
  catalogue: CatalogueItem[];
  /** How many lines; beyond the catalogue's size items repeat with {@link EvalDraw.variant}. */
  items: number;
  /** Appended to a repeated item's description, e.g. `(lot 12)`. */
  variant?: (n: number) => string;
  /** Extra items always drawn (after the others). */
  extra?: CatalogueItem[];
  issueDate?: string;
}

/** An evaluation invoice and the unit label of each line (for unit columns). */
export interface EvalDrawn {
  invoice: Invoice;
  units: string[];
}

/** An issue date whose slashed form is ambiguous: day and month both at most 12, and different. */
export function ambiguousIssueDate(): string {
  const year = pick([2025, 2026]);
  const month = int(1, 12);
  let day = int(1, 12);
  if (day === month) day = (month % 12) + 1;
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function line(item: CatalogueItem, description: string): InvoiceV1LineItem {
  const quantity = drawQuantity(item.kind);
  const unitPrice = drawPrice(item);
  return { description, quantity, unitPrice, amount: lineAmount(quantity, unitPrice) };
}

/** Draws an evaluation invoice whose totals agree with its lines. */
export function drawEvalInvoice(draw: EvalDraw): EvalDrawn {
  const chosen: [CatalogueItem, string][] = [];
  if (draw.items <= draw.catalogue.length && draw.variant === undefined) {
    for (const item of sample(draw.catalogue, draw.items)) chosen.push([item, item.description]);
  } else {
    const variant = draw.variant ?? ((n: number) => `(${n})`);
    for (let n = 1; n <= draw.items; n++) {
      const item = pick(draw.catalogue);
      chosen.push([item, `${item.description} ${variant(int(2, 98))}`]);
    }
  }
  for (const item of draw.extra ?? []) chosen.push([item, item.description]);
  const lineItems = chosen.map(([item, description]) => line(item, description));
  const invoice = assembleInvoice(draw, lineItems, draw.issueDate ?? randomIssueDate());
  return { invoice, units: chosen.map(([item]) => item.unit ?? '') };
}

/** What a layout returns for the evaluation corpus: the object, its text, and the shapes it has. */
export interface EvalRendered {
  invoice: Invoice;
  text: string;
  shapes: HardShape[];
}
