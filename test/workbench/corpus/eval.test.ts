import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type HardShape, loadCorpusManifest, loadEvalCorpus } from '../../../workbench/corpus/index.js';
import { InvoiceV1, invoiceV1DomainRules, type InvoiceV1 as Invoice } from '../../../lib/contract/schemas/invoice-v1.js';
import { extractInvoice } from '../../../workbench/fake-provider/extractors/invoice.js';

const everything = loadEvalCorpus();
const cleanIds = new Set(loadCorpusManifest().map((entry) => entry.id));
/** The documents of eval-manifest.json: French invoices and invoices with hard shapes. */
const docs = everything.filter((doc) => doc.schemaVersion === 'invoice@1' && !cleanIds.has(doc.id));
const expected = (doc: (typeof docs)[number]) => doc.expected as unknown as Invoice;
const withShape = (shape: HardShape) => docs.filter((doc) => doc.shapes.includes(shape));

const SHAPES: HardShape[] = ['ambiguous-date', 'decimal-comma', 'missing-fields', 'long', 'no-currency-symbol', 'totals-disagree'];
const CURRENCY_MARKS = /[$€£¥]|\b(?:CHF|EUR|USD|GBP|SFr)\b|\bFr\./u;
const STATED_CONVENTION = /(?:DD|MM|JJ|TT)\.?\/(?:MM|DD)\.?\/(?:YYYY|AAAA|JJJJ)/iu;
const SLASHED_DATES = /(?<![\d/])(\d{1,2})\/(\d{1,2})\/(\d{4})(?![\d/])/gu;

function ambiguousSlashedDates(text: string): string[] {
  return [...text.matchAll(SLASHED_DATES)].filter((m) => Number(m[1]) <= 12 && Number(m[2]) <= 12 && m[1] !== m[2]).map((m) => m[0]);
}

describe('evaluation corpus: French and hard-shape invoices', () => {
  it('has unique ids across the whole corpus and source ids under invoices/fr or invoices/hard', () => {
    // Act
    const ids = everything.map((doc) => doc.id);
    // Assess
    assert.equal(new Set(ids).size, ids.length);
    for (const doc of docs) assert.match(doc.sourceId, new RegExp(`^ratelane-corpus:invoices/(?:fr|hard)/${doc.id}$`));
    assert.ok(docs.filter((doc) => doc.id.startsWith('hard-')).length >= 30);
  });

  it('has at least 24 French documents from at least 2 layouts, in EUR and CHF, at several tax rates', () => {
    // Prepare
    const french = docs.filter((doc) => doc.language === 'fr');
    // Act
    const layouts = new Set(french.filter((doc) => doc.layout.startsWith('fr-')).map((doc) => doc.layout));
    const currencies = new Set(french.map((doc) => expected(doc).currency));
    const rates = new Set(french.map((doc) => expected(doc).taxRate));
    // Assess
    assert.ok(french.length >= 24, `only ${french.length} French documents`);
    assert.ok(layouts.size >= 2);
    assert.ok(currencies.has('EUR') && currencies.has('CHF'));
    for (const rate of [20, 5.5, 21, 8.1]) assert.ok(rates.has(rate), `no French invoice at ${rate} %`);
  });

  it('has every hard shape at least 4 times, and needs_review exactly for the totals-disagree documents', () => {
    // Act
    const counts = SHAPES.map((shape) => [shape, withShape(shape).length] as const);
    // Assess
    for (const [shape, count] of counts) assert.ok(count >= 4, `${shape}: only ${count}`);
    for (const doc of docs) assert.equal(doc.expectedOutcome === 'needs_review', doc.shapes.includes('totals-disagree'), doc.id);
    assert.deepEqual(new Set(withShape('long').map((doc) => doc.language)), new Set(['en', 'de', 'fr']));
  });

  it('long documents run past 8,000 characters (some past 20,000) with page marks and carried-forward lines', () => {
    // Act
    const long = withShape('long');
    // Assess
    for (const doc of long) {
      assert.ok(doc.text.length > 8000, `${doc.id}: ${doc.text.length} characters`);
      assert.match(doc.text, /Page 2 of \d+|Seite 2 von \d+|Page 2\/\d+/u, doc.id);
      assert.match(doc.text, /Carried forward|Übertrag|À reporter/u, doc.id);
    }
    assert.ok(long.some((doc) => doc.text.length > 20000));
  });

  it('no-currency-symbol documents print no currency symbol or code anywhere', () => {
    // Act
    const offenders = withShape('no-currency-symbol').filter((doc) => CURRENCY_MARKS.test(doc.text));
    // Assess
    assert.deepEqual(
      offenders.map((doc) => doc.id),
      [],
    );
  });

  it('ambiguous-date documents hold a slashed date that reads two ways and state no convention', () => {
    // Act
    const docsWithShape = withShape('ambiguous-date');
    // Assess
    assert.ok(docsWithShape.some((doc) => expected(doc).seller.country === 'US'));
    assert.ok(docsWithShape.some((doc) => expected(doc).seller.country !== 'US' && doc.language === 'en'));
    for (const doc of docsWithShape) {
      assert.ok(ambiguousSlashedDates(doc.text).length > 0, doc.id);
      assert.doesNotMatch(doc.text, STATED_CONVENTION, doc.id);
    }
  });

  it('missing-fields documents leave optional fields null, some of them several', () => {
    // Prepare
    const nulls = (invoice: Invoice) => [invoice.dueDate, invoice.purchaseOrder, invoice.buyer.vatId, invoice.seller.vatId].filter((v) => v === null).length;
    // Act
    const counts = withShape('missing-fields').map((doc) => nulls(expected(doc)));
    // Assess
    assert.ok(counts.every((count) => count >= 1));
    assert.ok(counts.filter((count) => count >= 3).length >= 2);
  });

  it('decimal-comma documents print decimal commas, some in English and with 1,250-style numbers', () => {
    // Act
    const docsWithShape = withShape('decimal-comma');
    // Assess
    for (const doc of docsWithShape) assert.match(doc.text, /\d,\d{2}(?![\d.,])/u, doc.id);
    assert.ok(docsWithShape.some((doc) => doc.language === 'en'));
    assert.ok(docsWithShape.every((doc) => /(?<![\d.,'])(?<!\d[ \u202f])\d{1,3},\d{3}(?![\d.,])/u.test(doc.text)));
  });

  for (const doc of docs) {
    const tags = doc.shapes.length > 0 ? ` [${doc.shapes.join(', ')}]` : '';
    it(`${doc.id} (${doc.layout})${tags}: expected object is a valid invoice@1, and passes the domain rules unless it needs review`, () => {
      // Act
      const parsed = InvoiceV1.safeParse(doc.expected);
      // Assess
      assert.ok(parsed.success, parsed.success ? '' : parsed.error.message);
      const violations = invoiceV1DomainRules(parsed.data);
      if (doc.expectedOutcome === 'needs_review') assert.ok(violations.length > 0, 'printed totals agree although tagged needs_review');
      else assert.deepEqual(violations, []);
      assert.equal(parsed.data.language, doc.language);
    });

    it(`${doc.id} (${doc.layout}): the rule-based extractor reproduces the expected object`, () => {
      // Act
      const extracted = extractInvoice(doc.text);
      // Assess
      assert.deepEqual(extracted, doc.expected);
    });
  }
});
