/**
 * Loader for the corpus: the sample invoices (`manifest.json`: the clean English and German invoices the
 * local run, soak and bench submit) and the evaluation additions (`eval-manifest.json`: French invoices
 * and invoices with hard shapes; `receipts/manifest.json`: the `receipt@1` documents). Every document
 * comes with its reviewed expected object. Paths resolve relative to this module.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { InvoiceV1 } from '../../lib/contract/schemas/invoice-v1.js';

/** The languages of the corpus. */
export type CorpusLanguage = 'en' | 'de' | 'fr';

/**
 * The hard shapes a document can have (tags of the reviewed corpus, for reading a report; the fake
 * provider never sees them):
 * - `ambiguous-date`: a slashed date such as 03/04/2026 with no stated convention;
 * - `decimal-comma`: amounts printed with a decimal comma;
 * - `missing-fields`: optional fields (due date, purchase order, VAT IDs) absent;
 * - `long`: several pages, beyond 8,000 characters;
 * - `no-currency-symbol`: no currency symbol or code anywhere in the document;
 * - `totals-disagree`: printed totals that disagree with the lines (expected outcome `needs_review`).
 */
export type HardShape = 'ambiguous-date' | 'decimal-comma' | 'missing-fields' | 'long' | 'no-currency-symbol' | 'totals-disagree';

/** One manifest entry; `file` and `expected` are paths relative to the corpus folder. */
export interface CorpusManifestEntry {
  id: string;
  language: CorpusLanguage;
  /** Which template rendered the document (for per-layout evaluation). */
  layout: string;
  sourceId: string;
  schemaVersion: string;
  file: string;
  expected: string;
  /** Hard shapes of the document (absent: none). */
  shapes?: HardShape[];
  /** How a correct pipeline ends the job (absent: `committed`). */
  expectedOutcome?: 'committed' | 'needs_review';
}

/** One corpus document with the object a correct extraction returns. */
export interface CorpusDocument<T = Record<string, unknown>> {
  id: string;
  language: CorpusLanguage;
  layout: string;
  sourceId: string;
  schemaVersion: string;
  text: string;
  /** The reviewed expected object (of `schemaVersion`). */
  expected: T;
  shapes: HardShape[];
  expectedOutcome: 'committed' | 'needs_review';
}

const CORPUS_ROOT = new URL('./', import.meta.url);

/** The manifests of the evaluation corpus, beside `manifest.json`. */
export const EVAL_MANIFESTS = ['eval-manifest.json', 'receipts/manifest.json'] as const;

function readManifest(path: string): CorpusManifestEntry[] {
  return JSON.parse(readFileSync(new URL(path, CORPUS_ROOT), 'utf8')) as CorpusManifestEntry[];
}

/** Reads `manifest.json` (the clean sample invoices). */
export function loadCorpusManifest(): CorpusManifestEntry[] {
  return readManifest('manifest.json');
}

function load<T>(entries: CorpusManifestEntry[]): CorpusDocument<T>[] {
  return entries.map((entry) => ({
    id: entry.id,
    language: entry.language,
    layout: entry.layout,
    sourceId: entry.sourceId,
    schemaVersion: entry.schemaVersion,
    text: readFileSync(new URL(entry.file, CORPUS_ROOT), 'utf8'),
    expected: JSON.parse(readFileSync(new URL(entry.expected, CORPUS_ROOT), 'utf8')) as T,
    shapes: entry.shapes ?? [],
    expectedOutcome: entry.expectedOutcome ?? 'committed',
  }));
}

/** Reads the clean sample invoices with their texts and expected objects (expected objects are not validated here). */
export function loadCorpus(): CorpusDocument<InvoiceV1>[] {
  return load<InvoiceV1>(loadCorpusManifest());
}

/** Reads the whole evaluation corpus: the sample invoices and every evaluation manifest that exists. */
export function loadEvalCorpus(): CorpusDocument[] {
  const extra = EVAL_MANIFESTS.filter((path) => existsSync(new URL(path, CORPUS_ROOT))).flatMap((path) => readManifest(path));
  return load<Record<string, unknown>>([...loadCorpusManifest(), ...extra]);
}
