/**
 * Generates the evaluation additions to the invoice corpus: French invoices (`invoices/fr/`) and invoices
 * with hard shapes (`invoices/hard/`), with `eval-manifest.json`. Seeded and deterministic like
 * `generate.ts`, which it leaves alone (it never touches `invoices/en`, `invoices/de` or `manifest.json`).
 * It refuses to write an expected object that fails the zod schema or (unless the document's printed totals
 * disagree on purpose) the domain rules, and a document that does not have the shapes it is tagged with.
 * Usage: npx tsx workbench/corpus/generate-eval.ts
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InvoiceV1, invoiceV1DomainRules } from '../../lib/contract/schemas/invoice-v1.js';
import { writeDocument, writeManifest } from './generators/files.js';
import type { EvalRendered } from './generators/invoices/draw.js';
import { HARD_PLAN, renderHard } from './generators/invoices/layouts-hard.js';
import { renderFrBelgium, renderFrFacture, renderFrSwiss } from './generators/invoices/layouts-fr.js';
import { shapeProblems, hasAmbiguousSlashedDate } from './generators/shapes.js';
import type { CorpusManifestEntry } from './index.js';

const SCHEMA_VERSION = 'invoice@1';
const FR_DOCS_PER_LAYOUT = 10;

interface EvalLayout {
  name: string;
  render: () => EvalRendered;
}

const FR_LAYOUTS: EvalLayout[] = [
  { name: 'fr-facture', render: renderFrFacture },
  { name: 'fr-be', render: renderFrBelgium },
  { name: 'fr-ch', render: renderFrSwiss },
];

/** Checks one rendered document and its expected object; throws rather than write a wrong one. */
function checked(id: string, rendered: EvalRendered): EvalRendered {
  const parsed = InvoiceV1.parse(rendered.invoice);
  const violations = invoiceV1DomainRules(parsed);
  const disagreeing = rendered.shapes.includes('totals-disagree');
  if (!disagreeing && violations.length > 0) throw new Error(`${id}: expected object breaks domain rules: ${JSON.stringify(violations)}`);
  if (disagreeing && violations.length === 0) throw new Error(`${id}: tagged totals-disagree but its totals agree`);
  const shapes = [...rendered.shapes];
  // A document with an ambiguous slashed date and no stated convention has the shape, whether drawn for it or not.
  if (!shapes.includes('ambiguous-date') && hasAmbiguousSlashedDate(rendered.text)) shapes.push('ambiguous-date');
  const problems = shapeProblems(rendered.text, shapes);
  if (problems.length > 0) throw new Error(`${id}: ${problems.join('; ')}`);
  return { invoice: parsed, text: rendered.text, shapes };
}

function main(): void {
  const root = fileURLToPath(new URL('.', import.meta.url));
  const manifest: CorpusManifestEntry[] = [];
  const write = (folder: 'fr' | 'hard', id: string, layout: string, rendered: EvalRendered) => {
    const doc = checked(id, rendered);
    const entry = writeDocument(root, {
      dir: `invoices/${folder}`,
      id,
      language: doc.invoice.language,
      layout,
      schemaVersion: SCHEMA_VERSION,
      text: doc.text,
      expected: doc.invoice,
    });
    if (doc.shapes.length > 0) entry.shapes = [...doc.shapes].sort();
    if (doc.shapes.includes('totals-disagree')) entry.expectedOutcome = 'needs_review';
    manifest.push(entry);
  };

  rmSync(`${root}invoices/fr`, { recursive: true, force: true });
  rmSync(`${root}invoices/hard`, { recursive: true, force: true });
  let fr = 0;
  for (let round = 0; round < FR_DOCS_PER_LAYOUT; round++) {
    for (const layout of FR_LAYOUTS) {
      fr++;
      write('fr', `fr-${String(fr).padStart(3, '0')}`, layout.name, layout.render());
    }
  }
  HARD_PLAN.forEach((plan, index) => {
    write('hard', `hard-${String(index + 1).padStart(3, '0')}`, `hard-${plan.language}`, renderHard(plan));
  });
  writeManifest(`${root}eval-manifest.json`, manifest);
  console.log(`wrote ${manifest.length} documents (${fr} fr, ${HARD_PLAN.length} hard)`);
}

main();
