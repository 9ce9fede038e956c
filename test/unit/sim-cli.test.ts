import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSimArgs, runSim, SimUsageError, type SimReport } from '../../lib/sim/cli.js';

describe('parseSimArgs', () => {
  it('defaults to the issue: 1,000,000 jobs, 1,000 consumers, both scenarios, three strategies', () => {
    const o = parseSimArgs([]);
    assert.equal(o.jobs, 1_000_000);
    assert.equal(o.consumers, 1000);
    assert.deepEqual(o.scenarios, ['minute', 'day']);
    assert.deepEqual(o.strategies, ['naive', 'reschedule', 'admission']);
    assert.equal(o.json, false);
  });

  it('reads options, with values inline or after', () => {
    const o = parseSimArgs(['--jobs=5000', '--consumers', '50', '--scenario', 'day', '--strategy', 'admission,naive', '--seed', '3', '--json', '--quiet', '--parallel', '1', '--output-estimate', '200']);
    assert.equal(o.jobs, 5000);
    assert.equal(o.consumers, 50);
    assert.deepEqual(o.scenarios, ['day']);
    assert.deepEqual(o.strategies, ['naive', 'admission']);
    assert.equal(o.seed, 3);
    assert.equal(o.outputEstimate, 200);
    assert.equal(o.json && o.quiet, true);
  });

  it('rejects what it does not know', () => {
    assert.throws(() => parseSimArgs(['--jobs', '0']), SimUsageError);
    assert.throws(() => parseSimArgs(['--strategy', 'retry']), /unknown retry/);
    assert.throws(() => parseSimArgs(['--frobnicate']), /unknown option/);
    assert.throws(() => parseSimArgs(['--failure-rate', '1']), SimUsageError);
    assert.throws(() => parseSimArgs(['--reservation', 'due-at']), /unknown option/, 'the reservation choice is the pool\'s, not a flag');
  });
});

describe('runSim', () => {
  it('prints a table and, with --json, one JSON object on the last line', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const report = await runSim(parseSimArgs(['--jobs', '300', '--consumers', '20', '--parallel', '1', '--json']), { stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    const last = JSON.parse(out.at(-1)!) as SimReport;
    assert.equal(last.kind, 'ratelane-sim');
    assert.equal(last.results.length, 6);
    assert.equal(report.results.length, 6);
    assert.ok(out.some((l) => l.includes('(c) admission')));
    assert.ok(err.some((l) => l.includes('done in')), 'progress goes to stderr');
    for (const r of last.results) assert.equal(r.completed + r.deadLettered + r.rejected + r.lost + r.unfinished, 300);
    assert.equal(last.targets.length, 8);
  });
});
