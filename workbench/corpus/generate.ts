/**
 * Generates the sample invoice corpus: expected `invoice@1` objects drawn with a seeded PRNG, each rendered
 * to plain text through one of several layouts per language. Deterministic: same seed, same bytes.
 * Usage: npx tsx workbench/corpus/generate.ts
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InvoiceV1, invoiceV1DomainRules } from '../../lib/contract/schemas/invoice-v1.js';
import type { CorpusManifestEntry } from './index.js';
import { writeDocument, writeManifest } from './generators/files.js';
import type { Layout } from './generators/invoices/draw.js';
import { renderDeAgb, renderDeDin, renderDeLabelled, renderDeSwiss } from './generators/invoices/layouts-de.js';
import { renderEnClassic, renderEnCompact, renderEnKeyValue, renderEnUkLong } from './generators/invoices/layouts-en.js';

const DOCS_PER_LAYOUT = 8;
const SCHEMA_VERSION = 'invoice@1';

const LAYOUTS: Layout[] = [
  { name: 'en-classic', language: 'en', render: renderEnClassic },
  { name: 'en-compact', language: 'en', render: renderEnCompact },
  { name: 'en-uk-long', language: 'en', render: renderEnUkLong },
  { name: 'en-keyvalue', language: 'en', render: renderEnKeyValue },
  { name: 'de-din', language: 'de', render: renderDeDin },
  { name: 'de-labelled', language: 'de', render: renderDeLabelled },
  { name: 'de-ch', language: 'de', render: renderDeSwiss },
  { name: 'de-agb', language: 'de', render: renderDeAgb },
];

// ---------------------------------------------------------------------------------------------------------
// Output

function main(): void {
  const root = fileURLToPath(new URL('.', import.meta.url));
  rmSync(`${root}invoices`, { recursive: true, force: true });
  const counters: Record<string, number> = { en: 0, de: 0 };
  const manifest: CorpusManifestEntry[] = [];
  for (let round = 0; round < DOCS_PER_LAYOUT; round++) {
    for (const layout of LAYOUTS) {
      const { invoice, text } = layout.render(round);
      const parsed = InvoiceV1.parse(invoice);
      const violations = invoiceV1DomainRules(parsed);
      if (violations.length > 0) throw new Error(`generated invoice breaks rules: ${JSON.stringify(violations)}`);
      counters[layout.language] = (counters[layout.language] ?? 0) + 1;
      const id = `${layout.language}-${String(counters[layout.language]).padStart(3, '0')}`;
      const dir = `invoices/${layout.language}`;
      manifest.push(writeDocument(root, { dir, id, language: layout.language, layout: layout.name, schemaVersion: SCHEMA_VERSION, text, expected: parsed }));
    }
  }
  writeManifest(`${root}manifest.json`, manifest);
  console.log(`wrote ${manifest.length} documents (${counters.en} en, ${counters.de} de)`);
}

main();
