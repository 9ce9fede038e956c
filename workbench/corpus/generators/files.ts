/**
 * Writing generated corpus documents: each document's text and reviewed expected object side by side,
 * its manifest entry, and the manifest itself (sorted by id). Shared by the invoice, evaluation and
 * receipt generators, so every corpus folder has the same layout.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { CorpusLanguage, CorpusManifestEntry } from '../index.js';

/** One generated document, as written. */
export interface GeneratedDocument {
  /** Folder relative to the corpus root, e.g. `invoices/en`. */
  dir: string;
  id: string;
  language: CorpusLanguage;
  layout: string;
  schemaVersion: string;
  text: string;
  /** The expected object, written as pretty JSON. */
  expected: unknown;
}

/**
 * Writes `<dir>/<id>.txt` and `<dir>/<id>.expected.json` below `root` (creating `dir`) and returns the
 * document's manifest entry (without shapes or expected outcome).
 *
 * @param root the corpus folder, ending in `/`
 */
export function writeDocument(root: string, doc: GeneratedDocument): CorpusManifestEntry {
  const { dir, id } = doc;
  mkdirSync(`${root}${dir}`, { recursive: true });
  writeFileSync(`${root}${dir}/${id}.txt`, doc.text);
  writeFileSync(`${root}${dir}/${id}.expected.json`, `${JSON.stringify(doc.expected, null, 2)}\n`);
  return {
    id,
    language: doc.language,
    layout: doc.layout,
    sourceId: `ratelane-corpus:${dir}/${id}`,
    schemaVersion: doc.schemaVersion,
    file: `${dir}/${id}.txt`,
    expected: `${dir}/${id}.expected.json`,
  };
}

/** Sorts the manifest by id (in place) and writes it to `path` as pretty JSON. */
export function writeManifest(path: string, manifest: CorpusManifestEntry[]): void {
  manifest.sort((a, b) => a.id.localeCompare(b.id));
  writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
}
