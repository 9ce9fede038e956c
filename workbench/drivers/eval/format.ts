/**
 * The evaluation report as text: the release, the per-field table by bucket, the operations of the
 * same run and, with a baseline, the side-by-side and the gate's verdict. No document text.
 */
import { pct } from './gate.js';
import type { BaselineComparison, BucketDimension, BucketFigures, EvalReport } from './report-model.js';
import { releaseLine } from '../release.js';

const TABLE_DIMENSIONS: readonly BucketDimension[] = ['language', 'length', 'region'];

function ms(value: number | null): string {
  return value === null ? '-' : `${value} ms`;
}

function usd(value: number | null): string {
  return value === null ? 'no list price' : `$${value.toFixed(4)}`;
}

function table(rows: readonly string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => `  ${r.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')}`.trimEnd());
}

/** The bucket columns of the field table: every language, length and region bucket of the report. */
function bucketColumns(report: EvalReport): BucketFigures[] {
  return TABLE_DIMENSIONS.flatMap((d) => report.buckets.filter((b) => b.dimension === d));
}

function shortBucket(bucket: BucketFigures): string {
  return bucket.dimension === 'length' ? bucket.bucket.split(' ')[0]! : bucket.bucket;
}

/** The per-field table: overall and per bucket (`n` documents under each column). */
function fieldTable(report: EvalReport): string[] {
  const columns = bucketColumns(report);
  const header = ['schema', 'field', 'overall', ...columns.map(shortBucket)];
  const counts = ['', '(documents)', String(report.overall.documents), ...columns.map((b) => String(b.documents))];
  const rows = report.overall.fields.map((f) => [
    f.schemaVersion,
    f.field,
    pct(f.accuracy),
    ...columns.map((b) => pct(b.fields.find((x) => x.schemaVersion === f.schemaVersion && x.field === f.field)?.accuracy ?? null)),
  ]);
  const whole = ['all', 'whole object', pct(report.overall.wholeObjectAccuracy), ...columns.map((b) => pct(b.wholeObjectAccuracy))];
  const review = ['all', 'needs review', pct(report.overall.needsReviewShare), ...columns.map((b) => pct(b.needsReviewShare))];
  return table([header, counts, ...rows, whole, review]);
}

function operationsLines(report: EvalReport): string[] {
  const o = report.operations;
  const t = report.tokens;
  return [
    `  submitted ${o.submitted} · committed ${o.committed} · needs review ${o.needsReview} · rejected ${o.rejected} · DLQ ${o.deadLettered} · waiting ${o.waiting} · lost ${o.lost}` +
      (o.unresolvedBatchItems === null ? '' : ` · batch unresolved ${o.unresolvedBatchItems}`),
    `  queue age p95 ${ms(o.queueAgeMs.p95)} · latency p50 ${ms(o.latencyMs.p50)} / p95 ${ms(o.latencyMs.p95)} · attempts per completion ${o.attemptsPerCompletion?.toFixed(2) ?? '-'}`,
    `  duplicates suppressed ${o.duplicatesSuppressed} · regional mismatch rejections ${o.regionMismatches} · elapsed ${(o.elapsedMs / 1000).toFixed(1)} s`,
    `  tokens of the committed jobs ${t.inputTokens} in / ${t.outputTokens} out (${t.inputTokensPerDocument ?? '-'} / ${t.outputTokensPerDocument ?? '-'} per document) · cost ${usd(t.costUsd)}${t.model ? ` at ${t.model} list price` : ''}`,
  ];
}

/** How many distinct fields regressed, overall or inside a bucket. */
function regressedFields(c: BaselineComparison): number {
  return new Set([...c.fields.filter((f) => f.regressed), ...c.bucketRegressions].map((f) => `${f.schemaVersion} ${f.field}`)).size;
}

function comparisonLines(c: BaselineComparison, report: EvalReport): string[] {
  const rows = [['schema', 'field', c.baseline.id, report.release.id, 'change', 'tolerance', '']];
  for (const f of c.fields) {
    const change = f.delta === null ? '-' : `${f.delta >= 0 ? '+' : ''}${(f.delta * 100).toFixed(1)}`;
    rows.push([f.schemaVersion, f.field, pct(f.baseline), pct(f.candidate), change, pct(f.tolerance), f.regressed ? 'REGRESSED' : '']);
  }
  const w = c.wholeObject;
  rows.push(['all', 'whole object', pct(w.baseline), pct(w.candidate), w.delta === null ? '-' : `${(w.delta * 100).toFixed(1)}`, '', '']);
  return [
    `baseline ${c.baseline.id} beside ${report.release.id} (input tokens ${c.tokens.baselineInput} → ${c.tokens.candidateInput}, cost ${usd(c.tokens.baselineCostUsd)} → ${usd(c.tokens.candidateCostUsd)})`,
    ...table(rows),
    c.gate.passed
      ? 'gate: PASSED (no field regressed beyond its tolerance)'
      : `gate: FAILED — ${c.gate.regressions.length} regression(s) of ${regressedFields(c)} field(s):`,
    ...c.gate.regressions.map((r) => `  ${r}`),
    `  (fields are gated overall and in every language, length, schema and region bucket of ${c.minBucketDocuments}+ documents)`,
  ];
}

/** The whole report as text. */
export function formatEvalReport(report: EvalReport): string {
  const o = report.overall;
  const schemas = report.buckets.filter((b) => b.dimension === 'schema');
  return [
    `ratelane eval — ${releaseLine(report)}, ${report.lane} lane, ${report.provider}, seed ${report.seed}`,
    `  ${o.documents} documents scored; whole object ${pct(o.wholeObjectAccuracy)}; needs review ${pct(o.needsReviewShare)}; ` +
      `expected in review ${o.reviewExpected.correct}/${o.reviewExpected.total}; ` +
      schemas.map((s) => `${s.bucket} whole object ${pct(s.wholeObjectAccuracy)} of ${s.documents}`).join('; '),
    '',
    'per-field accuracy (normalized: amounts in minor units, ISO dates, folded strings, line items as a set)',
    ...fieldTable(report),
    '',
    'operations of the same run',
    ...operationsLines(report),
    ...(report.baseline ? ['', ...comparisonLines(report.baseline, report)] : []),
  ].join('\n');
}
