/**
 * How the receipt layouts print: amounts from cents, right-aligned receipt lines at the receipt width,
 * the centred merchant head, the quantity lines under items, and times in the styles tills print.
 * Numbers and dates are printed as both generators print them (`../format.ts`). Pure: no randomness here.
 */
import { formatNumber, formatQuantity, type NumberStyle } from '../format.js';
import type { Merchant } from './catalogue.js';
import type { DrawnLine } from './draw.js';

/** Receipt width in characters. */
const WIDTH = 40;

/** A separator line of the receipt width. */
export const rule = (char = '-'): string => char.repeat(WIDTH);

/** An amount in cents, printed with two decimals in a locale's style (`1,234.56`, `1.234,56`, `1'234.56`). */
export function amount(cents: number, style: NumberStyle): string {
  return formatNumber(cents / 100, 2, style);
}

/** A number with a fixed count of decimals (unit prices per litre, weights). */
function decimals(value: number, count: number, style: NumberStyle): string {
  return formatNumber(value, count, style);
}

/** `label` on the left, `value` flush right at the receipt width (at least two spaces between). */
export function line(label: string, value: string, width = WIDTH): string {
  const gap = Math.max(2, width - label.length - value.length);
  return `${label}${' '.repeat(gap)}${value}`;
}

/** Text centred on the receipt width (left padding only). */
export function centre(text: string, width = WIDTH): string {
  return `${' '.repeat(Math.max(0, Math.floor((width - text.length) / 2)))}${text}`;
}

/** The centred head of a receipt: the merchant's name, address and phone, then `extra` lines (tax ids, till numbers). */
export function receiptHeader(merchant: Merchant, extra: readonly string[]): string[] {
  return [merchant.name, ...merchant.address, merchant.phone, ...extra].map((text) => centre(text));
}

/** The quantity line printed under an item: `2 x 1,29`, `0,752 kg x 1,99 EUR/kg`, `42,35 l x 1,789 EUR/l`. */
function quantityLine(l: DrawnLine, style: NumberStyle, currency: string, unitDecimals = 2): string | null {
  const per = `${currency === '' ? '' : ` ${currency}`}/${l.unit}`;
  if (l.unit !== null)
    return `  ${decimals(l.quantity, l.unit === 'kg' ? 3 : 2, style)} ${l.unit} x ${decimals(l.unitCents / 10 ** unitDecimals, unitDecimals, style)}${per}`;
  return l.quantity > 1 ? `  ${formatQuantity(l.quantity, style)} x ${amount(l.unitCents, style)}` : null;
}

/** An item's amount line, followed by its {@link quantityLine} when it has one. */
export function itemLines(amountLine: string, l: DrawnLine, style: NumberStyle, currency: string, unitDecimals = 2): string[] {
  const quantity = quantityLine(l, style, currency, unitDecimals);
  return quantity === null ? [amountLine] : [amountLine, quantity];
}

/** The time styles of the receipt layouts. */
export type ReceiptTimeStyle = '24h' | '24h-seconds' | 'ampm' | 'fr-h';

/** Formats `HH:MM` in a receipt time style; `seconds` fills the seconds some tills print. */
export function formatReceiptTime(time: string, style: ReceiptTimeStyle, seconds = 0): string {
  const [hh = '00', mm = '00'] = time.split(':');
  const hours = Number(hh);
  switch (style) {
    case '24h':
      return time;
    case '24h-seconds':
      return `${time}:${String(seconds).padStart(2, '0')}`;
    case 'ampm':
      return `${hours % 12 === 0 ? 12 : hours % 12}:${mm} ${hours < 12 ? 'AM' : 'PM'}`;
    case 'fr-h':
      return `${hh}h${mm}`;
  }
}

/** The time `minutes` before `HH:MM` on the same day, as `HH:MM` (a taxi's pickup before its drop-off). */
export function minutesBefore(time: string, minutes: number): string {
  const [h = 0, m = 0] = time.split(':').map(Number);
  const total = h * 60 + m - minutes;
  return `${String(Math.floor(total / 60)).padStart(2, '0')}:${String(total % 60).padStart(2, '0')}`;
}
