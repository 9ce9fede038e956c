/**
 * The English layouts of the corpus: each draws an invoice and renders it as one kind of real-world
 * English invoice text.
 */
import { BUYERS_CH, BUYERS_DE, BUYERS_EN, BUYERS_EU, countryLine, IRISH_BUYER, ITEMS_EN, type Party, SELLERS } from './catalogue.js';
import { addDays, formatDate, formatNumber, formatQuantity } from '../format.js';
import { columns, formatMoney, formatRate, pipeTable, totalsBlock } from './format.js';
import { drawInvoice, poNumber, type Rendered, sequence, chance, int, maybe, pick } from './draw.js';

/** en-classic: seller letterhead, key/value header, "Bill To" block, space-aligned table. */
export function renderEnClassic(round: number): Rendered {
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
  return { invoice, text: `${out.join('\n')}\n` };
}

/** en-compact: "Invoice #" title, From/To blocks, "qty x item @ price = amount" lines, US-style slashed dates with a stated convention. */
export function renderEnCompact(): Rendered {
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
  out.push(
    '',
    pick([
      'Questions? Reply to this email or call us.',
      'Please include the invoice number with your payment.',
      'Late payments may incur a fee of 1.5% per month.',
    ]),
  );
  return { invoice, text: `${out.join('\n')}\n` };
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
export function renderEnUkLong(): Rendered {
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
        [
          `VAT @ ${formatRate(taxRate, 'en')}%${exportOfServices ? ' (outside the scope of UK VAT)' : ''}:`,
          formatMoney(invoice.taxAmount, 'GBP', 'en', 'symbol'),
        ],
        ['Total amount payable:', formatMoney(invoice.total, 'GBP', 'en', 'symbol')],
      ],
      0,
    ),
  );
  out.push(
    '',
    'Payment details',
    `Bank: ${pick(['Barclays Bank plc', 'Lloyds Bank plc', 'NatWest'])}`,
    `Sort code: ${int(10, 99)}-${int(10, 99)}-${int(10, 99)}`,
    `Account number: ${int(10000000, 99999999)}`,
  );
  out.push(`Please quote invoice number ${invoice.invoiceNumber} as the payment reference.`, '');
  out.push(...UK_TERMS);
  if (chance(0.5)) {
    out.push('', `${seller.name} is registered in England and Wales, company number ${int(1000000, 9999999)}.`);
  }
  return { invoice, text: `${out.join('\n')}\n` };
}

/** en-keyvalue: "Issued by"/"Invoice to" single-line parties, label/value grid without colons, quantity-first table. */
export function renderEnKeyValue(round: number): Rendered {
  const kind = (['CH_EN', 'DE', 'US', 'CH_EN'] as const)[round % 4] ?? 'CH_EN';
  const seller = pick(SELLERS[kind]);
  const currency = kind === 'CH_EN' ? 'CHF' : kind === 'DE' ? 'EUR' : 'USD';
  const buyer =
    kind === 'DE'
      ? pick([...BUYERS_EU, BUYERS_DE[3] as Party])
      : kind === 'CH_EN'
        ? chance(0.7)
          ? pick(BUYERS_CH)
          : pick(BUYERS_EN.filter((b) => b.country === 'US'))
        : pick(BUYERS_EN.filter((b) => b.country === 'US'));
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
  out.push(
    pick(['Notes: Prices exclude shipping unless stated.', 'Notes: Thank you for choosing us again this year.', 'Notes: Warranty 24 months on hardware.']),
  );
  return { invoice, text: `${out.join('\n')}\n` };
}
