/**
 * `ratelane submit` end to end against the run's real fauxqs: files, folders and texts, endpoints from
 * the flag or the environment, per-document rejections and `--all-or-nothing`, and usage errors.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { runCommand, type CommandIo } from '../../../lib/cli/command.js';
import { createSubmitCommand, type SubmitWiring } from '../../../lib/cli/submit.js';
import { JobSchema, sha256Hex } from '../../../lib/contract/job.js';
import { clientsIn, drain, endpoints, objectKeys, setupLanes } from '../../helpers/producer-lanes.js';

/** Runs `ratelane submit` with the given wiring. */
const submit = (argv: string[], io: CommandIo, wiring: SubmitWiring = {}): Promise<number> => runCommand(createSubmitCommand(wiring), argv, io);

describe('producer: ratelane submit', () => {
  const capture = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) }, env: {} } };
  };

  it('sends to a lane declared only in the lane config file RATELANE_CONFIG names: no source edit adds a lane', async () => {
    // Prepare: a lane "apac" of the team's file, on a queue and bucket the run created
    const t = await setupLanes();
    const dir = await mkdtemp(join(tmpdir(), 'ratelane-config-'));
    try {
      const eu = t.lanes.eu!;
      const config = join(dir, 'ratelane.config.json');
      await writeFile(
        config,
        JSON.stringify({ lanes: [{ name: 'apac', region: eu.region, resources: { queueName: eu.resources.queueName, bucketName: eu.resources.bucketName } }] }),
      );
      const withFile = capture();
      const without = capture();
      // Act
      const args = ['--region', 'apac', '--text', 'invoice for the apac lane', '--json', '--endpoints', JSON.stringify(endpoints)];
      const code = await submit(args, { ...withFile.io, env: { RATELANE_CONFIG: config } });
      const refused = await submit(args, without.io);
      // Assess
      assert.equal(code, 0, withFile.err.join(''));
      const [message] = await drain(clientsIn(eu.region).sqs, t.queueUrl.eu);
      assert.equal(JobSchema.parse(JSON.parse(message!.Body!)).region, 'apac');
      assert.notEqual(refused, 0);
      assert.match(without.out.join('') + without.err.join(''), /apac/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('submits files, a folder and text end to end with --json', async () => {
    // Prepare
    const t = await setupLanes();
    const dir = await mkdtemp(join(tmpdir(), 'ratelane-submit-'));
    try {
      await mkdir(join(dir, 'batch'));
      await writeFile(join(dir, 'one.txt'), 'CLI-MARKER invoice one');
      await writeFile(join(dir, 'batch', 'a.txt'), 'invoice a');
      await writeFile(join(dir, 'batch', 'b.txt'), 'invoice b');
      // what --dir skips, and says so: a dotfile, a subfolder, a symlink
      await writeFile(join(dir, 'batch', '.hidden.txt'), 'not sent');
      await mkdir(join(dir, 'batch', 'nested'));
      await symlink(join(dir, 'one.txt'), join(dir, 'batch', 'link.txt'));
      const c = capture();
      // Act
      const code = await submit(
        [
          '--region',
          'eu',
          '--file',
          join(dir, 'one.txt'),
          '--dir',
          join(dir, 'batch'),
          '--text',
          'inline invoice',
          '--json',
          '--endpoints',
          JSON.stringify(endpoints),
        ],
        c.io,
        { lanes: t.lanes },
      );
      // Assess
      assert.equal(code, 0);
      assert.equal(c.out.length, 1, 'exactly one JSON object on stdout');
      const summary = JSON.parse(c.out[0]!) as { ok: boolean; sent: number; failed: number; results: { sourceId: string; status: string; region: string }[] };
      assert.equal(summary.ok, true);
      assert.equal(summary.sent, 4);
      // a file's source id is its name, or its path in the submitted folder: never a local path
      assert.deepEqual(
        summary.results.map((r) => r.sourceId),
        ['one.txt', 'a.txt', 'b.txt', `text:${sha256Hex('inline invoice')}`],
      );
      const drained = await drain(clientsIn('eu-central-1').sqs, t.queueUrl.eu);
      assert.ok(!drained.some((m) => m.Body!.includes(dir)), 'no local path in any message');
      assert.deepEqual(
        (summary as unknown as { skipped: { path: string; why: string }[] }).skipped.map((s) => [basename(s.path), s.why]),
        [
          ['.hidden.txt', 'hidden'],
          ['link.txt', 'symlink'],
          ['nested', 'subfolder'],
        ],
      );
      assert.match(c.err.join(''), /skipped 3 folder entries: .*\.hidden\.txt \(hidden\)/);
      assert.ok(summary.results.every((r) => r.region === 'eu' && r.status === 'sent'));
      assert.ok(c.err.join('').includes('validated 4 document(s)'));
      assert.ok(!c.err.join('').includes('CLI-MARKER') && !c.out.join('').includes('CLI-MARKER'));
      assert.equal(drained.length, 4);
      assert.equal((await objectKeys('eu-central-1', t.bucket.eu)).length, 4);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads endpoints from RATELANE_ENDPOINTS and prints a readable summary', async () => {
    // Prepare
    const t = await setupLanes();
    const c = capture();
    // Act
    const code = await submit(
      ['--region', 'us', '--text', 'hello', '--source-id', 'ticket-9'],
      { ...c.io, env: { RATELANE_ENDPOINTS: JSON.stringify(endpoints) } },
      {
        lanes: t.lanes,
      },
    );
    // Assess
    assert.equal(code, 0);
    assert.match(c.out.join(''), /submitted 1 document\(s\): 1 sent, 0 failed\n {2}sent {4}#0 ticket-9 -> us job /);
    assert.equal((await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).length, 1);
  });

  it('by default sends the valid documents, lists each rejected one with its reason and exits 2', async () => {
    // Prepare
    const t = await setupLanes();
    const c = capture();
    const cj = capture();
    // Act
    const code = await submit(['--region', 'us', '--text', '   ', '--text', 'fine', '--endpoints', JSON.stringify(endpoints)], c.io, { lanes: t.lanes });
    const codeJson = await submit(
      ['--region', 'us', '--text', 'CLI-MARKER fine too', '--text', '', '--json', '--endpoints', JSON.stringify(endpoints)],
      cj.io,
      {
        lanes: t.lanes,
      },
    );
    // Assess
    assert.equal(code, 2);
    const out = c.out.join('');
    assert.match(out, /submitted 2 document\(s\): 1 sent, 0 failed, 1 rejected\n/);
    assert.match(out, /\n {2}REJECTED #0 text:[a-f0-9]{64}: empty_document: document is whitespace only \(3 bytes\)\n/);
    assert.match(out, /\n {2}sent {4}#1 text:[a-f0-9]{64} -> us job /);
    assert.match(out, /1 document\(s\) rejected and not sent; 1 of 2 sent anyway/);
    assert.match(c.err.join(''), /validated 1 document\(s\): us 1; 1 rejected, not sent/);
    assert.equal(codeJson, 2);
    assert.equal(cj.out.length, 1, 'exactly one JSON object on stdout');
    const summary = JSON.parse(cj.out[0]!) as {
      ok: boolean;
      sent: number;
      rejected: number;
      results: { index: number; status: string; error?: { code: string; stage: string } }[];
    };
    assert.equal(summary.ok, false);
    assert.deepEqual([summary.sent, summary.rejected], [1, 1]);
    assert.deepEqual(
      summary.results.map((r) => [r.index, r.status, r.error?.code ?? null, r.error?.stage ?? null]),
      [
        [0, 'sent', null, null],
        [1, 'rejected', 'empty_document', 'validation'],
      ],
    );
    assert.ok(!cj.out.join('').includes('CLI-MARKER') && !cj.err.join('').includes('CLI-MARKER'));
    const sources = (await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).map((m) => JobSchema.parse(JSON.parse(m.Body!)).input.sourceId);
    assert.deepEqual(sources.sort(), [`text:${sha256Hex('CLI-MARKER fine too')}`, `text:${sha256Hex('fine')}`].sort());
  });

  it('with --all-or-nothing exits 2 with the reasons when input is rejected, and sends nothing', async () => {
    // Prepare
    const t = await setupLanes();
    const c = capture();
    const ch = capture();
    // Act
    const code = await submit(
      ['--region', 'us', '--text', '   ', '--text', 'fine', '--all-or-nothing', '--json', '--endpoints', JSON.stringify(endpoints)],
      c.io,
      {
        lanes: t.lanes,
      },
    );
    const codeHuman = await submit(
      ['--region', 'us', '--text', 'fine', '--text', 'x', '--all-or-nothing', '--schema-version', 'nope', '--endpoints', JSON.stringify(endpoints)],
      ch.io,
      {
        lanes: t.lanes,
      },
    );
    // Assess
    assert.equal(codeHuman, 2);
    assert.match(ch.err.join(''), /rejected 2 of 2 document\(s\); nothing was sent\n {2}#0 text:[a-f0-9]{64}: unknown_version: /);
    assert.equal(code, 2);
    const out = JSON.parse(c.out[0]!) as { ok: boolean; error: { kind: string; items: { index: number; reason: string }[] } };
    assert.equal(out.ok, false);
    assert.equal(out.error.kind, 'rejected');
    assert.deepEqual(
      out.error.items.map((i) => [i.index, i.reason]),
      [[0, 'empty_document']],
    );
    assert.equal((await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).length, 0);
  });

  it("refuses a --text that is not UTF-8 text (a lone surrogate, or U+FFFD where the shell's bytes were not UTF-8) and a file with 0xFF 0xFE bytes; nothing is sent", async () => {
    // Prepare
    const t = await setupLanes();
    const dir = await mkdtemp(join(tmpdir(), 'ratelane-submit-'));
    try {
      const invalid = join(dir, 'invalid.txt');
      await writeFile(invalid, Buffer.concat([Buffer.from('Invoice '), Buffer.from([0xff, 0xfe]), Buffer.from(' total 10 EUR')]));
      const run = async (argv: string[]) => {
        const c = capture();
        const code = await submit(['--region', 'us', ...argv, '--endpoints', JSON.stringify(endpoints)], c.io, { lanes: t.lanes });
        return { code, err: c.err.join(''), out: c.out.join('') };
      };
      // Act
      const surrogate = await run(['--text', 'Invoice \ud800 total 10 EUR']);
      const replaced = await run(['--text', 'fine', '--text', 'Invoice \ufffd\ufffd total 10 EUR']);
      const file = await run(['--file', invalid, '--all-or-nothing']);
      // Assess
      assert.equal(surrogate.code, 2);
      assert.match(surrogate.err, /--text #1 is not UTF-8 text \(.*lone surrogate.*\); nothing was sent/);
      assert.equal(replaced.code, 2);
      assert.match(replaced.err, /--text #2 is not UTF-8 text \(.*U\+FFFD.*\)/);
      assert.equal(file.code, 2);
      assert.match(file.err, /invalid\.txt: not_text: 23 bytes that are not UTF-8 text/);
      assert.equal((await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).length, 0, 'nothing sent');
      assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), [], 'nothing stored');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exits 2 with a clear message on bad usage', async () => {
    // Prepare
    const cases: [string[], RegExp][] = [
      [['--text', 'x'], /--region is required/],
      [['--region', 'us'], /nothing to submit/],
      [['--region', 'us', '--text', 'x', '--bogus'], /Unknown option '--bogus'/],
      [['--region', 'us', '--text', 'x', '--endpoints', '{nope'], /--endpoints is not valid JSON/],
      [['--region', 'us', '--text', 'x', '--text', 'y', '--source-id', 's'], /--source-id names one document, but 2 were given/],
      [['--region', 'us', '--text', 'x', '--deadline', 'yesterday'], /--deadline "yesterday" is not a date/],
      [['--region', 'us', '--dir', '/nonexistent/ratelane-dir'], /cannot read folder \/nonexistent\/ratelane-dir \(ENOENT\)/],
      [['--region', 'us', '--text', 'x', '--priority', 'high'], /--priority must be one of urgent, bulk, got "high"/],
    ];
    for (const [argv, expected] of cases) {
      const c = capture();
      // Act
      const code = await submit(argv, c.io);
      // Assess
      assert.equal(code, 2, argv.join(' '));
      assert.match(c.err.join(''), expected);
    }
  });
});
