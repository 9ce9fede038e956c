/**
 * The reviewed receipt corpus (`corpus/receipts/`): every expected object is a valid `receipt@1` with no
 * domain-rule violation, the rule-based receipt extractor reproduces it from the text alone, the shape tags
 * agree with the text, and the corpus has the size and spread its README promises. Also the `receipt@1`
 * domain rules and the strict-mode shape of its JSON schema.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { CorpusManifestEntry } from '../../../workbench/corpus/index.js';
import { ReceiptV1, receiptV1DomainRules, receiptV1JsonSchema, type ReceiptV1 as Receipt } from '../../../lib/contract/schemas/receipt-v1.js';
import { ReceiptExtractionError, extractReceipt } from '../../../workbench/fake-provider/extractors/receipt.js';
import { strictModeProblems } from '../../helpers/strict-schema.js';

const CORPUS_ROOT = new URL('../../../workbench/corpus/', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('receipts/manifest.json', CORPUS_ROOT), 'utf8')) as CorpusManifestEntry[];
const receipts = manifest.map((entry) => ({
  ...entry,
  text: readFileSync(new URL(entry.file, CORPUS_ROOT), 'utf8'),
  expected: JSON.parse(readFileSync(new URL(entry.expected, CORPUS_ROOT), 'utf8')) as Receipt,
  shapes: entry.shapes ?? [],
}));

const LAYOUTS = ['en-till', 'en-restaurant', 'en-taxi', 'de-kasse', 'de-restaurant', 'de-tankstelle', 'de-ch', 'fr-caisse', 'fr-restaurant', 'fr-taxi'];

function validReceipt(): Receipt {
  return {
    merchant: { name: 'Confidential Deli', vatId: 'DE123456789', country: 'DE' },
    receiptNumber: 'R-1',
    date: '2026-03-04',
    time: '14:32',
    currency: 'EUR',
    items: [
      { description: 'Classified cheese', quantity: 2, amount: 5.98 },
      { description: 'Hidden apples', quantity: 0.752, amount: 1.5 },
    ],
    subtotal: 7.48,
    addedTax: null,
    includedTax: 0.79,
    tip: 1,
    total: 8.48,
    paymentMethod: 'card',
    language: 'de',
  };
}

describe('receipt corpus', () => {
  it('has at least 30 receipts, at least 8 per language, unique ids and stable source ids', () => {
    // Prepare
    const perLanguage = new Map<string, number>();
    // Act
    for (const doc of receipts) perLanguage.set(doc.language, (perLanguage.get(doc.language) ?? 0) + 1);
    // Assess
    assert.ok(receipts.length >= 30, `only ${receipts.length} receipts`);
    for (const language of ['en', 'de', 'fr']) assert.ok((perLanguage.get(language) ?? 0) >= 8, `too few ${language} receipts`);
    assert.equal(new Set(receipts.map((doc) => doc.id)).size, receipts.length);
    for (const doc of receipts) {
      assert.equal(doc.schemaVersion, 'receipt@1');
      assert.equal(doc.sourceId, `ratelane-corpus:receipts/${doc.language}/${doc.id}`);
      assert.match(doc.id, new RegExp(`^rcpt-${doc.language}-\\d{3}$`));
    }
  });

  it('covers every layout, at least three currencies, every hard shape it claims and the optional fields both ways', () => {
    // Act
    const layouts = new Set(receipts.map((doc) => doc.layout));
    const currencies = new Set(receipts.map((doc) => doc.expected.currency));
    const shapes = new Set(receipts.flatMap((doc) => doc.shapes));
    const both = (pick: (r: Receipt) => unknown) => receipts.some((d) => pick(d.expected) === null) && receipts.some((d) => pick(d.expected) !== null);
    // Assess
    assert.deepEqual([...layouts].sort(), [...LAYOUTS].sort());
    assert.ok(currencies.size >= 3, `only ${[...currencies].join(', ')}`);
    for (const shape of ['ambiguous-date', 'decimal-comma', 'missing-fields', 'no-currency-symbol']) assert.ok(shapes.has(shape as never), `no ${shape}`);
    for (const field of ['receiptNumber', 'time', 'subtotal', 'addedTax', 'includedTax', 'tip', 'paymentMethod'] as const) {
      assert.ok(
        both((r) => r[field]),
        `${field} is not both null and set`,
      );
    }
    assert.ok(receipts.some((d) => d.expected.items.some((item) => item.quantity > 1 && Number.isInteger(item.quantity))));
    assert.ok(receipts.some((d) => d.expected.items.some((item) => !Number.isInteger(item.quantity))));
    assert.ok(receipts.some((d) => d.expected.currency === 'CHF' && d.text.includes("'") && d.expected.total >= 1000));
  });

  for (const doc of receipts) {
    it(`${doc.id} (${doc.layout}): expected object is a valid receipt@1 with no domain-rule violations`, () => {
      // Act
      const parsed = ReceiptV1.safeParse(doc.expected);
      // Assess
      assert.ok(parsed.success, parsed.success ? '' : parsed.error.message);
      assert.deepEqual(receiptV1DomainRules(parsed.data), []);
      assert.equal(parsed.data.language, doc.language);
    });

    it(`${doc.id} (${doc.layout}): the rule-based receipt extractor reproduces the expected object`, () => {
      // Act
      const extracted = extractReceipt(doc.text);
      // Assess
      assert.deepEqual(extracted, doc.expected);
    });

    it(`${doc.id} (${doc.layout}): its shape tags agree with the text`, () => {
      // Act
      const symbolPrinted = /[$€£]|\b(?:USD|EUR|GBP|CHF)\b/u.test(doc.text);
      const commaAmounts = /\d,\d{2}(?![\d.,])/u.test(doc.text);
      // Assess
      assert.equal(doc.shapes.includes('no-currency-symbol'), !symbolPrinted);
      assert.equal(doc.shapes.includes('decimal-comma'), commaAmounts);
      if (doc.shapes.includes('ambiguous-date')) assert.match(doc.text, /\b(0?[1-9]|1[0-2])\/(0?[1-9]|1[0-2])\/\d{4}\b/);
    });
  }
});

describe('receipt@1 domain rules', () => {
  it('accepts a consistent receipt, including one cent of rounding', () => {
    // Prepare
    const receipt = validReceipt();
    receipt.total = 8.49;
    // Act
    const violations = receiptV1DomainRules(receipt);
    // Assess
    assert.deepEqual(violations, []);
  });

  it('reports each broken rule with its field, and no document text in messages', () => {
    // Prepare
    const receipt = { ...validReceipt(), subtotal: 9, addedTax: 0.5, includedTax: 20, total: 30 };
    // Act
    const violations = receiptV1DomainRules(receipt);
    // Assess
    assert.deepEqual(
      violations.map(({ field, rule }) => ({ field, rule })),
      [
        { field: 'subtotal', rule: 'subtotal_sum' },
        { field: 'total', rule: 'total_sum' },
        { field: 'includedTax', rule: 'tax_added_or_included' },
        { field: 'includedTax', rule: 'included_tax_below_items' },
      ],
    );
    assert.match(violations[1]?.message ?? '', /total 30\.00 != items 7\.48 \+ addedTax 0\.50 \+ tip 1\.00 = 8\.98/);
    for (const { message } of violations) assert.doesNotMatch(message, /Confidential|Classified|Hidden|R-1/);
  });

  it('counts added tax and tip into the total, but not included tax', () => {
    // Prepare
    const added = { ...validReceipt(), includedTax: null, addedTax: 0.6, tip: null, total: 8.08 };
    const tipOnly = { ...validReceipt(), includedTax: 5, total: 8.48 };
    // Act
    const violations = [...receiptV1DomainRules(added), ...receiptV1DomainRules(tipOnly)];
    // Assess
    assert.deepEqual(violations, []);
  });

  it('rejects three-decimal money, a 12-hour time and unknown properties in the zod schema', () => {
    // Prepare
    const candidates = [
      { ...validReceipt(), total: 8.481 },
      { ...validReceipt(), time: '2:32 PM' },
      { ...validReceipt(), notes: 'x' },
    ];
    // Act
    const results = candidates.map((candidate) => ReceiptV1.safeParse(candidate).success);
    // Assess
    assert.deepEqual(results, [false, false, false]);
  });
});

describe('receipt@1 JSON schema', () => {
  it('is accepted by OpenAI structured outputs in strict mode', () => {
    // Act
    const problems = strictModeProblems(receiptV1JsonSchema, '$');
    // Assess
    assert.deepEqual(problems, []);
    assert.equal(receiptV1JsonSchema.type, 'object');
    assert.equal('$schema' in receiptV1JsonSchema, false);
  });

  it('marks optional values as nullable unions rather than leaving them out of required', () => {
    // Prepare
    const properties = receiptV1JsonSchema.properties as Record<string, { anyOf?: { type?: string }[] }>;
    // Act
    const nullable = Object.entries(properties)
      .filter(([, schema]) => schema.anyOf?.some((option) => option.type === 'null'))
      .map(([name]) => name);
    // Assess
    assert.deepEqual(nullable.sort(), ['addedTax', 'includedTax', 'paymentMethod', 'receiptNumber', 'subtotal', 'time', 'tip']);
  });
});

describe('rule-based receipt extractor', () => {
  it('raises a typed error naming the missing field, without document text', () => {
    // Prepare
    const text = 'Dear team, nothing was bought here. Secret words.\n';
    // Act
    const act = () => extractReceipt(text);
    // Assess
    assert.throws(act, (error: unknown) => {
      assert.ok(error instanceof ReceiptExtractionError);
      assert.equal(error.name, 'ReceiptExtractionError');
      assert.doesNotMatch(error.message, /Secret/);
      return true;
    });
  });

  it('reads the document it is given, not a remembered one: an edited total is extracted as edited', () => {
    // Prepare
    const doc = receipts.find((d) => d.layout === 'en-restaurant');
    assert.ok(doc);
    const edited = doc.text.replace(/^Total( +)\S+$/m, (_line, gap: string) => `Total${gap}$1.00`);
    // Act
    const extracted = extractReceipt(edited);
    // Assess
    assert.equal(extracted.total, 1);
    assert.ok(receiptV1DomainRules(extracted).some((v) => v.rule === 'total_sum'));
  });

  it('reads a slashed date by the merchant country: month first in the US, day first in the UK', () => {
    // Prepare
    const body = ['----------', '03/04/2026 14:32', '----------', 'Coffee   3.50', '----------', 'Total   3.50', 'Cash'];
    const us = ['Corner Cafe', '1 Main St', 'Springfield, IL 62701', ...body].join('\n');
    const uk = ['Corner Cafe', '1 High Street', 'Oxford OX1 4AA', ...body].join('\n');
    // Act
    const [usDate, ukDate] = [extractReceipt(us), extractReceipt(uk)].map((r) => [r.date, r.merchant.country, r.currency]);
    // Assess
    assert.deepEqual(usDate, ['2026-03-04', 'US', 'USD']);
    assert.deepEqual(ukDate, ['2026-04-03', 'GB', 'GBP']);
  });
});
