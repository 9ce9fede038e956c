/**
 * A deterministic, rule-based invoice parser: the "model" behind the local fake provider. It reads labels
 * in English, German and French, four number styles (1,234.56 / 1.234,56 / 1'234.56 / 1 234,56, a lone
 * `1,250` by the document's decimal mark), ISO, German, English, French and slashed dates (by the
 * convention the document states, else the seller country's), party blocks (labelled, letterhead, or a
 * DIN-5008 sender line), line items from column and pipe tables (also across pages), `qty x item @ price =
 * amount` lines and two-line position blocks, and the printed totals as printed. With no currency printed,
 * the currency is the seller country's. It knows nothing of the corpus: it only reads the text it is given.
 */
import type { InvoiceV1 } from '../../../lib/contract/schemas/invoice-v1.js';
import { extractParties } from './parties.js';
import { extractCurrency, extractTotals, positionBlockItems, tableItems, timesLineItems } from './items.js';
import {
  detectDecimalMark,
  firstIdentifier,
  firstLabelledDate,
  InvoiceExtractionError,
  LABELS,
  placeDateLine,
  type Language,
  type SlashConvention,
} from './text.js';

export { InvoiceExtractionError, parseLocaleNumber } from './text.js';

// ---------------------------------------------------------------------------------------------------------
// Language and conventions

const GERMAN_WORDS =
  /\b(?:Rechnung|Rechnungs\w*|Datum|Menge|Betrag|Summe|Zwischensumme|zahlbar|Bezeichnung|Einzelpreis|Kunde|Gesamtbetrag|MwSt|USt|Umsatzsteuer|Sehr geehrte|Mit freundlichen)\b/giu;
const ENGLISH_WORDS = /\b(?:Invoice|Date|Due|Total|Subtotal|Amount|Description|Qty|Quantity|Price|Bill to|Customer|Payment|Tax|VAT)\b/giu;

const FRENCH_WORDS =
  /(?<![\p{L}])(?:Facture|facturé|TVA|HT|TTC|HTVA|Désignation|Qté|Quantité|Prix|Montant|Échéance|Règlement|Commande|Fournisseur|Madame|Monsieur|Veuillez|Merci|paiement|pénalités|de|du|des|le|la|les|et|au|aux)(?![\p{L}])/giu;

function detectLanguage(text: string): Language {
  const german = text.match(GERMAN_WORDS)?.length ?? 0;
  const english = text.match(ENGLISH_WORDS)?.length ?? 0;
  const french = text.match(FRENCH_WORDS)?.length ?? 0;
  if (french > english && french > german) return 'fr';
  return german > english ? 'de' : 'en';
}

/**
 * How slashed dates read: the convention the document states, else the seller country's (a US seller
 * writes month first, every other country day first).
 */
function slashConvention(text: string, sellerCountry: string): SlashConvention {
  if (/DD\/MM\/YYYY|TT\.?\/MM\.?\/JJJJ|JJ\/MM\/AAAA/iu.test(text)) return 'dmy';
  if (/MM\/DD\/YYYY/iu.test(text)) return 'mdy';
  return sellerCountry === 'US' ? 'mdy' : 'dmy';
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
  const mark = detectDecimalMark(text, language);
  const totals = extractTotals(lines, mark);
  const { seller, buyer } = extractParties(lines);
  const currency = extractCurrency(lines, totals.totalLine, seller.country);
  const convention = slashConvention(text, seller.country);

  const invoiceNumber = firstIdentifier(lines, LABELS.invoiceNumber);
  if (invoiceNumber === null) throw new InvoiceExtractionError('invoiceNumber');
  const issueDate = firstLabelledDate(lines, LABELS.issueDate, convention) ?? placeDateLine(lines, convention);
  if (issueDate === null) throw new InvoiceExtractionError('issueDate');
  const dueDate = firstLabelledDate(lines, LABELS.dueDate, convention);
  const purchaseOrder = firstIdentifier(lines, LABELS.purchaseOrder);
  const lineItems = tableItems(lines, mark) ?? timesLineItems(lines, mark) ?? positionBlockItems(lines, mark);
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
