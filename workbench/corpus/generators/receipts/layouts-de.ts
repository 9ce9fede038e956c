/**
 * German-language receipt layouts: a German or Austrian supermarket till receipt (tax code letters,
 * quantity and weight lines under the item, a MwSt table, date at the bottom with a two-digit year), a
 * restaurant bill (`2x` lines, Trinkgeld, enthaltene MwSt), a fuel station receipt (litres x price per
 * litre), and a Swiss shop receipt in CHF with `1'234.50` amounts and `inkl. MWST` lines.
 */
import { DISHES, FUEL_STATIONS, GROCERIES, RESTAURANTS, SHOPS, SWISS_GOODS, VAT, type Good, type Merchant } from './catalogue.js';
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
  type VatRow,
  vatTotal,
  chance,
  int,
  pick,
  includedVat,
} from './draw.js';
import { amount, centre, formatReceiptTime, line, rule, receiptHeader, itemLines } from './format.js';
import { formatQuantity, formatDate } from '../format.js';

const de = (cents: number): string => amount(cents, 'de');

const vatLabel = (merchant: Merchant): string => (merchant.country === 'AT' ? 'UID' : 'USt-IdNr.');

function vatTable(rows: readonly VatRow[], codeOf: (rate: number) => string, heading: string): string[] {
  return [
    heading,
    ...rows.map(
      (r) =>
        `${codeOf(r.rate)} ${`${formatQuantity(r.rate, 'de')} %`.padStart(6)}  ${de(r.netCents).padStart(8)}  ${de(r.taxCents).padStart(7)}  ${de(r.grossCents).padStart(8)}`,
    ),
  ];
}

/** de-kasse: German or Austrian supermarket till receipt; round 0 prints no currency at all. */
export function renderDeKasse(round: number): RenderedReceipt {
  const merchant = pick(SHOPS[round === 2 ? 'AT' : 'DE']);
  const vat = VAT[merchant.country === 'AT' ? 'AT' : 'DE'];
  const lines = drawLines(GROCERIES.de, int(3, 9), 4, 0.3, (good) => (good.reduced ? vat.reduced : vat.standard));
  const date = drawDate(chance(0.5));
  const time = drawTime(7, 21);
  const rows = vatBreakdown(lines);
  const paymentMethod = pick(['cash', 'card'] as const);
  const receiptNumber = receiptNo('', [4]);
  const receipt = assemble({ merchant, receiptNumber, date, time, lines, includedTaxCents: vatTotal(rows), paymentMethod, language: 'de' });
  const currency = round === 0 ? '' : 'EUR';
  const codeOf = (rate: number) => (rate === vat.standard ? 'A' : 'B');
  const total = totalCentsOf(receipt);
  const dateToken = formatDate(date, round < 2 ? 'de-dot-yy' : 'de-dot');
  const given = cashGiven(total);
  const text = [
    ...receiptHeader(merchant, [`${vatLabel(merchant)} ${merchant.vatId}`]),
    rule(),
    ...(currency === '' ? [] : [line('', 'EUR  ')]),
    ...lines.flatMap((l) => itemLines(line(l.description, `${de(l.amountCents)} ${codeOf(l.rate)}`), l, 'de', currency)),
    rule(),
    line(`SUMME${currency === '' ? '' : ' EUR'}`, `${de(total)}  `),
    ...(paymentMethod === 'cash'
      ? [line('Geg. Bar', `${de(given)}  `), line('Rückgeld', `${de(given - total)}  `)]
      : [line(merchant.country === 'AT' ? 'Bankomat' : 'Kartenzahlung girocard', `${de(total)}  `)]),
    '',
    ...vatTable(rows, codeOf, 'Satz        Netto     MwSt    Brutto'),
    '',
    `${dateToken} ${time}   Bon-Nr. ${receiptNumber}   Kasse ${int(1, 8)}`,
    centre('Vielen Dank für Ihren Einkauf!'),
    '',
  ].join('\n');
  return { receipt, text, dateToken, decimalComma: true };
}

/** de-restaurant: German or Austrian restaurant bill with `2x` lines, optional Trinkgeld and enthaltene MwSt. */
export function renderDeRestaurant(round: number): RenderedReceipt {
  const merchant = pick(RESTAURANTS[round === 2 ? 'AT' : 'DE']);
  const rate = VAT[merchant.country === 'AT' ? 'AT' : 'DE'].restaurant;
  const lines = drawLines(DISHES.de, int(2, 6), 3, 0.4, () => rate);
  const date = drawDate(chance(0.5));
  const time = drawTime(11, 22);
  const items = sumCents(lines);
  const tipCents = round === 1 ? null : chance(0.75) ? drawTip(items) : null;
  const paymentMethod = round === 3 ? null : pick(['cash', 'card'] as const);
  const includedTaxCents = includedVat(items, rate);
  const receiptNumber = receiptNo(`${date.slice(0, 4)}-`, [4]);
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
    language: 'de',
  });
  const dateToken = formatDate(date, 'de-dot');
  const text = [
    ...receiptHeader(merchant, [
      merchant.vatId === null ? `St.-Nr. ${int(100, 999)}/${int(100, 999)}/${int(10000, 99999)}` : `${vatLabel(merchant)}: ${merchant.vatId}`,
    ]),
    rule('='),
    `Rechnung Nr. ${receiptNumber}`,
    `Tisch ${int(1, 40)}      Bedienung: ${pick(['Anna', 'Sepp', 'Lena', 'Murat'])}`,
    `${dateToken}   ${time} Uhr`,
    rule(),
    ...lines.map((l) => line(`${l.quantity}x ${l.description}`, de(l.amountCents))),
    rule(),
    ...(tipCents === null ? [] : [line('Zwischensumme', de(items)), line('Trinkgeld', de(tipCents))]),
    line('Gesamtbetrag EUR', de(totalCentsOf(receipt))),
    ...(paymentMethod === null ? [] : [paymentMethod === 'cash' ? 'Bezahlt: Bar' : 'Bezahlt: EC-Karte']),
    '',
    `Im Betrag enthaltene MwSt ${rate} %: ${de(includedTaxCents)}`,
    centre('Vielen Dank für Ihren Besuch!'),
    '',
  ].join('\n');
  return { receipt, text, dateToken, decimalComma: true };
}

const FUELS: [string, number][] = [
  ['Super E10', 1789],
  ['Super E5', 1849],
  ['Diesel', 1699],
  ['Super Plus', 1959],
];
const SHOP_EXTRAS: Good[] = [
  { description: 'Scheibenreiniger 1 l', cents: 499, reduced: false },
  { description: 'Kaffee to go', cents: 250, reduced: true },
  { description: 'Laugenbrezel', cents: 129, reduced: true },
];

/** de-tankstelle: fuel receipt, litres x price per litre (three decimals), optional shop item, MwSt table. */
export function renderDeTankstelle(round: number): RenderedReceipt {
  const merchant = pick(FUEL_STATIONS[round === 2 ? 'AT' : 'DE']);
  const vat = VAT[merchant.country === 'AT' ? 'AT' : 'DE'];
  const [fuel = '', milli = 0] = pick(FUELS);
  const litres = int(1500, 6500) / 100;
  const lines: DrawnLine[] = [
    { description: fuel, quantity: litres, unitCents: milli, amountCents: Math.round((litres * milli) / 10), rate: vat.standard, unit: 'l' },
  ];
  if (chance(0.5)) {
    const extra = pick(SHOP_EXTRAS);
    lines.push({
      description: extra.description,
      quantity: 1,
      unitCents: extra.cents,
      amountCents: extra.cents,
      rate: extra.reduced ? vat.reduced : vat.standard,
      unit: null,
    });
  }
  const date = drawDate(chance(0.5));
  const time = drawTime(6, 22);
  const rows = vatBreakdown(lines);
  const paymentMethod = round === 0 ? 'cash' : pick(['card', 'card', 'cash'] as const);
  const receiptNumber = round === 1 ? null : receiptNo('', [4, 4]);
  const receipt = assemble({ merchant, receiptNumber, date, time, lines, includedTaxCents: vatTotal(rows), paymentMethod, language: 'de' });
  const codeOf = (rate: number) => (rate === vat.standard ? 'A' : 'B');
  const dateToken = formatDate(date, 'de-dot');
  const payment = paymentMethod === 'cash' ? 'Bar' : pick(['Kreditkarte VISA', 'girocard', 'Mastercard']);
  const text = [
    ...receiptHeader(merchant, [`${vatLabel(merchant)}: ${merchant.vatId}`]),
    rule(),
    ...(receiptNumber === null ? [] : [`Beleg-Nr. ${receiptNumber}`]),
    `Datum ${dateToken}  Uhrzeit ${formatReceiptTime(time, '24h-seconds', int(0, 59))}`,
    `Säule ${int(1, 12)}`,
    rule(),
    ...lines.flatMap((l) => itemLines(line(l.description, `${de(l.amountCents)} EUR ${codeOf(l.rate)}`), l, 'de', 'EUR', 3)),
    rule(),
    line('Gesamtbetrag', `${de(totalCentsOf(receipt))} EUR  `),
    `Zahlungsart: ${payment}`,
    '',
    ...vatTable(rows, codeOf, 'MwSt-Satz   Netto     MwSt    Brutto'),
    centre('Gute Fahrt!'),
    '',
  ].join('\n');
  return { receipt, text, dateToken, decimalComma: true };
}

/** de-ch: Swiss shop receipt in CHF, `1'234.50`, quantity lines, `inkl. MWST` per rate, TWINT as other payment. */
export function renderDeSwiss(round: number): RenderedReceipt {
  const merchant = pick(SHOPS.CH);
  const rateOf = (good: Good) => (good.reduced ? VAT.CH.reduced : VAT.CH.standard);
  const big = drawLines(
    SWISS_GOODS.filter((good) => good.cents >= 100000),
    1,
    1,
    0,
    rateOf,
  );
  const small = drawLines(
    SWISS_GOODS.filter((good) => good.cents < 100000),
    int(0, 3),
    2,
    0.4,
    rateOf,
  );
  const lines = [...big, ...small];
  const date = drawDate(chance(0.5));
  const time = round === 2 ? null : drawTime(9, 18);
  const rows = vatBreakdown(lines);
  const paymentMethod = round === 1 ? 'other' : pick(['cash', 'card'] as const);
  const receiptNumber = receiptNo(`${date.slice(2, 4)}-`, [4]);
  const receipt = assemble({
    merchant,
    receiptNumber,
    date,
    time,
    lines,
    subtotalPrinted: chance(0.5),
    includedTaxCents: vatTotal(rows),
    paymentMethod,
    language: 'de',
  });
  const ch = (cents: number) => amount(cents, 'ch');
  const total = totalCentsOf(receipt);
  const dateToken = formatDate(date, 'de-dot');
  const given = Math.ceil((total + 1) / 10000) * 10000;
  const payment =
    paymentMethod === 'cash'
      ? [line('Bar', ch(given)), line('Rückgeld', ch(given - total))]
      : [paymentMethod === 'card' ? `Bezahlt: Karte (${pick(['Mastercard', 'VISA', 'PostFinance Card'])})` : 'Bezahlt: TWINT'];
  const text = [
    ...receiptHeader(merchant, [`MWST-Nr. ${merchant.vatId}`]),
    rule(),
    `Quittung Nr. ${receiptNumber}`,
    `Datum: ${dateToken}${time === null ? '' : `  ${time}`}`,
    `Verkäufer: ${pick(['R. Keller', 'S. Brunner', 'M. Rossi'])}`,
    rule(),
    ...lines.flatMap((l) => itemLines(line(l.description, ch(l.amountCents)), l, 'ch', 'CHF')),
    rule(),
    ...(receipt.subtotal === null ? [] : [line('Zwischentotal', ch(sumCents(lines)))]),
    line('Total CHF', ch(total)),
    ...payment,
    '',
    ...rows.map((r) => line(`inkl. MWST ${formatQuantity(r.rate, 'en')}%`, `CHF ${ch(r.taxCents)}`)),
    centre('Danke für Ihren Einkauf'),
    '',
  ].join('\n');
  return { receipt, text, dateToken, decimalComma: false };
}
