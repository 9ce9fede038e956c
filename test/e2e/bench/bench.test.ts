/**
 * `npm run bench` in small: its flags, and one tiny run of strategies (a) and (c) on its own local
 * stack, checking the report's shape and that the naive strategy wastes more than admission does;
 * then one tiny scenario run (uneven-tokens), checking that its report carries the scenario's bound
 * and each strategy's figures against it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { BENCH_USAGE, benchCommand } from '../../../workbench/drivers/bench/command.js';
import { UsageError } from '../../../lib/cli/command.js';
import { benchExitCode, type BenchReport } from '../../../workbench/drivers/bench/report.js';
import { runBench, runScenarioBench, scenarioExitCode } from '../../../workbench/drivers/bench/bench.js';
import type { DrainCurve } from '../../../workbench/drivers/bench/curve.js';
import type { ScenarioReport } from '../../../workbench/drivers/bench/scenarios/report.js';

/** A tiny run: 30 jobs on one key of 10 rpm per lane, a 2 s minute, strategies (a) and (c). */
const TINY = ['--jobs', '30', '--keys', '1', '--provider-rpm', '10', '--minute-ms', '2000', '--strategies', 'a,c'];

function sink(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

describe('npm run bench: flags', () => {
  it('has defaults that finish in minutes, with all three strategies', () => {
    // Act
    const options = benchCommand.parse([]);
    // Assess
    assert.deepEqual(options.strategies, ['naive', 'reschedule', 'admission']);
    assert.equal(options.jobs, 300);
    assert.equal(options.keys, 2);
    assert.equal(options.providerRpm, 8);
    assert.equal(options.minuteMs, 3000);
    assert.equal(options.json, false);
    assert.equal(options.strict, false);
  });

  it('reads every flag, and strategies by letter or name in the fixed order', () => {
    // Act
    const options = benchCommand.parse([
      '--jobs',
      '50',
      '--keys',
      '3',
      '--provider-rpm',
      '12',
      '--provider-tpm',
      '5000',
      '--minute-ms',
      '2000',
      '--strategies',
      'c,a',
      '--floor-messages',
      '0',
      '--probe-messages',
      '7',
      '--warmup-messages',
      '0',
      '--seed',
      '9',
      '--time-limit',
      '60',
      '--log-file',
      '/tmp/x.log',
      '--strict',
      '--json',
    ]);
    // Assess
    assert.deepEqual(options, {
      jobs: 50,
      keys: 3,
      providerRpm: 12,
      providerTpm: 5000,
      minuteMs: 2000,
      strategies: ['naive', 'admission'],
      floorMessages: 0,
      probeMessages: 7,
      warmupMessages: 0,
      seed: 9,
      timeLimitSeconds: 60,
      strict: true,
      json: true,
      logFile: '/tmp/x.log',
    });
    assert.deepEqual(benchCommand.parse(['--strategies', 'reschedule']).strategies, ['reschedule']);
  });

  it('rejects bad values and unknown flags with a usage error; --help is an empty one', () => {
    // Act + Assess
    for (const argv of [['--jobs', '0'], ['--minute-ms', '10'], ['--strategies', 'd'], ['--strategies', ','], ['--keys', 'x'], ['--nope']]) {
      assert.throws(() => benchCommand.parse(argv), UsageError, argv.join(' '));
    }
    assert.throws(
      () => benchCommand.parse(['--help']),
      (error: unknown) => error instanceof UsageError && error.message === '',
    );
    assert.match(BENCH_USAGE, /--strategies/);
  });
});

describe('npm run bench: a tiny run', () => {
  it('reports every figure per strategy; naive dead-letters or retries more than admission; --json is the last line; --html writes the page', {
    timeout: 90_000,
  }, async () => {
    // Prepare
    const out = sink();
    const err = sink();
    const htmlFile = '.cache/report-test/bench-integration.html';
    const options = benchCommand.parse([
      ...TINY,
      '--floor-messages',
      '20',
      '--probe-messages',
      '5',
      '--warmup-messages',
      '40',
      '--time-limit',
      '60',
      '--json',
      '--html',
      htmlFile,
    ]);
    // Act
    const report = await runBench(options, { stdout: out.stream, stderr: err.stream });
    // Assess: the shape
    assert.deepEqual(
      report.strategies.map((s) => s.id),
      ['naive', 'admission'],
    );
    for (const s of report.strategies) {
      assert.equal(s.submitted, 30);
      assert.equal(s.lost, 0, `${s.label} lost jobs`);
      assert.equal(s.doubleCommits, 0);
      assert.equal(s.timedOut, false);
      assert.equal(s.committed + s.deadLettered, 30, `${s.label}: every job committed or dead-lettered`);
      assert.ok(s.quotaBoundMinimumMs! > 0);
      assert.ok(s.overheadMs.n > 0 && s.overheadMs.p50 !== null && s.overheadMs.p99! >= s.overheadMs.p50);
      // Attempts count every receive, also those of the jobs never committed.
      assert.ok(s.receives >= s.committed + s.deadLettered, `${s.label}: ${s.receives} receives for ${s.committed + s.deadLettered} jobs`);
      assert.equal(s.attemptsPerCompletion, s.committed > 0 ? Math.round((s.receives / s.committed) * 1000) / 1000 : null);
    }
    const [naive, admission] = report.strategies as [BenchReport['strategies'][number], BenchReport['strategies'][number]];
    // Naive hits the provider's limit and pays for it; admission calls once per job.
    assert.ok(naive.throttled429 > 0, 'naive saw no 429 at this quota');
    assert.ok(
      naive.deadLettered > admission.deadLettered || naive.modelCallsPerCompletion! > admission.modelCallsPerCompletion!,
      `naive: ${naive.deadLettered} dead-lettered, ${naive.modelCallsPerCompletion} calls per completion; admission: ${admission.deadLettered}, ${admission.modelCallsPerCompletion}`,
    );
    assert.equal(admission.deadLettered, 0);
    assert.equal(admission.committed, 30);
    // The headline ratio is against the burst-aware bound, and only for a strategy that committed every job.
    assert.equal(admission.gaveUpOn, 0);
    assert.ok(admission.burstAwareRatio !== null && admission.burstAwareRatio > 0);
    assert.ok(admission.attemptsPerCompletion !== null && admission.attemptsPerCompletion >= 1);
    assert.equal(admission.admissionDeniedPerCompletion, Math.round((admission.admissionDenied / 30) * 1000) / 1000);
    assert.equal(naive.gaveUpOn, 30 - naive.committed);
    if (naive.gaveUpOn > 0) assert.equal(naive.burstAwareRatio, null, 'no ratio for a strategy that gave up on jobs');
    assert.ok(report.probe && report.probe.messages === 5 && report.probe.overheadMs.p50! > 0);
    assert.ok(report.floor && report.floor.messages === 20 && report.floor.totalMs.p50! > 0);
    assert.ok(report.targets);
    assert.equal(report.targets.lost.met, true);
    // The emulators were warmed before the first strategy, and the report says how.
    const warmup = report.settings.warmup;
    assert.ok(warmup && warmup.messages === 40 && warmup.sampleMessages === 20 && warmup.probeJobs > 0 && warmup.lastP50Ms! > 0);
    assert.match(out.text(), /warm-up: 40 floor messages 10 at a time/);
    assert.equal(report.machine.cpus > 0, true);
    assert.equal(benchExitCode(report), 0);
    // The table on stdout, progress on stderr, the JSON object on the last line.
    assert.match(out.text(), /model calls per completion/);
    assert.match(out.text(), /drain \/ burst-aware minimum/);
    assert.match(out.text(), /admission denials per completion/);
    assert.match(out.text(), /attempts per completion/);
    assert.match(out.text(), /\(a\) naive/);
    assert.match(err.text(), /\[\(c\) admission\s+\d+ s\] committed/);
    const last = out.text().trim().split('\n').at(-1)!;
    const parsed = JSON.parse(last) as BenchReport;
    assert.equal(parsed.strategies.length, 2);
    assert.equal(parsed.date, report.date);
    assert.equal('curves' in parsed, false, 'the JSON report is unchanged');
    // The HTML page: its path on stderr, a drain curve per strategy that ends at the drain time.
    assert.ok(err.text().includes(`HTML report: ${resolve(htmlFile)}`));
    const page = readFileSync(htmlFile, 'utf8');
    assert.match(page, /data-charts-expected="3"/);
    const embedded = JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(page)![1]!) as { curves: DrainCurve[] };
    assert.deepEqual(
      embedded.curves.map((c) => c.strategyId),
      ['naive', 'admission'],
    );
    for (const [i, curve] of embedded.curves.entries()) {
      const s = report.strategies[i]!;
      assert.equal(curve.commitOffsetsMs.length, s.committed);
      assert.equal(curve.commitOffsetsMs.at(-1), s.drainMs);
      assert.deepEqual(
        curve.lanes.map((l) => l.requestsPerMinute),
        curve.lanes.map(() => 10),
      );
    }
  });
});

describe('npm run bench: a tiny scenario run', () => {
  it('uneven-tokens: the report carries the tokens bound per lane and, per strategy, its drain against it and its waste; --json is the last line', {
    timeout: 90_000,
  }, async () => {
    // Prepare
    const out = sink();
    const err = sink();
    const options = benchCommand.parse(['--scenario', 'uneven-tokens', ...TINY, '--warmup-messages', '0', '--time-limit', '60', '--json']);
    // Act
    const result = await runScenarioBench(options, { stdout: out.stream, stderr: err.stream });
    // Assess: one report, its bound the tokens one (the three long jobs make tokens bind)
    assert.equal(result.baseline, null);
    assert.equal(result.reports.length, 1);
    const report = result.reports[0]!;
    assert.equal(report.scenario, 'uneven-tokens');
    assert.equal(report.settings.warmup, null, 'no warm-up asked');
    assert.match(out.text(), /warm-up: none/);
    assert.equal(report.settings.providerTpm, 10_000);
    assert.equal(report.settings.providerRpm, 40);
    assert.match(report.bound.formula, /tokens/);
    assert.ok(report.bound.ms > 0 && report.bound.perLane.length > 0);
    for (const lane of report.bound.perLane) assert.match(lane.detail, /\d+ jobs, \d+ tokens, 1 owner\(s\) x 10000 tpm \/ 40 rpm: tokens [\d.]+ min/);
    assert.equal(report.bound.ms, Math.max(...report.bound.perLane.map((l) => l.ms)));
    // Per strategy: committed, drain against the bound (a ratio only when every job committed), waste
    assert.deepEqual(
      report.figures.map((f) => f.id),
      ['naive', 'admission'],
    );
    for (const f of report.figures) {
      assert.equal(f.submitted, 30);
      assert.equal(f.lost, 0, `${f.label} lost jobs`);
      assert.equal(f.timedOut, false);
      assert.equal(f.boundMs, Math.round(report.strategies.find((s) => s.id === f.id)!.burstAwareMinimumMs));
      assert.ok(f.boundMs > 0);
      assert.ok(f.modelCallsPerCompletion !== null && f.attemptsPerCompletion !== null && f.admissionDeniedPerCompletion !== null);
      if (f.gaveUpOn > 0) {
        assert.equal(f.drainRatio, null);
        assert.equal(f.drain, `gave up on ${f.gaveUpOn}`);
      } else {
        // The ratio is of the unrounded bound, `boundMs` its rounding: equal to the third decimal, give or take one.
        assert.ok(f.drainRatio !== null && Math.abs(f.drainRatio - f.drainMs! / f.boundMs) <= 0.0015, `${f.drainRatio} vs ${f.drainMs} / ${f.boundMs}`);
      }
    }
    const admission = report.figures[1]!;
    assert.equal(admission.committed, 30);
    assert.equal(admission.deadLettered, 0);
    assert.equal(admission.boundMs, Math.round(report.bound.ms), "the scenario's bound is (c)'s run's");
    assert.deepEqual(Object.keys(report.targets ?? {}), ['burstAwareRatio', 'modelCallsPerCompletion', 'attemptsPerCompletion', 'deadLettered', 'lost']);
    assert.equal(report.targets?.lost?.met, true);
    assert.equal(scenarioExitCode(result, { strict: false }), 0);
    // The report on stdout with the bound and the target checks; the JSON object on the last line
    assert.match(out.text(), /ratelane bench, scenario uneven-tokens/);
    assert.match(out.text(), /bound: .*the slowest lane's: max\(tokens/);
    assert.match(out.text(), /drain \/ scenario bound/);
    assert.match(out.text(), /\(c\) against the scenario's targets: /);
    assert.match(err.text(), /scenario bound [\d.]+ s/);
    const parsed = JSON.parse(out.text().trim().split('\n').at(-1)!) as ScenarioReport;
    assert.equal(parsed.scenario, 'uneven-tokens');
    assert.deepEqual(parsed.bound, report.bound);
    assert.deepEqual(parsed.figures, report.figures);
  });
});
