import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCorpus } from '../../../workbench/corpus/index.js';
import { InvoiceV1, invoiceV1DomainRules, invoiceV1JsonSchema, type InvoiceV1 as Invoice } from '../../../lib/contract/schemas/invoice-v1.js';
import { InvoiceExtractionError, extractInvoice } from '../../../workbench/fake-provider/extractors/invoice.js';
import { strictModeProblems } from '../../helpers/strict-schema.js';

const corpus = loadCorpus();

function validInvoice(): Invoice {
  return {
    invoiceNumber: 'T-1',
    issueDate: '2026-03-04',
    dueDate: '2026-04-03',
    currency: 'EUR',
    seller: { name: 'Confidential Seller GmbH', vatId: 'DE123456789', country: 'DE' },
    buyer: { name: 'Secret Buyer AG', vatId: null },
    lineItems: [
      { description: 'Classified widget', quantity: 2, unitPrice: 10, amount: 20 },
      { description: 'Hidden service', quantity: 1.5, unitPrice: 33.33, amount: 50 },
    ],
    subtotal: 70,
    taxRate: 19,
    taxAmount: 13.3,
    total: 83.3,
    purchaseOrder: null,
    language: 'en',
  };
}

describe('invoice corpus', () => {
  it('has at least 50 documents in two languages, at least 25 each, with unique ids', () => {
    // Act
    const languages = new Map<string, number>();
    for (const doc of corpus) languages.set(doc.language, (languages.get(doc.language) ?? 0) + 1);
    // Assess
    assert.ok(corpus.length >= 50, `only ${corpus.length} documents`);
    assert.ok((languages.get('en') ?? 0) >= 25);
    assert.ok((languages.get('de') ?? 0) >= 25);
    assert.equal(new Set(corpus.map((doc) => doc.id)).size, corpus.length);
    assert.ok(corpus.every((doc) => doc.schemaVersion === 'invoice@1'));
  });

  it('covers the currencies, tax rates and optional fields the schema allows', () => {
    // Act
    const currencies = new Set(corpus.map((doc) => doc.expected.currency));
    const rates = new Set(corpus.map((doc) => doc.expected.taxRate));
    const itemCounts = new Set(corpus.map((doc) => doc.expected.lineItems.length));
    // Assess
    assert.deepEqual([...currencies].sort(), ['CHF', 'EUR', 'GBP', 'USD']);
    for (const rate of [0, 7, 19, 20, 8.1]) assert.ok(rates.has(rate), `no invoice with tax rate ${rate}`);
    assert.ok(itemCounts.has(1) && itemCounts.has(8));
    assert.ok(corpus.some((doc) => doc.expected.purchaseOrder === null) && corpus.some((doc) => doc.expected.purchaseOrder !== null));
    assert.ok(corpus.some((doc) => doc.expected.dueDate === null) && corpus.some((doc) => doc.expected.dueDate !== null));
  });

  for (const doc of corpus) {
    it(`${doc.id} (${doc.layout}): expected object is a valid invoice@1 with no domain-rule violations`, () => {
      // Act
      const parsed = InvoiceV1.safeParse(doc.expected);
      // Assess
      assert.ok(parsed.success, parsed.success ? '' : parsed.error.message);
      assert.deepEqual(invoiceV1DomainRules(parsed.data), []);
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

describe('invoice@1 domain rules', () => {
  it('accepts a consistent invoice, including one cent of rounding', () => {
    // Prepare
    const invoice = validInvoice();
    invoice.lineItems[1] = { description: 'Hidden service', quantity: 1.5, unitPrice: 33.33, amount: 49.99 };
    invoice.subtotal = 69.99;
    // Act
    const violations = invoiceV1DomainRules(invoice);
    // Assess
    assert.deepEqual(violations, []);
  });

  it('reports each broken rule with its field, and no document text in messages', () => {
    // Prepare
    const invoice = validInvoice();
    invoice.lineItems[0] = { description: 'Classified widget', quantity: 2, unitPrice: 10, amount: 25 };
    invoice.subtotal = 70;
    invoice.taxAmount = 15;
    invoice.total = 90;
    invoice.dueDate = '2026-03-01';
    // Act
    const violations = invoiceV1DomainRules(invoice);
    // Assess
    assert.deepEqual(
      violations.map(({ field, rule }) => ({ field, rule })),
      [
        { field: 'lineItems[0].amount', rule: 'line_amount' },
        { field: 'subtotal', rule: 'subtotal_sum' },
        { field: 'taxAmount', rule: 'tax_amount' },
        { field: 'total', rule: 'total_sum' },
        { field: 'dueDate', rule: 'due_not_before_issue' },
      ],
    );
    assert.match(violations[0]?.message ?? '', /25\.00 != quantity 2 x unitPrice 10\.00 = 20\.00/);
    for (const { message } of violations) assert.doesNotMatch(message, /Classified|Hidden|Confidential|Secret|T-1/);
  });

  it('rejects money with more than two decimals and unknown properties in the zod schema', () => {
    // Prepare
    const tooPrecise = { ...validInvoice(), total: 83.301 };
    const extra = { ...validInvoice(), notes: 'x' };
    // Act
    const precise = InvoiceV1.safeParse(tooPrecise);
    const strict = InvoiceV1.safeParse(extra);
    // Assess
    assert.equal(precise.success, false);
    assert.equal(strict.success, false);
  });
});

describe('invoice@1 JSON schema', () => {
  it('is accepted by OpenAI structured outputs in strict mode', () => {
    // Act
    const problems = strictModeProblems(invoiceV1JsonSchema, '$');
    // Assess
    assert.deepEqual(problems, []);
    assert.equal(invoiceV1JsonSchema.type, 'object');
    assert.equal('$schema' in invoiceV1JsonSchema, false);
  });

  it('marks optional values as nullable unions rather than leaving them out of required', () => {
    // Prepare
    const properties = invoiceV1JsonSchema.properties as Record<string, { anyOf?: { type?: string }[] }>;
    // Act
    const nullable = Object.entries(properties)
      .filter(([, schema]) => schema.anyOf?.some((option) => option.type === 'null'))
      .map(([name]) => name);
    // Assess
    assert.deepEqual(nullable.sort(), ['dueDate', 'purchaseOrder']);
  });
});

describe('rule-based invoice extractor', () => {
  it('raises a typed error naming the missing field, without document text', () => {
    // Prepare
    const text = 'Dear team, nothing to bill here. Secret words.\n';
    // Act
    const act = () => extractInvoice(text);
    // Assess
    assert.throws(act, (error: unknown) => {
      assert.ok(error instanceof InvoiceExtractionError);
      assert.equal(error.name, 'InvoiceExtractionError');
      assert.doesNotMatch(error.message, /Secret/);
      return true;
    });
  });

  it('reads the document it is given, not a remembered one: an edited total is extracted as edited', () => {
    // Prepare
    const doc = corpus.find((d) => d.layout === 'en-compact');
    assert.ok(doc);
    const edited = doc.text.replace(/^(Total due|Total|Balance due): .*$/m, (_line, label: string) => `${label}: $1.00`);
    // Act
    const extracted = extractInvoice(edited);
    // Assess
    assert.equal(extracted.total, 1);
    assert.ok(invoiceV1DomainRules(extracted).some((v) => v.rule === 'total_sum'));
  });
});
