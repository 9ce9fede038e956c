/**
 * French-language receipt layouts: a French or Belgian supermarket ticket de caisse (quantity and weight
 * lines under the item, TVA table), a restaurant addition (`2 Plat du jour`, pourboire, `dont TVA`,
 * `service compris`), and a taxi receipt (départ and arrivée times as distractors, `14h28`).
 */
import { DISHES, GROCERIES, RESTAURANTS, SHOPS, TAXIS, VAT, type Merchant } from './catalogue.js';
import {
  assemble,
  cashGiven,
  drawDate,
  drawLines,
  drawTime,
  drawTip,
  receiptNo,
  sumCents,
  totalCentsOf,
  vatBreakdown,
  type DrawnLine,
  type RenderedReceipt,
  vatTotal,
  chance,
  int,
  pick,
  sample,
  includedVat,
} from './draw.js';
import { amount, centre, formatReceiptTime, line, rule, receiptHeader, itemLines, minutesBefore } from './format.js';
import { formatQuantity, formatDate } from '../format.js';

const fr = (cents: number): string => amount(cents, 'de');
const rateText = (rate: number): string => `${formatQuantity(rate, 'de')}%`;

const vatLine = (merchant: Merchant): string => (merchant.country === 'BE' ? `TVA ${merchant.vatId}` : `N° TVA ${merchant.vatId}`);

/** fr-caisse: French or Belgian supermarket ticket; round 1 prints no currency at all. */
export function renderFrCaisse(round: number): RenderedReceipt {
  const merchant = pick(SHOPS[round === 2 ? 'BE' : 'FR']);
  const vat = VAT[merchant.country === 'BE' ? 'BE' : 'FR'];
  const lines = drawLines(GROCERIES.fr, int(3, 9), 4, 0.3, (good) => (good.reduced ? vat.reduced : vat.standard));
  const date = drawDate(round === 0 || chance(0.4));
  const time = drawTime(8, 20);
  const rows = vatBreakdown(lines);
  const paymentMethod = round === 3 ? 'other' : pick(['cash', 'card', 'card'] as const);
  const receiptNumber = receiptNo('', [4, 3]);
  const receipt = assemble({
    merchant,
    receiptNumber,
    date,
    time,
    lines,
    subtotalPrinted: chance(0.5),
    includedTaxCents: vatTotal(rows),
    paymentMethod,
    language: 'fr',
  });
  const euro = round === 1 ? '' : ' €';
  const total = totalCentsOf(receipt);
  const dateToken = formatDate(date, 'dmy');
  const given = cashGiven(total);
  const payment = {
    cash: [line('ESPECES', `${fr(given)}${euro}`), line('RENDU', `${fr(given - total)}${euro}`)],
    card: [line('CB', `${fr(total)}${euro}`)],
    other: [line('TITRE-RESTAURANT', `${fr(total)}${euro}`)],
  }[paymentMethod];
  const codeOf = (rate: number) => String(rows.findIndex((r) => r.rate === rate) + 1);
  const text = [
    ...receiptHeader(merchant, [
      merchant.country === 'BE'
        ? `N° d'entreprise ${(merchant.vatId ?? '').slice(2)}`
        : `SIRET ${int(100, 999)} ${int(100, 999)} ${int(100, 999)} ${int(10000, 99999)}`,
      vatLine(merchant),
    ]),
    rule(),
    `Ticket n° ${receiptNumber}    Caisse ${String(int(1, 12)).padStart(2, '0')}`,
    `${dateToken}  ${time}`,
    rule(),
    ...lines.flatMap((l) => itemLines(line(l.description, `${fr(l.amountCents)}${euro}`), l, 'de', euro.trim())),
    rule(),
    ...(receipt.subtotal === null ? [] : [line('SOUS-TOTAL', `${fr(sumCents(lines))}${euro}`)]),
    line('TOTAL', `${fr(total)}${euro}`),
    ...payment,
    '',
    'TVA    Taux       HT      TVA      TTC',
    ...rows.map(
      (r) =>
        `${codeOf(r.rate)}   ${rateText(r.rate).padStart(7)}  ${fr(r.netCents).padStart(7)}  ${fr(r.taxCents).padStart(7)}  ${fr(r.grossCents).padStart(7)}`,
    ),
    '',
    `Nombre d'articles : ${lines.reduce((n, l) => n + (l.unit === null ? l.quantity : 1), 0)}`,
    centre('Merci de votre visite'),
    '',
  ].join('\n');
  return { receipt, text, dateToken, decimalComma: true };
}

/** fr-restaurant: French or Belgian addition with quantity-first lines, optional pourboire, `dont TVA`, `service compris`. */
export function renderFrRestaurant(round: number): RenderedReceipt {
  const merchant = pick(RESTAURANTS[round === 2 ? 'BE' : 'FR']);
  const rate = VAT[merchant.country === 'BE' ? 'BE' : 'FR'].restaurant;
  const lines = drawLines(DISHES.fr, int(2, 6), 3, 0.35, () => rate);
  const date = drawDate(round === 1 || chance(0.4));
  const time = round === 3 ? null : drawTime(12, 22);
  const items = sumCents(lines);
  const tipCents = chance(0.5) ? drawTip(items) : null;
  const paymentMethod = pick(['cash', 'card', 'card', 'other'] as const);
  const includedTaxCents = includedVat(items, rate);
  const receiptNumber = round === 0 ? null : receiptNo('', [4]);
  const receipt = assemble({
    merchant,
    receiptNumber,
    date,
    time,
    lines,
    subtotalPrinted: tipCents !== null,
    includedTaxCents,
    tipCents,
    paymentMethod,
    language: 'fr',
  });
  const dateToken = formatDate(date, round === 0 || round === 3 ? 'fr-weekday' : 'dmy');
  const clock = time === null ? '' : formatReceiptTime(time, 'fr-h');
  const dateLine = round === 0 || round === 3 ? `Le ${dateToken}${clock === '' ? '' : ` à ${clock}`}` : `${dateToken}  ${clock}`;
  const text = [
    ...receiptHeader(merchant, [merchant.country === 'BE' ? `TVA ${merchant.vatId}` : `N° TVA : ${merchant.vatId}`]),
    rule(),
    ...(receiptNumber === null ? [] : [`Addition n° ${receiptNumber}`]),
    `Table ${int(1, 25)} - ${int(1, 6)} couverts`,
    dateLine.trimEnd(),
    rule(),
    ...lines.map((l) => line(`${l.quantity} ${l.description}`, fr(l.amountCents))),
    rule(),
    ...(tipCents === null ? [] : [line('Sous-total', fr(items)), line('Pourboire', fr(tipCents))]),
    line('TOTAL TTC', `${fr(totalCentsOf(receipt))} €`),
    `dont TVA ${rateText(rate)} : ${fr(includedTaxCents)} €`,
    { cash: 'Réglé en espèces', card: 'Réglé par CB', other: 'Réglé par titre-restaurant' }[paymentMethod],
    'Service compris',
    centre('Merci et à bientôt !'),
    '',
  ].join('\n');
  return { receipt, text, dateToken, decimalComma: true };
}

/** fr-taxi: French or Belgian taxi receipt, `Heure : 14h28`, départ/arrivée times, `dont TVA`. */
export function renderFrTaxi(round: number): RenderedReceipt {
  const merchant = pick(TAXIS[round === 2 ? 'BE' : 'FR']);
  const rate = VAT[merchant.country === 'BE' ? 'BE' : 'FR'].transport;
  const fare = int(1200, 6500);
  const bags = chance(0.5) ? int(1, 3) : 0;
  const lines: DrawnLine[] = [
    { description: 'Course', quantity: 1, unitCents: fare, amountCents: fare, rate, unit: null },
    ...(bags === 0 ? [] : [{ description: 'Supplément bagage', quantity: bags, unitCents: 200, amountCents: bags * 200, rate, unit: null }]),
  ];
  const date = drawDate(round === 0 || chance(0.4));
  const time = drawTime(6, 23);
  const tipCents = chance(0.5) ? drawTip(fare) : null;
  const paymentMethod = pick(['cash', 'card', 'other'] as const);
  const includedTaxCents = includedVat(sumCents(lines), rate);
  const receiptNumber = receiptNo(`${date.slice(0, 4)}-`, [5]);
  const receipt = assemble({ merchant, receiptNumber, date, time, lines, includedTaxCents, tipCents, paymentMethod, language: 'fr' });
  const dateToken = formatDate(date, 'dmy');
  const duration = int(8, 40);
  const places =
    merchant.country === 'BE' ? ['Gare du Midi', 'Aéroport de Zaventem', 'Place Flagey'] : ['Gare Part-Dieu', 'Aéroport Saint-Exupéry', 'Place Bellecour'];
  const [from = '', to = ''] = sample(places, 2);
  const text = [
    ...receiptHeader(merchant, [vatLine(merchant), `Taxi n° ${int(10, 999)}`]),
    rule(),
    `Reçu n° ${receiptNumber}`,
    `Date : ${dateToken}   Heure : ${formatReceiptTime(time, 'fr-h')}`,
    `Départ : ${formatReceiptTime(minutesBefore(time, duration), 'fr-h')}  ${from}`,
    `Arrivée : ${formatReceiptTime(time, 'fr-h')}  ${to}`,
    `Distance : ${(duration * 0.7).toFixed(1).replace('.', ',')} km`,
    rule(),
    ...lines.flatMap((l) => itemLines(line(l.description, fr(l.amountCents)), l, 'de', '')),
    rule(),
    ...(tipCents === null ? [] : [line('Pourboire', fr(tipCents))]),
    line('Total TTC', `${fr(totalCentsOf(receipt))} €`),
    `dont TVA ${rateText(rate)} : ${fr(includedTaxCents)}`,
    `Paiement : ${{ cash: 'espèces', card: 'CB', other: 'application' }[paymentMethod]}`,
    centre('Merci et bonne route'),
    '',
  ].join('\n');
  return { receipt, text, dateToken, decimalComma: true };
}
