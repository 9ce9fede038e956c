/**
 * Generates the receipt corpus: expected `receipt@1` objects drawn with a seeded PRNG, each rendered to
 * plain text through one of several layouts per language. Deterministic: same seed, same bytes. It refuses
 * to write an expected object that fails the zod schema or the domain rules.
 * Usage: npx tsx workbench/corpus/generate-receipts.ts
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ReceiptV1, receiptV1DomainRules } from '../../lib/contract/schemas/receipt-v1.js';
import { writeDocument, writeManifest } from './generators/files.js';
import type { CorpusManifestEntry } from './index.js';
import type { ReceiptLayout } from './generators/receipts/draw.js';
import { renderDeKasse, renderDeRestaurant, renderDeSwiss, renderDeTankstelle } from './generators/receipts/layouts-de.js';
import { renderEnRestaurant, renderEnTaxi, renderEnTill } from './generators/receipts/layouts-en.js';
import { renderFrCaisse, renderFrRestaurant, renderFrTaxi } from './generators/receipts/layouts-fr.js';
import { shapesOf } from './generators/receipts/shapes.js';

const DOCS_PER_LAYOUT = 4;
const SCHEMA_VERSION = 'receipt@1';

/** Every receipt layout, in drawing order. */
export const RECEIPT_LAYOUTS: readonly ReceiptLayout[] = [
  { name: 'en-till', language: 'en', render: renderEnTill },
  { name: 'en-restaurant', language: 'en', render: renderEnRestaurant },
  { name: 'en-taxi', language: 'en', render: renderEnTaxi },
  { name: 'de-kasse', language: 'de', render: renderDeKasse },
  { name: 'de-restaurant', language: 'de', render: renderDeRestaurant },
  { name: 'de-tankstelle', language: 'de', render: renderDeTankstelle },
  { name: 'de-ch', language: 'de', render: renderDeSwiss },
  { name: 'fr-caisse', language: 'fr', render: renderFrCaisse },
  { name: 'fr-restaurant', language: 'fr', render: renderFrRestaurant },
  { name: 'fr-taxi', language: 'fr', render: renderFrTaxi },
];

function main(): void {
  const root = fileURLToPath(new URL('.', import.meta.url));
  for (const language of ['en', 'de', 'fr']) rmSync(`${root}receipts/${language}`, { recursive: true, force: true });
  const counters: Record<string, number> = { en: 0, de: 0, fr: 0 };
  const manifest: CorpusManifestEntry[] = [];
  for (let round = 0; round < DOCS_PER_LAYOUT; round++) {
    for (const layout of RECEIPT_LAYOUTS) {
      const rendered = layout.render(round);
      const parsed = ReceiptV1.parse(rendered.receipt);
      const violations = receiptV1DomainRules(parsed);
      if (violations.length > 0) throw new Error(`generated receipt (${layout.name}, round ${round}) breaks rules: ${JSON.stringify(violations)}`);
      counters[layout.language] = (counters[layout.language] ?? 0) + 1;
      const id = `rcpt-${layout.language}-${String(counters[layout.language]).padStart(3, '0')}`;
      const dir = `receipts/${layout.language}`;
      const text = rendered.text.replace(/[ \t]+$/gm, '');
      const entry = writeDocument(root, { dir, id, language: layout.language, layout: layout.name, schemaVersion: SCHEMA_VERSION, text, expected: parsed });
      const shapes = shapesOf(rendered);
      manifest.push({ ...entry, ...(shapes.length > 0 ? { shapes } : {}) });
    }
  }
  writeManifest(`${root}receipts/manifest.json`, manifest);
  console.log(`wrote ${manifest.length} receipts (${counters.en} en, ${counters.de} de, ${counters.fr} fr)`);
}

main();
