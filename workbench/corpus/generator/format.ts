/**
 * The corpus generator's formatting: numbers, money and dates in each locale's style, and the plain
 * text tables the layouts are made of. Pure: no randomness here.
 */

/** `fr`: narrow no-break space thousands and decimal comma; `fr-space`: the same with a plain space. */
export type NumberStyle = 'en' | 'de' | 'ch' | 'fr' | 'fr-space';

export function groupThousands(digits: string, separator: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, separator);
}

/** Formats a number with a fixed count of decimals in a locale's style. */
export function formatNumber(value: number, decimals: number, style: NumberStyle): string {
  const [whole = '0', fraction] = value.toFixed(decimals).split('.');
  const thousands = style === 'en' ? ',' : style === 'de' ? '.' : style === 'fr' ? '\u202f' : style === 'fr-space' ? ' ' : "'";
  const decimal = style === 'de' || style === 'fr' || style === 'fr-space' ? ',' : '.';
  return groupThousands(whole, thousands) + (fraction === undefined ? '' : decimal + fraction);
}

export function formatQuantity(value: number, style: NumberStyle): string {
  if (Number.isInteger(value)) return String(value);
  const decimals = Number.isInteger(value * 10) ? 1 : 2;
  return formatNumber(value, decimals, style);
}

export function formatRate(value: number, style: NumberStyle): string {
  return formatQuantity(value, style);
}

export const CURRENCY_SYMBOL: Record<string, string> = { USD: '$', EUR: '€', GBP: '£' };

export type MoneyStyle = 'symbol' | 'code-before' | 'code-after' | 'symbol-after' | 'plain';

export function formatMoney(value: number, currency: string, style: NumberStyle, moneyStyle: MoneyStyle): string {
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

export const MONTHS_EN = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
/** French month names, lower case as French writes them. */
export const MONTHS_FR = ['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre', 'décembre'];
export const MONTHS_DE = ['Januar', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember'];

export type DateStyle = 'iso' | 'en-long' | 'en-short' | 'uk-long' | 'dash-mon' | 'mdy' | 'dmy' | 'de-dot' | 'de-dot-short' | 'de-long' | 'fr-long';

export function formatDate(isoDate: string, style: DateStyle): string {
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
    case 'fr-long':
      return `${day === 1 ? '1er' : day} ${MONTHS_FR[month - 1] ?? ''} ${y}`;
  }
}

export function addDays(isoDate: string, days: number): string {
  const date = new Date(`${isoDate}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

/** Lays out rows as columns separated by at least two spaces; `right` marks right-aligned columns. */
export function columns(rows: string[][], right: boolean[], gap = 3): string[] {
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, col) => (right[col] ? cell.padStart(widths[col] ?? 0) : cell.padEnd(widths[col] ?? 0)))
      .join(' '.repeat(gap))
      .trimEnd(),
  );
}

/** Lays out rows as a pipe table with a dashed rule under the header. */
export function pipeTable(rows: string[][], right: boolean[], outerPipes: boolean): string[] {
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length))) ?? [];
  const line = (row: string[]) => {
    const inner = row.map((cell, col) => ` ${right[col] ? cell.padStart(widths[col] ?? 0) : cell.padEnd(widths[col] ?? 0)} `).join('|');
    return outerPipes ? `|${inner}|` : inner.slice(1).trimEnd();
  };
  const rule = widths.map((w) => '-'.repeat(w + 2)).join(outerPipes ? '|' : '+');
  const [header, ...body] = rows;
  return [line(header ?? []), outerPipes ? `|${rule}|` : rule.slice(1), ...body.map(line)];
}

/** One invoice line as a position table prints it. */
export interface PositionLine {
  description: string;
  quantity: number;
  unitPrice: number;
  amount: number;
}

/**
 * The Swiss position table: a pipe table with outer pipes of numbered positions, quantity, unit price and
 * amount in the `ch` style (`1'234.50`), under `headings` (five: position, description, quantity, price, amount).
 */
export function swissPositionTable(headings: readonly string[], lines: readonly PositionLine[]): string[] {
  const rows = [
    [...headings],
    ...lines.map((l, i) => [
      String(i + 1),
      l.description,
      formatQuantity(l.quantity, 'ch'),
      formatNumber(l.unitPrice, 2, 'ch'),
      formatNumber(l.amount, 2, 'ch'),
    ]),
  ];
  return pipeTable(rows, [true, false, true, true, true], true);
}

/** Right-aligns `label value` pairs under a table. */
export function totalsBlock(pairs: [string, string][], indent: number): string[] {
  const labelWidth = Math.max(...pairs.map(([label]) => label.length));
  const valueWidth = Math.max(...pairs.map(([, value]) => value.length));
  return pairs.map(([label, value]) => `${' '.repeat(indent)}${label.padEnd(labelWidth)}   ${value.padStart(valueWidth)}`);
}
