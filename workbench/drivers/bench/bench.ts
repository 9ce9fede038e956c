/**
 * `npm run bench`: the same job set, in one run, through three strategies on the local stack
 * (DynamoDB Local, fauxqs, the fake provider at a fixed quota, the real consumer under the
 * Lambda-like poller), then the consumer's own overhead beside a floor measured on the same emulators;
 * or, with `--scenario`, a scenario of `scenarios/scenarios.ts` (or `all`: the baseline, then every
 * other), each run side by side for every strategy on the same local services, each strategy held to
 * the scenario's own bound: one report per scenario on stdout, a summary after several, and with
 * `--json` one JSON object on the last line.
 *
 * The strategies are in `strategies.ts`, one strategy's run in `strategy.ts`, the floor and the
 * overhead probe in `floor.ts`, the report and its targets in `report.ts`. Consumer overhead is
 * reported three ways, each beside a floor on the same emulators:
 * - under load, per strategy (every record of a batch runs at once, all on 2 CPUs), beside the floor
 *   run with as many loops at once as (c) had records in flight on average (informational);
 * - the probe: the (c) consumer with one job at a time and a quota that never binds, beside the floor
 *   one message at a time: the same conditions on both sides, so this pair is the target's figure.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import type { CommandIo } from '../../../lib/cli/command.js';
import { refusedRequestRuleOf } from '../../fake-provider/wire/dialect.js';
import { startLogFile } from '../../local-stack/lambda/telemetry.js';
import { onShutdown } from '../../local-stack/services/processes.js';
import { startLocalServices, type LocalServices } from '../../local-stack/services/services.js';
import { corpusDocuments } from '../lanes.js';
import { lineWriter } from '../observe.js';
import { round } from '../scorecard.js';
import type { DrainCurve } from './curve.js';
import { measureFloor, probeBesideFloor, probeOverhead, warmEmulators, WARMUP_CONCURRENCY, WARMUP_PROBE_JOBS } from './floor.js';
import { renderBenchHtml } from './html.js';
import {
  benchExitCode,
  checkTargets,
  formatBenchReport,
  warmupLine,
  type BenchReport,
  type FloorResult,
  type OverheadProbe,
  type StrategyResult,
  type WarmupResult,
} from './report.js';
import {
  formatScenarioReport,
  formatScenarioSummary,
  reportedBound,
  scenarioFigures,
  scenarioTargets,
  type ScenarioReport,
  type ScenarioSettings,
} from './scenarios/report.js';
import { jobsPerLane, planScenario, SCENARIO_NAMES, type BenchScenarioName, type ScenarioPlan } from './scenarios/scenarios.js';
import { BENCH_LOG_FILE, BENCH_STRATEGIES, benchLanes, scenarioLanes, type BenchOptions } from './strategies.js';
import { runStrategy, type StrategyRun } from './strategy.js';

/** The overhead figures beside the strategies: the probe, the floor and the floor under (c)'s load. */
interface OverheadFigures {
  probe: OverheadProbe | null;
  floor: FloorResult | null;
  loadedFloor: FloorResult | null;
}

/** The machine a bench runs on, before its load average at the end is known. */
type BenchHost = Omit<BenchReport['machine'], 'loadAverageAtEnd'>;

/** What a bench run's body gets: the shared services, the progress writer, its start and the machine. */
interface BenchContext {
  services: LocalServices;
  say: (line: string) => void;
  started: number;
  host: BenchHost;
  /** What warmed the emulators before the first strategy (null: skipped). */
  warmup: WarmupResult | null;
}

/**
 * Prints `headline(host)` to stderr, starts DynamoDB Local and fauxqs (and the consumer log), runs
 * `body` on them, and stops them whatever happens.
 */
async function withBenchServices<T>(
  options: BenchOptions,
  io: CommandIo,
  headline: (host: BenchHost) => string,
  body: (context: BenchContext) => Promise<T>,
): Promise<T> {
  const say = lineWriter(io.stderr);
  const started = Date.now();
  const host = machine();
  say(headline(host));
  startLogFile(options.logFile ?? BENCH_LOG_FILE);
  say('  starting DynamoDB Local and fauxqs…');
  const services = await startLocalServices();
  const unregister = onShutdown(() => services.stop());
  try {
    say(
      `  up in ${Date.now() - started} ms: DynamoDB Local ${services.endpoints.dynamodb} (pid ${services.dynamoPid ?? '-'}), SQS/S3 ${services.endpoints.sqs}`,
    );
    let warmup: WarmupResult | null = null;
    if (options.warmupMessages > 0) {
      say(
        `  warming the emulators: ${options.warmupMessages} floor messages ${WARMUP_CONCURRENCY} at a time, then ${WARMUP_PROBE_JOBS} jobs through the consumer of (c), counted nowhere…`,
      );
      warmup = await warmEmulators(options, services, options.warmupMessages);
      say(`  ${warmupLine(warmup)}`);
    }
    return await body({ services, say, started, host, warmup });
  } finally {
    unregister();
    await services.stop();
  }
}

/** Runs the bench (the baseline) and returns its report (printed to `io`; `--json` adds one JSON line at the end). */
export async function runBench(options: BenchOptions, io: CommandIo): Promise<BenchReport> {
  const headline = (host: BenchHost): string =>
    `ratelane bench: ${options.jobs} jobs, ${options.keys} key(s) per lane x ${options.providerRpm} rpm, a provider minute lasts ${options.minuteMs} ms; ` +
    `strategies ${options.strategies.join(', ')}; load average ${host.loadAverageAtStart.join(' ')} on ${host.cpus} CPU(s)`;
  const run = await withBenchServices(options, io, headline, (context) => runBaseline(options, io, context, { json: options.json }));
  return run.report;
}

/** The baseline's run: its report, and each strategy's run (drain curve and bound). */
interface BaselineRun {
  report: BenchReport;
  runs: StrategyRun[];
}

/**
 * The baseline on running services: every strategy, then the overhead figures; the report printed to
 * `io.stdout` (with `json`, its JSON line after it), the HTML page written when `options.html` is set.
 */
async function runBaseline(options: BenchOptions, io: CommandIo, context: BenchContext, { json }: { json: boolean }): Promise<BaselineRun> {
  const { services, say, started, host } = context;
  const strategies: StrategyResult[] = [];
  const runs: StrategyRun[] = [];
  for (const id of options.strategies) {
    const strategy = BENCH_STRATEGIES[id];
    say(`${strategy.label}: ${strategy.description}`);
    const run = await runStrategy(strategy, options, services, say);
    strategies.push(run.result);
    runs.push(run);
  }
  const overhead = await measureOverhead(options, services, strategies, say);
  const report = benchReport(options, host, strategies, overhead, started, context.warmup);
  say('');
  io.stdout.write(`${formatBenchReport(report)}\n`);
  if (json) io.stdout.write(`${JSON.stringify(report)}\n`);
  if (options.html !== undefined)
    say(
      `HTML report: ${writeBenchHtml(
        options.html,
        report,
        runs.map((r) => r.curve),
      )}`,
    );
  return { report, runs };
}

/** Writes the bench's HTML page to `file` (its folder created) and returns its absolute path. */
function writeBenchHtml(file: string, report: BenchReport, curves: DrainCurve[]): string {
  const path = resolve(file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, renderBenchHtml({ report, curves }));
  return path;
}

/**
 * The probe (unless `--probe-messages 0`) beside the floor one at a time, in alternating rounds, then
 * the floor under (c)'s load (unless `--floor-messages 0`).
 */
async function measureOverhead(
  options: BenchOptions,
  services: LocalServices,
  strategies: readonly StrategyResult[],
  say: (line: string) => void,
): Promise<OverheadFigures> {
  let probe: OverheadProbe | null = null;
  let floor: FloorResult | null = null;
  let loadedFloor: FloorResult | null = null;
  if (options.probeMessages > 0 && options.floorMessages > 0) {
    say(
      `overhead probe beside the floor: ${options.probeMessages} jobs one at a time through the consumer of (c) (quota not binding), ` +
        `and ${options.floorMessages} messages of receive + conditional put + delete, in alternating rounds…`,
    );
    ({ probe, floor } = await probeBesideFloor(options, services, { probeMessages: options.probeMessages, floorMessages: options.floorMessages }));
    say(`overhead probe: p50 ${probe.overheadMs.p50} ms, p99 ${probe.overheadMs.p99} ms; floor: p50 ${floor.totalMs.p50} ms, p99 ${floor.totalMs.p99} ms`);
  } else if (options.probeMessages > 0) {
    say(`overhead probe: ${options.probeMessages} jobs, one at a time, through the consumer of (c) (quota not binding)…`);
    probe = await probeOverhead(options, services, options.probeMessages);
    say(`overhead probe: p50 ${probe.overheadMs.p50} ms, p99 ${probe.overheadMs.p99} ms`);
  } else if (options.floorMessages > 0) {
    say(`floor: ${options.floorMessages} messages, one at a time: receive + conditional put + delete on the same emulators…`);
    floor = await measureFloor(services.endpoints, { messages: options.floorMessages, concurrency: 1 });
    say(`floor: p50 ${floor.totalMs.p50} ms, p99 ${floor.totalMs.p99} ms`);
  }
  if (options.floorMessages > 0) {
    const c = strategies.find((x) => x.id === 'admission');
    if (c && c.meanRecordsInFlight > 1) {
      const concurrency = Math.max(2, Math.round(c.meanRecordsInFlight));
      say(`floor under load: ${options.floorMessages} messages, ${concurrency} at a time (the records (c) had in flight on average)…`);
      loadedFloor = await measureFloor(services.endpoints, { messages: Math.max(options.floorMessages, concurrency * 3), concurrency });
      say(`floor under load: p50 ${loadedFloor.totalMs.p50} ms, p99 ${loadedFloor.totalMs.p99} ms`);
    }
  }
  return { probe, floor, loadedFloor };
}

/** The whole report: the machine, the settings, each strategy, the overhead figures and (c)'s targets. */
function benchReport(
  options: BenchOptions,
  host: BenchHost,
  strategies: StrategyResult[],
  overhead: OverheadFigures,
  started: number,
  warmup: WarmupResult | null,
): BenchReport {
  const anyLane = Object.values(benchLanes(options, 'probe'))[0]!;
  const { probe, floor, loadedFloor } = overhead;
  const cUnderLoad = strategies.find((x) => x.id === 'admission')?.overheadMs.p50 ?? null;
  return {
    date: new Date(started).toISOString(),
    machine: { ...host, loadAverageAtEnd: os.loadavg().map((l) => round(l, 2)) },
    settings: {
      jobs: options.jobs,
      jobsPerLane: jobsPerLane(corpusDocuments(options.jobs)),
      keysPerLane: options.keys,
      providerRpm: options.providerRpm,
      providerTpm: options.providerTpm,
      minuteMs: options.minuteMs,
      laneRequestsPerMinute: options.keys * options.providerRpm,
      providerShare: options.providerShare ?? 1,
      maxReceiveCount: anyLane.queue.maxReceiveCount,
      consumerConcurrencyPerLane: anyLane.consumer.maximumConcurrency,
      batchSize: anyLane.queue.batchSize,
      backoff: anyLane.backoff,
      refusedRequestRule: refusedRequestRuleOf(anyLane.provider.kind === 'gemini' ? 'gemini' : 'openai').description,
      warmup,
    },
    strategies,
    probe,
    floor,
    loadedFloor,
    targets: checkTargets(strategies, probe, floor),
    overheadToLoadedFloor: cUnderLoad !== null && loadedFloor?.totalMs.p50 ? round(cUnderLoad / loadedFloor.totalMs.p50, 2) : null,
    elapsedMs: Date.now() - started,
  };
}

/** The machine the bench ran on, and its load average at the start. */
function machine(): BenchHost {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpus: cpus.length,
    memoryGb: round(os.totalmem() / 1024 ** 3, 1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadAverageAtStart: os.loadavg().map((l) => round(l, 2)),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Scenarios

/** What a scenario run found: a report per scenario, and the baseline's full report when it ran. */
export interface ScenarioBenchResult {
  reports: ScenarioReport[];
  baseline: BenchReport | null;
}

/** The JSON line of `--scenario all`: the baseline's full report, and every scenario's (the baseline's included). */
interface AllScenariosJson {
  scenario: 'all';
  date: string;
  machine: BenchReport['machine'];
  baseline: BenchReport | null;
  scenarios: ScenarioReport[];
  elapsedMs: number;
}

/** The scenarios `options.scenario` names, in run order. */
function scenariosOf(options: BenchOptions): readonly BenchScenarioName[] {
  const choice = options.scenario ?? 'baseline';
  return choice === 'all' ? SCENARIO_NAMES : [choice];
}

/**
 * Runs the scenario(s) `options.scenario` names and prints their reports (see the module's doc).
 * @throws {BenchScenarioError} when a scenario cannot run with the options (checked before anything starts)
 */
export async function runScenarioBench(options: BenchOptions, io: CommandIo): Promise<ScenarioBenchResult> {
  const names = scenariosOf(options);
  const plans = new Map<BenchScenarioName, ScenarioPlan>(names.filter((n) => n !== 'baseline').map((n) => [n, planScenario(n, options)]));
  const headline = (host: BenchHost): string =>
    `ratelane bench, scenario ${options.scenario ?? 'baseline'} (${names.join(', ')}): ${options.jobs} jobs, ${options.keys} key(s) per lane, ` +
    `a provider minute lasts ${options.minuteMs} ms; strategies ${options.strategies.join(', ')}; load average ${host.loadAverageAtStart.join(' ')} on ${host.cpus} CPU(s)`;
  return withBenchServices(options, io, headline, async (context) => {
    const reports: ScenarioReport[] = [];
    let baseline: BenchReport | null = null;
    for (const name of names) {
      const plan = plans.get(name);
      if (!plan) {
        context.say('scenario baseline');
        const run = await runBaseline(options, io, context, { json: false });
        baseline = run.report;
        reports.push(scenarioReport(planScenario('baseline', options), options, context, run.runs, run.report));
        continue;
      }
      const report = await runScenario(plan, options, context);
      context.say('');
      io.stdout.write(`${formatScenarioReport(report)}\n`);
      reports.push(report);
    }
    if (reports.length > 1) io.stdout.write(`\n${formatScenarioSummary(reports)}\n`);
    if (options.json) io.stdout.write(`${JSON.stringify(names.length > 1 ? allJson(reports, baseline, context) : reports[0])}\n`);
    return { reports, baseline };
  });
}

/** One scenario: every strategy on its plan, then its report. */
async function runScenario(plan: ScenarioPlan, options: BenchOptions, context: BenchContext): Promise<ScenarioReport> {
  const started = Date.now();
  context.say(`scenario ${plan.name}: ${plan.description}`);
  const runs: StrategyRun[] = [];
  for (const id of options.strategies) {
    const strategy = BENCH_STRATEGIES[id];
    context.say(`${strategy.label} [${plan.name}]: ${strategy.description}`);
    runs.push(await runStrategy(strategy, options, context.services, context.say, plan));
  }
  return scenarioReport(plan, options, { ...context, started }, runs, null);
}

/** A scenario's report from its strategies' runs (for the baseline, with the bench's own targets). */
function scenarioReport(plan: ScenarioPlan, options: BenchOptions, context: BenchContext, runs: StrategyRun[], baseline: BenchReport | null): ScenarioReport {
  const strategies = runs.map((r) => r.result);
  return {
    scenario: plan.name,
    description: plan.description,
    date: new Date(context.started).toISOString(),
    machine: baseline?.machine ?? { ...context.host, loadAverageAtEnd: os.loadavg().map((l) => round(l, 2)) },
    settings: scenarioSettings(plan, options, context.warmup),
    bound: reportedBound(runs),
    figures: strategies.map(scenarioFigures),
    strategies,
    targets: baseline ? baseline.targets : scenarioTargets(strategies),
    elapsedMs: baseline?.elapsedMs ?? Date.now() - context.started,
  };
}

/** A scenario's settings as its strategies ran them. */
function scenarioSettings(plan: ScenarioPlan, options: BenchOptions, warmup: WarmupResult | null): ScenarioSettings {
  const { quota } = plan;
  // The mapping as the strategies run it.
  const anyLane = Object.values(scenarioLanes(options, plan, 'settings'))[0]!;
  return {
    jobs: plan.documents.length + (plan.later?.documents.length ?? 0),
    jobsPerLane: jobsPerLane([...plan.documents, ...(plan.later?.documents ?? [])]),
    keysPerLane: options.keys,
    minuteMs: options.minuteMs,
    providerRpm: quota.providerRpm,
    providerTpm: quota.providerTpm,
    providerDaily: quota.fixedDay ? quota.providerDaily : null,
    dayMs: quota.fixedDay ? quota.dayMs : null,
    outOfCreditKeyIds: plan.outOfCreditKeyIds,
    consumerConcurrencyPerLane: anyLane.consumer.maximumConcurrency,
    batchSize: anyLane.queue.batchSize,
    refusedRequestRule: refusedRequestRuleOf(anyLane.provider.kind === 'gemini' ? 'gemini' : 'openai').description,
    warmup,
  };
}

/** The JSON object of several scenarios. */
function allJson(reports: ScenarioReport[], baseline: BenchReport | null, context: BenchContext): AllScenariosJson {
  return {
    scenario: 'all',
    date: new Date(context.started).toISOString(),
    machine: { ...context.host, loadAverageAtEnd: os.loadavg().map((l) => round(l, 2)) },
    baseline,
    scenarios: reports,
    elapsedMs: Date.now() - context.started,
  };
}

/**
 * 0 when every strategy of every scenario finished in time with nothing lost and nothing committed
 * twice (and, with `--strict`, (c) met every target of every scenario); else 1.
 */
export function scenarioExitCode(result: ScenarioBenchResult, options: { strict: boolean }): number {
  return Math.max(0, ...result.reports.map((r) => benchExitCode(r, options)));
}
