/**
 * How the invoice layouts print money, rates and tables: amounts with a currency symbol or code, plain
 * text column tables and pipe tables, the Swiss position table, and right-aligned totals. Pure: no
 * randomness here.
 */
import { formatNumber, formatQuantity, type NumberStyle } from '../format.js';

/** A tax rate as printed (`19`, `8.1`, `5,5`). */
export function formatRate(value: number, style: NumberStyle): string {
  return formatQuantity(value, style);
}

const CURRENCY_SYMBOL: Record<string, string> = { USD: '$', EUR: '€', GBP: '£' };

/** Where the currency goes: `symbol` $12.50, `code-before` USD 12.50, `code-after` 12.50 USD, `symbol-after` 12,50 €, `plain` no currency. */
export type MoneyStyle = 'symbol' | 'code-before' | 'code-after' | 'symbol-after' | 'plain';

/** An amount with two decimals and its currency in a {@link MoneyStyle} (a currency without a symbol prints its code). */
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
