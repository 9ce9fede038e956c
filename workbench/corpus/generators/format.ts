/**
 * What both corpus generators print the same way: numbers in each locale's style (`1,234.56`,
 * `1.234,56`, `1'234.56`, `1 234,56`), dates in the styles invoices and receipts print, and day
 * arithmetic. Pure: no randomness here.
 */

/** `fr`: narrow no-break space thousands and decimal comma; `fr-space`: the same with a plain space. */
export type NumberStyle = 'en' | 'de' | 'ch' | 'fr' | 'fr-space';

function groupThousands(digits: string, separator: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, separator);
}

/** Formats a number with a fixed count of decimals in a locale's style. */
export function formatNumber(value: number, decimals: number, style: NumberStyle): string {
  const [whole = '0', fraction] = value.toFixed(decimals).split('.');
  const thousands = style === 'en' ? ',' : style === 'de' ? '.' : style === 'fr' ? '\u202f' : style === 'fr-space' ? ' ' : "'";
  const decimal = style === 'de' || style === 'fr' || style === 'fr-space' ? ',' : '.';
  return groupThousands(whole, thousands) + (fraction === undefined ? '' : decimal + fraction);
}

/** A quantity as printed: whole numbers as they are, else one or two decimals. */
export function formatQuantity(value: number, style: NumberStyle): string {
  if (Number.isInteger(value)) return String(value);
  const decimals = Number.isInteger(value * 10) ? 1 : 2;
  return formatNumber(value, decimals, style);
}

const MONTHS_EN = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
/** French month names, lower case as French writes them. */
const MONTHS_FR = ['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre', 'décembre'];
const MONTHS_DE = ['Januar', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember'];
const WEEKDAYS_FR = ['dimanche', 'lundi', 'mardi', 'mercredi', 'jeudi', 'vendredi', 'samedi'];

/**
 * The date styles of the layouts, shown for 2026-03-04: `iso` 2026-03-04, `en-long` March 4, 2026,
 * `en-short` Mar 4, 2026, `uk-long` 4 March 2026, `uk-short` 4 Mar 2026, `dash-mon` 04-Mar-2026,
 * `mdy` 03/04/2026, `dmy` 04/03/2026, `de-dot` 04.03.2026, `de-dot-short` 4.3.2026, `de-dot-yy` 04.03.26,
 * `de-long` 4. März 2026, `fr-long` 4 mars 2026 (the first of a month `1er`), `fr-weekday` mercredi 4 mars 2026.
 */
export type DateStyle =
  | 'iso'
  | 'en-long'
  | 'en-short'
  | 'uk-long'
  | 'uk-short'
  | 'dash-mon'
  | 'mdy'
  | 'dmy'
  | 'de-dot'
  | 'de-dot-short'
  | 'de-dot-yy'
  | 'de-long'
  | 'fr-long'
  | 'fr-weekday';

/** Formats an ISO date (`2026-03-04`) in one of the {@link DateStyle}s. */
export function formatDate(isoDate: string, style: DateStyle): string {
  const [y = '', m = '', d = ''] = isoDate.split('-');
  const month = Number(m);
  const day = Number(d);
  const en = MONTHS_EN[month - 1] ?? '';
  const frLong = `${day === 1 ? '1er' : day} ${MONTHS_FR[month - 1] ?? ''} ${y}`;
  switch (style) {
    case 'iso':
      return isoDate;
    case 'en-long':
      return `${en} ${day}, ${y}`;
    case 'en-short':
      return `${en.slice(0, 3)} ${day}, ${y}`;
    case 'uk-long':
      return `${day} ${en} ${y}`;
    case 'uk-short':
      return `${day} ${en.slice(0, 3)} ${y}`;
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
    case 'de-dot-yy':
      return `${d}.${m}.${y.slice(2)}`;
    case 'de-long':
      return `${day}. ${MONTHS_DE[month - 1] ?? ''} ${y}`;
    case 'fr-long':
      return frLong;
    case 'fr-weekday':
      return `${WEEKDAYS_FR[new Date(`${isoDate}T00:00:00Z`).getUTCDay()] ?? ''} ${frLong}`;
  }
}

/** The ISO date `days` after `isoDate` (before it when negative). */
export function addDays(isoDate: string, days: number): string {
  const date = new Date(`${isoDate}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}
