/**
 * The invoice generators' expected objects: each invoice is drawn first (parties, lines, amounts,
 * dates) from the invoice corpus's seeded stream, then a layout renders it to text. The evaluation
 * layouts (French, hard shapes) draw with more controls ({@link drawEvalInvoice}).
 */
import type { InvoiceV1 as Invoice, InvoiceV1LineItem } from '../../../../lib/contract/schemas/invoice-v1.js';
import type { HardShape } from '../../index.js';
import type { CatalogueItem, Party, QuantityKind } from './catalogue.js';
import { addDays } from '../format.js';
import { seededDraws } from '../random.js';

/** The invoice corpus seed: changing it (or the order of draws) changes every committed invoice file. */
const SEED = 20260304;

const draws = seededDraws(SEED);

/** The invoice corpus stream's draws (see `SeededDraws`); every invoice layout draws from it. */
export const { int, chance, pick, maybe } = draws;
const { sample } = draws;

function randomIssueDate(): string {
  return addDays('2025-01-02', int(0, 540));
}

/** What an invoice's head and totals are assembled from (see {@link assembleInvoice}). */
interface InvoiceHead {
  seller: Party;
  buyer: Party;
  currency: string;
  taxRate: number;
  language: Invoice['language'];
  invoiceNumber: string;
  purchaseOrder: string | null;
  dueInDays: number | null;
}

export interface Draw extends InvoiceHead {
  language: 'en' | 'de';
  catalogue: CatalogueItem[];
  minItems?: number;
  maxItems?: number;
}

export interface DrawnLine {
  item: CatalogueItem;
  quantity: number;
}

function drawQuantity(kind: QuantityKind): number {
  if (kind === 'one') return 1;
  if (kind === 'hours') return pick([1, 1.5, 2, 2.5, 3.5, 4, 6, 7.5, 8, 12, 16, 22.5, 40]);
  return pick([1, 1, 2, 2, 3, 4, 5, 6, 8, 10, 12, 20, 25, 40]);
}

function drawPrice(item: CatalogueItem): number {
  const whole = int(item.minPrice, item.maxPrice);
  const cents = pick([0, 0, 0, 50, 90, 95, 99, 25, 49]);
  return Math.round(whole * 100 + cents) / 100;
}

export const cents = (value: number): number => Math.round(value * 100);

/** A line's amount: quantity x unit price, rounded to cents. */
const lineAmount = (quantity: number, unitPrice: number): number => Math.round(quantity * cents(unitPrice)) / 100;

/**
 * The invoice of drawn line items: subtotal, tax (rounded to cents) and total from the lines, the due date
 * `dueInDays` after `issueDate`. Draws nothing.
 */
function assembleInvoice(head: InvoiceHead, lineItems: InvoiceV1LineItem[], issueDate: string): Invoice {
  const subtotalCents = lineItems.reduce((sum, line) => sum + cents(line.amount), 0);
  const taxCents = Math.round((subtotalCents * head.taxRate) / 100);
  return {
    invoiceNumber: head.invoiceNumber,
    issueDate,
    dueDate: head.dueInDays === null ? null : addDays(issueDate, head.dueInDays),
    currency: head.currency,
    seller: { name: head.seller.name, vatId: head.seller.vatId, country: head.seller.country },
    buyer: { name: head.buyer.name, vatId: head.buyer.vatId },
    lineItems,
    subtotal: subtotalCents / 100,
    taxRate: head.taxRate,
    taxAmount: taxCents / 100,
    total: (subtotalCents + taxCents) / 100,
    purchaseOrder: head.purchaseOrder,
    language: head.language,
  };
}

export function drawInvoice(draw: Draw): { invoice: Invoice; lines: DrawnLine[] } {
  const count = int(draw.minItems ?? 1, draw.maxItems ?? 8);
  const chosen = sample(draw.catalogue, count);
  const lines = chosen.map((item) => ({ item, quantity: drawQuantity(item.kind) }));
  const lineItems = lines.map(({ item, quantity }) => {
    const unitPrice = drawPrice(item);
    return { description: item.description, quantity, unitPrice, amount: lineAmount(quantity, unitPrice) };
  });
  return { invoice: assembleInvoice(draw, lineItems, randomIssueDate()), lines };
}

export const poNumber = (): string =>
  pick([() => `4500${int(100000, 999999)}`, () => `PO-${int(10000, 99999)}`, () => `2026-PO-${int(100, 999)}`, () => `BN-${int(1000, 9999)}`])();
export const sequence = (): number => int(12, 4800);

export interface Rendered {
  invoice: Invoice;
  text: string;
}

export type Layout = { name: string; language: 'en' | 'de'; render: (round: number) => Rendered };

// ---------------------------------------------------------------------------------------------------------
// The evaluation corpus: French and hard-shape invoices

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
