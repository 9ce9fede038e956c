import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scoredFields, accuracyOf, scoreDocument } from '../../../../workbench/drivers/eval/score.js';
import { foldText, sameAfterNormalizing, toIsoDate, toMinorUnits } from '../../../../workbench/drivers/eval/normalize.js';

function invoice(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    invoiceNumber: 'INV-7',
    issueDate: '2026-03-04',
    dueDate: null,
    currency: 'EUR',
    seller: { name: 'Muster GmbH', vatId: 'DE123456789', country: 'DE' },
    buyer: { name: 'Kunde AG', vatId: null },
    lineItems: [
      { description: 'Widget', quantity: 2, unitPrice: 10, amount: 20 },
      { description: 'Service', quantity: 1, unitPrice: 5.5, amount: 5.5 },
    ],
    subtotal: 25.5,
    taxRate: 19,
    taxAmount: 4.85,
    total: 30.35,
    purchaseOrder: null,
    language: 'de',
    ...overrides,
  };
}

describe('normalize@1', () => {
  it('turns amounts into minor units, dates into ISO and strings into folded text', () => {
    // Act / Assess
    assert.equal(toMinorUnits(12.5), 1250);
    assert.equal(toMinorUnits(12.499999), 1250);
    assert.equal(toMinorUnits(0.1 + 0.2), 30);
    assert.equal(toIsoDate('2026-3-4'), '2026-03-04');
    assert.equal(toIsoDate('2026-03-04T00:00:00Z'), '2026-03-04');
    assert.equal(toIsoDate('04.03.2026'), null);
    assert.equal(foldText('  ACME   GmbH \n'), 'acme gmbh');
  });

  it('matches line items as a set: order does not matter, a missing or doubled item does', () => {
    // Prepare
    const items = invoice().lineItems as unknown[];
    // Act / Assess
    assert.equal(sameAfterNormalizing(items, [...items].reverse()), true);
    assert.equal(sameAfterNormalizing(items, items.slice(0, 1)), false);
    assert.equal(sameAfterNormalizing(items, [items[0], items[0]]), false);
    assert.equal(sameAfterNormalizing(' Widget ', 'widget'), true);
    assert.equal(sameAfterNormalizing(20, 20.001), true);
    assert.equal(sameAfterNormalizing(20, 20.01), false);
    assert.equal(sameAfterNormalizing(null, 'X-1'), false);
  });
});

describe('score@1', () => {
  it('scores every field of the schema, nested objects field by field and arrays as one field', () => {
    // Act
    const fields = scoredFields('invoice@1');
    // Assess
    assert.ok(fields.includes('seller.vatId') && fields.includes('buyer.name') && fields.includes('lineItems'));
    assert.ok(!fields.includes('seller') && !fields.some((f) => f.startsWith('lineItems.')));
    assert.equal(fields.length, 16);
  });

  it('marks only the wrong field wrong, and the whole object wrong with it', () => {
    // Prepare
    const expected = invoice();
    // Act
    const score = scoreDocument({
      schemaVersion: 'invoice@1',
      expected,
      expectedOutcome: 'committed',
      state: 'committed',
      result: invoice({ currency: 'USD' }),
    });
    // Assess
    assert.equal(score.fields.currency, false);
    assert.equal(Object.values(score.fields).filter((ok) => !ok).length, 1);
    assert.equal(score.wholeObject, false);
  });

  it('scores a job that did not commit as wrong on every field, and a document reviewed as "to review" on its outcome', () => {
    // Act
    const review = scoreDocument({ schemaVersion: 'invoice@1', expected: invoice(), expectedOutcome: 'committed', state: 'needs_review' });
    const expectedReview = scoreDocument({ schemaVersion: 'invoice@1', expected: invoice(), expectedOutcome: 'needs_review', state: 'needs_review' });
    const figures = accuracyOf([review, expectedReview]);
    // Assess
    assert.ok(Object.values(review.fields).every((ok) => !ok));
    assert.equal(expectedReview.reviewedAsExpected, true);
    assert.equal(figures.documents, 1);
    assert.equal(figures.needsReviewShare, 1);
    assert.deepEqual(figures.reviewExpected, { correct: 1, total: 1 });
  });

  it('sums documents into per-field accuracy', () => {
    // Prepare
    const right = scoreDocument({ schemaVersion: 'invoice@1', expected: invoice(), expectedOutcome: 'committed', state: 'committed', result: invoice() });
    const wrongDate = scoreDocument({
      schemaVersion: 'invoice@1',
      expected: invoice(),
      expectedOutcome: 'committed',
      state: 'committed',
      result: invoice({ issueDate: '2026-04-03' }),
    });
    // Act
    const figures = accuracyOf([right, wrongDate, right, right]);
    // Assess
    const field = (name: string) => figures.fields.find((f) => f.field === name);
    assert.equal(field('issueDate')?.accuracy, 0.75);
    assert.equal(field('currency')?.accuracy, 1);
    assert.equal(figures.wholeObjectAccuracy, 0.75);
    assert.equal(figures.needsReviewShare, 0);
  });
});
