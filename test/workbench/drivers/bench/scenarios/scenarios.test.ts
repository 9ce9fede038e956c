/**
 * `npm run bench -- --scenario`: the flag, and each scenario's plan (its quota binds as the scenario
 * says: `workbench/drivers/bench/scenarios/scenarios.ts`). The scenario report: `report.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { benchCommand } from '../../../../../workbench/drivers/bench/command.js';
import { UsageError } from '../../../../../lib/cli/command.js';
import { dailyBound, requestBound, tokenBound } from '../../../../../workbench/drivers/bench/scenarios/bounds.js';
import {
  BenchScenarioError,
  laneLoads,
  planScenario,
  SCENARIO_CHOICES,
  type ScenarioPlan,
} from '../../../../../workbench/drivers/bench/scenarios/scenarios.js';
import { benchLanes } from '../../../../../workbench/drivers/bench/strategies.js';

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
  it('is absent by default (the baseline) and takes every scenario name or all', () => {
    // Act
    const none = benchCommand.parse([]);
    const named = SCENARIO_CHOICES.map((name) => benchCommand.parse(['--scenario', name]).scenario);
    // Assess
    assert.equal('scenario' in none, false);
    assert.deepEqual(named, ['baseline', 'uneven-tokens', 'daily-reset', 'key-out-of-credit', 'two-consumers', 'noisy-neighbour', 'urgent-behind-bulk', 'all']);
  });

  it('rejects an unknown name with the list of names', () => {
    // Act + Assess
    assert.throws(
      () => benchCommand.parse(['--scenario', 'tokens']),
      (error: unknown) =>
        error instanceof UsageError &&
        error.message.includes('"tokens"') &&
        error.message.includes('baseline, uneven-tokens, daily-reset, key-out-of-credit, two-consumers, noisy-neighbour, urgent-behind-bulk, all'),
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

  it('noisy-neighbour and urgent-behind-bulk: a backlog, then later jobs of another tenant or class, none sharing a source id', () => {
    // Act
    const noisy = planScenario('noisy-neighbour', INPUTS);
    const urgent = planScenario('urgent-behind-bulk', INPUTS);
    // Assess
    assert.equal(noisy.documents.length, 2000);
    assert.equal(noisy.later?.documents.length, 100);
    assert.equal(noisy.later?.heldTo, 'fair-share');
    assert.ok(noisy.documents.every((d) => d.tenant === 'tenant-a') && noisy.later!.documents.every((d) => d.tenant === 'tenant-b'));
    assert.equal(urgent.documents.length, 1000);
    assert.ok(urgent.documents.every((d) => d.priority === undefined) && urgent.later!.documents.every((d) => d.priority === 'urgent'));
    assert.equal(urgent.quota.providerRpm, 2 * INPUTS.providerRpm);
    for (const plan of [noisy, urgent]) {
      const ids = [...plan.documents, ...plan.later!.documents].map((d) => d.sourceId);
      assert.equal(new Set(ids).size, ids.length);
      assert.equal(plan.later!.afterMs, 4 * INPUTS.minuteMs);
    }
  });
});
