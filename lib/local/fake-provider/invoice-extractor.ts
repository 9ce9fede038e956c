/**
 * A deterministic, rule-based invoice parser: the "model" behind the local fake provider. It reads labels
 * in English and German, three number styles (1,234.56 / 1.234,56 / 1'234.56), ISO, German, English and
 * slashed dates (by the convention the document states), party blocks (labelled, letterhead, or a
 * DIN-5008 sender line), and line items from column tables, pipe tables, `qty x item @ price = amount`
 * lines and two-line position blocks. It knows nothing of the corpus: it only reads the text it is given.
 */
import type { InvoiceV1 } from '../../contract/schemas/invoice-v1.js';
import { extractParties } from './extract-parties.js';
import { extractCurrency, extractTotals, positionBlockItems, tableItems, timesLineItems } from './extract-items.js';
import { firstIdentifier, firstLabelledDate, InvoiceExtractionError, LABELS, placeDateLine, type Language, type SlashConvention } from './extract-text.js';

export { InvoiceExtractionError, parseLocaleNumber } from './extract-text.js';

// ---------------------------------------------------------------------------------------------------------
// Language and conventions

const GERMAN_WORDS =
  /\b(?:Rechnung|Rechnungs\w*|Datum|Menge|Betrag|Summe|Zwischensumme|zahlbar|Bezeichnung|Einzelpreis|Kunde|Gesamtbetrag|MwSt|USt|Umsatzsteuer|Sehr geehrte|Mit freundlichen)\b/giu;
const ENGLISH_WORDS = /\b(?:Invoice|Date|Due|Total|Subtotal|Amount|Description|Qty|Quantity|Price|Bill to|Customer|Payment|Tax|VAT)\b/giu;

function detectLanguage(text: string): Language {
  const german = text.match(GERMAN_WORDS)?.length ?? 0;
  const english = text.match(ENGLISH_WORDS)?.length ?? 0;
  return german > english ? 'de' : 'en';
}

function slashConvention(text: string, language: Language, currency: string | null): SlashConvention {
  if (/DD\/MM\/YYYY|TT\.?\/MM\.?\/JJJJ/iu.test(text)) return 'dmy';
  if (/MM\/DD\/YYYY/iu.test(text)) return 'mdy';
  return language === 'en' && currency === 'USD' ? 'mdy' : 'dmy';
}

// ---------------------------------------------------------------------------------------------------------

/**
 * Extracts an `invoice@1` object from invoice text by rules alone (no model, no lookup).
 * @throws {InvoiceExtractionError} when a required field cannot be found
 */
export function extractInvoice(text: string): InvoiceV1 {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(/\s+$/u, ''));
  const language = detectLanguage(text);
  const totals = extractTotals(lines, language);
  const currency = extractCurrency(lines, totals.totalLine);
  const convention = slashConvention(text, language, currency);

  const invoiceNumber = firstIdentifier(lines, LABELS.invoiceNumber);
  if (invoiceNumber === null) throw new InvoiceExtractionError('invoiceNumber');
  const issueDate = firstLabelledDate(lines, LABELS.issueDate, convention) ?? placeDateLine(lines, convention);
  if (issueDate === null) throw new InvoiceExtractionError('issueDate');
  const dueDate = firstLabelledDate(lines, LABELS.dueDate, convention);
  const purchaseOrder = firstIdentifier(lines, LABELS.purchaseOrder);
  const { seller, buyer } = extractParties(lines);
  const lineItems = tableItems(lines, language) ?? timesLineItems(lines, language) ?? positionBlockItems(lines, language);
  if (lineItems === null) throw new InvoiceExtractionError('lineItems');

  return {
    invoiceNumber,
    issueDate,
    dueDate,
    currency,
    seller,
    buyer,
    lineItems,
    subtotal: totals.subtotal,
    taxRate: totals.taxRate,
    taxAmount: totals.taxAmount,
    total: totals.total,
    purchaseOrder,
    language,
  };
}
