/**
 * Loader for the sample invoice corpus: the documents in `invoices/<language>/` and their expected
 * `invoice@1` objects, as listed in `manifest.json`. Paths resolve relative to this module.
 */
import { readFileSync } from 'node:fs';
import type { InvoiceV1 } from '../lib/contract/schemas/invoice-v1.js';

/** One manifest entry; `file` and `expected` are paths relative to the corpus folder. */
export interface CorpusManifestEntry {
  id: string;
  language: 'en' | 'de';
  /** Which template rendered the document (for per-layout evaluation). */
  layout: string;
  sourceId: string;
  schemaVersion: string;
  file: string;
  expected: string;
}

/** One corpus document with the object a correct extraction returns. */
export interface CorpusDocument {
  id: string;
  language: 'en' | 'de';
  layout: string;
  sourceId: string;
  schemaVersion: string;
  text: string;
  expected: InvoiceV1;
}

const CORPUS_ROOT = new URL('./', import.meta.url);

/** Reads `manifest.json`. */
export function loadCorpusManifest(): CorpusManifestEntry[] {
  return JSON.parse(readFileSync(new URL('manifest.json', CORPUS_ROOT), 'utf8')) as CorpusManifestEntry[];
}

/** Reads every document of the manifest with its text and expected object (expected objects are not validated here). */
export function loadCorpus(): CorpusDocument[] {
  return loadCorpusManifest().map((entry) => ({
    id: entry.id,
    language: entry.language,
    layout: entry.layout,
    sourceId: entry.sourceId,
    schemaVersion: entry.schemaVersion,
    text: readFileSync(new URL(entry.file, CORPUS_ROOT), 'utf8'),
    expected: JSON.parse(readFileSync(new URL(entry.expected, CORPUS_ROOT), 'utf8')) as InvoiceV1,
  }));
}
