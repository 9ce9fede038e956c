/**
 * What `npm run bench` reports: per strategy, drain time against the burst-aware minimum (only for a
 * strategy that committed every job), model calls, attempts and admission denials per completion, 429s, dead-letters, duplicates, lost jobs and the consumer's overhead per record;
 * the floor and the overhead probe beside it; strategy (c) against its targets. Pure: no I/O.
 */
import type { LaneConfig } from '../../../lib/config/lanes.js';
import { BENCH_TARGETS, servedLimit, type BenchStrategyId } from './strategies.js';
import { quantile, round, type Scorecard } from '../scorecard.js';

/** A distribution's summary (ms); nulls when there were no values. */
export interface Distribution {
  n: number;
  p50: number | null;
  p99: number | null;
  mean: number | null;
}

/** What one strategy did. */
/**
 * Jobs a scenario sent while the drain ran, and what they are held to: `fair-share`, their last commit
 * (from their submission) against the time their tenant's weighted share of the quota needs for them
 * (target: at most 1.2x); `urgent`, their p95 from submission to commit against a limit (target: at most 1x).
 */
export interface LaterFigures {
  heldTo: 'fair-share' | 'urgent';
  jobs: number;
  committed: number;
  /** From their submission to the last one's commit (ms); null unless every one committed. */
  lastCommitMs: number | null;
  /** The 95th percentile of submission to commit (ms); null unless every one committed. */
  p95Ms: number | null;
  /** The fair share's time, or the urgent p95 limit (ms). */
  boundMs: number;
  boundDetail: string;
  /** lastCommitMs / boundMs (fair-share) or p95Ms / boundMs (urgent). */
  ratio: number | null;
}

export interface StrategyResult {
  id: BenchStrategyId;
  label: string;
  description: string;
  submitted: number;
  committed: number;
  deadLettered: number;
  lost: number;
  /** Still in the queue at the end (only after a time limit). */
  waiting: number;
  rejected: number;
  needsReview: number;
  /** Idempotency keys committed more than once (must be 0). */
  doubleCommits: number;
  /** Deliveries of an already committed job that the consumer answered from the results table. */
  duplicatesSuppressed: number;
  modelCalls: number;
  modelCallsPerCompletion: number | null;
  /** Receives the consumer handled (first deliveries, re-sends, redeliveries; also of jobs never committed) per committed job. */
  attemptsPerCompletion: number | null;
  /** Receives the consumer handled (one `QueueAgeMs` value each). */
  receives: number;
  /** Admission denials per completion: each one a re-send and another take. */
  admissionDeniedPerCompletion: number | null;
  /** Submitted jobs the strategy did not commit (dead-lettered, in review, rejected, waiting or lost). */
  gaveUpOn: number;
  /** 429s the provider answered. */
  throttled429: number;
  /** Calls admission turned away without calling the provider. */
  admissionDenied: number;
  /** Re-sends with DelaySeconds (throttles and admission denials). */
  deferrals: number;
  /** Real failures (visibility backoff), 429s included under (a). */
  failures: number;
  /** First submission to last commit (ms). */
  drainMs: number | null;
  /** Jobs / (quota owners × RPM), slowest lane, in scaled minutes (the scorecard's bound). */
  quotaBoundMinimumMs: number | null;
  drainRatio: number | null;
  /**
   * The same bound less the provider's first-minute burst (its RPM buckets start full): the slowest
   * lane's (jobs − limit) / limit minutes. A perfect scheduler's drain time.
   */
  burstAwareMinimumMs: number;
  /** Drain time / burst-aware minimum: null for a strategy that did not commit every job (see `gaveUpOn`). */
  burstAwareRatio: number | null;
  /** First submission until every job was in a terminal state (ms), or null on a time limit. */
  settledMs: number | null;
  /** Consumer overhead per record: record time minus time inside the model adapter (ms). */
  overheadMs: Distribution;
  /** The same, for records that called the model and settled (typically the commits). */
  overheadCallingMs: Distribution;
  /** Time inside the model adapter per call (ms). */
  modelMsPerCall: Distribution;
  /** Time of each admission `acquire` (ms): the shared key pool's DynamoDB reads and conditional writes under (c). */
  admissionAcquireMs: Distribution;
  /** The same, for the acquires begun after the drain's first provider minute (the consumers' start-up herd past). */
  admissionAcquireAfterFirstMinuteMs: Distribution;
  /** Admission takes (acquires answered) and the conditional bucket writes that failed because another consumer wrote first (0 and 0 without admission). */
  takes: number;
  conditionFailures: number;
  /** `conditionFailures / takes` (null without a take). */
  conditionFailuresPerTake: number | null;
  /**
   * Event-loop delay of this process while the strategy ran (ms): fauxqs, the fake provider, the
   * poller and every consumer share it, so it is part of every record's time.
   */
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  /** Most records the consumers of all lanes held at once. */
  maxRecordsInFlight: number;
  /** Records in flight (all lanes) as each record saw it when its batch arrived, on average. */
  meanRecordsInFlight: number;
  /** Whole-batch failures the poller saw (a timeout or a crash: should be 0). */
  wholeBatchFailures: number;
  /** The jobs a scenario sent while the drain ran (`noisy-neighbour`, `urgent-behind-bulk`). */
  later?: LaterFigures;
  elapsedMs: number;
  timedOut: boolean;
  scorecard: Scorecard;
}

/** The floor: per message, a bare receive, one conditional put and a delete on the same emulators. */
export interface FloorResult {
  messages: number;
  concurrency: number;
  totalMs: Distribution;
  receiveMs: Distribution;
  putMs: Distribution;
  deleteMs: Distribution;
}

/** The consumer of (c) with one job at a time: its overhead without contention. */
export interface OverheadProbe {
  messages: number;
  /** Record time minus model time (ms). */
  overheadMs: Distribution;
  /** Time inside the model adapter per record (ms), for scale. */
  modelMs: Distribution;
  /**
   * The AWS calls the consumer made per job, by command (the poller's receive and delete not
   * included), with their p50 (ms): where the overhead goes.
   */
  callsPerJob: Record<string, { perJob: number; p50Ms: number | null }>;
}

/** One target of strategy (c): the value measured and whether it is met (null: not measured). */
export interface TargetCheck {
  target: number;
  value: number | null;
  met: boolean | null;
}

/** Everything one bench run found. */
export interface BenchReport {
  date: string;
  machine: { cpuModel: string; cpus: number; memoryGb: number; os: string; node: string; loadAverageAtStart: number[]; loadAverageAtEnd: number[] };
  settings: {
    jobs: number;
    jobsPerLane: Record<string, number>;
    keysPerLane: number;
    providerRpm: number;
    providerTpm: number;
    minuteMs: number;
    /** Requests per scaled minute per lane (quota owners × RPM). */
    laneRequestsPerMinute: number;
    /** The share of each configured per-minute limit the fake provider served (`--provider-share`; 1: all of it). */
    providerShare: number;
    maxReceiveCount: number;
    consumerConcurrencyPerLane: number;
    batchSize: number;
    backoff: LaneConfig['backoff'];
    /** How the fake provider counts a refused request (its dialect's documented rule, with the source). */
    refusedRequestRule: string;
    /** What warmed the emulators before the first strategy (null: skipped). */
    warmup: WarmupResult | null;
  };
  strategies: StrategyResult[];
  /** (c)'s consumer, one job at a time (null: skipped). */
  probe: OverheadProbe | null;
  /** The floor, one message at a time (null: skipped). */
  floor: FloorResult | null;
  /**
   * The floor with as many loops at once as records were in flight in (c), on average: what the same
   * emulators give the bare work under that load (null: skipped, or (c) did not run).
   */
  loadedFloor: FloorResult | null;
  targets: {
    burstAwareRatio: TargetCheck;
    modelCallsPerCompletion: TargetCheck;
    attemptsPerCompletion: TargetCheck;
    admissionDeniedPerCompletion: TargetCheck;
    deadLettered: TargetCheck;
    lost: TargetCheck;
    /** The probe's p50 over the floor's p50: the same conditions on both sides (one message at a time). */
    overheadToFloor: TargetCheck;
    admissionAcquireP99Ms: TargetCheck;
    conditionFailuresPerTake: TargetCheck;
  } | null;
  /** (c)'s overhead p50 during its run over the loaded floor's p50 (informational). */
  overheadToLoadedFloor: number | null;
  elapsedMs: number;
}

/** What `warmEmulators` did before the first strategy, and how the floor's p50 moved while it did. */
export interface WarmupResult {
  /** Floor messages run, `concurrency` at a time. */
  messages: number;
  concurrency: number;
  /** Messages at each end of the floor run whose p50 is reported. */
  sampleMessages: number;
  /** Jobs sent one at a time through the probe's consumer (counted nowhere). */
  probeJobs: number;
  /** The floor's p50 over its first and its last `sampleMessages` messages (ms). */
  firstP50Ms: number | null;
  lastP50Ms: number | null;
  /** How long the warm-up took (ms). */
  elapsedMs: number;
}

/** The report's line on the warm-up before the first strategy. */
export function warmupLine(warmup: WarmupResult | null): string {
  if (warmup === null) return 'warm-up: none (the first strategy met the emulators cold)';
  return (
    `warm-up: ${warmup.messages} floor messages ${warmup.concurrency} at a time (p50 ${num(warmup.firstP50Ms)} ms over the first ${warmup.sampleMessages}, ` +
    `${num(warmup.lastP50Ms)} ms over the last) and ${warmup.probeJobs} jobs through (c)'s consumer, in ${(warmup.elapsedMs / 1000).toFixed(1)} s, counted nowhere`
  );
}

/** p50, p99 and mean of `values` (ms, rounded to 0.01). */
export function distribution(values: readonly number[]): Distribution {
  if (values.length === 0) return { n: 0, p50: null, p99: null, mean: null };
  const r = (v: number | null): number | null => (v === null ? null : round(v, 2));
  return { n: values.length, p50: r(quantile(values, 0.5)), p99: r(quantile(values, 0.99)), mean: r(values.reduce((a, b) => a + b, 0) / values.length) };
}

/** Strategy (c)'s figures against the targets (null when (c) did not run). */
export function checkTargets(strategies: readonly StrategyResult[], probe: OverheadProbe | null, floor: FloorResult | null): BenchReport['targets'] {
  const c = strategies.find((s) => s.id === 'admission');
  if (!c) return null;
  const check = (target: number, value: number | null): TargetCheck => ({ target, value, met: value === null ? null : value <= target });
  const overhead = probe?.overheadMs.p50 != null && floor?.totalMs.p50 ? round(probe.overheadMs.p50 / floor.totalMs.p50, 2) : null;
  return {
    burstAwareRatio: check(BENCH_TARGETS.burstAwareRatio, c.timedOut ? null : c.burstAwareRatio),
    modelCallsPerCompletion: check(BENCH_TARGETS.modelCallsPerCompletion, c.modelCallsPerCompletion),
    attemptsPerCompletion: check(BENCH_TARGETS.attemptsPerCompletion, c.attemptsPerCompletion),
    admissionDeniedPerCompletion: check(BENCH_TARGETS.admissionDeniedPerCompletion, c.admissionDeniedPerCompletion),
    deadLettered: check(BENCH_TARGETS.deadLettered, c.deadLettered),
    lost: check(BENCH_TARGETS.lost, c.lost),
    overheadToFloor: check(BENCH_TARGETS.overheadToFloor, overhead),
    admissionAcquireP99Ms: check(BENCH_TARGETS.admissionAcquireP99Ms, c.admissionAcquireMs.p99),
    conditionFailuresPerTake: check(BENCH_TARGETS.conditionFailuresPerTake, c.conditionFailuresPerTake),
  };
}

/**
 * 0 when every strategy finished in time with nothing lost and nothing committed twice (and, with
 * `--strict`, strategy (c) met every target); else 1. Naive dead-letters by design: that is not a failure.
 */
export function benchExitCode(
  report: { strategies: readonly Pick<StrategyResult, 'timedOut' | 'lost' | 'doubleCommits'>[]; targets: Partial<BenchTargets> | null },
  options: { strict: boolean } = { strict: false },
): number {
  const clean = report.strategies.every((s) => !s.timedOut && s.lost === 0 && s.doubleCommits === 0);
  if (!clean) return 1;
  if (options.strict && report.targets && Object.values(report.targets).some((t) => t !== undefined && t.met !== true)) return 1;
  return 0;
}

/** The targets of strategy (c) in a bench report. */
export type BenchTargets = NonNullable<BenchReport['targets']>;

/** A table row: its label, one cell per strategy, then the target cell. */
export type TableRow = [string, ...string[]];

/** Milliseconds for people: whole ms below 10 s, else seconds with one decimal; '-' for none. */
export const formatMs = (v: number | null): string => (v === null ? '-' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);
const num = (v: number | null, digits = 2): string => (v === null ? '-' : v.toFixed(digits));
const pair = (d: Distribution): string => (d.p50 === null ? '-' : `${num(d.p50)} / ${num(d.p99)}`);

/** A target cell: `text` and whether (c) met it ('met', 'MISSED', or '(n/a)' when not measured); '' without a target. */
function targetCell(t: TargetCheck | undefined, text: string): string {
  return t ? `${text} ${t.met === null ? '(n/a)' : t.met ? 'met' : 'MISSED'}` : '';
}

/** A strategy's drain headline: its ratio to the bound, or how many jobs it gave up on. */
export function drainHeadline(x: Pick<StrategyResult, 'gaveUpOn' | 'burstAwareRatio' | 'timedOut'>): string {
  return x.gaveUpOn > 0 ? `gave up on ${x.gaveUpOn}` : x.burstAwareRatio === null ? '-' : `${num(x.burstAwareRatio)}x${x.timedOut ? ' (time limit)' : ''}`;
}

/**
 * The rows of the strategies' table, by name, with the targets of (c) that `t` has: the bench's table
 * takes them all, a scenario's report the ones it needs (see {@link relabel}).
 */
export function strategyRows(strategies: readonly StrategyResult[], t: Partial<BenchTargets> | undefined) {
  const each = (cell: (x: StrategyResult) => string): string[] => strategies.map(cell);
  return {
    header: ['', ...strategies.map((x) => x.label), 'target (c)'] as TableRow,
    ratio: ['drain / burst-aware minimum', ...each(drainHeadline), targetCell(t?.burstAwareRatio, '<= 1.05x')] as TableRow,
    drain: ['  drain time (last commit)', ...each((x) => formatMs(x.drainMs)), ''] as TableRow,
    bound: ['  burst-aware minimum', ...each((x) => formatMs(x.burstAwareMinimumMs)), ''] as TableRow,
    quotaBound: ['  quota-bound minimum (no burst)', ...each((x) => formatMs(x.quotaBoundMinimumMs)), ''] as TableRow,
    settled: ['  all jobs settled after', ...each((x) => formatMs(x.settledMs)), ''] as TableRow,
    committed: ['committed', ...each((x) => `${x.committed} of ${x.submitted}`), ''] as TableRow,
    calls: [
      'model calls per completion',
      ...each((x) => `${num(x.modelCallsPerCompletion)} (${x.modelCalls})`),
      targetCell(t?.modelCallsPerCompletion, '<= 1.03'),
    ] as TableRow,
    attempts: [
      'attempts per completion',
      ...each((x) => `${num(x.attemptsPerCompletion)} (${x.receives})`),
      targetCell(t?.attemptsPerCompletion, '<= 1.10'),
    ] as TableRow,
    denials: [
      'admission denials per completion',
      ...each((x) => `${num(x.admissionDeniedPerCompletion)} (${x.admissionDenied})`),
      targetCell(t?.admissionDeniedPerCompletion, '<= 0.10'),
    ] as TableRow,
    throttled: ['429s', ...each((x) => String(x.throttled429)), ''] as TableRow,
    resends: ['re-sends / visibility failures', ...each((x) => `${x.deferrals} / ${x.failures}`), ''] as TableRow,
    deadLettered: ['dead-lettered', ...each((x) => String(x.deadLettered)), targetCell(t?.deadLettered, '0')] as TableRow,
    duplicates: ['duplicates: double commits / suppressed', ...each((x) => `${x.doubleCommits} / ${x.duplicatesSuppressed}`), ''] as TableRow,
    lost: ['lost', ...each((x) => String(x.lost)), targetCell(t?.lost, '0')] as TableRow,
    overhead: ['consumer overhead under load p50 / p99 (ms)', ...each((x) => pair(x.overheadMs)), ''] as TableRow,
    overheadCalling: ['  records with a model call (ms)', ...each((x) => pair(x.overheadCallingMs)), ''] as TableRow,
    timed: ['  records timed', ...each((x) => String(x.overheadMs.n)), ''] as TableRow,
    acquire: ['  admission acquire p50 / p99 (ms)', ...each((x) => pair(x.admissionAcquireMs)), targetCell(t?.admissionAcquireP99Ms, 'p99 <= 50')] as TableRow,
    conflicts: [
      '  conditional-check failures per take',
      ...each((x) => (x.takes > 0 ? `${num(x.conditionFailuresPerTake, 3)} (${x.conditionFailures} of ${x.takes})` : '-')),
      targetCell(t?.conditionFailuresPerTake, '<= 0.05'),
    ] as TableRow,
    acquireLater: ['    after the first minute', ...each((x) => pair(x.admissionAcquireAfterFirstMinuteMs)), ''] as TableRow,
    inFlight: ['  records in flight: mean seen / most', ...each((x) => `${num(x.meanRecordsInFlight, 1)} / ${x.maxRecordsInFlight}`), ''] as TableRow,
    loopDelay: ['  event-loop delay p50 / p99 (ms)', ...each((x) => `${num(x.eventLoopDelayMs.p50)} / ${num(x.eventLoopDelayMs.p99)}`), ''] as TableRow,
    modelTime: ['model adapter time per call p50 (ms)', ...each((x) => num(x.modelMsPerCall.p50)), ''] as TableRow,
  };
}

/** The rows from `committed` to `lost` (what each strategy committed and what it cost), in the bench's order. */
export function outcomeRows(r: ReturnType<typeof strategyRows>): TableRow[] {
  return [r.committed, r.calls, r.attempts, r.denials, r.throttled, r.resends, r.deadLettered, r.duplicates, r.lost];
}

/** `row` with another label. */
export function relabel(row: TableRow, label: string): TableRow {
  return [label, ...row.slice(1)];
}

/** Rows as aligned text: the first column padded right, the others left. */
export function renderTable(rows: readonly TableRow[]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) =>
    r
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

/** The machine line of a report. */
export function machineLine(m: BenchReport['machine']): string {
  return `machine: ${m.cpus} x ${m.cpuModel}, ${m.memoryGb} GB, ${m.os}, Node ${m.node}; load average at start ${m.loadAverageAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${m.loadAverageAtEnd.map((l) => l.toFixed(2)).join(' ')}`;
}

/** Renders the report's table for people. */
export function formatBenchReport(report: BenchReport): string {
  const s = report.settings;
  const target = targetCell;
  const t = report.targets ?? undefined;
  const r = strategyRows(report.strategies, t);
  const lines = renderTable([
    r.header,
    r.ratio,
    r.drain,
    r.bound,
    r.quotaBound,
    r.settled,
    ...outcomeRows(r),
    r.overhead,
    r.overheadCalling,
    r.timed,
    r.acquire,
    r.acquireLater,
    r.conflicts,
    r.inFlight,
    r.loopDelay,
    r.modelTime,
  ]);
  const floorLine = (label: string, f: FloorResult | null): string =>
    f
      ? `${label} (${f.concurrency} at a time, ${f.messages} messages): p50 / p99 ${pair(f.totalMs)} ms (receive ${pair(f.receiveMs)}, put ${pair(f.putMs)}, delete ${pair(f.deleteMs)})`
      : `${label}: not measured`;
  const probe = report.probe;
  const overheadLines = [
    'Consumer overhead per message, excluding model time, beside the floor (bare receive + one conditional put + delete',
    'per message, a loop on the same DynamoDB Local and fauxqs):',
    probe
      ? `  (c) consumer, one job at a time (${probe.messages} jobs): p50 / p99 ${pair(probe.overheadMs)} ms (model adapter ${pair(probe.modelMs)} ms)`
      : '  (c) consumer, one job at a time: not measured (--probe-messages 0)',
    ...(probe
      ? [
          `    its AWS calls per job (p50 ms): ${Object.entries(probe.callsPerJob)
            .map(([name, c]) => `${name} ${c.perJob} (${num(c.p50Ms)})`)
            .join(', ')}`,
        ]
      : []),
    `  ${floorLine('floor', report.floor)}`,
    `  => ${target(t?.overheadToFloor, `consumer p50 / floor p50 = ${num(t?.overheadToFloor.value ?? null)}x, target <= 2x:`)}`,
    `  ${floorLine("floor under (c)'s load", report.loadedFloor)}`,
    `  => (c) under load p50 / loaded floor p50 = ${num(report.overheadToLoadedFloor)}x (informational)`,
  ];
  const lanes = Object.entries(s.jobsPerLane)
    .map(([lane, n]) => `${lane} ${n}`)
    .join(', ');
  return [
    `ratelane bench — ${report.date}`,
    machineLine(report.machine),
    `jobs: ${s.jobs} (${lanes}); per lane ${s.keysPerLane} key(s) x ${s.providerRpm} rpm = ${s.laneRequestsPerMinute} requests per provider minute; a minute lasts ${s.minuteMs} ms; ` +
      `maxReceiveCount ${s.maxReceiveCount}; ${s.consumerConcurrencyPerLane} concurrent invocations x batch ${s.batchSize} per lane; ` +
      `failure backoff ${s.backoff.failureBaseSeconds}..${s.backoff.failureCapSeconds} s, throttle backoff ${s.backoff.throttleBaseSeconds}..${s.backoff.throttleCapSeconds} s`,
    ...(s.providerShare < 1
      ? [
          `the fake provider serves ${Math.round(s.providerShare * 100)} % of each configured per-minute limit (${servedLimit(s.providerRpm, s.providerShare)} rpm a key, --provider-share): the bounds below are its`,
        ]
      : []),
    `refused requests: ${s.refusedRequestRule}`,
    warmupLine(s.warmup),
    '',
    ...lines,
    '',
    ...overheadLines,
    '',
    "burst-aware minimum: a perfect scheduler's drain. The provider's RPM buckets start full, so one minute of requests goes at",
    'once, then (jobs - limit) / limit minutes for the slowest lane. A ratio is shown only for a strategy that committed every',
    'job; one that did not shows how many it gave up on. quota-bound minimum: jobs / limit, without the burst (informational).',
    'Consumer overhead: from the start of processRecord until it settled or threw, minus the time inside the model adapter;',
    "the poller's receive and delete (Lambda's event source mapping in AWS) are not in it, but are in the floor. Under load,",
    'every record of a batch runs at once, and DynamoDB Local, fauxqs, the fake provider and the consumers share 2 CPUs.',
    `total run time ${(report.elapsedMs / 1000).toFixed(1)} s`,
  ].join('\n');
}
