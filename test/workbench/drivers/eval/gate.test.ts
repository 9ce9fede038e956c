import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getRelease } from '../../../../lib/contract/releases.js';
import { compareWithBaseline } from '../../../../workbench/drivers/eval/gate.js';
import { buildEvalReport, lengthBucket, type EvaluatedDocument } from '../../../../workbench/drivers/eval/report.js';
import type { EvalReport } from '../../../../workbench/drivers/eval/report-model.js';

function receiptLike(): Record<string, unknown> {
  return {
    invoiceNumber: 'A-1',
    issueDate: '2026-01-02',
    dueDate: null,
    currency: 'USD',
    seller: { name: 'S', vatId: null, country: 'US' },
    buyer: { name: 'B', vatId: null },
    lineItems: [],
    subtotal: 1,
    taxRate: 0,
    taxAmount: 0,
    total: 1,
    purchaseOrder: null,
    language: 'en',
  };
}

function doc(id: string, result: Record<string, unknown>, extra: Partial<EvaluatedDocument> = {}): EvaluatedDocument {
  return {
    id,
    language: 'en',
    schemaVersion: 'invoice@1',
    region: 'us',
    inputTokenEstimate: 300,
    expected: receiptLike(),
    expectedOutcome: 'committed',
    state: 'committed',
    result,
    usage: { inputTokens: 1000, outputTokens: 200 },
    model: 'gpt-4o-mini',
    ...extra,
  };
}

function report(releaseId: string, documents: EvaluatedDocument[]): EvalReport {
  const operations = {
    submitted: 0,
    committed: 0,
    needsReview: 0,
    rejected: 0,
    deadLettered: 0,
    waiting: 0,
    lost: 0,
    queueAgeMs: { p95: null },
    latencyMs: { p50: null, p95: null },
    attemptsPerCompletion: null,
    duplicatesSuppressed: 0,
    unresolvedBatchItems: null,
    regionMismatches: 0,
    elapsedMs: 0,
  };
  return buildEvalReport({
    release: getRelease(releaseId),
    lane: 'queue',
    provider: 'test',
    seed: 1,
    generatedAt: new Date(0),
    documents,
    operations,
    distributions: { latencyMs: [], queueAgeMs: [], attempts: [] },
  });
}

/** A baseline of 20 right documents, and a candidate that gets the currency of 2 of them wrong (−10 points). */
function currencyDrop(): { baseline: EvalReport; candidate: EvalReport } {
  const right = receiptLike();
  const baseline = report(
    '2026.11',
    Array.from({ length: 20 }, (_, i) => doc(`d${i}`, right)),
  );
  const candidate = report(
    '2026.12-rc1',
    Array.from({ length: 20 }, (_, i) => doc(`d${i}`, i < 2 ? { ...right, currency: 'EUR' } : right)),
  );
  return { baseline, candidate };
}

describe('release gate', () => {
  it('fails when one field drops by more than its tolerance, and names it', () => {
    // Prepare: 20 documents; the candidate gets the currency of 2 of them wrong (−10 points)
    const { baseline, candidate } = currencyDrop();
    // Act
    const comparison = compareWithBaseline(candidate, baseline, { default: 0.02 });
    // Assess
    assert.equal(comparison.gate.passed, false);
    assert.deepEqual(
      comparison.fields.filter((f) => f.regressed).map((f) => f.field),
      ['currency'],
    );
    assert.match(comparison.gate.regressions[0]!, /invoice@1 currency: 100\.0 % → 90\.0 %/);
  });

  it("passes a drop within the tolerance, and a field's own tolerance wins over the default", () => {
    // Prepare
    const { baseline, candidate } = currencyDrop();
    // Act
    const loose = compareWithBaseline(candidate, baseline, { default: 0.1 });
    const strictField = compareWithBaseline(candidate, baseline, { default: 0.5, fields: { 'invoice@1 currency': 0 } });
    const same = compareWithBaseline(baseline, baseline);
    // Assess
    assert.equal(loose.gate.passed, true);
    assert.equal(strictField.gate.passed, false);
    assert.equal(same.gate.passed, true);
  });

  it('fails a field the candidate could not score at all', () => {
    // Prepare: the candidate committed nothing
    const baseline = report('2026.11', [doc('d0', receiptLike())]);
    const candidate = report('2026.12-rc1', [doc('d0', receiptLike(), { state: 'dead_lettered', result: undefined, usage: undefined })]);
    // Act
    const comparison = compareWithBaseline(candidate, baseline);
    // Assess
    assert.equal(comparison.gate.passed, false);
    assert.ok(comparison.fields.every((f) => f.regressed));
  });
});

describe('release gate in buckets', () => {
  it('fails a field that regressed in one bucket of 20+ documents while the overall drop is within tolerance', () => {
    // Prepare: 170 English and 30 French documents; the candidate gets the currency of 3 French ones wrong
    const right = receiptLike();
    const language = (i: number): Partial<EvaluatedDocument> => (i < 170 ? {} : { language: 'fr', region: 'eu' });
    const baseline = report(
      '2026.11',
      Array.from({ length: 200 }, (_, i) => doc(`d${i}`, right, language(i))),
    );
    const candidate = report(
      '2026.12-rc1',
      Array.from({ length: 200 }, (_, i) => doc(`d${i}`, i >= 197 ? { ...right, currency: 'EUR' } : right, language(i))),
    );
    // Act
    const gated = compareWithBaseline(candidate, baseline, { default: 0.02 });
    const bigBucketsOnly = compareWithBaseline(candidate, baseline, { default: 0.02, minBucketDocuments: 40 });
    // Assess
    assert.ok(
      gated.fields.every((f) => !f.regressed),
      'overall: -1.5 points, within tolerance',
    );
    assert.equal(gated.gate.passed, false);
    assert.deepEqual(
      gated.bucketRegressions.map((r) => `${r.field} ${r.dimension} ${r.bucket} ${r.documents}`),
      ['currency language fr 30', 'currency region eu 30'],
    );
    assert.match(gated.gate.regressions[0]!, /invoice@1 currency \[language fr, 30 documents\]: 100\.0 % → 90\.0 %/);
    assert.equal(bigBucketsOnly.gate.passed, true, 'a bucket under minBucketDocuments is not gated');
  });
});

describe('evaluation report', () => {
  it('buckets by language, length, schema and region, and prices the tokens at the list price', () => {
    // Prepare
    const documents = [doc('a', receiptLike()), doc('b', receiptLike(), { language: 'fr', region: 'eu', inputTokenEstimate: 5000 })];
    // Act
    const r = report('2026.11', documents);
    // Assess
    const buckets = r.buckets.map((b) => `${b.dimension}:${b.bucket}:${b.documents}`);
    assert.deepEqual(buckets, [
      'language:en:1',
      'language:fr:1',
      `length:${lengthBucket(300)}:1`,
      `length:${lengthBucket(5000)}:1`,
      'schema:invoice@1:2',
      'region:eu:1',
      'region:us:1',
    ]);
    assert.equal(r.tokens.inputTokens, 2000);
    assert.ok(Math.abs(r.tokens.costUsd! - (2000 * 0.15 + 400 * 0.6) / 1e6) < 1e-12);
    assert.equal(r.release.id, '2026.11');
    assert.equal(r.release.scorerVersion, 'score@1');
  });
});
