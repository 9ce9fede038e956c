/**
 * The hard shapes read from a document's text, as both generators tag them: an ambiguous slashed date,
 * a currency printed or not; and what the evaluation generator checks before it writes a document, that
 * it has each hard shape it is tagged with (a long one is long, one without currency prints none, ...).
 */
import type { HardShape } from '../index.js';

/** A stated slashed-date convention (`DD/MM/YYYY`, `MM/DD/YYYY`, `JJ/MM/AAAA`, `TT.MM.JJJJ`). */
const STATED_CONVENTION = /(?:DD|MM|JJ|TT)\.?\/(?:MM|DD)\.?\/(?:YYYY|AAAA|JJJJ)/iu;
/** Any currency symbol or code a document could print. */
export const CURRENCY_MARKS = /[$€£¥]|\b(?:CHF|EUR|USD|GBP|SFr)\b|\bFr\./u;
const SLASHED_DATE = /(?<![\d/])(\d{1,2})\/(\d{1,2})\/(\d{4})(?![\d/])/gu;
const PAGE_MARK = /\b(?:Page\s+\d+\s+of\s+\d+|Seite\s+\d+\s+von\s+\d+|Page\s+\d+\/\d+)\b/u;

/** Whether the text has a slashed date that reads two ways (both parts at most 12, and different) and states no convention. */
export function hasAmbiguousSlashedDate(text: string): boolean {
  if (STATED_CONVENTION.test(text)) return false;
  for (const match of text.matchAll(SLASHED_DATE)) {
    const first = Number(match[1]);
    const second = Number(match[2]);
    if (first <= 12 && second <= 12 && first !== second) return true;
  }
  return false;
}

/** Every tagged shape the text does not show, as a message. */
export function shapeProblems(text: string, shapes: readonly HardShape[]): string[] {
  const problems: string[] = [];
  if (shapes.includes('long') && (text.length <= 8000 || !PAGE_MARK.test(text))) problems.push(`long but ${text.length} characters or no page marks`);
  if (shapes.includes('no-currency-symbol') && CURRENCY_MARKS.test(text)) problems.push(`no-currency-symbol but prints ${CURRENCY_MARKS.exec(text)?.[0]}`);
  if (shapes.includes('ambiguous-date') && !hasAmbiguousSlashedDate(text)) problems.push('ambiguous-date without an ambiguous slashed date');
  if (shapes.includes('decimal-comma') && !/\d,\d{2}(?![\d.,])/u.test(text)) problems.push('decimal-comma without a decimal comma');
  return problems;
}
