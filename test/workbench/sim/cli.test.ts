import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../../lib/cli/command.js';
import { simCommand } from '../../../workbench/sim/command.js';
import { runSim, type SimReport } from '../../../workbench/sim/driver.js';

describe('ratelane sim: flags', () => {
  it('defaults to the issue: 1,000,000 jobs, 1,000 consumers, both scenarios, three strategies', () => {
    // Act
    const o = simCommand.parse([]);
    // Assess
    assert.equal(o.jobs, 1_000_000);
    assert.equal(o.consumers, 1000);
    assert.deepEqual(o.scenarios, ['minute', 'day']);
    assert.deepEqual(o.strategies, ['naive', 'reschedule', 'admission']);
    assert.equal(o.json, false);
  });

  it('reads options, with values inline or after', () => {
    // Act
    const o = simCommand.parse([
      '--jobs=5000',
      '--consumers',
      '50',
      '--scenario',
      'day',
      '--strategy',
      'admission,naive',
      '--seed',
      '3',
      '--json',
      '--quiet',
      '--parallel',
      '1',
      '--output-estimate',
      '200',
      '--book-within-ms',
      '0',
      '--owners',
      '40',
    ]);
    // Assess
    assert.equal(o.jobs, 5000);
    assert.equal(o.consumers, 50);
    assert.deepEqual(o.scenarios, ['day']);
    assert.deepEqual(o.strategies, ['naive', 'admission']);
    assert.equal(o.seed, 3);
    assert.equal(o.outputEstimate, 200);
    assert.equal(o.bookWithinMs, 0);
    assert.equal(o.owners, 40);
    assert.equal(simCommand.parse([]).owners, undefined, "the scenario's own keys by default");
    assert.equal(simCommand.parse([]).bookWithinMs, 2_000, "the consumer's booking window by default");
    assert.equal(o.json && o.quiet, true);
  });

  it('runs the token-bound scenario when asked for it, alone or with all, not by default', () => {
    // Act + Assess
    assert.deepEqual(simCommand.parse(['--scenario', 'tokens']).scenarios, ['tokens']);
    assert.deepEqual(simCommand.parse(['--scenario', 'all']).scenarios, ['minute', 'day', 'tokens']);
    assert.deepEqual(simCommand.parse(['--scenario', 'tokens,minute']).scenarios, ['minute', 'tokens']);
  });

  it('rejects what it does not know', () => {
    // Act + Assess
    assert.throws(() => simCommand.parse(['--jobs', '0']), UsageError);
    assert.throws(() => simCommand.parse(['--strategy', 'retry']), /unknown retry/);
    assert.throws(() => simCommand.parse(['--frobnicate']), /unknown option/);
    assert.throws(() => simCommand.parse(['--failure-rate', '1']), UsageError);
    assert.throws(() => simCommand.parse(['--book-within-ms', '-1']), UsageError);
    assert.throws(() => simCommand.parse(['--owners', '0']), UsageError);
    assert.throws(() => simCommand.parse(['--reservation', 'due-at']), /unknown option/, "the reservation choice is the pool's, not a flag");
  });
});

describe('runSim', () => {
  it('prints a table and, with --json, one JSON object on the last line', async () => {
    // Prepare
    const out: string[] = [];
    const err: string[] = [];
    // Act
    const report = await runSim(simCommand.parse(['--jobs', '300', '--consumers', '20', '--parallel', '1', '--json']), {
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
    });
    // Assess
    const last = JSON.parse(out.at(-1)!) as SimReport;
    assert.equal(last.kind, 'ratelane-sim');
    assert.equal(last.results.length, 6);
    assert.equal(report.results.length, 6);
    assert.ok(out.some((l) => l.includes('(c) admission')));
    assert.ok(
      err.some((l) => l.includes('done in')),
      'progress goes to stderr',
    );
    for (const r of last.results) assert.equal(r.completed + r.deadLettered + r.rejected + r.lost + r.unfinished, 300);
    assert.equal(last.targets.length, 12, "five targets per scenario (the bucket items' writes among them), and the cost per committed job against naive's");
    const items = last.results.find((r) => r.strategy === 'admission' && r.scenario === 'minute')!;
    assert.equal(items.itemWriteCeiling, 1000);
    assert.ok(Object.keys(items.peakItemWritesPerSecond ?? {}).length > 0, "each bucket item's peak writes per second");
    assert.equal(last.results.find((r) => r.strategy === 'naive')?.peakItemWritesPerSecond, null, 'no admission, no bucket items');
    const cost = last.targets.find((t) => t.target === 'costPerCompletionAtMostNaive' && t.scenario === 'minute')!;
    const naive = last.results.find((r) => r.strategy === 'naive' && r.scenario === 'minute')!;
    assert.equal(cost.limit, (naive.costPerMillion.total * 300) / naive.completed, "naive's bill per committed job");
  });

  it('says which run the work limit stopped, and marks its drain as a lower bound', async () => {
    // Prepare: half the calls fail, so the jobs need more than one receive each on average
    const out: string[] = [];
    const flags = ['--jobs', '300', '--consumers', '20', '--parallel', '1', '--quiet', '--scenario', 'minute', '--strategy', 'reschedule'];
    // Act
    const report = await runSim(simCommand.parse([...flags, '--failure-rate', '0.5', '--max-receives-per-job', '1']), {
      stdout: (l) => out.push(l),
      stderr: () => {},
    });
    // Assess
    const [r] = report.results;
    assert.equal(r?.stoppedBy, 'receive-limit');
    assert.ok(r.unfinished > 0);
    assert.ok(out.some((l) => l.includes('(b) reschedule: stopped at the work limit') && l.includes('lower bounds')));
    assert.ok(out.some((l) => l.startsWith('| (b) reschedule | >= ')));
  });
});
