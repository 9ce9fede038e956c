/**
 * English receipt layouts: a US or UK supermarket till receipt (column-aligned items, `x2` quantities,
 * tax flags), a restaurant bill (quantity-first lines, sales tax or included VAT, tip), and a taxi trip
 * receipt (pickup and drop-off times as distractors).
 */
import { DISHES, GROCERIES, RESTAURANTS, SHOPS, TAXIS, US_SALES_TAX, type Merchant } from './catalogue.js';
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
  type DrawnLine,
  type RenderedReceipt,
  chance,
  int,
  pick,
  sample,
  addedSalesTax,
  includedVat,
} from './draw.js';
import { amount, centre, formatReceiptTime, line, rule, receiptHeader, minutesBefore } from './format.js';
import { addDays, formatDate, type DateStyle } from '../format.js';

const en = (cents: number): string => amount(cents, 'en');

function stateOf(merchant: Merchant): string {
  return /\b([A-Z]{2}) \d{5}\b/.exec(merchant.address.join(' '))?.[1] ?? 'NY';
}

function cardLine(brand: string): string {
  return `${brand} ****${int(1000, 9999)}`;
}

/** en-till: US (sales tax on `T` items, `$` or no symbol at all) or UK (`V` items, VAT included) supermarket receipt. */
export function renderEnTill(round: number): RenderedReceipt {
  const us = round % 2 === 0;
  const merchant = pick(SHOPS[us ? 'US' : 'GB']);
  const salesRate = us ? (US_SALES_TAX[stateOf(merchant)] ?? 0) : 0;
  const lines = drawLines(GROCERIES.en, int(3, 8), 3, 0.4, (good) => (good.reduced ? 0 : us ? salesRate : 20));
  const date = drawDate(round < 2 || chance(0.3));
  const time = drawTime(8, 21);
  const dateStyle: DateStyle = us ? (round === 0 ? 'mdy' : pick(['mdy', 'en-short'])) : round === 1 ? 'dmy' : pick(['dmy', 'uk-short']);
  const symbol = round === 0 ? '' : us ? '$' : '£';
  const taxable = sumCents(lines.filter((l) => l.rate > 0));
  const addedTaxCents = us && taxable > 0 && salesRate > 0 ? addedSalesTax(taxable, salesRate) : null;
  const includedTaxCents = !us && taxable > 0 ? includedVat(taxable, 20) : null;
  const paymentMethod = round === 3 ? 'other' : pick(['cash', 'card', 'card'] as const);
  const receiptNumber = round === 3 ? null : us ? receiptNo('', [3, 4]) : receiptNo('', [4, 4]);
  const receipt = assemble({
    merchant,
    receiptNumber,
    date,
    time,
    lines,
    subtotalPrinted: us || chance(0.5),
    addedTaxCents,
    includedTaxCents,
    paymentMethod,
    language: 'en',
  });
  const total = totalCentsOf(receipt);
  const dateToken = formatDate(date, dateStyle);
  const flag = us ? 'T' : 'V';
  const text = [
    ...receiptHeader(merchant, us ? [`Store #${String(int(1, 999)).padStart(4, '0')}`] : [`VAT No. ${merchant.vatId}`]),
    rule(),
    `${dateToken}  ${formatReceiptTime(time, us ? 'ampm' : '24h')}${us ? '' : `   Till ${int(1, 9)}`}`,
    ...(receiptNumber === null ? [] : [us ? `Trans #: ${receiptNumber}` : `Receipt No: ${receiptNumber}`]),
    `Cashier: ${pick(['Dana', 'Luis', 'Priya', 'Tom', 'Grace'])}   Lane ${int(1, 12)}`,
    rule(),
    ...lines.map((l) => line(`${l.description}${l.quantity > 1 ? ` x${l.quantity}` : ''}`, `${en(l.amountCents)} ${l.rate > 0 ? flag : ' '}`)),
    rule(),
    ...(receipt.subtotal === null ? [] : [line('SUBTOTAL', `${en(sumCents(lines))}  `)]),
    ...(addedTaxCents === null ? [] : [line(`TAX ${salesRate}%`, `${en(addedTaxCents)}  `)]),
    line('TOTAL', `${symbol}${en(total)}  `),
    ...tillPayment(paymentMethod, total, symbol, us),
    ...(includedTaxCents === null ? [] : ['', line('VAT 20% included', `${symbol}${en(includedTaxCents)}  `)]),
    '',
    ...(us ? [`Total items: ${lines.reduce((n, l) => n + l.quantity, 0)}`, `Returns accepted until ${formatDate(addDays(date, 30), dateStyle)}`] : []),
    centre(us ? 'THANK YOU FOR SHOPPING WITH US' : 'Thank you for shopping with us'),
    '',
  ].join('\n');
  return { receipt, text, dateToken, decimalComma: false };
}

function tillPayment(method: 'cash' | 'card' | 'other', total: number, symbol: string, us: boolean): string[] {
  if (method === 'cash') {
    const given = cashGiven(total);
    return [line('CASH', `${symbol}${en(given)}  `), line(us ? 'CHANGE' : 'CHANGE DUE', `${symbol}${en(given - total)}  `)];
  }
  if (method === 'card') return [line(us ? cardLine('VISA') : 'CONTACTLESS DEBIT', `${symbol}${en(total)}  `)];
  return [line(us ? 'GIFT CARD' : 'GIFT VOUCHER', `${symbol}${en(total)}  `)];
}

/** en-restaurant: US bill (sales tax, tip, suggested gratuities) or UK bill (VAT included, gratuity). */
export function renderEnRestaurant(round: number): RenderedReceipt {
  const us = round % 2 === 0;
  const merchant = pick(RESTAURANTS[us ? 'US' : 'GB']);
  const salesRate = us ? (US_SALES_TAX[stateOf(merchant)] ?? 0) : 20;
  const lines = drawLines(DISHES.en, int(2, 6), 3, 0.35, () => salesRate);
  const date = drawDate(round < 2 || chance(0.3));
  const time = drawTime(12, 22);
  const dateStyle: DateStyle = us ? 'mdy' : round === 1 ? 'dmy' : 'uk-short';
  const items = sumCents(lines);
  const tipCents = round === 2 ? null : drawTip(items);
  const paymentMethod = tipCents === null ? 'cash' : pick(['card', 'card', 'cash'] as const);
  const receiptNumber = receiptNo('', [4]);
  const addedTaxCents = us ? addedSalesTax(items, salesRate) : null;
  const includedTaxCents = us ? null : includedVat(items, 20);
  const receipt = assemble({
    merchant,
    receiptNumber,
    date,
    time,
    lines,
    subtotalPrinted: us || chance(0.6),
    addedTaxCents,
    includedTaxCents,
    tipCents,
    paymentMethod,
    language: 'en',
  });
  const s = us ? '$' : '£';
  const total = totalCentsOf(receipt);
  const dateToken = formatDate(date, dateStyle);
  const server = pick(['Maria', 'Jake', 'Aisha', 'Ben']);
  const table = int(1, 30);
  const taxBase = items + (addedTaxCents ?? 0);
  const text = [
    ...receiptHeader(merchant, us ? [] : [`VAT Reg No: ${merchant.vatId}`]),
    rule('='),
    us ? `Server: ${server}        Table ${table}` : `Bill No. ${receiptNumber}    Table ${table}`,
    us ? `Check #${receiptNumber}         Guests ${int(1, 6)}` : `Served by ${server}`,
    `${dateToken} ${formatReceiptTime(time, us ? 'ampm' : '24h')}`,
    rule(),
    ...lines.map((l) => line(`${l.quantity}  ${l.description}`, en(l.amountCents))),
    rule(),
    ...(receipt.subtotal === null ? [] : [line(us ? 'Subtotal' : 'Sub-total', `${s}${en(items)}`)]),
    ...(addedTaxCents === null ? [] : [line(`Tax ${salesRate}%`, `${s}${en(addedTaxCents)}`)]),
    ...(tipCents === null ? [] : [line(us ? 'Tip' : 'Gratuity', `${s}${en(tipCents)}`)]),
    line('Total', `${s}${en(total)}`),
    ...(includedTaxCents === null ? [] : [`Includes VAT @ 20%: ${s}${en(includedTaxCents)}`]),
    paymentMethod === 'cash' ? 'Paid: Cash' : `Paid: ${cardLine(pick(['Mastercard', 'VISA', 'Amex']))}`,
    '',
    ...(us ? [`Suggested gratuity: 18% = ${s}${en(Math.round(taxBase * 0.18))}, 20% = ${s}${en(Math.round(taxBase * 0.2))}`] : []),
    centre('Thank you!'),
    '',
  ].join('\n');
  return { receipt, text, dateToken, decimalComma: false };
}

/** en-taxi: US or UK taxi trip receipt with fare lines, tip, and pickup/drop-off times that are not the receipt time. */
export function renderEnTaxi(round: number): RenderedReceipt {
  const us = round % 2 === 0;
  const merchant = pick(TAXIS[us ? 'US' : 'GB']);
  const fare = int(900, 6500);
  const extras: [string, number][] = us
    ? [
        ['Tolls', pick([694, 1150])],
        ['Airport access fee', 500],
        ['Congestion surcharge', 250],
      ]
    : [
        ['Waiting time', int(100, 600)],
        ['Booking fee', 150],
      ];
  const lines: DrawnLine[] = [
    { description: 'Fare', quantity: 1, unitCents: fare, amountCents: fare, rate: 0, unit: null },
    ...extras
      .filter(() => chance(0.45))
      .map(([description, cents]) => ({ description, quantity: 1, unitCents: cents, amountCents: cents, rate: 0, unit: null })),
  ];
  const date = drawDate(round < 2 || chance(0.3));
  const time = drawTime(6, 23);
  const dateStyle: DateStyle = us ? 'mdy' : round === 1 ? 'dmy' : 'uk-short';
  const tipCents = chance(0.75) ? drawTip(sumCents(lines)) : null;
  const paymentMethod = round === 2 ? 'other' : pick(['cash', 'card'] as const);
  const receiptNumber = round === 1 ? null : receiptNo('T-', [5]);
  const receipt = assemble({ merchant, receiptNumber, date, time, lines, tipCents, paymentMethod, language: 'en' });
  const s = us ? '$' : '£';
  const timeStyle = us ? 'ampm' : '24h';
  const duration = int(8, 45);
  const dateToken = formatDate(date, dateStyle);
  const city = merchant.address.join(' ');
  const places = city.includes('New York')
    ? ['W 34th St & 8th Ave', 'JFK Terminal 4', 'Union Square', 'Grand Central']
    : city.includes('San Francisco')
      ? ['Pier 39', 'SFO Intl Terminal 2', 'Union Square', 'Mission Dolores']
      : ['Liverpool Street Stn', 'Heathrow T5', 'Camden Lock', 'Kings Cross'];
  const [from = '', to = ''] = sample(places, 2);
  const text = [
    ...receiptHeader(merchant, [us ? `Medallion ${int(1, 9)}${pick(['J', 'K', 'T'])}${int(10, 99)}` : `Licence no. ${int(10000, 99999)}`]),
    rule(),
    `Date: ${dateToken}   Time: ${formatReceiptTime(time, timeStyle)}`,
    ...(receiptNumber === null ? [] : [`Receipt no. ${receiptNumber}`]),
    `Pickup    ${formatReceiptTime(minutesBefore(time, duration), timeStyle)}  ${from}`,
    `Drop-off  ${formatReceiptTime(time, timeStyle)}  ${to}`,
    `Distance  ${(duration * 0.6).toFixed(1)} mi`,
    rule(),
    ...lines.map((l) => line(l.description, en(l.amountCents))),
    rule(),
    ...(tipCents === null ? [] : [line('Tip', en(tipCents))]),
    line('Total', `${s}${en(totalCentsOf(receipt))}`),
    paymentMethod === 'cash' ? 'Paid in cash' : paymentMethod === 'card' ? `Paid by card ${cardLine('VISA')}` : 'Paid in app',
    '',
    centre('Thank you for riding with us'),
    '',
  ].join('\n');
  return { receipt, text, dateToken, decimalComma: false };
}
