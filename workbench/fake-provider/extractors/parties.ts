/**
 * The invoice extractor's parties: the seller and the buyer from labelled blocks, a letterhead or a
 * DIN-5008 sender line, with their countries (English, German and French country names) and VAT ids.
 */
import type { InvoiceV1 } from '../../../lib/contract/schemas/invoice-v1.js';
import { isBlank, LABELS, InvoiceExtractionError } from './text.js';

// ---------------------------------------------------------------------------------------------------------
// Parties

interface Block {
  /** Line indexes the block covers. */
  start: number;
  end: number;
  /** Text of the block, one entry per line (first column only). */
  lines: string[];
}

const firstColumn = (line: string): string => line.trim().split(/\s{3,}/)[0] ?? '';

function labelledBlock(lines: readonly string[], label: string, stopLabels: string): Block | null {
  const start = new RegExp(String.raw`^\s*(?:${label})\s*:\s*(.*)$`, 'iu');
  const stop = new RegExp(String.raw`^\s*(?:${stopLabels})\s*:`, 'iu');
  for (let i = 0; i < lines.length; i++) {
    const match = start.exec(lines[i] ?? '');
    if (match === null) continue;
    const blockLines: string[] = [];
    if ((match[1] ?? '').trim() !== '') blockLines.push(firstColumn(match[1] ?? ''));
    let end = i;
    for (let j = i + 1; j < lines.length; j++) {
      const line = lines[j] ?? '';
      if (isBlank(line) || stop.test(line)) break;
      blockLines.push(firstColumn(line));
      end = j;
    }
    return { start: i, end, lines: blockLines.filter((l) => l !== '') };
  }
  return null;
}

/** Index of a DIN-5008 sender line (`Name · Street · City`) near the top, or -1. */
function senderLineIndex(lines: readonly string[]): number {
  return lines.slice(0, 8).findIndex((line) => line.split(' · ').length >= 3);
}

function blockAfter(lines: readonly string[], index: number): Block | null {
  let start = index + 1;
  while (start < lines.length && isBlank(lines[start] ?? '')) start++;
  if (start >= lines.length) return null;
  let end = start;
  while (end + 1 < lines.length && !isBlank(lines[end + 1] ?? '')) end++;
  const blockLines = lines
    .slice(start, end + 1)
    .map(firstColumn)
    .filter((l) => l !== '');
  return { start, end, lines: blockLines };
}

const TITLE_LINE = /^\s*(?:TAX\s+)?(?:INVOICE|RECHNUNG|FACTURE)\s*$/iu;

function letterheadBlock(lines: readonly string[]): Block | null {
  let start = 0;
  while (start < lines.length && (isBlank(lines[start] ?? '') || TITLE_LINE.test(lines[start] ?? ''))) start++;
  return blockAfter(lines, start - 1);
}

/** Splits a one-line party (`Name, Street, City, Country`) into parts; other blocks stay line by line. */
function partyParts(block: Block): string[] {
  const [first = '', ...rest] = block.lines;
  const commaParts = first.split(/,\s+/);
  return commaParts.length >= 3 ? [...commaParts, ...rest] : block.lines;
}

const COUNTRY_NAMES: [RegExp, string][] = [
  [/\b(?:United States(?: of America)?|USA|Vereinigte Staaten)\b/u, 'US'],
  [/\b(?:United Kingdom|Vereinigtes Königreich|Great Britain|England|Scotland|Wales)\b/u, 'GB'],
  [/\b(?:Germany|Deutschland)\b/u, 'DE'],
  [/\b(?:Austria|Österreich)\b/u, 'AT'],
  [/\b(?:Switzerland|Schweiz|Suisse|Svizzera)\b/u, 'CH'],
  [/\b(?:Ireland|Irland)\b/u, 'IE'],
  [/\b(?:France|Frankreich)\b/u, 'FR'],
  [/\b(?:Netherlands|Niederlande)\b/u, 'NL'],
  [/\b(?:Belgium|Belgien)\b/u, 'BE'],
  [/\b(?:Italy|Italien)\b/u, 'IT'],
  [/\b(?:Spain|Spanien)\b/u, 'ES'],
  [/\b(?:Belgique|België)(?![\p{L}])/u, 'BE'],
  [/\b(?:Luxembourg|Luxemburg)\b/u, 'LU'],
  [/\bAllemagne\b/u, 'DE'],
  [/\bAutriche\b/u, 'AT'],
  [/\bRoyaume-Uni\b/u, 'GB'],
  [/\bPays-Bas\b/u, 'NL'],
  [/(?<![\p{L}])États-Unis\b/u, 'US'],
];

const US_STATE_ZIP = /\b[A-Z]{2} \d{5}(?:-\d{4})?\b/u;

function countryFromVatId(vatId: string): string | null {
  if (vatId.startsWith('CHE')) return 'CH';
  const prefix = vatId.slice(0, 2);
  if (prefix === 'EL') return 'GR';
  if (prefix === 'XI') return 'GB';
  return /^[A-Z]{2}$/.test(prefix) ? prefix : null;
}

function countryOf(addressParts: readonly string[], vatId: string | null): string | null {
  for (const part of addressParts) {
    for (const [pattern, code] of COUNTRY_NAMES) if (pattern.test(part)) return code;
  }
  if (vatId !== null) {
    const fromVat = countryFromVatId(vatId);
    if (fromVat !== null) return fromVat;
  }
  return addressParts.some((part) => US_STATE_ZIP.test(part)) ? 'US' : null;
}

const VAT_REFERENCE =
  /(?:^|[\s|·,;(])((?:Ihre|Your|Customer|Buyer|Votre)\s+)?(?:VAT(?:\s+Reg\.?)?(?:\s+(?:ID|No\.?|number|registration\s+number))?|USt-?Id(?:Nr)?\.?|UID(?:-Nr\.?)?|MWST-Nr\.?|N[°º]\s*(?:de\s+)?TVA(?:\s+intracommunautaire)?|TVA\s+intracommunautaire|N[°º]\s*IDE|IDE)\s*:?\s*(CHE-\d{3}\.\d{3}\.\d{3}(?:\s(?:MWST|TVA|IVA))?|[A-Z]{2}U?\d[0-9A-Z]{1,12})(?![0-9A-Za-z])/u;

interface VatReference {
  line: number;
  vatId: string;
  addressedToReader: boolean;
}

function vatReferences(lines: readonly string[]): VatReference[] {
  const found: VatReference[] = [];
  lines.forEach((line, index) => {
    const match = VAT_REFERENCE.exec(line);
    if (match?.[2] !== undefined) found.push({ line: index, vatId: match[2], addressedToReader: match[1] !== undefined });
  });
  return found;
}

export interface Parties {
  seller: InvoiceV1['seller'];
  buyer: InvoiceV1['buyer'];
}

export function extractParties(lines: readonly string[]): Parties {
  const stops = `${LABELS.seller}|${LABELS.buyer}`;
  let sellerBlock = labelledBlock(lines, LABELS.seller, stops);
  let buyerBlock = labelledBlock(lines, LABELS.buyer, stops);
  let sellerParts: string[] | null = null;
  const sender = senderLineIndex(lines);
  if (sellerBlock === null && sender >= 0) {
    sellerParts = (lines[sender] ?? '').split(' · ').map((part) => part.trim());
    sellerBlock = { start: sender, end: sender, lines: sellerParts };
    buyerBlock ??= blockAfter(lines, sender);
  }
  sellerBlock ??= letterheadBlock(lines);
  if (sellerBlock === null) throw new InvoiceExtractionError('seller');
  if (buyerBlock === null) throw new InvoiceExtractionError('buyer');
  const sellerLines: Block = sellerBlock;
  const buyerLines: Block = buyerBlock;
  sellerParts ??= partyParts(sellerLines);
  const buyerParts = partyParts(buyerLines);

  const inside = (block: Block, line: number) => line >= block.start && line <= block.end;
  const references = vatReferences(lines);
  const buyerVat = references.find((ref) => inside(buyerLines, ref.line) || ref.addressedToReader)?.vatId ?? null;
  const sellerVat =
    references.find((ref) => inside(sellerLines, ref.line) && !ref.addressedToReader)?.vatId ??
    references.find((ref) => !inside(buyerLines, ref.line) && !ref.addressedToReader)?.vatId ??
    null;

  const [sellerName, ...sellerAddress] = sellerParts;
  const [buyerName] = buyerParts;
  if (!sellerName) throw new InvoiceExtractionError('seller.name');
  if (!buyerName) throw new InvoiceExtractionError('buyer.name');
  const country = countryOf(sellerAddress, sellerVat);
  if (country === null) throw new InvoiceExtractionError('seller.country');
  return {
    seller: { name: sellerName, vatId: sellerVat, country },
    buyer: { name: buyerName, vatId: buyerVat },
  };
}
