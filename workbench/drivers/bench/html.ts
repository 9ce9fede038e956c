/**
 * The bench's report as one self-contained HTML page: per strategy, the drain curve (jobs committed
 * over time since the first submission) against the quota line (the most jobs the keys' per-minute
 * request limits let commit by then) and the burst-aware line, one chart with every strategy's curve,
 * and the figures of the text report beside them. See workbench/drivers/bench/curve.ts for the lines.
 */
import { committedSteps, quotaLine, type DrainCurve } from './curve.js';
import type { BenchReport, StrategyResult } from './report.js';
import { chartFigure, html, ms, num, PALETTE, rawHtml, renderPage, table, type ChartSpec, type SafeHtml } from '../html-page.js';

/** What {@link renderBenchHtml} draws: the bench's report and each strategy's drain curve. */
export interface BenchHtmlInput {
  report: BenchReport;
  /** One per strategy that ran, in run order (a strategy without a curve gets no chart). */
  curves: readonly DrainCurve[];
}

const QUOTA_COLOR = '#D55E00';
const BURST_COLOR = '#999999';

/** The end of a curve's x axis: its last commit, the quota bound, or the report's drain time, whichever is latest. */
function curveEndMs(curve: DrainCurve, result: StrategyResult | undefined): number {
  const quotaEnd = quotaLine(curve.lanes, curve.minuteMs, 0).at(-1)?.x ?? 0;
  return Math.max(curve.commitOffsetsMs.at(-1) ?? 0, quotaEnd, result?.drainMs ?? 0, 1);
}

/** Milliseconds as seconds on the x axis. */
function seconds(points: readonly { x: number; y: number }[]): { x: number; y: number }[] {
  return points.map((p) => ({ x: Math.round(p.x) / 1000, y: p.y }));
}

/** Every chart of the page: all strategies together, then one per strategy. */
export function benchCharts(input: BenchHtmlInput): ChartSpec[] {
  const byId = new Map(input.report.strategies.map((s) => [s.id, s]));
  const curves = input.curves.filter((c) => c.submitted > 0);
  if (curves.length === 0) return [];
  const end = Math.max(...curves.map((c) => curveEndMs(c, byId.get(c.strategyId))));
  const first = curves[0]!;
  const sameQuota = curves.every((c) => JSON.stringify(c.lanes) === JSON.stringify(first.lanes) && c.minuteMs === first.minuteMs);
  const all: ChartSpec = {
    id: 'drain-all',
    type: 'line',
    title: 'Jobs committed over time, every strategy',
    xLinear: true,
    xTitle: 'seconds since the first submission',
    yTitle: 'jobs committed',
    series: [
      ...curves.map((c, i) => ({ label: c.label, data: seconds(committedSteps(c.commitOffsetsMs)), stepped: true, color: PALETTE[i % PALETTE.length]! })),
      ...(sameQuota ? [{ label: 'quota line', data: seconds(quotaLine(first.lanes, first.minuteMs, end)), color: QUOTA_COLOR, dashed: true }] : []),
    ],
    height: 380,
  };
  const each = curves.map((c, i): ChartSpec => {
    const until = curveEndMs(c, byId.get(c.strategyId));
    return {
      id: `drain-${c.strategyId}`,
      type: 'line',
      title: `${c.label}: ${c.commitOffsetsMs.length} of ${c.submitted} committed`,
      xLinear: true,
      xTitle: 'seconds since the first submission',
      yTitle: 'jobs committed',
      series: [
        { label: `${c.label} committed`, data: seconds(committedSteps(c.commitOffsetsMs)), stepped: true, color: PALETTE[i % PALETTE.length]! },
        { label: 'quota line (limit × t)', data: seconds(quotaLine(c.lanes, c.minuteMs, until)), color: QUOTA_COLOR, dashed: true },
        { label: 'burst-aware line (limit × (1 minute + t))', data: seconds(quotaLine(c.lanes, c.minuteMs, until, true)), color: BURST_COLOR, dashed: true },
      ],
    };
  });
  return [all, ...each];
}

function settingsSection(report: BenchReport): SafeHtml {
  const s = report.settings;
  const m = report.machine;
  const lanes = Object.entries(s.jobsPerLane).map(([lane, n]) => `${lane} ${n}`);
  return table(
    ['setting', 'value'],
    [
      ['date', report.date],
      ['machine', `${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, ${m.os}, Node ${m.node}`],
      ['load average start / end', `${m.loadAverageAtStart.join(' ')} / ${m.loadAverageAtEnd.join(' ')}`],
      ['jobs', `${s.jobs} (${lanes.join(', ')})`],
      ['quota per lane', `${s.keysPerLane} key(s) × ${s.providerRpm} rpm = ${s.laneRequestsPerMinute} requests per provider minute`],
      ['provider minute', ms(s.minuteMs)],
      ['consumer', `${s.consumerConcurrencyPerLane} concurrent invocations × batch ${s.batchSize} per lane; maxReceiveCount ${s.maxReceiveCount}`],
      ['total run time', ms(report.elapsedMs)],
    ],
    'summary',
  );
}

function strategyTable(report: BenchReport): SafeHtml {
  const rows = report.strategies.map((x) => [
    x.label,
    `${x.committed} of ${x.submitted}`,
    ms(x.drainMs),
    ms(x.burstAwareMinimumMs),
    x.gaveUpOn > 0 ? `gave up on ${x.gaveUpOn}` : x.burstAwareRatio === null ? '–' : `${num(x.burstAwareRatio)}×${x.timedOut ? ' (time limit)' : ''}`,
    `${num(x.modelCallsPerCompletion)} (${x.modelCalls})`,
    num(x.attemptsPerCompletion),
    `${num(x.admissionDeniedPerCompletion)} (${x.admissionDenied})`,
    String(x.throttled429),
    String(x.deadLettered),
    `${x.doubleCommits} / ${x.duplicatesSuppressed}`,
    x.lost > 0 ? html`<span class="bad">${x.lost}</span>` : '0',
  ]);
  return table(
    [
      'strategy',
      'committed',
      'drain (last commit)',
      'burst-aware minimum',
      'drain / burst-aware',
      'calls per completion',
      'attempts per completion',
      'denials per completion',
      '429s',
      'DLQ',
      'double / suppressed',
      'lost',
    ],
    rows,
  );
}

function targetsSection(report: BenchReport): SafeHtml {
  const t = report.targets;
  if (!t) return html``;
  const rows = Object.entries(t).map(([name, check]) => [
    name,
    String(check.target),
    check.value === null ? '–' : String(check.value),
    check.met === null ? 'n/a' : check.met ? html`<span class="good">met</span>` : html`<span class="bad">MISSED</span>`,
  ]);
  return html`<h2>Targets of (c)</h2>${table(['target', 'at most', 'measured', ''], rows)}`;
}

/**
 * Renders the bench's report as one self-contained HTML page (Chart.js inlined, no network): the
 * settings, the strategies' figures, every strategy's drain curve together, and per strategy its
 * drain curve against the quota line and the burst-aware line. Strings are HTML-escaped; the input is
 * embedded as JSON in `<script type="application/json" id="report-data">`.
 */
export function renderBenchHtml(input: BenchHtmlInput): string {
  const charts = benchCharts(input);
  const body = html`<header><h1>ratelane bench — ${input.report.date}</h1></header>
${settingsSection(input.report)}
<h2>Strategies</h2>
${strategyTable(input.report)}
<h2>Drain curves</h2>
<p class="note">Each curve counts the jobs committed (first commit per job) since the first submission. The <b>quota line</b> is
the most jobs the keys' per-minute request limits let commit by each moment: the sum over the lanes of min(lane jobs,
lane limit × t / minute), with the lane limit = distinct quota owners × requests per minute; it reaches every job at the
quota-bound minimum. The <b>burst-aware line</b> is the sum of min(lane jobs, lane limit × (1 + t / minute)): the provider's
buckets start full, so one minute's requests can go at once. Both assume one model call per job and no processing time.</p>
${charts.map(chartFigure)}
${targetsSection(input.report)}
${rawHtml('<footer class="note">Generated by ratelane bench; self-contained (Chart.js inlined, nothing loaded from the network).</footer>')}`;
  return renderPage({ title: `ratelane bench — ${input.report.date}`, body, charts, data: input });
}
