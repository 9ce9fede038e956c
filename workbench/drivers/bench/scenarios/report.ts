/**
 * What a bench scenario reports: its settings, its bound (the slowest lane's, with how each lane's
 * was computed), per strategy the drain against that bound (only for a strategy that committed every
 * job, else "gave up on N") and the waste figures, and strategy (c) against the scenario's targets;
 * then, after several scenarios, a summary. The table and the targets are the bench's own
 * (`../report.ts`). Pure: no I/O.
 */
import {
  checkTargets,
  drainHeadline,
  outcomeRows,
  formatMs,
  machineLine,
  relabel,
  renderTable,
  strategyRows,
  type BenchReport,
  type BenchTargets,
  type LaterFigures,
  type StrategyResult,
  type TargetCheck,
  type TableRow,
  type WarmupResult,
  warmupLine,
} from '../report.js';
import { markdownTable } from '../../docs-page.js';
import type { ScenarioBound } from './bounds.js';
import { FAIR_SHARE_RATIO, type BenchScenarioName } from './scenarios.js';

/** A scenario's settings, as run. */
export interface ScenarioSettings {
  jobs: number;
  jobsPerLane: Record<string, number>;
  keysPerLane: number;
  minuteMs: number;
  /** Per key. */
  providerRpm: number;
  providerTpm: number;
  /** Requests per fixed day per key; null when no daily limit binds. */
  providerDaily: number | null;
  /** Length of the scaled day (ms); null when no daily limit binds. */
  dayMs: number | null;
  /** Key ids (of every lane) out of credit for the whole run. */
  outOfCreditKeyIds: string[];
  consumerConcurrencyPerLane: number;
  batchSize: number;
  /** How the fake provider counts a refused request. */
  refusedRequestRule: string;
  /** What warmed the emulators before the run's first strategy (null: skipped). */
  warmup: WarmupResult | null;
}

/** One strategy's headline figures in a scenario (the JSON's per-strategy summary). */
export interface ScenarioStrategyFigures {
  id: StrategyResult['id'];
  label: string;
  submitted: number;
  committed: number;
  /** Submitted jobs not committed. */
  gaveUpOn: number;
  /** First submission to last commit (ms). */
  drainMs: number | null;
  /** The bound this strategy's run was held to (ms). */
  boundMs: number;
  /** Drain / bound: only for a strategy that committed every job in time, else null. */
  drainRatio: number | null;
  /** The ratio as `1.05x`, or `gave up on N`. */
  drain: string;
  modelCallsPerCompletion: number | null;
  attemptsPerCompletion: number | null;
  admissionDeniedPerCompletion: number | null;
  throttled429: number;
  deadLettered: number;
  lost: number;
  doubleCommits: number;
  timedOut: boolean;
  /** The jobs sent while the drain ran, where the scenario has them. */
  later?: LaterFigures;
}

/**
 * Strategy (c)'s targets in a scenario: calls and attempts per completion, dead-lettered, lost, drain
 * against the scenario's bound; with later jobs, theirs: `laterFairShare` (last commit within 1.2x the fair share's
 * time) or `urgentP95` (p95 submission to commit within the limit).
 */
export type ScenarioTargets = Partial<BenchTargets> & { laterFairShare?: TargetCheck; urgentP95?: TargetCheck };

/** Everything one scenario found. */
export interface ScenarioReport {
  scenario: BenchScenarioName;
  /** What the scenario sets, in one line. */
  description: string;
  date: string;
  machine: BenchReport['machine'];
  settings: ScenarioSettings;
  /** The scenario's bound: (c)'s run's (each strategy's own is in its figures). */
  bound: ScenarioBound;
  figures: ScenarioStrategyFigures[];
  /** Every strategy's full figures, as the bench reports them (`burstAwareMinimumMs` is the scenario's bound). */
  strategies: StrategyResult[];
  targets: ScenarioTargets | null;
  elapsedMs: number;
}

/** A strategy's headline figures. */
export function scenarioFigures(s: StrategyResult): ScenarioStrategyFigures {
  return {
    id: s.id,
    label: s.label,
    submitted: s.submitted,
    committed: s.committed,
    gaveUpOn: s.gaveUpOn,
    drainMs: s.drainMs,
    boundMs: s.burstAwareMinimumMs,
    drainRatio: s.timedOut ? null : s.burstAwareRatio,
    drain: drainHeadline(s),
    modelCallsPerCompletion: s.modelCallsPerCompletion,
    attemptsPerCompletion: s.attemptsPerCompletion,
    admissionDeniedPerCompletion: s.admissionDeniedPerCompletion,
    throttled429: s.throttled429,
    deadLettered: s.deadLettered,
    lost: s.lost,
    doubleCommits: s.doubleCommits,
    timedOut: s.timedOut,
    ...(s.later ? { later: s.later } : {}),
  };
}

/**
 * Strategy (c) against a scenario's targets (null when (c) did not run): the bench's checks of calls
 * per completion, dead-lettered and lost, and of drain against the scenario's bound, which (c) misses
 * when it did not commit every job in time.
 */
export function scenarioTargets(strategies: readonly StrategyResult[]): ScenarioTargets | null {
  const all = checkTargets(strategies, null, null);
  const c = strategies.find((s) => s.id === 'admission');
  if (!all || !c) return null;
  const gaveUp = c.timedOut || c.gaveUpOn > 0;
  const later = c.later;
  const laterCheck = (target: number): TargetCheck => ({ target, value: later?.ratio ?? null, met: later?.ratio == null ? false : later.ratio <= target });
  return {
    burstAwareRatio: gaveUp ? { ...all.burstAwareRatio, value: null, met: false } : all.burstAwareRatio,
    modelCallsPerCompletion: all.modelCallsPerCompletion,
    attemptsPerCompletion: all.attemptsPerCompletion,
    deadLettered: all.deadLettered,
    lost: all.lost,
    ...(later?.heldTo === 'fair-share' ? { laterFairShare: laterCheck(FAIR_SHARE_RATIO) } : {}),
    ...(later?.heldTo === 'urgent' ? { urgentP95: laterCheck(1) } : {}),
  };
}

/** The bound a scenario reports: (c)'s run's, else the last strategy's. */
export function reportedBound(runs: readonly { result: Pick<StrategyResult, 'id'>; bound: ScenarioBound }[]): ScenarioBound {
  const run = runs.find((r) => r.result.id === 'admission') ?? runs.at(-1);
  return run?.bound ?? { ms: 0, formula: 'no strategy ran', perLane: [] };
}

/** Renders one scenario's report for people. */
export function formatScenarioReport(report: ScenarioReport): string {
  const s = report.settings;
  const r = strategyRows(report.strategies, report.targets ?? undefined);
  const table = renderTable([
    r.header,
    relabel(r.ratio, 'drain / scenario bound'),
    r.drain,
    relabel(r.bound, '  scenario bound (this run)'),
    r.settled,
    ...outcomeRows(r),
  ]);
  const lanes = Object.entries(s.jobsPerLane)
    .map(([lane, n]) => `${lane} ${n}`)
    .join(', ');
  return [
    `ratelane bench, scenario ${report.scenario} — ${report.date}`,
    machineLine(report.machine),
    `${report.scenario}: ${report.description}`,
    `jobs: ${s.jobs} (${lanes}); a minute lasts ${s.minuteMs} ms; ${s.consumerConcurrencyPerLane} concurrent invocations x batch ${s.batchSize} per lane`,
    `refused requests: ${s.refusedRequestRule}`,
    warmupLine(s.warmup),
    `bound: ${formatMs(report.bound.ms)}, the slowest lane's: ${report.bound.formula}`,
    ...report.bound.perLane.map((l) => `  ${l.lane}: ${formatMs(l.ms)} (${l.detail})`),
    ...report.figures.flatMap((f) => (f.later ? [laterLine(f.label, f.later)] : [])),
    '',
    ...table,
    '',
    `(c) against the scenario's targets: ${targetsLine(report.targets)}`,
    "A ratio is shown only for a strategy that committed every job; each strategy is held to its own run's bound (with a daily",
    "reset, the reset's distance from the submission differs by the stack's start-up). Consumer overhead is the baseline's to measure.",
    `total run time ${(report.elapsedMs / 1000).toFixed(1)} s`,
  ].join('\n');
}

/** One strategy's later jobs in a line. */
function laterLine(label: string, l: LaterFigures): string {
  const held =
    l.heldTo === 'urgent'
      ? `p95 submission to commit ${formatMs(l.p95Ms)} against ${formatMs(l.boundMs)} (${l.boundDetail})`
      : `last commit ${formatMs(l.lastCommitMs)} after they were sent against their fair share's ${formatMs(l.boundMs)} (${l.boundDetail})`;
  return `${label}: later jobs ${l.committed} of ${l.jobs} committed; ${held}: ${l.ratio ?? '-'}x`;
}

/** How each target is named in a one-line verdict. */
const TARGET_NAMES: Readonly<Record<keyof ScenarioTargets, string>> = {
  burstAwareRatio: 'drain <= 1.05x the bound',
  modelCallsPerCompletion: 'calls per completion <= 1.03',
  attemptsPerCompletion: 'attempts per completion <= 1.10',
  admissionDeniedPerCompletion: 'denials per completion <= 0.10',
  deadLettered: '0 dead-lettered',
  lost: '0 lost',
  overheadToFloor: 'overhead <= 2x floor',
  admissionAcquireP99Ms: 'take p99 <= 50 ms',
  conditionFailuresPerTake: 'conditional-check failures per take <= 0.05',
  laterFairShare: `later tenant's last commit <= ${FAIR_SHARE_RATIO}x its fair share's time`,
  urgentP95: 'urgent p95 submission to commit <= the limit',
};

/** `met: …; MISSED: …; n/a: …` for the targets (or that (c) did not run). */
export function targetsLine(targets: ScenarioTargets | null): string {
  if (!targets) return '(c) did not run';
  const named = (Object.entries(targets) as [keyof ScenarioTargets, TargetCheck | undefined][]).filter(([, t]) => t !== undefined);
  const group = (label: string, met: boolean | null): string[] => {
    const names = named.filter(([, t]) => t!.met === met).map(([k, t]) => `${TARGET_NAMES[k]} (${t!.value ?? '-'})`);
    return names.length > 0 ? [`${label}: ${names.join(', ')}`] : [];
  };
  return [...group('MISSED', false), ...group('met', true), ...group('not measured', null)].join('; ');
}

/** The summary after several scenarios: per scenario its bound, each strategy's drain and calls, and (c)'s verdict. */
export function formatScenarioSummary(reports: readonly ScenarioReport[]): string {
  const labels = [...new Set(reports.flatMap((r) => r.figures.map((f) => f.label)))];
  const rows: TableRow[] = [
    ['scenario', 'bound', ...labels],
    ...reports.map((r): TableRow => {
      const cell = (label: string): string => {
        const f = r.figures.find((x) => x.label === label);
        return f ? `${f.drain}, ${f.modelCallsPerCompletion?.toFixed(2) ?? '-'} calls/c` : '-';
      };
      return [r.scenario, formatMs(r.bound.ms), ...labels.map(cell)];
    }),
  ];
  return [
    'ratelane bench — summary of the scenarios (drain / the scenario bound, or jobs given up on; model calls per completion)',
    ...renderTable(rows),
    '',
    "(c) against each scenario's targets:",
    ...reports.map((r) => `  ${r.scenario}: ${targetsLine(r.targets)}`),
  ].join('\n');
}

/**
 * The scenarios as docs/benchmarks/scenarios.md shows them (`--write-docs`): a markdown table, a row per
 * scenario and strategy, with the targets of its scenario that (c) missed or could not measure.
 */
export function formatScenarioDocsTable(reports: readonly ScenarioReport[]): string {
  const fixed = (v: number | null, digits: number): string => (v === null ? '-' : v.toFixed(digits));
  // What (c) missed or could not measure; 'all met' when nothing.
  const verdict = (targets: ScenarioTargets | null): string =>
    targetsLine(targets)
      .split('; ')
      .filter((group) => !group.startsWith('met: '))
      .join('; ') || 'all met';
  const rows = reports.flatMap((r) =>
    r.figures.map((f) => [
      `${r.scenario} (${formatMs(r.bound.ms)})`,
      f.label,
      f.drainRatio === null ? f.drain : `${f.drainRatio.toFixed(3)}x`,
      fixed(f.modelCallsPerCompletion, 3),
      fixed(f.attemptsPerCompletion, 2),
      String(f.throttled429),
      `${f.deadLettered}, ${f.lost}`,
      f.id === 'admission' ? verdict(r.targets) : '',
    ]),
  );
  const header = [
    'scenario (bound)',
    'strategy',
    'drain / bound',
    'calls / completion',
    'attempts / completion',
    '429s',
    'dead-lettered, lost',
    "(c)'s targets",
  ];
  return markdownTable(header, rows, [0, 1, 7]);
}
