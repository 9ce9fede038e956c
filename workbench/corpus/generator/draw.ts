/**
 * The corpus generator's expected objects: each invoice is drawn first (parties, lines, amounts,
 * dates), then a layout renders it to text.
 */
import type { InvoiceV1 as Invoice, InvoiceV1LineItem } from '../../../lib/contract/schemas/invoice-v1.js';
import type { CatalogueItem, Party, QuantityKind } from './catalogue.js';
import { addDays } from './format.js';
import { int, pick, sample } from './random.js';

export function randomIssueDate(): string {
  return addDays('2025-01-02', int(0, 540));
}

/** What an invoice's head and totals are assembled from (see {@link assembleInvoice}). */
export interface InvoiceHead {
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

export function drawQuantity(kind: QuantityKind): number {
  if (kind === 'one') return 1;
  if (kind === 'hours') return pick([1, 1.5, 2, 2.5, 3.5, 4, 6, 7.5, 8, 12, 16, 22.5, 40]);
  return pick([1, 1, 2, 2, 3, 4, 5, 6, 8, 10, 12, 20, 25, 40]);
}

export function drawPrice(item: CatalogueItem): number {
  const whole = int(item.minPrice, item.maxPrice);
  const cents = pick([0, 0, 0, 50, 90, 95, 99, 25, 49]);
  return Math.round(whole * 100 + cents) / 100;
}

export const cents = (value: number): number => Math.round(value * 100);

/** A line's amount: quantity x unit price, rounded to cents. */
export const lineAmount = (quantity: number, unitPrice: number): number => Math.round(quantity * cents(unitPrice)) / 100;

/**
 * The invoice of drawn line items: subtotal, tax (rounded to cents) and total from the lines, the due date
 * `dueInDays` after `issueDate`. Draws nothing.
 */
export function assembleInvoice(head: InvoiceHead, lineItems: InvoiceV1LineItem[], issueDate: string): Invoice {
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
