/**
 * `npm run bench -- --scenario <name>`: a scenario of bench-scenarios.ts (or `all`: the baseline,
 * then every other), each run side by side for every strategy on the same local services, each
 * strategy held to the scenario's own bound. One report per scenario on stdout, a summary after
 * several, and with `--json` one JSON object on the last line.
 */
import type { CommandIo } from '../../../../lib/cli/command.js';
import { refusedRequestRuleOf } from '../../../fake-provider/dialect.js';
import { runBaseline, withBenchServices, type BenchContext, type BenchHost, type BenchOptions } from '../bench.js';
import { benchExitCode, round, type BenchReport, type WarmupResult } from '../report.js';
import {
  formatScenarioReport,
  formatScenarioSummary,
  reportedBound,
  scenarioFigures,
  scenarioTargets,
  type ScenarioReport,
  type ScenarioSettings,
} from './report.js';
import { jobsPerLane, planScenario, SCENARIO_NAMES, type BenchScenarioName, type ScenarioPlan } from './scenarios.js';
import { BENCH_STRATEGIES, benchLanes } from '../strategies.js';
import { runStrategy, type StrategyRun } from '../strategy.js';
import os from 'node:os';

/** What a scenario run found: a report per scenario, and the baseline's full report when it ran. */
export interface ScenarioBenchResult {
  reports: ScenarioReport[];
  baseline: BenchReport | null;
}

/** The JSON line of `--scenario all`: the baseline's full report, and every scenario's (the baseline's included). */
export interface AllScenariosJson {
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
  const anyLane = Object.values(benchLanes({ ...options, ...quota }, 'settings'))[0]!;
  return {
    jobs: plan.documents.length,
    jobsPerLane: jobsPerLane(plan.documents),
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
