/**
 * The hard-shape layouts of the evaluation corpus: one letterhead invoice template in English, German and
 * French whose rendering each planned document bends into its shapes (ambiguous slashed dates, decimal
 * commas, missing optional fields, several pages, no currency printed, printed totals that disagree).
 */
import type { InvoiceV1 as Invoice } from '../../../../lib/contract/schemas/invoice-v1.js';
import type { HardShape } from '../../index.js';
import {
  BUYERS_AT,
  BUYERS_CH,
  BUYERS_DE,
  BUYERS_EN,
  BUYERS_EU,
  type CatalogueItem,
  type Country,
  IRISH_BUYER,
  ITEMS_DE,
  ITEMS_EN,
  type Party,
  SELLERS,
  BUYERS_FR,
  CHEAP_ITEMS,
  countryName,
  ITEMS_FR,
  SELLERS_EN_CONTINENTAL,
  SELLERS_FR,
} from './catalogue.js';
import { cents, sequence, int, pick, ambiguousIssueDate, drawEvalInvoice, type EvalRendered } from './draw.js';
import { columns, formatMoney, formatRate, pipeTable, totalsBlock } from './format.js';
import { type DateStyle, formatDate, formatNumber, formatQuantity, type NumberStyle } from '../format.js';
import { type HardLanguage, serviceLog, termsLines, WORDS } from './hard-words.js';

type SellerKind = 'US' | 'GB' | 'IE' | 'DE' | 'AT' | 'CH' | 'NL' | 'FR' | 'BE' | 'CH_FR';
type Omission = 'dueDate' | 'purchaseOrder' | 'buyerVat' | 'sellerVat';

/** One planned hard-shape document. */
export interface HardPlan {
  language: HardLanguage;
  seller: SellerKind;
  shapes: HardShape[];
  /** Which optional fields are left out (`missing-fields`). */
  missing?: Omission[];
  /** Which printed total disagrees (`totals-disagree`): a line left out of the subtotal, or a wrong total. */
  disagree?: 'subtotal' | 'total';
  /** Line items and service-log entries of a `long` document. */
  items?: number;
  log?: number;
  /** A currency other than the seller country's, billed to a US buyer. */
  currency?: 'USD';
}

const P = (language: HardLanguage, seller: SellerKind, shapes: HardShape[], more: Partial<HardPlan> = {}): HardPlan => ({ language, seller, shapes, ...more });

/** The hard-shape documents, in id order (hard-001 first). */
export const HARD_PLAN: HardPlan[] = [
  P('en', 'US', ['ambiguous-date']),
  P('en', 'GB', ['ambiguous-date']),
  P('en', 'DE', ['ambiguous-date'], { currency: 'USD' }),
  P('en', 'US', ['ambiguous-date', 'missing-fields'], { missing: ['dueDate', 'purchaseOrder'] }),
  P('de', 'DE', ['ambiguous-date']),
  P('de', 'AT', ['ambiguous-date', 'no-currency-symbol']),
  P('fr', 'FR', ['ambiguous-date', 'missing-fields'], { missing: ['purchaseOrder', 'buyerVat'] }),
  P('fr', 'BE', ['ambiguous-date', 'totals-disagree'], { disagree: 'subtotal' }),
  P('en', 'CH', ['ambiguous-date', 'no-currency-symbol']),
  P('en', 'US', ['ambiguous-date', 'long'], { items: 45, log: 40 }),
  P('en', 'DE', ['decimal-comma']),
  P('en', 'FR', ['decimal-comma', 'missing-fields'], { missing: ['dueDate', 'sellerVat'] }),
  P('en', 'AT', ['decimal-comma', 'ambiguous-date']),
  P('en', 'NL', ['decimal-comma', 'no-currency-symbol']),
  P('en', 'BE', ['decimal-comma', 'long'], { items: 60, log: 80 }),
  P('de', 'DE', ['decimal-comma']),
  P('fr', 'FR', ['decimal-comma', 'totals-disagree'], { disagree: 'total' }),
  P('en', 'GB', ['missing-fields'], { missing: ['dueDate', 'purchaseOrder', 'buyerVat'] }),
  P('en', 'US', ['missing-fields'], { missing: ['purchaseOrder'] }),
  P('de', 'DE', ['missing-fields'], { missing: ['dueDate', 'purchaseOrder', 'buyerVat', 'sellerVat'] }),
  P('de', 'CH', ['missing-fields'], { missing: ['sellerVat', 'dueDate'] }),
  P('fr', 'CH_FR', ['missing-fields'], { missing: ['dueDate', 'purchaseOrder', 'sellerVat'] }),
  P('fr', 'FR', ['missing-fields', 'no-currency-symbol'], { missing: ['sellerVat', 'buyerVat'] }),
  P('en', 'GB', ['long'], { items: 95, log: 120 }),
  P('de', 'DE', ['long'], { items: 70, log: 100 }),
  P('de', 'AT', ['long', 'missing-fields'], { items: 35, log: 20, missing: ['purchaseOrder'] }),
  P('fr', 'FR', ['long'], { items: 90, log: 110 }),
  P('fr', 'CH_FR', ['long', 'no-currency-symbol'], { items: 40, log: 30 }),
  P('en', 'IE', ['long', 'totals-disagree'], { items: 50, log: 30, disagree: 'subtotal' }),
  P('en', 'US', ['no-currency-symbol']),
  P('en', 'GB', ['no-currency-symbol', 'missing-fields'], { missing: ['dueDate', 'purchaseOrder'] }),
  P('de', 'DE', ['no-currency-symbol']),
  P('fr', 'BE', ['no-currency-symbol']),
  P('en', 'US', ['totals-disagree'], { disagree: 'total' }),
  P('de', 'DE', ['totals-disagree'], { disagree: 'subtotal' }),
  P('de', 'CH', ['totals-disagree', 'no-currency-symbol'], { disagree: 'total' }),
  P('fr', 'CH_FR', ['totals-disagree'], { disagree: 'subtotal' }),
];

function sellerOf(plan: HardPlan): Party {
  const continental = SELLERS_EN_CONTINENTAL.filter((party) => party.country === plan.seller);
  if (plan.language === 'en' && continental.length > 0) return pick(continental);
  switch (plan.seller) {
    case 'CH':
      return plan.language === 'en' ? pick(SELLERS.CH_EN) : pick(SELLERS.CH);
    case 'CH_FR':
      return pick(SELLERS_FR.CH);
    case 'FR':
    case 'BE':
      return pick(SELLERS_FR[plan.seller]);
    case 'NL':
      return SELLERS_EN_CONTINENTAL[0] as Party;
    default:
      return pick(SELLERS[plan.seller]);
  }
}

function buyerOf(plan: HardPlan, seller: Party): Party {
  const byCountry = (parties: Party[]) => parties.filter((party) => party.country === seller.country);
  if (plan.currency === 'USD') return pick(BUYERS_EN.filter((b) => b.country === 'US'));
  const pool: Party[] = [...BUYERS_EN, IRISH_BUYER, ...BUYERS_EU, ...BUYERS_DE, ...BUYERS_AT, ...BUYERS_CH, ...BUYERS_FR.FR, ...BUYERS_FR.BE, ...BUYERS_FR.CH];
  return pick(byCountry(pool));
}

const CURRENCY_OF: Partial<Record<Country, string>> = { US: 'USD', GB: 'GBP', CH: 'CHF' };

function taxRateOf(seller: Party, buyer: Party): number {
  if (seller.country !== buyer.country) return 0;
  const rates: Record<Country, number[]> = {
    US: [0, 6.5, 7, 8.25],
    GB: [20],
    IE: [23],
    DE: [19, 7],
    AT: [20],
    CH: [8.1, 2.6],
    NL: [21],
    FR: [20, 10, 5.5],
    BE: [21, 6],
  };
  return pick(rates[seller.country]);
}

function vatLabel(language: HardLanguage, country: Country): string {
  if (language === 'en') return country === 'CH' ? 'VAT number:' : 'VAT ID:';
  if (language === 'de') return country === 'AT' ? 'UID:' : country === 'CH' ? 'MWST-Nr.:' : 'USt-IdNr.:';
  return country === 'CH' ? 'N° IDE :' : 'N° TVA :';
}

function numberStyle(plan: HardPlan, seller: Party): NumberStyle {
  if (plan.shapes.includes('decimal-comma'))
    return plan.language === 'fr' ? pick(['fr', 'fr-space']) : plan.language === 'en' ? pick(['de', 'fr-space']) : 'de';
  if (seller.country === 'CH') return 'ch';
  if (plan.language === 'fr') return seller.country === 'BE' ? 'de' : 'fr';
  return plan.language;
}

function dateStyle(plan: HardPlan, seller: Party): DateStyle {
  if (plan.shapes.includes('ambiguous-date')) return seller.country === 'US' ? 'mdy' : 'dmy';
  if (plan.language === 'de') return pick(['de-dot', 'de-long']);
  if (plan.language === 'fr') return pick(['fr-long', 'iso']);
  return seller.country === 'US' ? pick(['en-long', 'en-short', 'iso']) : pick(['uk-long', 'iso', 'dash-mon']);
}

/** Prints the totals the plan wants: as drawn, or with a line left out of the subtotal, or a wrong total. */
function printedTotals(invoice: Invoice, plan: HardPlan): Invoice {
  if (plan.disagree === 'subtotal') {
    const left = invoice.lineItems.at(-1)?.amount ?? 0;
    const subtotalCents = cents(invoice.subtotal) - cents(left);
    const taxCents = Math.round((subtotalCents * invoice.taxRate) / 100);
    return { ...invoice, subtotal: subtotalCents / 100, taxAmount: taxCents / 100, total: (subtotalCents + taxCents) / 100 };
  }
  if (plan.disagree === 'total') return { ...invoice, total: (cents(invoice.total) + pick([900, 9000, 90000])) / 100 };
  return invoice;
}

/** Renders one planned document. */
export function renderHard(plan: HardPlan): EvalRendered {
  const words = WORDS[plan.language];
  const seller = sellerOf(plan);
  const buyer = buyerOf(plan, seller);
  const missing = new Set(plan.missing ?? []);
  const currency = plan.currency ?? CURRENCY_OF[seller.country] ?? 'EUR';
  const catalogue: CatalogueItem[] = plan.language === 'en' ? ITEMS_EN : plan.language === 'de' ? ITEMS_DE : ITEMS_FR;
  const comma = plan.shapes.includes('decimal-comma');
  const long = plan.shapes.includes('long');
  const prefix = plan.language === 'en' ? 'INV-' : plan.language === 'de' ? 'RE-' : 'F';
  const drawn = drawEvalInvoice({
    seller: { ...seller, vatId: missing.has('sellerVat') ? null : seller.vatId },
    buyer: { ...buyer, vatId: missing.has('buyerVat') ? null : buyer.vatId },
    currency,
    taxRate: plan.currency === 'USD' ? 0 : taxRateOf(seller, buyer),
    language: plan.language,
    catalogue,
    invoiceNumber: `${prefix}${2025 + int(0, 1)}-${String(sequence()).padStart(4, '0')}`,
    purchaseOrder: missing.has('purchaseOrder') ? null : pick([`PO-${int(10000, 99999)}`, `4500${int(100000, 999999)}`, `BN-${int(1000, 9999)}`]),
    dueInDays: missing.has('dueDate') ? null : pick([14, 30, 45]),
    items: plan.items ?? int(2, 7),
    variant: long ? words.variant : undefined,
    extra: comma ? [pick(CHEAP_ITEMS[plan.language])] : [],
    issueDate: plan.shapes.includes('ambiguous-date') ? ambiguousIssueDate() : undefined,
  });
  const invoice = printedTotals(drawn.invoice, plan);
  const style = numberStyle(plan, seller);
  const dates = dateStyle(plan, seller);
  const plain = plan.shapes.includes('no-currency-symbol');
  const num = (value: number, decimals = 2) => formatNumber(value, decimals, style);
  const money = (value: number) => (plain ? num(value) : formatMoney(value, currency, style, plan.language === 'en' ? 'code-before' : 'code-after'));

  const head: string[] = [seller.name, ...seller.address, countryName(seller.country, plan.language)];
  if (invoice.seller.vatId) head.push(`${vatLabel(plan.language, seller.country)} ${invoice.seller.vatId}`);
  head.push('', words.title, '');
  head.push(`${words.number} ${invoice.invoiceNumber}`, `${words.date} ${formatDate(invoice.issueDate, dates)}`);
  head.push(invoice.dueDate ? `${words.due} ${formatDate(invoice.dueDate, dates)}` : pick(words.noDue));
  if (invoice.purchaseOrder) head.push(`${words.po} ${invoice.purchaseOrder}`);
  head.push('', words.billTo, buyer.name, ...buyer.address, countryName(buyer.country, plan.language));
  if (invoice.buyer.vatId) head.push(`${vatLabel(plan.language, buyer.country)} ${invoice.buyer.vatId}`);
  head.push('');

  const itemRows = invoice.lineItems.map((l, i) => [
    String(i + 1),
    l.description,
    formatQuantity(l.quantity, style),
    num(l.unitPrice, comma ? 3 : 2),
    num(l.amount),
  ]);
  const running: number[] = [];
  for (const l of invoice.lineItems) running.push((running.at(-1) ?? 0) + cents(l.amount));
  const perPage = long ? 30 : itemRows.length;
  const breaks = Array.from({ length: Math.ceil(itemRows.length / perPage) - 1 }, (_, k) => (k + 1) * perPage);
  const carryRows = breaks.flatMap((b) => [
    ['', words.carried, '', '', num((running[b - 1] ?? 0) / 100)],
    ['', words.brought, '', '', num((running[b - 1] ?? 0) / 100)],
  ]);
  const rows = [[...words.table], ...itemRows, ...carryRows];
  const right = [true, false, true, true, true];
  const piped = plan.language !== 'en';
  const rendered = piped ? pipeTable(rows, right, true) : columns(rows, right);
  const tableHead = piped ? rendered.slice(0, 2) : [rendered[0] ?? '', '-'.repeat(Math.max(...rendered.map((l) => l.length)))];
  const body = rendered.slice(piped ? 2 : 1);
  const itemLines = body.slice(0, itemRows.length);
  const carryLines = body.slice(itemRows.length);

  const pages: string[][] = [];
  let page = [...head];
  const pageHeader = () => [`${seller.name} · ${words.title} ${invoice.invoiceNumber} (${words.continued})`, ''];
  itemLines.forEach((line, i) => {
    if (i % perPage === 0) {
      if (i > 0) {
        page.push(carryLines[(i / perPage - 1) * 2] ?? '');
        pages.push(page);
        page = pageHeader();
      }
      page.push(...tableHead);
      if (i > 0) page.push(carryLines[(i / perPage - 1) * 2 + 1] ?? '');
    }
    page.push(line);
  });
  page.push(
    '',
    ...totalsBlock(
      [
        [words.subtotal, money(invoice.subtotal)],
        [words.tax(formatRate(invoice.taxRate, style), seller.country), money(invoice.taxAmount)],
        [words.total, money(invoice.total)],
      ],
      20,
    ),
    '',
  );
  if (invoice.taxRate === 0 && plan.language === 'en') page.push(seller.country === 'US' ? 'No sales tax charged.' : 'Export of services: zero-rated.');
  if (seller.country === 'US') page.push(`Payment by ACH transfer: routing ${int(100000000, 999999999)}, account ${int(10000000, 99999999)}.`);
  else page.push(`IBAN ${seller.country}${int(10, 99)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)}`);
  if (long) {
    const extra = [...termsLines(plan.language), '', ...serviceLog(plan.language, plan.log ?? 0)];
    for (let start = 0; start < extra.length; start += 60) {
      pages.push(page);
      page = [...pageHeader(), ...extra.slice(start, start + 60)];
    }
  }
  pages.push(page);
  if (!long) return { invoice, text: `${page.join('\n')}\n`, shapes: plan.shapes };
  const footer = `${seller.name} · ${seller.address.join(' · ')}${invoice.seller.vatId ? ` · ${invoice.seller.vatId}` : ''}`;
  const text = pages.map((lines, i) => [...lines, '', footer, `${' '.repeat(40)}${words.page(i + 1, pages.length)}`].join('\n')).join('\n\f');
  return { invoice, text: `${text}\n`, shapes: plan.shapes };
}
