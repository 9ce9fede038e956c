/**
 * The evaluation report as one self-contained HTML page: the release stamp, a summary table of the
 * quality, token and operations figures, per-field accuracy by bucket (one grouped bar chart per
 * dimension), the latency, queue-age and attempts distributions, tokens, and — when the report has a
 * baseline — the per-field comparison with regressions and the gate's verdict. Pure: no I/O but the
 * read of Chart.js's bundle (see {@link renderPage}).
 */
import type { BucketDimension, BucketFigures, EvalReport, FieldAccuracy } from './report-model.js';
import { chartFigure, histogram, html, ms, num, pct, rawHtml, renderPage, table, type ChartSpec, type SafeHtml } from '../html-page.js';

/** The dimensions, in the order their charts appear. */
const DIMENSIONS: readonly BucketDimension[] = ['language', 'length', 'schema', 'region'];

/** How a field is named on the charts and in the tables: `schemaVersion field`. */
function fieldLabel(field: Pick<FieldAccuracy, 'schemaVersion' | 'field'>): string {
  return `${field.schemaVersion} ${field.field}`;
}

/** A share (0..1, or null) as percentage points for a chart (null stays a gap). */
function points(value: number | null | undefined): number | null {
  return value === null || value === undefined ? null : Math.round(value * 1000) / 10;
}

/** The fields of some buckets, in first-seen order, each once. */
function fieldsOf(buckets: readonly BucketFigures[]): string[] {
  const seen = new Set<string>();
  for (const b of buckets) for (const f of b.fields) seen.add(fieldLabel(f));
  return [...seen];
}

/** One grouped bar chart per dimension that has buckets: fields on the axis, a series per bucket. */
function bucketCharts(report: EvalReport): ChartSpec[] {
  const charts: ChartSpec[] = [];
  for (const dimension of DIMENSIONS) {
    const buckets = report.buckets.filter((b) => b.dimension === dimension);
    if (buckets.length === 0) continue;
    const labels = fieldsOf(buckets);
    charts.push({
      id: `accuracy-${dimension}`,
      type: 'bar',
      title: `Per-field accuracy by ${dimension} (%)`,
      labels,
      series: buckets.map((b) => {
        const byField = new Map(b.fields.map((f) => [fieldLabel(f), f.accuracy]));
        return { label: `${b.bucket} (${b.documents} docs)`, data: labels.map((l) => points(byField.get(l))) };
      }),
      yTitle: 'accuracy (%)',
      yMin: 0,
      yMax: 100,
      height: Math.max(320, 220 + labels.length * 6),
    });
  }
  return charts;
}

/** The distributions: latency and queue age (ms) and attempts as histograms (each only when it has values), and tokens. */
function distributionCharts(report: EvalReport): ChartSpec[] {
  const d = report.distributions;
  const charts: ChartSpec[] = [];
  const add = (id: string, title: string, values: readonly number[], xTitle: string, integer: boolean): void => {
    if (values.length === 0) return;
    const h = histogram(values, { integer, bins: 20 });
    charts.push({ id, type: 'bar', title, labels: h.labels, series: [{ label: 'count', data: h.counts }], xTitle, yTitle: 'count', histogram: true });
  };
  add('latency', `End-to-end latency of committed jobs (n = ${d.latencyMs.length})`, d.latencyMs, 'latency (ms)', false);
  add('queue-age', `Queue age at completion (n = ${d.queueAgeMs.length})`, d.queueAgeMs, 'queue age (ms)', false);
  add('attempts', `Attempts per completion (n = ${d.attempts.length})`, d.attempts, 'attempts', true);
  const t = report.tokens;
  charts.push({
    id: 'tokens',
    type: 'bar',
    title: `Tokens${t.model ? ` (${t.model})` : ''}`,
    labels: ['input', 'output'],
    series: [
      { label: 'total', data: [t.inputTokens, t.outputTokens] },
      ...(report.baseline ? [{ label: `baseline ${report.baseline.baseline.id} input`, data: [report.baseline.tokens.baselineInput, null] }] : []),
    ],
    yTitle: 'tokens',
  });
  return charts;
}

/** The baseline chart: per field (and the whole object), baseline beside candidate. */
function baselineChart(report: EvalReport): ChartSpec[] {
  const b = report.baseline;
  if (!b) return [];
  const labels = ['whole object', ...b.fields.map(fieldLabel)];
  return [
    {
      id: 'baseline',
      type: 'bar',
      title: `Accuracy: baseline ${b.baseline.id} vs candidate ${report.release.id} (%)`,
      labels,
      series: [
        { label: `baseline ${b.baseline.id}`, data: [points(b.wholeObject.baseline), ...b.fields.map((f) => points(f.baseline))], color: '#999999' },
        { label: `candidate ${report.release.id}`, data: [points(b.wholeObject.candidate), ...b.fields.map((f) => points(f.candidate))], color: '#0072B2' },
      ],
      yTitle: 'accuracy (%)',
      yMin: 0,
      yMax: 100,
      height: Math.max(320, 220 + labels.length * 8),
    },
  ];
}

/** Every chart of the page, in page order. */
export function evalCharts(report: EvalReport): ChartSpec[] {
  return [...bucketCharts(report), ...distributionCharts(report), ...baselineChart(report)];
}

function stampSection(report: EvalReport): SafeHtml {
  const r = report.release;
  const prompts = Object.entries(r.prompts).map(([schema, prompt]) => html`<li><code>${schema}</code>: <code>${prompt}</code></li>`);
  return html`<table class="stamp"><tbody>
<tr><th>release</th><td><code>${r.id}</code> — ${r.description}</td></tr>
<tr><th>prompts per schema</th><td><ul>${prompts}</ul></td></tr>
<tr><th>normalizer / scorer</th><td><code>${r.normalizerVersion}</code> / <code>${r.scorerVersion}</code></td></tr>
<tr><th>lane / provider / seed</th><td>${report.lane} / ${report.provider} / ${report.seed}</td></tr>
<tr><th>generated</th><td>${report.generatedAt}</td></tr>
</tbody></table>`;
}

function summarySection(report: EvalReport): SafeHtml {
  const o = report.overall;
  const t = report.tokens;
  const op = report.operations;
  const rows: [string, string][] = [
    ['documents scored', String(o.documents)],
    ['whole-object accuracy', `${pct(o.wholeObjectAccuracy)} (${o.wholeObjectCorrect} of ${o.documents})`],
    ['needs-review share', pct(o.needsReviewShare)],
    ['expected reviews that went to review', `${o.reviewExpected.correct} of ${o.reviewExpected.total}`],
    ['tokens in / out', `${t.inputTokens} / ${t.outputTokens} (per document ${num(t.inputTokensPerDocument, 0)} / ${num(t.outputTokensPerDocument, 0)})`],
    ['cost', t.costUsd === null ? `– (no price for ${t.model ?? 'the model'})` : `$${t.costUsd.toFixed(4)}${t.model ? ` at ${t.model} list price` : ''}`],
    ['queue age p95', ms(op.queueAgeMs.p95)],
    ['latency p50 / p95', `${ms(op.latencyMs.p50)} / ${ms(op.latencyMs.p95)}`],
    ['attempts per completion', num(op.attemptsPerCompletion)],
    ['duplicates suppressed', String(op.duplicatesSuppressed)],
    ['unresolved batch items', op.unresolvedBatchItems === null ? '– (batch lane did not run)' : String(op.unresolvedBatchItems)],
    ['region mismatches', String(op.regionMismatches)],
    [
      'submitted → committed / review / rejected / DLQ / lost',
      `${op.submitted} → ${op.committed} / ${op.needsReview} / ${op.rejected} / ${op.deadLettered} / ${op.lost}${op.waiting ? ` (${op.waiting} still waiting)` : ''}`,
    ],
    ['elapsed', ms(op.elapsedMs)],
  ];
  return table(['figure', 'value'], rows, 'summary');
}

function fieldTable(report: EvalReport): SafeHtml {
  const rows = report.overall.fields.map((f) => [fieldLabel(f), pct(f.accuracy), `${f.correct} of ${f.total}`]);
  return table(['field', 'accuracy', 'correct'], rows);
}

function bucketTable(report: EvalReport): SafeHtml {
  const rows = report.buckets.map((b) => [b.dimension, b.bucket, String(b.documents), pct(b.wholeObjectAccuracy), pct(b.needsReviewShare)]);
  return table(['dimension', 'bucket', 'documents', 'whole-object accuracy', 'needs review'], rows);
}

function baselineSection(report: EvalReport, charts: readonly ChartSpec[]): SafeHtml {
  const b = report.baseline;
  if (!b) return html``;
  const verdict = b.gate.passed
    ? html`<p class="good" data-gate="passed">Gate: PASSED — no field dropped more than its tolerance.</p>`
    : html`<p class="bad" data-gate="failed">Gate: FAILED — ${b.gate.regressions.length} regression(s): ${b.gate.regressions.join(', ')}</p>`;
  const delta = (v: number | null): string => (v === null ? '–' : `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)} pts`);
  const rows = b.fields.map((f) => [
    fieldLabel(f),
    pct(f.baseline),
    pct(f.candidate),
    delta(f.delta),
    `−${(f.tolerance * 100).toFixed(1)} pts`,
    f.regressed ? html`<span class="bad" data-regressed="true">REGRESSED</span>` : html`<span class="good">ok</span>`,
  ]);
  const wo = b.wholeObject;
  const cost = (v: number | null): string => (v === null ? '–' : `$${v.toFixed(4)}`);
  return html`<h2>Baseline: ${b.baseline.id}</h2>
<p class="note">Baseline release <code>${b.baseline.id}</code> (${b.baseline.description}); normalizer <code>${b.baseline.normalizerVersion}</code>, scorer <code>${b.baseline.scorerVersion}</code>.</p>
${verdict}
${charts.filter((c) => c.id === 'baseline').map(chartFigure)}
${table(
  ['field', 'baseline', 'candidate', 'delta', 'tolerated drop', 'verdict'],
  [['whole object', pct(wo.baseline), pct(wo.candidate), delta(wo.delta), '', ''], ...rows],
)}
${
  b.bucketRegressions.length > 0
    ? html`<h3>Regressions inside a bucket (${String(b.minBucketDocuments)}+ documents)</h3>
${table(
  ['field', 'bucket', 'documents', 'baseline', 'candidate', 'delta'],
  b.bucketRegressions.map((r) => [fieldLabel(r), `${r.dimension} ${r.bucket}`, String(r.documents), pct(r.baseline), pct(r.candidate), delta(r.delta)]),
)}`
    : html``
}
${table(
  ['', 'baseline', 'candidate'],
  [
    ['input tokens', String(b.tokens.baselineInput), String(b.tokens.candidateInput)],
    ['cost', cost(b.tokens.baselineCostUsd), cost(b.tokens.candidateCostUsd)],
  ],
)}`;
}

/**
 * Renders an evaluation report as one self-contained HTML page (Chart.js inlined, no network).
 * Every string of the report is HTML-escaped; the report itself is embedded as JSON in
 * `<script type="application/json" id="report-data">`. Each chart is a `canvas[data-chart]`; the
 * page sets `body[data-charts-rendered]` once drawn (`data-charts-expected` is their number).
 */
export function renderEvalHtml(report: EvalReport): string {
  const charts = evalCharts(report);
  const figures = (ids: (id: string) => boolean): SafeHtml[] => charts.filter((c) => ids(c.id)).map(chartFigure);
  const gate = report.baseline ? (report.baseline.gate.passed ? html` — gate passed` : html` — <span class="bad">gate FAILED</span>`) : html``;
  const body = html`<header><h1>ratelane eval — release <code>${report.release.id}</code>${gate}</h1></header>
${stampSection(report)}
<h2>Summary</h2>
${summarySection(report)}
<h2>Per-field accuracy</h2>
<p class="note">Fields are named "schema field". One chart per dimension: the fields on the axis, one bar per bucket; a missing bar is a field the bucket never saw.</p>
${figures((id) => id.startsWith('accuracy-'))}
<h3>All documents</h3>
${fieldTable(report)}
<h3>Buckets</h3>
${bucketTable(report)}
<h2>Distributions</h2>
${figures((id) => id === 'latency' || id === 'queue-age' || id === 'attempts' || id === 'tokens')}
${baselineSection(report, charts)}
${rawHtml('<footer class="note">Generated by ratelane; self-contained (Chart.js inlined, nothing loaded from the network).</footer>')}`;
  return renderPage({ title: `ratelane eval — ${report.release.id}`, body, charts, data: report });
}
