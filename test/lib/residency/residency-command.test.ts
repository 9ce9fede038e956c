/**
 * `ratelane residency` on the repository's own lane stacks, synthesized in-process as the CDK app builds
 * them (once for the default lanes): nothing is flagged for eu nor for us, the EU lane's model endpoint is
 * eu.api.openai.com in geography eu; moving the EU endpoint to the US (`-c euProviderBaseUrl=…`) is
 * flagged with the synth's refusal and exits 1. Also the usage errors and an unreadable `--cdk-out`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type CommandIo, runCommand } from '../../../lib/cli/command.js';
import { residencyCommand } from '../../../lib/cli/residency.js';
import type { ResidencyMap } from '../../../lib/residency/model.js';

/** Runs `ratelane residency` with `argv`; resolves its exit code and what it wrote. */
async function residency(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CommandIo = { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: {} };
  const code = await runCommand(residencyCommand, argv, io);
  return { code, out, err };
}

const folder = mkdtempSync(join(tmpdir(), 'ratelane-residency-command-'));
after(() => rmSync(folder, { recursive: true, force: true }));

describe('ratelane residency: the repository lane stacks', () => {
  it('flags nothing for eu nor us, the EU lane processing at eu.api.openai.com in geography eu, and writes the page', { timeout: 90_000 }, async () => {
    // Prepare
    const page = join(folder, 'residency.html');
    // Act
    const { code, out, err } = await residency(['--json', '--html', page]);
    // Assess
    assert.equal(code, 0, err);
    const map = JSON.parse(out) as ResidencyMap;
    assert.deepEqual(
      map.lanes.map((l) => [l.lane, l.region, l.geography, l.stack, l.source, l.flagged]),
      [
        ['us', 'us-east-1', 'us', 'ratelane-us', 'synth', []],
        ['eu', 'eu-central-1', 'eu', 'ratelane-eu', 'synth', []],
      ],
    );
    const eu = map.lanes[1]!;
    const endpoint = eu.places.find((p) => p.kind === 'model-endpoint');
    assert.deepEqual([endpoint?.name, endpoint?.geography, endpoint?.inLaneGeography], ['eu.api.openai.com', 'eu', true]);
    assert.deepEqual(map.lanes[0]!.places.find((p) => p.kind === 'model-endpoint')?.name, 'api.openai.com');
    assert.deepEqual(
      [...new Set(eu.places.map((p) => p.kind))],
      ['bucket', 'queue', 'dead-letter-queue', 'table', 'table-backups', 'log-group', 'metrics', 'model-endpoint', 'batch-files', 'review'],
    );
    for (const lane of map.lanes) {
      const inStack = lane.places.filter((p) => p.kind !== 'model-endpoint' && p.kind !== 'batch-files');
      assert.ok(
        inStack.every((p) => p.region === lane.region),
        `every AWS place of ${lane.lane} in ${lane.region}: ${inStack.map((p) => `${p.name} ${p.region}`).join(', ')}`,
      );
    }
    const queue = eu.places.find((p) => p.kind === 'queue');
    assert.deepEqual([queue?.name, queue?.encryption], ['ratelane-eu-jobs', 'SSE-SQS (SQS-managed keys)']);
    assert.match(queue!.retention, /^messages kept up to 14 d/);
    assert.ok(
      eu.places.filter((p) => p.kind === 'table').every((p) => p.encryption.startsWith('SSE-KMS')),
      'the tables are encrypted with KMS',
    );
    assert.ok(
      eu.places.some((p) => p.kind === 'table-backups' && p.name.startsWith('ratelane-eu-results')),
      'the results table has point-in-time backups',
    );
    assert.match(err, /synthesizing lane us \(us-east-1\) in-process\n.*synthesizing lane eu \(eu-central-1\) in-process\n.*wrote /s);
    const html = readFileSync(page, 'utf8');
    assert.match(html, /^<!doctype html>/);
    assert.ok(html.includes('eu.api.openai.com'));
  });

  it('flags the EU lane moved to a US endpoint, with the synth refusal, and exits 1', { timeout: 60_000 }, async () => {
    // Act
    const { code, out } = await residency(['--lane', 'eu', '--json', '-c', 'euProviderBaseUrl=https://api.openai.com/v1']);
    // Assess
    assert.equal(code, 1);
    const map = JSON.parse(out) as ResidencyMap;
    assert.equal(map.lanes.length, 1);
    const eu = map.lanes[0]!;
    assert.deepEqual([eu.lane, eu.source, eu.stack], ['eu', 'config', null]);
    assert.match(
      eu.synthRefusal ?? '',
      /^lane eu cannot be deployed:\n- lane eu \(eu-central-1, geography eu\): its model endpoint api\.openai\.com processes in us/,
    );
    assert.deepEqual(
      eu.flagged.map((f) => [f.kind, f.name]),
      [
        ['model-endpoint', 'api.openai.com'],
        ['batch-files', 'api.openai.com: Files and Batch API'],
      ],
    );
    assert.match(eu.flagged[0]!.why, /not in the lane's geography.*; cdk synth refuses the lane: lane eu cannot be deployed/s);
    assert.ok(
      eu.places.filter((p) => p.kind !== 'model-endpoint' && p.kind !== 'batch-files').every((p) => p.region === 'eu-central-1'),
      'the rest of the lane is drawn from its config, in its region',
    );
  });
});

describe('ratelane residency: usage', () => {
  it('refuses a context without =, -c with --cdk-out, and an unknown lane, with exit 2', { timeout: 60_000 }, async () => {
    // Act
    const noValue = await residency(['-c', 'euProviderBaseUrl']);
    const both = await residency(['--cdk-out', folder, '--context', 'usRegion=us-west-2']);
    const unknown = await residency(['--lane', 'apac']);
    // Assess
    assert.equal(noValue.code, 2);
    assert.match(noValue.err, /^error: -c\/--context takes key=value, got "euProviderBaseUrl"\n\nUsage: ratelane residency/);
    assert.equal(both.code, 2);
    assert.match(both.err, /with --cdk-out the templates are already synthesized/);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /^error: --lane apac: no such lane \(lanes: us, eu\)/);
  });

  it('says what is wrong with a --cdk-out folder that holds no cloud assembly', async () => {
    // Act
    const text = await residency(['--cdk-out', join(folder, 'nothing')]);
    const json = await residency(['--cdk-out', join(folder, 'nothing'), '--json']);
    // Assess
    assert.equal(text.code, 2);
    assert.match(text.err, /^ratelane residency: .*nothing\/manifest\.json: no such file\n$/);
    assert.equal(json.code, 2);
    assert.deepEqual(JSON.parse(json.out).error.kind, 'input');
  });
});
