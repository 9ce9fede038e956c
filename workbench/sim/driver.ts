/**
 * The simulator's driver (`ratelane sim`, workbench/sim/command.ts): runs each strategy on each scenario
 * (two at a time in worker threads on a multi-core machine), writes progress to stderr, a table to
 * stdout, and with `json` one JSON object as the last line of stdout.
 */
import { cpus, totalmem } from 'node:os';
import { Worker } from 'node:worker_threads';
import { RatelaneError } from '../../lib/platform/errors.js';
import { DEFAULT_SIM_SETTINGS, type SimProgress, type SimSettings } from './settings.js';
import { simulate } from './engine.js';
import type { SizeClassFigures } from './jobs.js';
import type { StrategyResult } from './results.js';
import { PRICES, PRICES_CHECKED, PRICES_REGION } from '../../lib/platform/aws-prices.js';
import { SCENARIOS, withOwners, type LongJobs, type ScenarioId } from './scenarios.js';
import { STRATEGIES, type StrategyId } from './strategies.js';

/** Options of {@link runSim}. */
export interface SimOptions {
  jobs: number;
  consumers: number;
  /** Lambda concurrency of the account (see `SimSettings.accountConcurrency`). */
  accountConcurrency: number;
  /** (c): bucket shards per owner (see `SimSettings.bucketShards`); absent: as the lane sizes them. */
  bucketShards?: number | undefined;
  /** Quota owners the scenarios' quota is split over (see `SimSettings.owners`); absent: the scenario's. */
  owners?: number | undefined;
  scenarios: ScenarioId[];
  strategies: StrategyId[];
  seed: number;
  failureRate: number;
  outputEstimate: number;
  /** (c): the in-process booking window (ms; see `SimSettings.bookWithinMs`). */
  bookWithinMs: number;
  /** The work limit: records received per job submitted before a run stops (0: none; see `SimSettings.maxReceivesPerJob`). */
  maxReceivesPerJob: number;
  parallel: number;
  json: boolean;
  quiet: boolean;
}

/** A simulation worker thread failed or exited early (the simulation then runs in-process). */
class SimWorkerError extends RatelaneError {
  override name = 'SimWorkerError';
  readonly kind = 'internal' as const;
  readonly retryable = true;
}

/** Where {@link runSim} writes. */
export interface SimIo {
  /** One line (no newline) of the table or the JSON. */
  stdout: (line: string) => void;
  /** One line of progress. */
  stderr: (line: string) => void;
}

/** The settings a run uses. */
function settingsFor(
  options: Pick<
    SimOptions,
    'jobs' | 'consumers' | 'accountConcurrency' | 'bucketShards' | 'owners' | 'seed' | 'failureRate' | 'outputEstimate' | 'bookWithinMs' | 'maxReceivesPerJob'
  >,
): SimSettings {
  return {
    ...DEFAULT_SIM_SETTINGS,
    jobs: options.jobs,
    consumers: options.consumers,
    accountConcurrency: options.accountConcurrency,
    bucketShards: options.bucketShards,
    owners: options.owners,
    seed: options.seed,
    failureRate: options.failureRate,
    admissionOutputTokenEstimate: options.outputEstimate,
    bookWithinMs: options.bookWithinMs,
    maxReceivesPerJob: options.maxReceivesPerJob,
  };
}

/** Bucket items named in the report's peak line (the busiest; every one is in the JSON). */
const PEAKS_SHOWN = 8;

/** The AWS bill per million committed jobs (the run's bill over its completions). */
function costPerMillionCompletions(r: Pick<StrategyResult, 'costPerMillion' | 'completed' | 'deadLettered' | 'rejected' | 'lost' | 'unfinished'>): number {
  const jobs = r.completed + r.deadLettered + r.rejected + r.lost + r.unfinished;
  return r.completed > 0 ? (r.costPerMillion.total * jobs) / r.completed : Number.POSITIVE_INFINITY;
}

/** The issue's targets for strategy (c); the AWS cost per million jobs is held to naive's in the same scenario (when it ran). */
const TARGETS = { drainOverBound: 1.15, callsPerCompletion: 1.03, deadLettered: 0, lost: 0 } as const;

/** A bucket item's writes per second may reach at most this share of DynamoDB's per-item ceiling. */
const ITEM_WRITE_HEADROOM = 0.5;

/** One target check of strategy (c) in one scenario. */
interface TargetCheck {
  scenario: ScenarioId;
  target: keyof typeof TARGETS | 'costPerCompletionAtMostNaive' | 'peakItemWritesBelowHalfCeiling';
  limit: number;
  measured: number;
  met: boolean;
}

/** The whole report ({@link runSim}'s result, and the `--json` line). */
export interface SimReport {
  kind: 'ratelane-sim';
  date: string;
  machine: { cpus: number; cpuModel: string; memoryGb: number; node: string; platform: string };
  wallMs: number;
  settings: SimSettings;
  scenarios: { id: ScenarioId; title: string; start: string; keys: number; limits: (typeof SCENARIOS)[ScenarioId]['limits'] }[];
  results: StrategyResult[];
  targets: TargetCheck[];
  prices: { region: string; checked: string; items: typeof PRICES };
}

interface Task {
  scenario: ScenarioId;
  strategy: StrategyId;
}

/** Rough relative wall time of a task (measured at the defaults), to start the longest first. */
const WEIGHT: Record<StrategyId, Record<ScenarioId, number>> = {
  reschedule: { minute: 46, day: 47, tokens: 120 },
  admission: { minute: 13, day: 15, tokens: 35 },
  naive: { minute: 3, day: 3, tokens: 7 },
};

function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m${String(sec).padStart(2, '0')}s` : `${m}m${String(sec).padStart(2, '0')}s`;
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');

function progressLine(task: Task, p: SimProgress): string {
  return `sim ${task.scenario}/${STRATEGIES[task.strategy].label}: virtual ${formatDuration(p.virtualMs)}, settled ${((100 * p.terminal) / p.jobs).toFixed(1)}% of ${int(p.jobs)}, ${int(p.modelCalls)} calls`;
}

function runInWorker(task: Task, settings: SimSettings, onProgress: (p: SimProgress) => void): Promise<StrategyResult> {
  const file = new URL('./worker.ts', import.meta.url).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(file)}); })`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { ...task, settings } });
    let settled = false;
    worker.on('message', (message: { type: string; progress?: SimProgress; result?: StrategyResult; message?: string }) => {
      if (message.type === 'progress' && message.progress) onProgress(message.progress);
      else if (message.type === 'result' && message.result) {
        settled = true;
        resolve(message.result);
        void worker.terminate();
      } else if (message.type === 'error') {
        settled = true;
        reject(new SimWorkerError(message.message ?? 'simulation worker failed'));
        void worker.terminate();
      }
    });
    worker.on('error', (error) => {
      if (!settled) reject(error);
      settled = true;
    });
    worker.on('exit', (code) => {
      if (!settled) reject(new SimWorkerError(`simulation worker exited with code ${code}`));
    });
  });
}

/** Whether a run stopped before every job settled (at its horizon or its work limit). */
function stoppedEarly(r: Pick<StrategyResult, 'stoppedBy' | 'unfinished'>): boolean {
  return r.stoppedBy !== 'done' && r.unfinished > 0;
}

/** The line saying why a run stopped early and what its figures then mean. */
function stopLine(r: StrategyResult, settings: Pick<SimSettings, 'maxReceivesPerJob' | 'horizonMs'>): string {
  const why =
    r.stoppedBy === 'receive-limit'
      ? `at the work limit, ${int(r.receives)} records received (${settings.maxReceivesPerJob} per job; --max-receives-per-job)`
      : `at the horizon, ${formatDuration(settings.horizonMs)} of virtual time`;
  const settled = r.completed + r.deadLettered + r.rejected;
  return (
    `${r.label}: stopped ${why}, ${formatDuration(r.drainMs)} after the first receive, with ${((100 * settled) / r.jobs).toFixed(1)}% of the jobs settled: ` +
    `${int(r.unfinished)} still queued; its drain and its bill are the run's so far (lower bounds)`
  );
}

/** Renders the results as text lines (one table per scenario, then the target checks). */
function renderTable(report: Pick<SimReport, 'results' | 'targets' | 'scenarios' | 'wallMs' | 'settings' | 'date' | 'machine'>): string[] {
  const lines: string[] = [];
  const { settings } = report;
  lines.push(
    `ratelane sim: ${int(settings.jobs)} jobs, ${int(settings.consumers)} consumers (account concurrency ${int(settings.accountConcurrency)}; the event source scales up from ${settings.eventSource.initialConcurrency} by ${settings.eventSource.scaleUpPerMinute} a minute), batches of ${settings.batchSize}, maxReceiveCount ${settings.maxReceiveCount}, failure rate ${settings.failureRate}, seed ${settings.seed}; (c): initial output-token estimate ${settings.admissionOutputTokenEstimate} (then learned), in-process wait for a booked slot up to ${(settings.bookWithinMs / 1000).toFixed(1)} s, bucket items per owner ${settings.bucketShards ?? 'as the lane sizes them (shardsFor)'}; work limit ${settings.maxReceivesPerJob > 0 ? `${settings.maxReceivesPerJob} receives per job` : 'none'}`,
  );
  lines.push(
    `${report.date}, ${report.machine.cpus} x ${report.machine.cpuModel}, Node ${report.machine.node}; wall time ${(report.wallMs / 1000).toFixed(1)} s`,
  );
  const header = [
    'strategy',
    'drain',
    'bound',
    'drain/bound',
    'calls/completion',
    'wasted calls (429 + failed)',
    'dead-letters',
    'lost',
    'unfinished',
    'AWS $/1M jobs (SQS+DDB+S3+Lambda+Sched)',
  ];
  for (const scenario of report.scenarios) {
    const rows = report.results.filter((r) => r.scenario === scenario.id);
    if (rows.length === 0) continue;
    lines.push('');
    lines.push(`scenario ${scenario.id}: ${scenario.title}`);
    // A run stopped with jobs unsettled: its drain is at least what it shows.
    const atLeast = (r: StrategyResult) => (stoppedEarly(r) ? '>= ' : '');
    const table = rows.map((r) => [
      r.label,
      `${atLeast(r)}${formatDuration(r.drainMs)}`,
      formatDuration(r.boundMs),
      `${atLeast(r)}${r.drainOverBound.toFixed(2)}x`,
      Number.isFinite(r.callsPerCompletion) ? r.callsPerCompletion.toFixed(3) : '-',
      `${int(r.wastedCalls)} (${int(r.rateLimited + r.quotaExhausted)} + ${int(r.failedCalls)})`,
      int(r.deadLettered),
      int(r.lost),
      int(r.unfinished),
      `$${r.costPerMillion.total.toFixed(2)} (${r.costPerMillion.sqs.toFixed(2)}+${r.costPerMillion.dynamodb.toFixed(2)}+${r.costPerMillion.s3.toFixed(2)}+${r.costPerMillion.lambda.toFixed(2)}+${r.costPerMillion.scheduler.toFixed(4)})`,
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
    const fmt = (row: string[]) => `| ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
    lines.push(fmt(header));
    lines.push(`|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
    for (const row of table) lines.push(fmt(row));
    lines.push(
      `consumers at once, at most (reached after the first receive): ${rows.map((r) => `${r.label.slice(0, 3)} ${int(r.fleet.peak)} of ${int(r.fleet.cap)} (${formatDuration(r.fleet.peakAfterMs)})`).join(', ')}; ` +
        `lane pauses / limits: ${rows.map((r) => `${r.label.slice(0, 3)} ${int(r.lanePauses)} / ${int(r.laneLimits)}`).join(', ')}`,
    );
    for (const r of rows.filter(stoppedEarly)) lines.push(stopLine(r, settings));
    const long = SCENARIOS[scenario.id].longJobs;
    for (const r of rows) if (long && r.sizeClasses) lines.push(sizeClassLine(r.label, long, r.sizeClasses));
    for (const r of rows) {
      const peaks = Object.entries(r.peakItemWritesPerSecond ?? {}).sort((a, b) => b[1] - a[1]);
      if (peaks.length === 0) continue;
      // The busiest items, the first with when it peaked; how many more, down to the least busy.
      const shown = peaks
        .slice(0, PEAKS_SHOWN)
        .map(([item, n], i) => `${item} ${int(n)}${i === 0 ? ` (at ${formatDuration(r.peakItemWritesAfterMs?.[item] ?? 0)})` : ''}`);
      if (peaks.length > PEAKS_SHOWN) shown.push(`… ${peaks.length - PEAKS_SHOWN} more down to ${int(peaks.at(-1)![1])}`);
      lines.push(
        `${r.label}: bucket items' peak conditional writes per second ${shown.join(', ')} (DynamoDB serves ~${int(r.itemWriteCeiling)} per item); ` +
          `${(r.conditionFailuresPerTake ?? 0).toFixed(3)} conditional-check failures per take`,
      );
    }
  }
  if (report.targets.length > 0) {
    lines.push('');
    lines.push(
      "targets for (c): drain <= 1.15x bound, <= 1.03 calls per completion, 0 dead-letters, 0 lost, every bucket item's peak writes per second below half DynamoDB's per-item ceiling, AWS $ per 1M committed jobs <= naive's (when naive ran)",
    );
    for (const t of report.targets) {
      lines.push(
        `  ${t.scenario} ${t.target}: measured ${Number.isInteger(t.measured) ? t.measured : t.measured.toFixed(3)}, limit ${Number.isInteger(t.limit) ? t.limit : t.limit.toFixed(3)} -> ${t.met ? 'met' : 'MISSED'}`,
      );
    }
  }
  return lines;
}

/** One strategy's long jobs beside its other jobs: deferrals per job, and when half and 90 % of each class's committed jobs were committed. */
function sizeClassLine(label: string, long: LongJobs, classes: NonNullable<StrategyResult['sizeClasses']>): string {
  const when = (ms: number | null) => (ms === null ? '-' : formatDuration(ms));
  const figures = (c: SizeClassFigures) => {
    const all = c.committed === c.jobs;
    const times = `${all ? 'half' : 'half of those'} committed after ${when(c.halfCommittedAfterMs)}, 90 % after ${when(c.ninetyPercentCommittedAfterMs)}`;
    return `${c.deferralsPerJob.toFixed(2)} deferrals a job, ${all ? times : `${int(c.committed)} of ${int(c.jobs)} committed (${times})`}`;
  };
  return `${label}, from the first receive: the long jobs (1 in ${long.every}, prompts ${long.factor}x as long) ${figures(classes.long)}; the others ${figures(classes.other)}`;
}

/** Runs the simulations of `options` and writes progress, the table and (with `json`) the JSON line. */
export async function runSim(options: SimOptions, io: SimIo): Promise<SimReport> {
  const started = performance.now();
  const settings = settingsFor(options);
  const tasks: Task[] = [];
  for (const scenario of options.scenarios) for (const strategy of options.strategies) tasks.push({ scenario, strategy });
  const order = [...tasks].sort((a, b) => WEIGHT[b.strategy][b.scenario] - WEIGHT[a.strategy][a.scenario]);
  const results = new Map<Task, StrategyResult>();
  const onProgress = (task: Task) => (p: SimProgress) => {
    if (!options.quiet) io.stderr(progressLine(task, p));
  };
  const finish = (task: Task, result: StrategyResult) => {
    results.set(task, result);
    if (!options.quiet) {
      io.stderr(
        `sim ${task.scenario}/${result.label}: ${stoppedEarly(result) ? `stopped (${result.stoppedBy}, ${int(result.unfinished)} unfinished)` : 'done'} in ${(result.wallMs / 1000).toFixed(1)} s wall: drain ${formatDuration(result.drainMs)} (${result.drainOverBound.toFixed(2)}x bound), ${result.callsPerCompletion.toFixed(3)} calls/completion, ${int(result.deadLettered)} dead-lettered`,
      );
    }
  };
  if (options.parallel <= 1 || order.length <= 1) {
    for (const task of order) {
      finish(task, simulate(SCENARIOS[task.scenario], STRATEGIES[task.strategy], settings, { onProgress: onProgress(task) }));
    }
  } else {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < order.length) {
        const task = order[next++]!;
        let result: StrategyResult;
        try {
          result = await runInWorker(task, settings, onProgress(task));
        } catch (error) {
          if (!options.quiet)
            io.stderr(`sim: worker failed (${(error as Error).message.split('\n')[0]}); running ${task.scenario}/${task.strategy} in-process`);
          result = simulate(SCENARIOS[task.scenario], STRATEGIES[task.strategy], settings, { onProgress: onProgress(task) });
        }
        finish(task, result);
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.parallel, order.length) }, lane));
  }
  const ordered = tasks.map((t) => results.get(t)!);
  const targets: TargetCheck[] = [];
  for (const r of ordered) {
    if (r.strategy !== 'admission') continue;
    const scenario = r.scenario as ScenarioId;
    targets.push({
      scenario,
      target: 'drainOverBound',
      limit: TARGETS.drainOverBound,
      measured: r.drainOverBound,
      met: r.drainOverBound <= TARGETS.drainOverBound,
    });
    targets.push({
      scenario,
      target: 'callsPerCompletion',
      limit: TARGETS.callsPerCompletion,
      measured: r.callsPerCompletion,
      met: r.callsPerCompletion <= TARGETS.callsPerCompletion,
    });
    targets.push({ scenario, target: 'deadLettered', limit: 0, measured: r.deadLettered, met: r.deadLettered === 0 });
    const peak = Math.max(0, ...Object.values(r.peakItemWritesPerSecond ?? {}));
    const headroom = r.itemWriteCeiling * ITEM_WRITE_HEADROOM;
    targets.push({ scenario, target: 'peakItemWritesBelowHalfCeiling', limit: headroom, measured: peak, met: peak < headroom });
    targets.push({ scenario, target: 'lost', limit: 0, measured: r.lost + r.unfinished, met: r.lost + r.unfinished === 0 });
    const naive = ordered.find((n) => n.strategy === 'naive' && n.scenario === r.scenario);
    if (naive) {
      // Per committed job: naive dead-letters most of its jobs, and a job not committed costs no commit.
      const limit = costPerMillionCompletions(naive);
      const measured = costPerMillionCompletions(r);
      targets.push({ scenario, target: 'costPerCompletionAtMostNaive', limit, measured, met: measured <= limit });
    }
  }
  const cpuList = cpus();
  const report: SimReport = {
    kind: 'ratelane-sim',
    date: new Date().toISOString(),
    machine: {
      cpus: cpuList.length,
      cpuModel: (cpuList[0]?.model ?? 'unknown').replace(/\s+/g, ' ').trim(),
      memoryGb: Math.round(totalmem() / 2 ** 30),
      node: process.versions.node,
      platform: `${process.platform}-${process.arch}`,
    },
    wallMs: performance.now() - started,
    settings,
    scenarios: options.scenarios.map((id) => {
      const scenario = withOwners(SCENARIOS[id], settings.owners);
      return { id, title: scenario.title, start: new Date(scenario.start).toISOString(), keys: scenario.keys, limits: scenario.limits };
    }),
    results: ordered,
    targets,
    prices: { region: PRICES_REGION, checked: PRICES_CHECKED, items: PRICES },
  };
  for (const line of renderTable(report)) io.stdout(line);
  if (options.json) io.stdout(JSON.stringify(report));
  return report;
}
