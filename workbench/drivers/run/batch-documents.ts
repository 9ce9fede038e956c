/**
 * The documents of a batch load: the corpus repeated (a local run's `--batch-jobs`), or the given ones,
 * split into batches of one schema and prompt version each.
 */
import type { DocumentInput } from '../../../lib/intake/producer.js';
import { corpusDocuments } from '../lanes.js';

/** The documents of the batch load: the corpus repeated up to `jobs`, with source ids of their own (no duplicate of a queue job). */
export function batchDocuments(jobs: number): DocumentInput[] {
  if (jobs <= 0) return [];
  return corpusDocuments(jobs).map((doc) => ({ ...doc, sourceId: `batch:${doc.sourceId}` }));
}

/**
 * A lane's documents split by schema and prompt version, in first-seen order: a batch holds one of each,
 * so a mixed load (the evaluation's invoices and receipts) becomes one batch per version.
 */
export function versionGroups(documents: readonly DocumentInput[]): Omit<DocumentInput, 'region'>[][] {
  const groups = new Map<string, Omit<DocumentInput, 'region'>[]>();
  for (const { region: _region, ...doc } of documents) {
    const key = `${doc.schemaVersion ?? ''}\n${doc.promptVersion ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), doc]);
  }
  return [...groups.values()];
}
