/**
 * `npm run bench -- --scenario`: the flag, each scenario's plan (its quota binds as the scenario
 * says), and the scenario report's targets and verdicts (workbench/drivers/bench-scenario*.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { benchCommand } from '../../../../workbench/drivers/bench/command.js';
import { UsageError } from '../../../../lib/cli/command.js';
import type { StrategyResult } from '../../../../workbench/drivers/bench/report.js';
import { dailyBound, requestBound, tokenBound } from '../../../../workbench/drivers/bench/scenarios/bounds.js';
import {
  formatScenarioReport,
  scenarioFigures,
  scenarioTargets,
  targetsLine,
  type ScenarioReport,
} from '../../../../workbench/drivers/bench/scenarios/report.js';
import { BenchScenarioError, laneLoads, planScenario, SCENARIO_CHOICES, type ScenarioPlan } from '../../../../workbench/drivers/bench/scenarios/scenarios.js';
import { benchLanes } from '../../../../workbench/drivers/bench/strategies.js';
import { sampleBenchInput } from '../../../e2e/report/fixtures.js';

const INPUTS = { jobs: 300, keys: 2, providerRpm: 8, providerTpm: 1_000_000, minuteMs: 3000 };

/** The plan's lanes and loads, as a strategy of the bench would see them with every job sent. */
function loadsOf(plan: ScenarioPlan) {
  const lanes = benchLanes({ ...INPUTS, ...plan.quota }, 't');
  return laneLoads(
    lanes,
    plan.documents.map((document) => ({ lane: document.region, document })),
    plan,
  );
}

describe('npm run bench: --scenario', () => {
  it('is absent by default (the baseline, options as before) and takes every scenario name or all', () => {
    // Act
    const none = benchCommand.parse([]);
    const named = SCENARIO_CHOICES.map((name) => benchCommand.parse(['--scenario', name]).scenario);
    // Assess
    assert.equal('scenario' in none, false);
    assert.deepEqual(named, ['baseline', 'uneven-tokens', 'daily-reset', 'key-out-of-credit', 'two-consumers', 'all']);
  });

  it('rejects an unknown name with the list of names', () => {
    // Act + Assess
    assert.throws(
      () => benchCommand.parse(['--scenario', 'tokens']),
      (error: unknown) =>
        error instanceof UsageError &&
        error.message.includes('"tokens"') &&
        error.message.includes('baseline, uneven-tokens, daily-reset, key-out-of-credit, two-consumers, all'),
    );
  });

  it('rejects key-out-of-credit (and all) with one key per lane, and --html with a scenario other than the baseline', () => {
    // Act + Assess
    for (const argv of [
      ['--scenario', 'key-out-of-credit', '--keys', '1'],
      ['--scenario', 'all', '--keys', '1'],
      ['--scenario', 'daily-reset', '--html', 'x.html'],
    ]) {
      assert.throws(() => benchCommand.parse(argv), UsageError, argv.join(' '));
    }
    assert.equal(benchCommand.parse(['--scenario', 'all', '--html', 'x.html']).html, 'x.html');
  });
});

describe('bench scenarios: the plans', () => {
  it('baseline: the corpus at the flags quota, held to requests', () => {
    // Act
    const plan = planScenario('baseline', INPUTS);
    // Assess
    assert.deepEqual(plan.quota, { providerRpm: 8, providerTpm: 1_000_000, providerDaily: 100_000_000, dayMs: 3000 * 1440, fixedDay: false });
    assert.equal(plan.boundKind, 'requests');
    assert.deepEqual(plan.outOfCreditKeyIds, []);
  });

  it('uneven-tokens: tokens bind for every lane, requests are loose, the longest job fits one key', () => {
    // Prepare
    const plan = planScenario('uneven-tokens', INPUTS);
    // Act
    const loads = loadsOf(plan);
    // Assess
    assert.equal(plan.quota.providerRpm, 32);
    assert.equal(plan.quota.providerTpm, 10_000);
    assert.equal(tokenBound(loads, 3000).ms > 3 * requestBound(loads, 3000).ms, true);
    for (const l of tokenBound(loads, 3000).perLane) assert.match(l.detail, /tokens [\d.]+ min, requests [\d.]+ min/);
    assert.ok(loads.every((l) => l.tokens > l.jobs * 500));
  });

  it('daily-reset: a daily quota of 48 per key runs out mid-run and resets after 12 minutes', () => {
    // Prepare
    const plan = planScenario('daily-reset', INPUTS);
    // Act
    const loads = loadsOf(plan);
    const bound = dailyBound(loads, 3000, plan.quota.dayMs, plan.quota.dayMs);
    // Assess: 160 eu jobs, 96 a day per lane at 16 per minute
    assert.deepEqual(plan.quota, { providerRpm: 8, providerTpm: 1_000_000, providerDaily: 48, dayMs: 36_000, fixedDay: true });
    assert.equal(bound.ms, 45_000);
    assert.ok(bound.ms > requestBound(loads, 3000).ms, 'the reset costs time');
    assert.ok(bound.perLane.every((l) => /ran out 1 time/.test(l.detail)));
  });

  it('key-out-of-credit: key-1 of every lane is dead, and the bound counts the other key only; one key per lane cannot run', () => {
    // Act
    const plan = planScenario('key-out-of-credit', INPUTS);
    // Assess
    assert.deepEqual(plan.outOfCreditKeyIds, ['key-1']);
    assert.deepEqual(
      loadsOf(plan).map((l) => l.owners),
      [1, 1],
    );
    assert.throws(() => planScenario('key-out-of-credit', { ...INPUTS, keys: 1 }), BenchScenarioError);
  });

  it('uneven-tokens: the mapping is sized by the calls the tokens per minute hold, not by the loose request limit', () => {
    // Prepare
    const plan = planScenario('uneven-tokens', INPUTS);
    // Act
    const byRequests = Object.values(benchLanes({ ...INPUTS, ...plan.quota }, 't'))[0]!;
    const byTokens = Object.values(benchLanes({ ...INPUTS, ...plan.quota, tokensPerJob: plan.tokensPerJob }, 't'))[0]!;
    // Assess: 10 000 tpm at ~1 000 tokens a job holds ~10 calls a minute, against 32 requests
    const held = (l: typeof byTokens): number => l.consumer.maximumConcurrency * l.queue.batchSize;
    assert.ok(plan.tokensPerJob! > 500 && plan.tokensPerJob! < 2000, `mean tokens per job ${plan.tokensPerJob}`);
    assert.ok(held(byTokens) < held(byRequests), `${held(byTokens)} records in flight by tokens, ${held(byRequests)} by requests`);
    assert.equal(planScenario('baseline', INPUTS).tokensPerJob, undefined);
  });

  it("two-consumers: the baseline's jobs, quota and bound, run by two consumer processes per lane (the others by one)", () => {
    // Act
    const plan = planScenario('two-consumers', INPUTS);
    const baseline = planScenario('baseline', INPUTS);
    // Assess
    assert.equal(plan.consumerProcesses, 2);
    assert.equal(baseline.consumerProcesses, 1);
    assert.deepEqual(plan.quota, baseline.quota);
    assert.equal(plan.boundKind, 'requests');
    assert.equal(requestBound(loadsOf(plan), 3000).ms, requestBound(loadsOf(baseline), 3000).ms);
  });
});

/** A strategy result: the report fixture's (c) (60 jobs, all committed, 1 call each), with `figures`. */
function result(id: StrategyResult['id'], label: string, figures: Partial<StrategyResult>): StrategyResult {
  const base = sampleBenchInput().report.strategies.find((x) => x.id === 'admission')!;
  return { ...base, id, label, modelCallsPerCompletion: 1, burstAwareMinimumMs: 57_000, burstAwareRatio: 1.053, timedOut: false, ...figures };
}

describe('bench scenarios: the report', () => {
  it("holds (c) to the scenario's targets: a strategy that gave up shows how many, and (c) giving up misses the drain target", () => {
    // Prepare
    const strategies = [
      result('naive', '(a) naive', { committed: 40, gaveUpOn: 20, deadLettered: 20, burstAwareRatio: null }),
      result('admission', '(c) admission', { committed: 59, gaveUpOn: 1, lost: 1, burstAwareRatio: null, modelCallsPerCompletion: 1.06 }),
    ];
    // Act
    const targets = scenarioTargets(strategies)!;
    const figures = strategies.map(scenarioFigures);
    // Assess
    assert.deepEqual(Object.keys(targets), ['burstAwareRatio', 'modelCallsPerCompletion', 'deadLettered', 'lost']);
    assert.equal(targets.burstAwareRatio?.met, false);
    assert.equal(targets.modelCallsPerCompletion?.met, false);
    assert.equal(targets.deadLettered?.met, true);
    assert.equal(targets.lost?.met, false);
    assert.deepEqual(
      figures.map((f) => [f.drain, f.drainRatio, f.boundMs]),
      [
        ['gave up on 20', null, 57_000],
        ['gave up on 1', null, 57_000],
      ],
    );
    assert.match(
      targetsLine(targets),
      /^MISSED: drain <= 1\.10x the bound \(-\), calls per completion <= 1\.03 \(1\.06\), 0 lost \(1\); met: 0 dead-lettered \(0\)$/,
    );
  });

  it('prints the bound with each lane, the strategies and the target checks', () => {
    // Prepare
    const strategies = [result('reschedule', '(b) reschedule', { burstAwareRatio: 1.3 }), result('admission', '(c) admission', {})];
    const report: ScenarioReport = {
      scenario: 'key-out-of-credit',
      description: 'key-1 of each lane out of credit',
      date: '2026-01-01T00:00:00.000Z',
      machine: { cpuModel: 'cpu', cpus: 2, memoryGb: 4, os: 'Linux', node: 'v22', loadAverageAtStart: [0, 0, 0], loadAverageAtEnd: [0, 0, 0] },
      settings: {
        jobs: 300,
        jobsPerLane: { eu: 160, us: 140 },
        keysPerLane: 2,
        minuteMs: 3000,
        providerRpm: 8,
        providerTpm: 1_000_000,
        providerDaily: null,
        dayMs: null,
        outOfCreditKeyIds: ['key-1'],
        consumerConcurrencyPerLane: 1,
        batchSize: 3,
        refusedRequestRule: 'one request of RPM',
        warmup: { messages: 1000, concurrency: 10, sampleMessages: 100, probeJobs: 20, firstP50Ms: 31.5, lastP50Ms: 9.25, elapsedMs: 8400 },
      },
      bound: { ms: 57_000, formula: 'requests', perLane: [{ lane: 'eu', ms: 57_000, detail: '160 jobs, 1 owner(s) x 8 rpm: 19 min' }] },
      figures: strategies.map(scenarioFigures),
      strategies,
      targets: scenarioTargets(strategies),
      elapsedMs: 1000,
    };
    // Act
    const text = formatScenarioReport(report);
    // Assess
    assert.match(text, /bound: 57\.0 s, the slowest lane's: requests/);
    assert.match(
      text,
      /warm-up: 1000 floor messages 10 at a time \(p50 31\.50 ms over the first 100, 9\.25 ms over the last\) and 20 jobs through \(c\)'s consumer, in 8\.4 s/,
    );
    assert.match(text, / {2}eu: 57\.0 s \(160 jobs, 1 owner\(s\) x 8 rpm: 19 min\)/);
    assert.match(text, /drain \/ scenario bound\s+1\.30x\s+1\.05x\s+<= 1\.10x met/);
    assert.match(text, /model calls per completion\s+1\.00 \(\d+\)\s+1\.00 \(\d+\)\s+<= 1\.03 met/);
    assert.match(text, /\(c\) against the scenario's targets: met: /);
    assert.doesNotMatch(text, /attempts per completion.*<= 1\.10/);
  });
});
