/**
 * Generates the sample invoice corpus: expected `invoice@1` objects drawn with a seeded PRNG, each rendered
 * to plain text through one of several layouts per language. Deterministic: same seed, same bytes.
 * Usage: npx tsx corpus/generate.ts
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InvoiceV1, invoiceV1DomainRules, type InvoiceV1 as Invoice } from '../lib/contract/schemas/invoice-v1.js';

const SEED = 20260304;
const DOCS_PER_LAYOUT = 8;
const SCHEMA_VERSION = 'invoice@1';

// ---------------------------------------------------------------------------------------------------------
// Seeded randomness (mulberry32)

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = mulberry32(SEED);
const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
const chance = (p: number): boolean => random() < p;
function pick<T>(items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}
function sample<T>(items: readonly T[], count: number): T[] {
  const pool = [...items];
  const chosen: T[] = [];
  while (chosen.length < count && pool.length > 0) chosen.push(pool.splice(Math.floor(random() * pool.length), 1)[0] as T);
  return chosen;
}

// ---------------------------------------------------------------------------------------------------------
// Parties and catalogues (all fictitious)

type Country = 'US' | 'GB' | 'IE' | 'DE' | 'AT' | 'CH' | 'NL' | 'FR';

interface Party {
  name: string;
  /** Street and city lines, without the country. */
  address: string[];
  country: Country;
  vatId: string | null;
  /** Country line is optional for domestic US addresses (the state and ZIP give it away). */
  usDomestic?: boolean;
}

const COUNTRY_NAMES: Record<Country, { en: string; de: string }> = {
  US: { en: 'United States', de: 'USA' },
  GB: { en: 'United Kingdom', de: 'Vereinigtes Königreich' },
  IE: { en: 'Ireland', de: 'Irland' },
  DE: { en: 'Germany', de: 'Deutschland' },
  AT: { en: 'Austria', de: 'Österreich' },
  CH: { en: 'Switzerland', de: 'Schweiz' },
  NL: { en: 'Netherlands', de: 'Niederlande' },
  FR: { en: 'France', de: 'Frankreich' },
};

const SELLERS: Record<'US' | 'GB' | 'IE' | 'DE' | 'AT' | 'CH' | 'CH_EN', Party[]> = {
  US: [
    { name: 'Northwind Traders LLC', address: ['1200 Market Street, Suite 400', 'Austin, TX 78701'], country: 'US', vatId: null, usDomestic: true },
    { name: 'Bluebird Analytics Inc.', address: ['55 Water Street, Floor 12', 'New York, NY 10041'], country: 'US', vatId: null, usDomestic: true },
    { name: 'Cascade Print & Supply Co.', address: ['810 Pine Avenue', 'Portland, OR 97205'], country: 'US', vatId: null, usDomestic: true },
    { name: 'Redwood Software Corp.', address: ['2100 Shoreline Blvd', 'Mountain View, CA 94043'], country: 'US', vatId: null, usDomestic: true },
  ],
  GB: [
    { name: 'Thames Valley Consulting Ltd', address: ['14 Riverside Walk', 'Reading RG1 8DB'], country: 'GB', vatId: 'GB284915673' },
    { name: 'Harbour & Finch Ltd', address: ['3 Quay Street', 'Bristol BS1 4DJ'], country: 'GB', vatId: 'GB761234590' },
    { name: 'Pennine Office Supplies Ltd', address: ['Unit 7, Mill Lane', 'Leeds LS9 8AP'], country: 'GB', vatId: 'GB193847562' },
  ],
  IE: [{ name: 'Liffey Data Services Ltd', address: ['22 Grand Canal Quay', 'Dublin 2, D02 X576'], country: 'IE', vatId: 'IE6388047V' }],
  DE: [
    { name: 'Müller & Söhne GmbH', address: ['Hauptstraße 5', '80331 München'], country: 'DE', vatId: 'DE129274202' },
    { name: 'Brandt Elektrotechnik GmbH', address: ['Industriestraße 12', '70565 Stuttgart'], country: 'DE', vatId: 'DE811569869' },
    { name: 'Nordlicht Medien UG (haftungsbeschränkt)', address: ['Speicherstadt 3', '20457 Hamburg'], country: 'DE', vatId: 'DE298345120' },
    { name: 'Schwarzwald Kaffeerösterei KG', address: ['Am Marktplatz 8', '79098 Freiburg im Breisgau'], country: 'DE', vatId: 'DE143252867' },
    { name: 'Havelland Software GmbH', address: ['Friedrichstraße 120', '10117 Berlin'], country: 'DE', vatId: 'DE267318439' },
  ],
  AT: [
    { name: 'Alpenblick IT-Services GmbH', address: ['Mariahilfer Straße 45', '1060 Wien'], country: 'AT', vatId: 'ATU63829157' },
    { name: 'Donau Logistik GmbH', address: ['Hafenstraße 17', '4020 Linz'], country: 'AT', vatId: 'ATU57193846' },
  ],
  CH: [
    { name: 'Helvetia Präzisionstechnik AG', address: ['Bahnhofstrasse 21', '8001 Zürich'], country: 'CH', vatId: 'CHE-116.281.710 MWST' },
    { name: 'Berner Treuhand GmbH', address: ['Marktgasse 9', '3011 Bern'], country: 'CH', vatId: 'CHE-432.975.118 MWST' },
    { name: 'Engadiner Holzbau AG', address: ['Via da la Staziun 4', '7500 St. Moritz'], country: 'CH', vatId: 'CHE-205.664.931 MWST' },
  ],
  CH_EN: [{ name: 'Lakeside Robotics AG', address: ['Seestrasse 100', '6300 Zug'], country: 'CH', vatId: 'CHE-318.764.225 MWST' }],
};

const BUYERS_EN: Party[] = [
  { name: 'Acme Widgets Corp.', address: ['400 Commerce Drive', 'Columbus, OH 43215'], country: 'US', vatId: null, usDomestic: true },
  { name: 'Greenfield Dental Group', address: ['88 Elm Street', 'Boston, MA 02110'], country: 'US', vatId: null, usDomestic: true },
  { name: 'Summit Outdoor Gear Inc.', address: ['1500 Alpine Way', 'Denver, CO 80202'], country: 'US', vatId: null, usDomestic: true },
  { name: 'Jane Doe', address: ['742 Evergreen Terrace', 'Springfield, IL 62704'], country: 'US', vatId: null, usDomestic: true },
  { name: 'Orion Research Ltd', address: ['5 Science Park', 'Cambridge CB4 0FZ'], country: 'GB', vatId: 'GB908172634' },
  { name: 'Kestrel Architects LLP', address: ['19 Queen Square', 'Bath BA1 2HN'], country: 'GB', vatId: null },
];
const IRISH_BUYER: Party = { name: 'Atlantic Bakeries Ltd', address: ['4 Harbour Road', 'Galway H91 F2X0'], country: 'IE', vatId: 'IE9822134K' };
const BUYERS_EU: Party[] = [
  { name: 'Van Dijk Logistics B.V.', address: ['Havenweg 14', '3011 AB Rotterdam'], country: 'NL', vatId: 'NL853746291B01' },
  { name: 'Société Lumière SARL', address: ['12 Rue de la Paix', '75002 Paris'], country: 'FR', vatId: 'FR40303265045' },
];
const BUYERS_DE: Party[] = [
  { name: 'Beispiel AG', address: ['Musterweg 1', '50667 Köln'], country: 'DE', vatId: 'DE987654321' },
  { name: 'Stadtwerke Neustadt GmbH', address: ['Am Wasserturm 2', '67433 Neustadt an der Weinstraße'], country: 'DE', vatId: null },
  { name: 'Dr. Anna Schmidt', address: ['Lindenallee 7', '01067 Dresden'], country: 'DE', vatId: null },
  { name: 'Kanzlei Weber & Partner mbB', address: ['Königsallee 60', '40212 Düsseldorf'], country: 'DE', vatId: 'DE219876543' },
  { name: 'Bäckerei Huber e.K.', address: ['Dorfstraße 3', '83700 Rottach-Egern'], country: 'DE', vatId: null },
];
const BUYERS_AT: Party[] = [
  { name: 'Tiroler Bergbahnen GmbH', address: ['Bergstraße 11', '6020 Innsbruck'], country: 'AT', vatId: 'ATU12345675' },
  { name: 'Wiener Kaffeehaus Sperl OG', address: ['Gumpendorfer Straße 11', '1060 Wien'], country: 'AT', vatId: null },
];
const BUYERS_CH: Party[] = [
  { name: 'Gasser Bau AG', address: ['Industriestrasse 40', '6005 Luzern'], country: 'CH', vatId: 'CHE-101.234.567 MWST' },
  { name: 'Gemeinde Wädenswil', address: ['Schönenbergstrasse 4', '8820 Wädenswil'], country: 'CH', vatId: null },
  { name: 'Praxis Dr. med. Lukas Frei', address: ['Rosenweg 2', '4051 Basel'], country: 'CH', vatId: null },
];

type QuantityKind = 'count' | 'hours' | 'one';
interface CatalogueItem {
  description: string;
  minPrice: number;
  maxPrice: number;
  kind: QuantityKind;
  /** German unit label (for layouts with a unit column). */
  unit?: string;
}

const ITEMS_EN: CatalogueItem[] = [
  { description: 'Consulting services', minPrice: 90, maxPrice: 220, kind: 'hours' },
  { description: 'Website maintenance (monthly)', minPrice: 150, maxPrice: 600, kind: 'one' },
  { description: 'USB-C docking station', minPrice: 89, maxPrice: 249, kind: 'count' },
  { description: 'Ergonomic office chair', minPrice: 199, maxPrice: 799, kind: 'count' },
  { description: 'Cloud hosting - Standard plan', minPrice: 29, maxPrice: 199, kind: 'count' },
  { description: 'Annual software license', minPrice: 300, maxPrice: 4800, kind: 'count' },
  { description: 'Onsite installation', minPrice: 250, maxPrice: 1500, kind: 'one' },
  { description: 'Training workshop (half day)', minPrice: 600, maxPrice: 1800, kind: 'count' },
  { description: 'Printer toner cartridge, black', minPrice: 39, maxPrice: 129, kind: 'count' },
  { description: 'Network switch 24-port', minPrice: 149, maxPrice: 489, kind: 'count' },
  { description: 'Logo design', minPrice: 400, maxPrice: 2500, kind: 'one' },
  { description: 'Copywriting, per page', minPrice: 45, maxPrice: 120, kind: 'count' },
  { description: 'Data migration project', minPrice: 2000, maxPrice: 9500, kind: 'one' },
  { description: 'Support retainer Q2', minPrice: 1200, maxPrice: 3600, kind: 'one' },
  { description: 'A4 copy paper, box of 5 reams', minPrice: 24, maxPrice: 39, kind: 'count' },
  { description: 'Security audit', minPrice: 140, maxPrice: 260, kind: 'hours' },
];

const ITEMS_DE: CatalogueItem[] = [
  { description: 'Beratungsleistung', minPrice: 90, maxPrice: 180, kind: 'hours', unit: 'Std.' },
  { description: 'Wartung Serveranlage (monatlich)', minPrice: 180, maxPrice: 650, kind: 'one', unit: 'Monat' },
  { description: 'Montage vor Ort', minPrice: 250, maxPrice: 1400, kind: 'one', unit: 'pauschal' },
  { description: 'Bürostuhl ergonomisch', minPrice: 219, maxPrice: 849, kind: 'count', unit: 'Stk.' },
  { description: 'Druckerpapier A4, 500 Blatt', minPrice: 4, maxPrice: 9, kind: 'count', unit: 'Pack' },
  { description: 'Softwarelizenz Jahresabo', minPrice: 240, maxPrice: 3900, kind: 'count', unit: 'Stk.' },
  { description: 'Schulung Datenschutz (halbtägig)', minPrice: 490, maxPrice: 1500, kind: 'count', unit: 'Termin' },
  { description: 'Reisekostenpauschale', minPrice: 80, maxPrice: 450, kind: 'one', unit: 'pauschal' },
  { description: 'Webhosting Business-Tarif', minPrice: 19, maxPrice: 89, kind: 'count', unit: 'Monat' },
  { description: 'Übersetzung DE-EN, je Normseite', minPrice: 35, maxPrice: 70, kind: 'count', unit: 'Seite' },
  { description: 'Grafikdesign Flyer', minPrice: 350, maxPrice: 1900, kind: 'one', unit: 'pauschal' },
  { description: 'Kaffeebohnen Espresso 1 kg', minPrice: 18, maxPrice: 39, kind: 'count', unit: 'Stk.' },
  { description: 'Elektroinstallation Altbau', minPrice: 65, maxPrice: 110, kind: 'hours', unit: 'Std.' },
  { description: 'Kabelkanal 2 m, weiß', minPrice: 6, maxPrice: 19, kind: 'count', unit: 'Stk.' },
  { description: 'Jahresabschluss 2025', minPrice: 1800, maxPrice: 6500, kind: 'one', unit: 'pauschal' },
  { description: 'Lagerfläche Palettenstellplatz', minPrice: 12, maxPrice: 28, kind: 'count', unit: 'Monat' },
];

// ---------------------------------------------------------------------------------------------------------
// Formatting

type NumberStyle = 'en' | 'de' | 'ch';

function groupThousands(digits: string, separator: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, separator);
}

/** Formats a number with a fixed count of decimals in a locale's style. */
function formatNumber(value: number, decimals: number, style: NumberStyle): string {
  const [whole = '0', fraction] = value.toFixed(decimals).split('.');
  const thousands = style === 'en' ? ',' : style === 'de' ? '.' : "'";
  const decimal = style === 'de' ? ',' : '.';
  return groupThousands(whole, thousands) + (fraction === undefined ? '' : decimal + fraction);
}

function formatQuantity(value: number, style: NumberStyle): string {
  if (Number.isInteger(value)) return String(value);
  const decimals = Number.isInteger(value * 10) ? 1 : 2;
  return formatNumber(value, decimals, style);
}

function formatRate(value: number, style: NumberStyle): string {
  return formatQuantity(value, style);
}

const CURRENCY_SYMBOL: Record<string, string> = { USD: '$', EUR: '€', GBP: '£' };

type MoneyStyle = 'symbol' | 'code-before' | 'code-after' | 'symbol-after' | 'plain';

function formatMoney(value: number, currency: string, style: NumberStyle, moneyStyle: MoneyStyle): string {
  const number = formatNumber(value, 2, style);
  const symbol = CURRENCY_SYMBOL[currency];
  switch (moneyStyle) {
    case 'plain':
      return number;
    case 'symbol':
      return symbol === undefined ? `${currency} ${number}` : `${symbol}${number}`;
    case 'symbol-after':
      return symbol === undefined ? `${number} ${currency}` : `${number} ${symbol}`;
    case 'code-before':
      return `${currency} ${number}`;
    case 'code-after':
      return `${number} ${currency}`;
  }
}

const MONTHS_EN = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const MONTHS_DE = ['Januar', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember'];

type DateStyle = 'iso' | 'en-long' | 'en-short' | 'uk-long' | 'dash-mon' | 'mdy' | 'dmy' | 'de-dot' | 'de-dot-short' | 'de-long';

function formatDate(isoDate: string, style: DateStyle): string {
  const [y = '', m = '', d = ''] = isoDate.split('-');
  const month = Number(m);
  const day = Number(d);
  const en = MONTHS_EN[month - 1] ?? '';
  switch (style) {
    case 'iso':
      return isoDate;
    case 'en-long':
      return `${en} ${day}, ${y}`;
    case 'en-short':
      return `${en.slice(0, 3)} ${day}, ${y}`;
    case 'uk-long':
      return `${day} ${en} ${y}`;
    case 'dash-mon':
      return `${d}-${en.slice(0, 3)}-${y}`;
    case 'mdy':
      return `${m}/${d}/${y}`;
    case 'dmy':
      return `${d}/${m}/${y}`;
    case 'de-dot':
      return `${d}.${m}.${y}`;
    case 'de-dot-short':
      return `${day}.${month}.${y}`;
    case 'de-long':
      return `${day}. ${MONTHS_DE[month - 1] ?? ''} ${y}`;
  }
}

function addDays(isoDate: string, days: number): string {
  const date = new Date(`${isoDate}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

function randomIssueDate(): string {
  return addDays('2025-01-02', int(0, 540));
}

/** Lays out rows as columns separated by at least two spaces; `right` marks right-aligned columns. */
function columns(rows: string[][], right: boolean[], gap = 3): string[] {
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, col) => (right[col] ? cell.padStart(widths[col] ?? 0) : cell.padEnd(widths[col] ?? 0)))
      .join(' '.repeat(gap))
      .trimEnd(),
  );
}

/** Lays out rows as a pipe table with a dashed rule under the header. */
function pipeTable(rows: string[][], right: boolean[], outerPipes: boolean): string[] {
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length))) ?? [];
  const line = (row: string[]) => {
    const inner = row.map((cell, col) => ` ${right[col] ? cell.padStart(widths[col] ?? 0) : cell.padEnd(widths[col] ?? 0)} `).join('|');
    return outerPipes ? `|${inner}|` : inner.slice(1).trimEnd();
  };
  const rule = widths.map((w) => '-'.repeat(w + 2)).join(outerPipes ? '|' : '+');
  const [header, ...body] = rows;
  return [line(header ?? []), outerPipes ? `|${rule}|` : rule.slice(1), ...body.map(line)];
}

/** Right-aligns `label value` pairs under a table. */
function totalsBlock(pairs: [string, string][], indent: number): string[] {
  const labelWidth = Math.max(...pairs.map(([label]) => label.length));
  const valueWidth = Math.max(...pairs.map(([, value]) => value.length));
  return pairs.map(([label, value]) => `${' '.repeat(indent)}${label.padEnd(labelWidth)}   ${value.padStart(valueWidth)}`);
}

// ---------------------------------------------------------------------------------------------------------
// Drawing expected objects

interface Draw {
  seller: Party;
  buyer: Party;
  currency: string;
  taxRate: number;
  language: 'en' | 'de';
  catalogue: CatalogueItem[];
  invoiceNumber: string;
  purchaseOrder: string | null;
  dueInDays: number | null;
  minItems?: number;
  maxItems?: number;
}

interface DrawnLine {
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

const cents = (value: number): number => Math.round(value * 100);

function drawInvoice(draw: Draw): { invoice: Invoice; lines: DrawnLine[] } {
  const count = int(draw.minItems ?? 1, draw.maxItems ?? 8);
  const chosen = sample(draw.catalogue, count);
  const lines = chosen.map((item) => ({ item, quantity: drawQuantity(item.kind) }));
  const lineItems = lines.map(({ item, quantity }) => {
    const unitPrice = drawPrice(item);
    return { description: item.description, quantity, unitPrice, amount: Math.round(quantity * cents(unitPrice)) / 100 };
  });
  const subtotalCents = lineItems.reduce((sum, line) => sum + cents(line.amount), 0);
  const taxCents = Math.round((subtotalCents * draw.taxRate) / 100);
  const issueDate = randomIssueDate();
  const invoice: Invoice = {
    invoiceNumber: draw.invoiceNumber,
    issueDate,
    dueDate: draw.dueInDays === null ? null : addDays(issueDate, draw.dueInDays),
    currency: draw.currency,
    seller: { name: draw.seller.name, vatId: draw.seller.vatId, country: draw.seller.country },
    buyer: { name: draw.buyer.name, vatId: draw.buyer.vatId },
    lineItems,
    subtotal: subtotalCents / 100,
    taxRate: draw.taxRate,
    taxAmount: taxCents / 100,
    total: (subtotalCents + taxCents) / 100,
    purchaseOrder: draw.purchaseOrder,
    language: draw.language,
  };
  return { invoice, lines };
}

const maybe = <T>(p: number, value: () => T): T | null => (chance(p) ? value() : null);
const poNumber = (): string => pick([() => `4500${int(100000, 999999)}`, () => `PO-${int(10000, 99999)}`, () => `2026-PO-${int(100, 999)}`, () => `BN-${int(1000, 9999)}`])();
const sequence = (): number => int(12, 4800);

function countryLine(party: Party, language: 'en' | 'de'): string {
  return COUNTRY_NAMES[party.country][language];
}

// ---------------------------------------------------------------------------------------------------------
// Layouts

interface Rendered {
  invoice: Invoice;
  text: string;
}

type Layout = { name: string; language: 'en' | 'de'; render: (round: number) => Rendered };

/** en-classic: seller letterhead, key/value header, "Bill To" block, space-aligned table. */
function renderEnClassic(round: number): Rendered {
  const kind = (['US', 'IE', 'DE', 'US'] as const)[round % 4] ?? 'US';
  const seller = pick(SELLERS[kind]);
  const currency = kind === 'US' ? 'USD' : 'EUR';
  const domesticBuyer = kind === 'IE' ? IRISH_BUYER : (BUYERS_DE[0] as Party);
  const usBuyers = BUYERS_EN.filter((b) => b.country === 'US');
  const buyer = kind === 'US' ? pick(usBuyers) : chance(0.6) ? domesticBuyer : pick([...BUYERS_EU, pick(usBuyers)]);
  const reverseCharge = kind !== 'US' && buyer.country !== seller.country && buyer.country !== 'US';
  const exportOfServices = kind !== 'US' && buyer.country === 'US';
  const taxRate = kind === 'US' ? pick([0, 6.5, 7, 8.25]) : reverseCharge || exportOfServices ? 0 : kind === 'IE' ? 23 : 19;
  const { invoice } = drawInvoice({
    seller,
    buyer,
    currency,
    taxRate,
    language: 'en',
    catalogue: ITEMS_EN,
    invoiceNumber: pick([`INV-${2025 + int(0, 1)}-${String(sequence()).padStart(4, '0')}`, String(int(10000, 99999))]),
    purchaseOrder: maybe(0.5, poNumber),
    dueInDays: chance(0.7) ? pick([14, 30, 45]) : null,
  });
  const dateStyle = pick(['iso', 'en-long', 'en-short', 'dash-mon'] as const);
  const out: string[] = [seller.name, ...seller.address];
  if (!seller.usDomestic || chance(0.5)) out.push(countryLine(seller, 'en'));
  if (seller.vatId) out.push(`${pick(['VAT ID', 'VAT Reg. No.', 'VAT number'])}: ${seller.vatId}`);
  else if (chance(0.6)) out.push(`EIN: ${int(10, 99)}-${int(1000000, 9999999)}`);
  out.push('', pick(['INVOICE', 'Invoice']), '');
  const numberLabel = ['Invoice No.:', 'Invoice Number:', 'Invoice #:', 'Inv. No.:'][round % 4] ?? 'Invoice No.:';
  const header: [string, string][] = [[numberLabel, invoice.invoiceNumber]];
  header.push([pick(['Invoice Date:', 'Date:', 'Issue date:']), formatDate(invoice.issueDate, dateStyle)]);
  if (invoice.dueDate) header.push([pick(['Due Date:', 'Payment due:', 'Due:']), formatDate(invoice.dueDate, dateStyle)]);
  else header.push(['Payment terms:', pick(['Net 30', 'Due on receipt', '30 days net'])]);
  if (chance(0.4)) header.push(['Delivery date:', formatDate(addDays(invoice.issueDate, -int(1, 6)), dateStyle)]);
  if (invoice.purchaseOrder) header.push([pick(['PO Number:', 'Purchase Order:', 'P.O. #:']), invoice.purchaseOrder]);
  if (chance(0.5)) header.push(['Customer No.:', `C-${int(10000, 99999)}`]);
  const labelWidth = Math.max(...header.map(([label]) => label.length));
  out.push(...header.map(([label, value]) => `${label.padEnd(labelWidth)}  ${value}`), '');
  out.push(pick(['Bill To:', 'Billed to:', 'Invoice to:']), buyer.name, ...buyer.address);
  if (!buyer.usDomestic || buyer.country !== seller.country) out.push(countryLine(buyer, 'en'));
  if (buyer.vatId) out.push(`VAT ID: ${buyer.vatId}`);
  out.push('');
  const amountHeader = pick([`Amount (${currency})`, 'Amount', 'Line Total']);
  const rows = [
    ['Description', 'Qty', 'Unit Price', amountHeader],
    ...invoice.lineItems.map((l) => [l.description, formatQuantity(l.quantity, 'en'), formatNumber(l.unitPrice, 2, 'en'), formatNumber(l.amount, 2, 'en')]),
  ];
  const table = columns(rows, [false, true, true, true]);
  const width = Math.max(...table.map((l) => l.length));
  out.push(table[0] ?? '', '-'.repeat(width), ...table.slice(1), '-'.repeat(width));
  const taxLabel = kind === 'US' ? pick(['Sales tax', 'Tax']) : 'VAT';
  const taxNote = reverseCharge ? ' reverse charge' : exportOfServices ? ' export' : '';
  out.push(
    ...totalsBlock(
      [
        [pick(['Subtotal:', 'Net total:']), formatMoney(invoice.subtotal, currency, 'en', 'symbol')],
        [`${taxLabel} (${formatRate(taxRate, 'en')}%${taxNote}):`, formatMoney(invoice.taxAmount, currency, 'en', 'symbol')],
        [pick([`Total (${currency}):`, 'Total due:', 'Amount due:']), formatMoney(invoice.total, currency, 'en', 'code-before')],
      ],
      Math.max(0, width - 40),
    ),
  );
  out.push('');
  if (reverseCharge) out.push('Reverse charge: VAT to be accounted for by the recipient (Art. 196 Directive 2006/112/EC).');
  out.push(pick(['Thank you for your business!', 'Thank you for your order.', 'We appreciate your prompt payment.']));
  if (chance(0.5)) out.push(`Payment by bank transfer to account ${int(10000000, 99999999)}, routing ${int(100000000, 999999999)}.`);
  return { invoice, text: out.join('\n') + '\n' };
}

/** en-compact: "Invoice #" title, From/To blocks, "qty x item @ price = amount" lines, US-style slashed dates with a stated convention. */
function renderEnCompact(): Rendered {
  const usSeller = chance(0.75);
  const seller = usSeller ? pick(SELLERS.US) : pick(SELLERS.GB);
  const currency = usSeller ? 'USD' : 'GBP';
  const buyer = usSeller ? pick(BUYERS_EN.filter((b) => b.country === 'US')) : pick(BUYERS_EN.filter((b) => b.country === 'GB'));
  const taxRate = usSeller ? pick([0, 7, 8.25, 6.5, 7]) : 20;
  const { invoice } = drawInvoice({
    seller,
    buyer,
    currency,
    taxRate,
    language: 'en',
    catalogue: ITEMS_EN,
    invoiceNumber: pick([`INV-${String(sequence()).padStart(5, '0')}`, `${int(1000, 9999)}`, `A${int(100, 999)}-${int(10, 99)}`]),
    purchaseOrder: maybe(0.4, poNumber),
    dueInDays: chance(0.6) ? pick([10, 15, 30]) : null,
    maxItems: 6,
  });
  const dateStyle = usSeller ? pick(['mdy', 'mdy', 'en-short', 'iso'] as const) : pick(['dmy', 'uk-long'] as const);
  const convention = dateStyle === 'mdy' ? ' (MM/DD/YYYY)' : dateStyle === 'dmy' ? ' (DD/MM/YYYY)' : '';
  const out: string[] = [pick([`Invoice #${invoice.invoiceNumber}`, `Invoice # ${invoice.invoiceNumber}`]), ''];
  out.push(`Date${convention}: ${formatDate(invoice.issueDate, dateStyle)}`);
  if (invoice.dueDate) out.push(`${pick(['Payment due', 'Due', 'Please pay by'])}${convention}: ${formatDate(invoice.dueDate, dateStyle)}`);
  else out.push(`Terms: ${pick(['Due on receipt', 'Net 15', 'Payable within 30 days'])}`);
  if (invoice.purchaseOrder) out.push(`${pick(['P.O. #', 'PO', 'Your PO'])}: ${invoice.purchaseOrder}`);
  out.push('', 'From:', seller.name, ...seller.address);
  if (!seller.usDomestic) out.push(countryLine(seller, 'en'));
  if (seller.vatId) out.push(`VAT Reg. No.: ${seller.vatId}`);
  out.push('', pick(['To:', 'Bill to:', 'Customer:']), buyer.name, ...buyer.address);
  if (buyer.vatId) out.push(`VAT Reg. No.: ${buyer.vatId}`);
  out.push('');
  out.push(pick(['Items:', 'Services and products:', 'Details:']));
  const money = (value: number) => formatMoney(value, currency, 'en', 'symbol');
  for (const line of invoice.lineItems) {
    out.push(`  ${formatQuantity(line.quantity, 'en')} x ${line.description} @ ${money(line.unitPrice)} = ${money(line.amount)}`);
  }
  out.push('');
  const taxLabel = usSeller ? pick(['Sales tax', 'Tax']) : 'VAT';
  out.push(`Subtotal: ${money(invoice.subtotal)}`);
  out.push(`${taxLabel} ${formatRate(taxRate, 'en')}%: ${money(invoice.taxAmount)}`);
  out.push(`${pick(['Total due', 'Total', 'Balance due'])}: ${money(invoice.total)}`);
  out.push('', pick(['Questions? Reply to this email or call us.', 'Please include the invoice number with your payment.', 'Late payments may incur a fee of 1.5% per month.']));
  return { invoice, text: out.join('\n') + '\n' };
}

const UK_TERMS = [
  'Terms and conditions',
  '',
  '1. Payment. Invoices are payable in full, without deduction or set-off, within the period stated',
  '   above. Where no period is stated, payment is due 30 days from the date of this invoice.',
  '2. Late payment. We reserve the right to charge interest on overdue sums at 8% per annum above',
  '   the Bank of England base rate under the Late Payment of Commercial Debts (Interest) Act 1998,',
  '   together with fixed-sum compensation of £40 to £100 depending on the size of the debt.',
  '3. Title. Title in goods passes to the customer only when this invoice has been paid in full.',
  '   Until then the customer holds the goods as bailee and must keep them insured.',
  '4. Queries. Any query regarding this invoice must be raised in writing within 14 days of its',
  '   date; after that period the invoice is deemed accepted.',
  '5. Services. Time-based services are billed in units of 30 minutes. Travel time is billed at',
  '   50% of the hourly rate unless agreed otherwise in the order confirmation.',
  '6. Liability. Our aggregate liability in respect of the services shall not exceed the fees paid',
  '   under the relevant order in the 12 months preceding the claim.',
  '7. Data protection. Personal data is processed in accordance with UK GDPR and our privacy notice,',
  '   available on request.',
  '8. Governing law. These terms are governed by the laws of England and Wales; the courts of',
  '   England have exclusive jurisdiction.',
];

/** en-uk-long: "TAX INVOICE", labelled Supplier/Customer blocks, pipe table with a VAT column, long terms. */
function renderEnUkLong(): Rendered {
  const seller = pick(SELLERS.GB);
  const buyer = chance(0.75) ? pick(BUYERS_EN.filter((b) => b.country === 'GB')) : pick(BUYERS_EN.filter((b) => b.country === 'US'));
  const exportOfServices = buyer.country === 'US';
  const taxRate = exportOfServices ? 0 : 20;
  const { invoice } = drawInvoice({
    seller,
    buyer,
    currency: 'GBP',
    taxRate,
    language: 'en',
    catalogue: ITEMS_EN,
    invoiceNumber: pick([`${seller.name.slice(0, 3).toUpperCase()}-${int(1000, 9999)}`, `SI${int(100000, 999999)}`]),
    purchaseOrder: maybe(0.6, poNumber),
    dueInDays: chance(0.6) ? pick([14, 30, 60]) : null,
    minItems: 2,
  });
  const dateStyle = pick(['dmy', 'uk-long', 'iso'] as const);
  const out: string[] = ['TAX INVOICE'];
  if (dateStyle === 'dmy') out.push('All dates are DD/MM/YYYY.');
  out.push('');
  const indent = ' '.repeat('Supplier: '.length);
  out.push(`Supplier: ${seller.name}`, ...seller.address.map((l) => indent + l), indent + countryLine(seller, 'en'));
  out.push(`${indent}VAT Reg. No.: ${seller.vatId ?? ''}`, '');
  out.push(`Customer: ${buyer.name}`, ...buyer.address.map((l) => indent + l), indent + countryLine(buyer, 'en'));
  if (buyer.vatId) out.push(`${indent}VAT Reg. No.: ${buyer.vatId}`);
  out.push('');
  out.push(`Invoice number: ${invoice.invoiceNumber}`);
  out.push(`Date of issue: ${formatDate(invoice.issueDate, dateStyle)}`);
  out.push(`Tax point: ${formatDate(addDays(invoice.issueDate, -int(0, 3)), dateStyle)}`);
  if (invoice.dueDate) out.push(`Due date: ${formatDate(invoice.dueDate, dateStyle)}`);
  else out.push('Payment terms: 30 days from date of invoice');
  if (invoice.purchaseOrder) out.push(`Your order ref: ${invoice.purchaseOrder}`);
  out.push('');
  const rows = [
    ['#', 'Description', 'Qty', 'Unit price', 'VAT %', 'Net amount'],
    ...invoice.lineItems.map((l, i) => [
      String(i + 1),
      l.description,
      formatQuantity(l.quantity, 'en'),
      formatMoney(l.unitPrice, 'GBP', 'en', 'symbol'),
      formatRate(taxRate, 'en'),
      formatMoney(l.amount, 'GBP', 'en', 'symbol'),
    ]),
  ];
  out.push(...pipeTable(rows, [true, false, true, true, true, true], true), '');
  out.push(
    ...totalsBlock(
      [
        ['Total net amount:', formatMoney(invoice.subtotal, 'GBP', 'en', 'symbol')],
        [`VAT @ ${formatRate(taxRate, 'en')}%${exportOfServices ? ' (outside the scope of UK VAT)' : ''}:`, formatMoney(invoice.taxAmount, 'GBP', 'en', 'symbol')],
        ['Total amount payable:', formatMoney(invoice.total, 'GBP', 'en', 'symbol')],
      ],
      0,
    ),
  );
  out.push('', 'Payment details', `Bank: ${pick(['Barclays Bank plc', 'Lloyds Bank plc', 'NatWest'])}`, `Sort code: ${int(10, 99)}-${int(10, 99)}-${int(10, 99)}`, `Account number: ${int(10000000, 99999999)}`);
  out.push(`Please quote invoice number ${invoice.invoiceNumber} as the payment reference.`, '');
  out.push(...UK_TERMS);
  if (chance(0.5)) {
    out.push('', `${seller.name} is registered in England and Wales, company number ${int(1000000, 9999999)}.`);
  }
  return { invoice, text: out.join('\n') + '\n' };
}

/** en-keyvalue: "Issued by"/"Invoice to" single-line parties, label/value grid without colons, quantity-first table. */
function renderEnKeyValue(round: number): Rendered {
  const kind = (['CH_EN', 'DE', 'US', 'CH_EN'] as const)[round % 4] ?? 'CH_EN';
  const seller = pick(SELLERS[kind]);
  const currency = kind === 'CH_EN' ? 'CHF' : kind === 'DE' ? 'EUR' : 'USD';
  const buyer = kind === 'DE' ? pick([...BUYERS_EU, BUYERS_DE[3] as Party]) : kind === 'CH_EN' ? (chance(0.7) ? pick(BUYERS_CH) : pick(BUYERS_EN.filter((b) => b.country === 'US'))) : pick(BUYERS_EN.filter((b) => b.country === 'US'));
  const taxRate = kind === 'CH_EN' ? (buyer.country === 'CH' ? 8.1 : 0) : kind === 'DE' ? (buyer.country === 'DE' ? 19 : 0) : pick([0, 7, 8.25]);
  const { invoice } = drawInvoice({
    seller,
    buyer,
    currency,
    taxRate,
    language: 'en',
    catalogue: ITEMS_EN,
    invoiceNumber: `${2025 + int(0, 1)}-${String(sequence()).padStart(4, '0')}`,
    purchaseOrder: maybe(0.5, poNumber),
    dueInDays: chance(0.7) ? pick([20, 30]) : null,
  });
  const dateStyle = pick(['uk-long', 'en-long', 'iso'] as const);
  const out: string[] = [];
  const sellerParts = [seller.name, ...seller.address];
  if (!seller.usDomestic) sellerParts.push(countryLine(seller, 'en'));
  out.push(`Issued by: ${sellerParts.join(', ')}`);
  if (seller.vatId) out.push(`VAT number: ${seller.vatId}`);
  out.push('');
  out.push(`Invoice to: ${[buyer.name, ...buyer.address, countryLine(buyer, 'en')].join(', ')}`);
  if (buyer.vatId) out.push(`VAT number: ${buyer.vatId}`);
  out.push('');
  const grid: string[][] = [
    ['Invoice no.', invoice.invoiceNumber],
    ['Issue date', formatDate(invoice.issueDate, dateStyle)],
  ];
  if (invoice.dueDate) grid.push(['Due date', formatDate(invoice.dueDate, dateStyle)]);
  if (invoice.purchaseOrder) grid.push(['Purchase order', invoice.purchaseOrder]);
  grid.push(['Currency', currency]);
  out.push(...columns(grid, [false, false], 6), '');
  const money = (value: number) => formatMoney(value, currency, 'en', 'code-before');
  const rows = [
    ['Qty', 'Item description', 'Rate', 'Total'],
    ...invoice.lineItems.map((l) => [formatQuantity(l.quantity, 'en'), l.description, money(l.unitPrice), money(l.amount)]),
  ];
  out.push(...columns(rows, [true, false, true, true]), '');
  const taxLabel = kind === 'US' ? 'Sales tax' : 'VAT';
  out.push(
    ...columns(
      [
        ['Net total', money(invoice.subtotal)],
        [`${taxLabel} ${formatRate(taxRate, 'en')}%`, money(invoice.taxAmount)],
        ['Amount due', money(invoice.total)],
      ],
      [false, true],
      8,
    ),
  );
  out.push('');
  if (kind === 'DE' && taxRate === 0) out.push('Intra-Community supply of services: the recipient is liable for VAT (reverse charge).');
  if (kind === 'CH_EN' && taxRate === 0) out.push('Export of services: not subject to Swiss VAT.');
  if (!invoice.dueDate) out.push('Payment terms: 30 days net.');
  out.push(pick(['Notes: Prices exclude shipping unless stated.', 'Notes: Thank you for choosing us again this year.', 'Notes: Warranty 24 months on hardware.']));
  return { invoice, text: out.join('\n') + '\n' };
}

/** de-din: DIN-5008-style letter: sender line, recipient with info block beside it, greeting, table, footer with tax IDs. */
function renderDeDin(): Rendered {
  const seller = pick(SELLERS.DE);
  const foreign = chance(0.25);
  const buyer = foreign ? pick([...BUYERS_EU, BUYERS_AT[0] as Party]) : pick(BUYERS_DE);
  const taxRate = foreign ? 0 : pick([19, 19, 7]);
  const { invoice } = drawInvoice({
    seller,
    buyer,
    currency: 'EUR',
    taxRate,
    language: 'de',
    catalogue: ITEMS_DE,
    invoiceNumber: pick([`RE-${2025 + int(0, 1)}-${String(sequence()).padStart(4, '0')}`, `${2025 + int(0, 1)}${String(int(1, 999)).padStart(3, '0')}`]),
    purchaseOrder: maybe(0.4, poNumber),
    dueInDays: chance(0.6) ? pick([14, 30]) : null,
  });
  const dateStyle = pick(['de-dot', 'de-long', 'de-dot-short'] as const);
  const city = (seller.address[1] ?? '').replace(/^\d+\s+/, '');
  const out: string[] = [`${seller.name} · ${seller.address.join(' · ')}`, ''];
  const left = [buyer.name];
  if (chance(0.3)) left.push(pick(['z. Hd. Frau Keller', 'Buchhaltung', 'z. Hd. Herrn Yilmaz']));
  left.push(...buyer.address);
  if (buyer.country !== 'DE') left.push(countryLine(buyer, 'de').toUpperCase());
  const placeDateLine = chance(0.4);
  const right: string[] = [`${pick(['Rechnungsnummer:', 'Rechnungs-Nr.:', 'Re.-Nr.:'])} ${invoice.invoiceNumber}`];
  if (!placeDateLine) right.push(`${pick(['Rechnungsdatum:', 'Datum:'])} ${formatDate(invoice.issueDate, dateStyle)}`);
  right.push(`Kundennummer: ${int(10000, 99999)}`);
  right.push(`${pick(['Lieferdatum:', 'Leistungsdatum:'])} ${formatDate(addDays(invoice.issueDate, -int(1, 10)), dateStyle)}`);
  if (invoice.purchaseOrder) right.push(`${pick(['Ihre Bestellung:', 'Bestellnummer:', 'Ihre Bestell-Nr.:'])} ${invoice.purchaseOrder}`);
  if (buyer.vatId) right.push(`Ihre USt-IdNr.: ${buyer.vatId}`);
  const leftWidth = Math.max(...left.map((l) => l.length)) + 6;
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    out.push(`${(left[i] ?? '').padEnd(leftWidth)}${right[i] ?? ''}`.trimEnd());
  }
  out.push('');
  if (placeDateLine) out.push(`${' '.repeat(leftWidth)}${city}, ${formatDate(invoice.issueDate, dateStyle)}`, '');
  out.push(pick(['Rechnung', 'RECHNUNG']), '', 'Sehr geehrte Damen und Herren,', '', pick([
    'wir erlauben uns, Ihnen folgende Leistungen in Rechnung zu stellen:',
    'vielen Dank für Ihren Auftrag. Wir berechnen Ihnen:',
  ]), '');
  const money = (value: number) => formatMoney(value, 'EUR', 'de', 'symbol-after');
  const rows = [
    ['Pos.', 'Bezeichnung', 'Menge', 'Einzelpreis', 'Gesamtpreis'],
    ...invoice.lineItems.map((l, i) => [String(i + 1), l.description, formatQuantity(l.quantity, 'de'), money(l.unitPrice), money(l.amount)]),
  ];
  const table = columns(rows, [false, false, true, true, true]);
  const width = Math.max(...table.map((l) => l.length));
  out.push(table[0] ?? '', '─'.repeat(width), ...table.slice(1), '─'.repeat(width));
  const taxLabel = taxRate === 0 ? 'USt. 0 % (Reverse Charge):' : `${pick(['zzgl. ', ''])}${formatRate(taxRate, 'de')} % ${pick(['USt.', 'MwSt.', 'Umsatzsteuer'])}:`;
  out.push(
    ...totalsBlock(
      [
        [pick(['Zwischensumme:', 'Summe netto:', 'Nettobetrag:']), money(invoice.subtotal)],
        [taxLabel, money(invoice.taxAmount)],
        [pick(['Gesamtbetrag:', 'Rechnungsbetrag:', 'Summe brutto:']), money(invoice.total)],
      ],
      Math.max(0, width - 38),
    ),
  );
  out.push('');
  if (taxRate === 0) out.push('Steuerschuldnerschaft des Leistungsempfängers (Reverse Charge) gemäß § 13b UStG.');
  if (invoice.dueDate) out.push(`${pick(['Zahlbar bis zum', 'Zahlbar bis'])} ${formatDate(invoice.dueDate, dateStyle)} ohne Abzug.`);
  else out.push(pick(['Bitte überweisen Sie den Betrag innerhalb von 14 Tagen ohne Abzug.', 'Der Betrag ist sofort nach Erhalt der Rechnung fällig.']));
  out.push('', 'Mit freundlichen Grüßen', '', seller.name, '', '─'.repeat(Math.min(width, 60)));
  out.push(`${seller.name} | Sitz: ${city} | HRB ${int(10000, 99999)} | Geschäftsführung: ${pick(['Max Müller', 'Petra Brandt', 'Jonas Wolf'])}`);
  out.push(`USt-IdNr.: ${seller.vatId ?? ''} | Steuernummer: ${int(100, 999)}/${int(100, 999)}/${int(10000, 99999)}`);
  out.push(`Bankverbindung: ${pick(['Stadtsparkasse', 'Volksbank', 'Commerzbank'])} | IBAN: DE${int(10, 99)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(10, 99)} | BIC: ${pick(['SSKMDEMMXXX', 'GENODEF1S04', 'COBADEFFXXX'])}`);
  return { invoice, text: out.join('\n') + '\n' };
}

/** de-labelled: "Rechnung Nr." title, labelled party blocks, two-line position blocks. */
function renderDeLabelled(): Rendered {
  const austrian = chance(0.5);
  const seller = austrian ? pick(SELLERS.AT) : pick(SELLERS.DE);
  const buyer = austrian ? pick([...BUYERS_AT, ...BUYERS_AT, BUYERS_DE[0] as Party]) : pick(BUYERS_DE);
  const crossBorder = buyer.country !== seller.country;
  const taxRate = crossBorder ? 0 : austrian ? 20 : pick([19, 7]);
  const { invoice } = drawInvoice({
    seller,
    buyer,
    currency: 'EUR',
    taxRate,
    language: 'de',
    catalogue: ITEMS_DE,
    invoiceNumber: `${2025 + int(0, 1)}/${int(100, 999)}`,
    purchaseOrder: maybe(0.5, poNumber),
    dueInDays: chance(0.6) ? pick([8, 14, 30]) : null,
    maxItems: 6,
  });
  const dateStyle = pick(['de-long', 'de-dot', 'iso'] as const);
  const out: string[] = [`Rechnung Nr. ${invoice.invoiceNumber}`, ''];
  out.push(pick(['Rechnungssteller:', 'Leistungserbringer:']), seller.name, ...seller.address, countryLine(seller, 'de'));
  out.push(`${austrian ? 'UID' : 'USt-IdNr.'}: ${seller.vatId ?? ''}`, '');
  out.push(pick(['Rechnungsempfänger:', 'Kunde:']), buyer.name, ...buyer.address, countryLine(buyer, 'de'));
  if (buyer.vatId) out.push(`${buyer.country === 'AT' ? 'UID' : 'USt-IdNr.'}: ${buyer.vatId}`);
  out.push('');
  out.push(`${pick(['Datum:', 'Rechnungsdatum:', 'Ausstellungsdatum:'])} ${formatDate(invoice.issueDate, dateStyle)}`);
  if (chance(0.6)) {
    const start = addDays(invoice.issueDate, -int(20, 40));
    out.push(`Leistungszeitraum: ${formatDate(start, 'de-dot')} – ${formatDate(addDays(start, 14), 'de-dot')}`);
  }
  if (invoice.dueDate) out.push(`${pick(['Fällig am:', 'Zahlbar bis:', 'Fälligkeitsdatum:'])} ${formatDate(invoice.dueDate, dateStyle)}`);
  else out.push(`Zahlungsziel: ${pick(['14 Tage netto', 'sofort ohne Abzug', '30 Tage netto'])}`);
  if (invoice.purchaseOrder) out.push(`${pick(['Bestellnummer:', 'Bestell-Nr.:'])} ${invoice.purchaseOrder}`);
  out.push('');
  const money = (value: number) => formatMoney(value, 'EUR', 'de', 'code-after');
  invoice.lineItems.forEach((l, i) => {
    out.push(`Pos. ${i + 1}  ${l.description}`);
    out.push(`        Menge: ${formatQuantity(l.quantity, 'de')}  Einzelpreis: ${money(l.unitPrice)}  Betrag: ${money(l.amount)}`);
  });
  out.push('');
  out.push(`${pick(['Nettobetrag:', 'Summe netto:'])} ${money(invoice.subtotal)}`);
  out.push(`${pick(['USt.', 'MwSt.', 'Umsatzsteuer'])} ${formatRate(taxRate, 'de')} %${crossBorder ? ' (Reverse Charge)' : ''}: ${money(invoice.taxAmount)}`);
  out.push(`${pick(['Rechnungsbetrag:', 'Bruttobetrag:', 'Zu zahlen:'])} ${money(invoice.total)}`);
  out.push('');
  if (crossBorder) out.push('Die Steuerschuld geht auf den Leistungsempfänger über.');
  out.push(pick(['Vielen Dank für Ihr Vertrauen.', 'Wir danken für Ihren Auftrag.', 'Bei Rückfragen stehen wir gerne zur Verfügung.']));
  return { invoice, text: out.join('\n') + '\n' };
}

/** de-ch: Swiss invoice in CHF with apostrophe thousands, MWST, pipe table and a QR-bill receipt section. */
function renderDeSwiss(): Rendered {
  const seller = pick(SELLERS.CH);
  const buyer = pick(BUYERS_CH);
  const taxRate = pick([8.1, 8.1, 2.6]);
  const { invoice } = drawInvoice({
    seller,
    buyer,
    currency: 'CHF',
    taxRate,
    language: 'de',
    catalogue: ITEMS_DE,
    invoiceNumber: `R-${26 - int(0, 1)}-${String(int(1, 9999)).padStart(4, '0')}`,
    purchaseOrder: maybe(0.4, poNumber),
    dueInDays: chance(0.5) ? 30 : null,
  });
  const out: string[] = [seller.name, ...seller.address, countryLine(seller, 'de'), `${pick(['MWST-Nr.', 'UID'])}: ${seller.vatId ?? ''}`, ''];
  out.push('Rechnung', '');
  out.push(pick(['Kunde:', 'Rechnungsadresse:']), buyer.name, ...buyer.address);
  if (buyer.vatId) out.push(`UID: ${buyer.vatId}`);
  out.push('');
  const grid: string[][] = [
    ['Rechnungs-Nr.:', invoice.invoiceNumber],
    ['Datum:', formatDate(invoice.issueDate, 'de-dot')],
  ];
  if (invoice.dueDate) grid.push(['Zahlbar bis:', formatDate(invoice.dueDate, 'de-dot')]);
  if (invoice.purchaseOrder) grid.push(['Ihre Bestell-Nr.:', invoice.purchaseOrder]);
  out.push(...columns(grid, [false, false], 3), '');
  const rows = [
    ['Pos', 'Artikel', 'Anzahl', 'Preis CHF', 'Betrag CHF'],
    ...invoice.lineItems.map((l, i) => [String(i + 1), l.description, formatQuantity(l.quantity, 'ch'), formatNumber(l.unitPrice, 2, 'ch'), formatNumber(l.amount, 2, 'ch')]),
  ];
  out.push(...pipeTable(rows, [true, false, true, true, true], true), '');
  const money = (value: number) => formatMoney(value, 'CHF', 'ch', 'code-before');
  out.push(
    ...totalsBlock(
      [
        ['Total exkl. MWST', money(invoice.subtotal)],
        [`MWST ${formatRate(taxRate, 'ch')} %`, money(invoice.taxAmount)],
        ['Total inkl. MWST', money(invoice.total)],
      ],
      0,
    ),
  );
  out.push('');
  if (!invoice.dueDate) out.push('Zahlbar innert 30 Tagen netto.');
  out.push('Besten Dank für Ihren Auftrag.', '');
  out.push('- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -', 'Empfangsschein', 'Konto / Zahlbar an');
  out.push(`CH${int(10, 99)} 3000 ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(1, 9)}`, seller.name, ...seller.address);
  out.push('Referenz', `${int(10, 99)} ${int(10000, 99999)} ${int(10000, 99999)} ${int(10000, 99999)} ${int(10000, 99999)} ${int(10000, 99999)}`);
  out.push('Zahlbar durch', buyer.name, ...buyer.address, '', 'Währung   Betrag', `CHF       ${formatNumber(invoice.total, 2, 'ch')}`, '', 'Annahmestelle');
  return { invoice, text: out.join('\n') + '\n' };
}

const AGB = [
  'Allgemeine Geschäftsbedingungen (Auszug)',
  '',
  '§ 1 Geltungsbereich',
  'Diese Bedingungen gelten für alle Lieferungen und Leistungen gegenüber Unternehmern im Sinne',
  'des § 14 BGB. Abweichende Bedingungen des Auftraggebers werden nicht Vertragsbestandteil, auch',
  'wenn wir ihnen nicht ausdrücklich widersprechen.',
  '§ 2 Preise',
  'Alle Preise verstehen sich in Euro zuzüglich der gesetzlichen Umsatzsteuer, sofern nicht anders',
  'angegeben. Reisezeiten werden mit 50 % des vereinbarten Stundensatzes berechnet.',
  '§ 3 Zahlungsbedingungen',
  'Rechnungen sind ohne Abzug zahlbar. Bei Zahlungsverzug berechnen wir Verzugszinsen in Höhe von',
  '9 Prozentpunkten über dem Basiszinssatz sowie eine Pauschale von 40,00 EUR nach § 288 Abs. 5 BGB.',
  '§ 4 Eigentumsvorbehalt',
  'Gelieferte Waren bleiben bis zur vollständigen Bezahlung aller Forderungen aus der',
  'Geschäftsbeziehung unser Eigentum.',
  '§ 5 Gewährleistung',
  'Offensichtliche Mängel sind innerhalb von 8 Tagen nach Lieferung schriftlich anzuzeigen. Die',
  'Gewährleistungsfrist beträgt 12 Monate ab Abnahme.',
  '§ 6 Haftung',
  'Wir haften unbeschränkt bei Vorsatz und grober Fahrlässigkeit. Im Übrigen ist die Haftung auf',
  'den vertragstypischen, vorhersehbaren Schaden begrenzt.',
  '§ 7 Datenschutz',
  'Personenbezogene Daten werden ausschließlich zur Vertragsabwicklung gemäß DSGVO verarbeitet.',
  '§ 8 Gerichtsstand',
  'Erfüllungsort und Gerichtsstand ist der Sitz des Auftragnehmers. Es gilt deutsches Recht unter',
  'Ausschluss des UN-Kaufrechts.',
];

/** de-agb: one-line letterhead, "RECHNUNG Nr." title, unit column in a pipe table, long terms (AGB). */
function renderDeAgb(): Rendered {
  const seller = chance(0.7) ? pick(SELLERS.DE) : pick(SELLERS.AT);
  const domestic = seller.country === 'AT' ? BUYERS_AT : BUYERS_DE;
  const buyer = chance(0.7) ? pick(domestic) : pick([...BUYERS_EU, ...BUYERS_AT, ...BUYERS_DE]);
  const crossBorder = buyer.country !== seller.country;
  if (crossBorder && buyer.vatId === null) return renderDeAgb();
  const taxRate = crossBorder ? 0 : seller.country === 'AT' ? 20 : 19;
  const { invoice, lines } = drawInvoice({
    seller,
    buyer,
    currency: 'EUR',
    taxRate,
    language: 'de',
    catalogue: ITEMS_DE,
    invoiceNumber: `${pick(['RE', 'AR', 'RG'])}${int(100000, 999999)}`,
    purchaseOrder: maybe(0.5, poNumber),
    dueInDays: chance(0.5) ? pick([10, 14, 21]) : null,
  });
  const dateStyle = pick(['iso', 'de-dot-short', 'de-dot'] as const);
  const out: string[] = [seller.name, `${seller.address.join(', ')}, ${countryLine(seller, 'de')}`];
  out.push(`Tel. +${seller.country === 'AT' ? 43 : 49} ${int(30, 89)} ${int(100000, 9999999)} | buchhaltung@${seller.name.split(' ')[0]?.toLowerCase().replace(/[^a-z]/g, '')}.example`);
  out.push(`USt-IdNr. ${seller.vatId ?? ''}`, '');
  out.push(`RECHNUNG Nr. ${invoice.invoiceNumber}`, '');
  out.push(`Rechnungsdatum: ${formatDate(invoice.issueDate, dateStyle)}`);
  if (invoice.dueDate) out.push(`Fälligkeit: ${formatDate(invoice.dueDate, dateStyle)}`);
  if (invoice.purchaseOrder) out.push(`Bestell-Nr.: ${invoice.purchaseOrder}`);
  out.push(`Lieferschein-Nr.: LS-${int(10000, 99999)}`, '');
  out.push('Auftraggeber:', buyer.name, ...buyer.address, countryLine(buyer, 'de'));
  if (buyer.vatId) out.push(`USt-IdNr.: ${buyer.vatId}`);
  out.push('');
  const money = (value: number) => formatMoney(value, 'EUR', 'de', 'symbol-after');
  const rows = [
    ['Menge', 'Einheit', 'Beschreibung', 'Einzelpreis', 'Summe'],
    ...invoice.lineItems.map((l, i) => [formatQuantity(l.quantity, 'de'), lines[i]?.item.unit ?? 'Stk.', l.description, money(l.unitPrice), money(l.amount)]),
  ];
  out.push(...pipeTable(rows, [true, false, false, true, true], false), '');
  out.push(
    ...totalsBlock(
      [
        ['Summe netto', money(invoice.subtotal)],
        [`USt. ${formatRate(taxRate, 'de')} %${crossBorder ? ' (Reverse Charge)' : ''}`, money(invoice.taxAmount)],
        ['Summe brutto', money(invoice.total)],
      ],
      20,
    ),
  );
  out.push('');
  if (crossBorder) out.push('Hinweis: Steuerschuldnerschaft des Leistungsempfängers (Reverse Charge).');
  if (!invoice.dueDate) out.push('Zahlungsbedingungen: 14 Tage netto ab Rechnungsdatum.');
  out.push('Bitte geben Sie bei Zahlung die Rechnungsnummer als Verwendungszweck an.', '');
  out.push(...AGB);
  return { invoice, text: out.join('\n') + '\n' };
}

const LAYOUTS: Layout[] = [
  { name: 'en-classic', language: 'en', render: renderEnClassic },
  { name: 'en-compact', language: 'en', render: renderEnCompact },
  { name: 'en-uk-long', language: 'en', render: renderEnUkLong },
  { name: 'en-keyvalue', language: 'en', render: renderEnKeyValue },
  { name: 'de-din', language: 'de', render: renderDeDin },
  { name: 'de-labelled', language: 'de', render: renderDeLabelled },
  { name: 'de-ch', language: 'de', render: renderDeSwiss },
  { name: 'de-agb', language: 'de', render: renderDeAgb },
];

// ---------------------------------------------------------------------------------------------------------
// Output

/** One manifest entry; `file` and `expected` are relative to the corpus folder. */
export interface ManifestEntry {
  id: string;
  language: 'en' | 'de';
  layout: string;
  sourceId: string;
  schemaVersion: string;
  file: string;
  expected: string;
}

function main(): void {
  const root = fileURLToPath(new URL('.', import.meta.url));
  rmSync(`${root}invoices`, { recursive: true, force: true });
  const counters: Record<string, number> = { en: 0, de: 0 };
  const manifest: ManifestEntry[] = [];
  for (let round = 0; round < DOCS_PER_LAYOUT; round++) {
    for (const layout of LAYOUTS) {
      const { invoice, text } = layout.render(round);
      const parsed = InvoiceV1.parse(invoice);
      const violations = invoiceV1DomainRules(parsed);
      if (violations.length > 0) throw new Error(`generated invoice breaks rules: ${JSON.stringify(violations)}`);
      counters[layout.language] = (counters[layout.language] ?? 0) + 1;
      const id = `${layout.language}-${String(counters[layout.language]).padStart(3, '0')}`;
      const dir = `invoices/${layout.language}`;
      mkdirSync(`${root}${dir}`, { recursive: true });
      writeFileSync(`${root}${dir}/${id}.txt`, text);
      writeFileSync(`${root}${dir}/${id}.expected.json`, JSON.stringify(parsed, null, 2) + '\n');
      manifest.push({
        id,
        language: layout.language,
        layout: layout.name,
        sourceId: `ratelane-corpus:invoices/${layout.language}/${id}`,
        schemaVersion: SCHEMA_VERSION,
        file: `${dir}/${id}.txt`,
        expected: `${dir}/${id}.expected.json`,
      });
    }
  }
  manifest.sort((a, b) => a.id.localeCompare(b.id));
  writeFileSync(`${root}manifest.json`, JSON.stringify(manifest, null, 2) + '\n');
  console.log(`wrote ${manifest.length} documents (${counters.en} en, ${counters.de} de)`);
}

main();
