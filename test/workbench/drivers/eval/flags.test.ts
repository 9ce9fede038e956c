import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCommand } from '../../../../lib/cli/command.js';
import { evalCommand } from '../../../../workbench/drivers/eval/command.js';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) }, env: {} }, out, err };
}

describe('npm run eval: flags', () => {
  it('reads the release, baseline, lane, tolerances and provider, with the defaults', () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'ratelane-eval-flags-'));
    const gate = join(dir, 'gate.json');
    writeFileSync(gate, JSON.stringify({ default: 0.05, fields: { 'invoice@1 currency': 0 }, minBucketDocuments: 30 }));
    // Act
    const defaults = evalCommand.parse([]);
    const given = evalCommand.parse(['--release', '2026.12-rc1', '--baseline', '2026.11', '--lane', 'batch', '--gate', gate, '--min-bucket', '25']);
    const real = evalCommand.parse(['--provider-url', 'https://api.example.com/v1/', '--model', 'gpt-4o-mini']);
    // Assess
    assert.equal(defaults.release, '2026.11');
    assert.equal(defaults.lane, 'queue');
    assert.deepEqual(defaults.tolerance, { default: 0.02, fields: {}, minBucketDocuments: 20 });
    assert.equal(defaults.minuteMs, 6_000);
    assert.equal(defaults.realProvider, undefined);
    assert.deepEqual(given.tolerance, { default: 0.05, fields: { 'invoice@1 currency': 0 }, minBucketDocuments: 25 });
    assert.equal(given.lane, 'batch');
    assert.deepEqual(real.realProvider, { baseUrl: 'https://api.example.com/v1', model: 'gpt-4o-mini' });
    assert.equal(real.minuteMs, 60_000, 'a real provider minute');
  });

  it('refuses an unknown release or lane, a model without a provider, a bad URL and a bad gate file (exit 2, nothing run)', async () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'ratelane-eval-flags-'));
    const badGate = join(dir, 'gate.json');
    writeFileSync(badGate, JSON.stringify({ fields: { 'invoice@1 currency': 2 } }));
    const cases: [string[], RegExp][] = [
      [['--release', '2099.1'], /unknown release "2099\.1" \(known: 2026\.11, 2026\.12-rc1, 2026\.12-rc2\)/],
      [['--baseline', 'nope'], /unknown release "nope"/],
      [['--lane', 'fast'], /--lane must be queue, live or batch/],
      [['--model', 'gpt-4o'], /--model needs --provider-url/],
      [['--provider-url', 'ftp://x'], /--provider-url must be an http\(s\) URL/],
      [['--gate', badGate], /"fields" must map "schema field" to a tolerance in 0\.\.1/],
      [['--model-errors', join(dir, 'missing.json')], /--model-errors: cannot read/],
    ];
    for (const [argv, message] of cases) {
      const t = io();
      // Act
      const code = await runCommand(evalCommand, argv, t.io);
      // Assess
      assert.equal(code, 2, argv.join(' '));
      assert.match(t.err.join(''), message);
    }
  });
});
