/**
 * The French layouts of the evaluation corpus (France, Belgium, French-speaking Switzerland): each draws
 * an invoice and renders it as one kind of real-world French invoice text.
 */
import type { InvoiceV1 as Invoice } from '../../../../lib/contract/schemas/invoice-v1.js';
import { BUYERS_EU, type Party, BUYERS_FR, COUNTRY_NAMES_FR, ITEMS_FR, SELLERS_FR } from './catalogue.js';
import { poNumber, sequence, chance, int, maybe, pick, drawEvalInvoice, type EvalDraw, type EvalRendered } from './draw.js';
import { addDays, type DateStyle, formatDate, formatNumber, formatQuantity, type NumberStyle } from '../format.js';
import { columns, formatMoney, formatRate, pipeTable, swissPositionTable, totalsBlock } from './format.js';

const PENALTIES = [
  'En cas de retard de paiement, des pénalités égales à trois fois le taux d’intérêt légal seront exigibles,',
  'ainsi qu’une indemnité forfaitaire pour frais de recouvrement de 40 € (articles L441-10 et D441-5 du Code de commerce).',
  'Pas d’escompte pour paiement anticipé.',
];

/** Draws a French invoice: in French, from the French catalogue. */
function drawFrInvoice(draw: Omit<EvalDraw, 'language' | 'catalogue'>): Invoice {
  return drawEvalInvoice({ ...draw, language: 'fr', catalogue: ITEMS_FR }).invoice;
}

/** Groups the SIREN (the last nine digits of a French VAT ID) as printed: `812 345 678`. */
function siren(vatId: string | null): string {
  const digits = (vatId ?? '').slice(-9);
  return `${digits.slice(0, 3)} ${digits.slice(3, 6)} ${digits.slice(6)}`;
}

/** fr-facture: French letterhead with SIREN and VAT ID, "FACTURE N°", labelled dates, pipe table HT, Total HT / TVA / Total TTC. */
export function renderFrFacture(): EvalRendered {
  const seller = pick(SELLERS_FR.FR);
  const buyer = chance(0.85) ? pick(BUYERS_FR.FR) : (BUYERS_EU[1] as Party);
  const taxRate = pick([20, 20, 20, 10, 5.5]);
  const invoice = drawFrInvoice({
    seller,
    buyer,
    currency: 'EUR',
    taxRate,
    invoiceNumber: pick([`F${2025 + int(0, 1)}-${String(sequence()).padStart(4, '0')}`, `FA-${int(10000, 99999)}`]),
    purchaseOrder: maybe(0.5, () => pick([`BC-${int(1000, 9999)}`, poNumber()])),
    dueInDays: chance(0.6) ? pick([30, 45]) : null,
    items: int(1, 8),
  });
  const dateStyle: DateStyle = pick(['fr-long', 'fr-long', 'dmy']);
  const style: NumberStyle = pick(['fr', 'fr-space']);
  const money = (value: number) => formatMoney(value, 'EUR', style, 'symbol-after');
  const out: string[] = [seller.name, ...seller.address, 'France'];
  out.push(`Tél. 0${int(1, 5)} ${int(10, 99)} ${int(10, 99)} ${int(10, 99)} ${int(10, 99)} – compta@${seller.name.split(' ')[0]?.toLowerCase()}.example`);
  out.push(`SIREN ${siren(seller.vatId)} – N° TVA intracommunautaire : ${seller.vatId ?? ''}`, '');
  out.push(`${pick(['FACTURE N°', 'Facture n°'])} ${invoice.invoiceNumber}`, '');
  out.push(`Date de facture : ${formatDate(invoice.issueDate, dateStyle)}`);
  if (chance(0.4)) out.push(`Date de livraison : ${formatDate(addDays(invoice.issueDate, -int(1, 6)), dateStyle)}`);
  if (invoice.dueDate) out.push(`Date d’échéance : ${formatDate(invoice.dueDate, dateStyle)}`);
  else out.push(`Conditions de paiement : ${pick(['à réception de facture', '30 jours fin de mois', '45 jours date de facture'])}`);
  if (invoice.purchaseOrder) out.push(`Bon de commande : ${invoice.purchaseOrder}`);
  out.push(`N° client : C${int(1000, 9999)}`, '');
  out.push(pick(['Facturé à :', 'Client :']), buyer.name, ...buyer.address);
  if (buyer.country !== 'FR') out.push(COUNTRY_NAMES_FR[buyer.country]);
  if (buyer.vatId) out.push(`N° TVA : ${buyer.vatId}`);
  out.push('');
  const withSymbol = chance(0.5);
  const cell = (value: number) => (withSymbol ? money(value) : formatNumber(value, 2, style));
  const rows = [
    ['Désignation', 'Qté', 'Prix unitaire HT', 'Montant HT'],
    ...invoice.lineItems.map((l) => [l.description, formatQuantity(l.quantity, style), cell(l.unitPrice), cell(l.amount)]),
  ];
  out.push(...pipeTable(rows, [false, true, true, true], true), '');
  out.push(
    ...totalsBlock(
      [
        ['Total HT', money(invoice.subtotal)],
        [`TVA ${formatRate(taxRate, style)} %`, money(invoice.taxAmount)],
        [pick(['Total TTC', 'Net à payer']), money(invoice.total)],
      ],
      24,
    ),
  );
  out.push('', pick(['Règlement par virement bancaire.', 'Règlement par virement ou par chèque à l’ordre de la société.']));
  out.push(`IBAN FR76 ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(100, 999)} – BIC AGRIFRPP`);
  out.push(...PENALTIES);
  return { invoice, text: `${out.join('\n')}\n`, shapes: [] };
}

/** fr-be: Belgian invoice: labelled Fournisseur / Client blocks, column table HTVA, 21 % / 6 %, structured communication. */
export function renderFrBelgium(): EvalRendered {
  const seller = pick(SELLERS_FR.BE);
  const buyer = pick(BUYERS_FR.BE);
  const taxRate = pick([21, 21, 6]);
  const invoice = drawFrInvoice({
    seller,
    buyer,
    currency: 'EUR',
    taxRate,
    invoiceNumber: `${2025 + int(0, 1)}/${String(int(1, 999)).padStart(4, '0')}`,
    purchaseOrder: maybe(0.5, poNumber),
    dueInDays: chance(0.7) ? pick([15, 30]) : null,
    items: int(1, 6),
  });
  const dateStyle: DateStyle = pick(['dmy', 'fr-long', 'de-dot']);
  const money = (value: number) => formatMoney(value, 'EUR', 'de', 'symbol-after');
  const out: string[] = ['Facture', ''];
  out.push(
    'Fournisseur :',
    seller.name,
    ...seller.address,
    'Belgique',
    `N° TVA : ${seller.vatId ?? ''}`,
    `RPM ${seller.address[1]?.replace(/^\d+\s+/, '')}`,
    '',
  );
  out.push('Client :', buyer.name, ...buyer.address, 'Belgique');
  if (buyer.vatId) out.push(`N° TVA : ${buyer.vatId}`);
  out.push('');
  out.push(`Facture n° : ${invoice.invoiceNumber}`);
  out.push(`Date : ${formatDate(invoice.issueDate, dateStyle)}`);
  if (invoice.dueDate) out.push(`Échéance : ${formatDate(invoice.dueDate, dateStyle)}`);
  if (invoice.purchaseOrder) out.push(`Votre commande : ${invoice.purchaseOrder}`);
  out.push('');
  const rows = [
    ['Description', 'Quantité', 'Prix unitaire', 'Total HTVA'],
    ...invoice.lineItems.map((l) => [l.description, formatQuantity(l.quantity, 'de'), formatNumber(l.unitPrice, 2, 'de'), formatNumber(l.amount, 2, 'de')]),
  ];
  const table = columns(rows, [false, true, true, true]);
  const width = Math.max(...table.map((l) => l.length));
  out.push(table[0] ?? '', '-'.repeat(width), ...table.slice(1), '-'.repeat(width));
  out.push(
    ...totalsBlock(
      [
        ['Total HTVA', money(invoice.subtotal)],
        [`TVA ${formatRate(taxRate, 'de')} %`, money(invoice.taxAmount)],
        ['Total TVAC', money(invoice.total)],
      ],
      Math.max(0, width - 30),
    ),
  );
  out.push('');
  if (!invoice.dueDate) out.push('Payable à 30 jours date de facture.');
  out.push(`Communication structurée : +++${int(100, 999)}/${int(1000, 9999)}/${int(10000, 99999)}+++`);
  out.push(`IBAN BE${int(10, 99)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)} – BIC GEBABEBB`);
  out.push('Toute réclamation doit être adressée par écrit dans les huit jours de la réception de la facture.');
  return { invoice, text: `${out.join('\n')}\n`, shapes: [] };
}

/** fr-ch: Swiss French invoice in CHF: `1'234.50`, `TVA 8.1 %`, label grid without colons, pipe table, payment part. */
export function renderFrSwiss(): EvalRendered {
  const seller = pick(SELLERS_FR.CH);
  const buyer = pick(BUYERS_FR.CH);
  const taxRate = pick([8.1, 8.1, 2.6]);
  const invoice = drawFrInvoice({
    seller,
    buyer,
    currency: 'CHF',
    taxRate,
    invoiceNumber: `R-${26 - int(0, 1)}-${String(int(1, 9999)).padStart(4, '0')}`,
    purchaseOrder: maybe(0.4, poNumber),
    dueInDays: chance(0.5) ? 30 : null,
    items: int(1, 8),
  });
  const out: string[] = [seller.name, ...seller.address, 'Suisse', `N° IDE : ${seller.vatId ?? ''}`, '', 'Facture', ''];
  out.push(pick(['Client :', 'Adresse de facturation :']), buyer.name, ...buyer.address);
  if (buyer.vatId) out.push(`IDE : ${buyer.vatId}`);
  out.push('');
  const dateStyle: DateStyle = pick(['de-dot', 'fr-long']);
  const grid: string[][] = [
    ['Facture n°', invoice.invoiceNumber],
    ['Date', formatDate(invoice.issueDate, dateStyle)],
  ];
  if (invoice.dueDate) grid.push(['Échéance', formatDate(invoice.dueDate, dateStyle)]);
  if (invoice.purchaseOrder) grid.push(['Votre commande', invoice.purchaseOrder]);
  out.push(...columns(grid, [false, false], 4), '');
  out.push(...swissPositionTable(['Pos', 'Désignation', 'Quantité', 'Prix CHF', 'Montant CHF'], invoice.lineItems), '');
  const money = (value: number) => formatMoney(value, 'CHF', 'ch', 'code-before');
  out.push(
    ...totalsBlock(
      [
        ['Total HT', money(invoice.subtotal)],
        [`TVA ${formatRate(taxRate, 'ch')} %`, money(invoice.taxAmount)],
        [pick(['Total TTC', 'Montant total']), money(invoice.total)],
      ],
      0,
    ),
  );
  out.push('');
  if (!invoice.dueDate) out.push('Payable dans les 30 jours, net.');
  out.push('Nous vous remercions de votre confiance.', '');
  out.push('- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -', 'Récépissé', 'Compte / Payable à');
  out.push(`CH${int(10, 99)} 0900 ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(1, 9)}`, seller.name, ...seller.address);
  out.push('Payable par', buyer.name, ...buyer.address, '', 'Monnaie   Montant', `CHF       ${formatNumber(invoice.total, 2, 'ch')}`, '', 'Point de dépôt');
  return { invoice, text: `${out.join('\n')}\n`, shapes: [] };
}
