/**
 * A bench scenario's report (`workbench/drivers/bench/scenarios/report.ts`): (c) held to the scenario's
 * targets and verdicts, and the report as printed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StrategyResult } from '../../../../../workbench/drivers/bench/report.js';
import {
  formatScenarioReport,
  scenarioFigures,
  scenarioTargets,
  targetsLine,
  type ScenarioReport,
} from '../../../../../workbench/drivers/bench/scenarios/report.js';
import { sampleBenchInput } from '../../../../e2e/report/fixtures.js';

/** A strategy result: the report fixture's (c) (60 jobs, all committed, 1 call each), with `figures`. */
function result(id: StrategyResult['id'], label: string, figures: Partial<StrategyResult>): StrategyResult {
  const base = sampleBenchInput().report.strategies.find((x) => x.id === 'admission')!;
  return {
    ...base,
    id,
    label,
    modelCallsPerCompletion: 1,
    burstAwareMinimumMs: 57_000,
    burstAwareRatio: 1.043,
    attemptsPerCompletion: 1.05,
    timedOut: false,
    ...figures,
  };
}

describe('bench scenarios: the report', () => {
  it("holds (c) to the scenario's targets: a strategy that gave up shows how many, and (c) giving up misses the drain target", () => {
    // Prepare
    const strategies = [
      result('naive', '(a) naive', { committed: 40, gaveUpOn: 20, deadLettered: 20, burstAwareRatio: null }),
      result('admission', '(c) admission', {
        committed: 59,
        gaveUpOn: 1,
        lost: 1,
        burstAwareRatio: null,
        modelCallsPerCompletion: 1.06,
        attemptsPerCompletion: 1.12,
      }),
    ];
    // Act
    const targets = scenarioTargets(strategies)!;
    const figures = strategies.map(scenarioFigures);
    // Assess
    assert.deepEqual(Object.keys(targets), ['burstAwareRatio', 'modelCallsPerCompletion', 'attemptsPerCompletion', 'deadLettered', 'lost']);
    assert.equal(targets.burstAwareRatio?.met, false);
    assert.equal(targets.modelCallsPerCompletion?.met, false);
    assert.equal(targets.attemptsPerCompletion?.met, false);
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
      /^MISSED: drain <= 1\.05x the bound \(-\), calls per completion <= 1\.03 \(1\.06\), attempts per completion <= 1\.10 \(1\.12\), 0 lost \(1\); met: 0 dead-lettered \(0\)$/,
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
    assert.match(text, /drain \/ scenario bound\s+1\.30x\s+1\.04x\s+<= 1\.05x met/);
    assert.match(text, /model calls per completion\s+1\.00 \(\d+\)\s+1\.00 \(\d+\)\s+<= 1\.03 met/);
    assert.match(text, /\(c\) against the scenario's targets: met: /);
    assert.match(text, /attempts per completion\s+1\.05 \(\d+\)\s+1\.05 \(\d+\)\s+<= 1\.10 met/, 'every scenario holds (c) to 1.10 attempts per completion');
  });
});
