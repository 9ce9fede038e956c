/**
 * The one command shape and flags helper (lib/cli): how `--help`, usage errors and `--json`
 * usage errors come out, how flags are read and checked, and the registry.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCommand, UsageError, type Command, type CommandIo } from '../../../lib/cli/command.js';
import { booleanFlag, endpointsFrom, numberFlag, parseFlags, repeatedFlag, stringFlag } from '../../../lib/cli/flags.js';
import { findCommand, PRODUCT_COMMANDS, usageOf } from '../../../lib/cli/index.js';
import { COMMANDS, NPM_HELP } from '../../../workbench/commands.js';
import { localRunExitCode } from '../../../workbench/drivers/run/command.js';
import { lanesToSubmitTo } from '../../../lib/cli/submit.js';
import { DEFAULT_LANES, LaneConfigError } from '../../../lib/config/lanes.js';

/** An io that collects what a command writes. */
function capture(): { io: CommandIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: {} }, out: () => out, err: () => err };
}

/** A command that echoes its one flag. */
function echoCommand(overrides: Partial<Command<{ n: number; json: boolean }>> = {}): Command<{ n: number; json: boolean }> {
  return {
    name: 'echo',
    usage: 'Usage: echo [--n N]\n',
    helpTo: 'stderr',
    parse: (argv) => parseFlags(argv, { n: numberFlag({ min: 1, max: 9, fallback: 1 }), json: booleanFlag() }),
    run: async (options, io) => {
      io.stdout.write(`n=${options.n}\n`);
      return 0;
    },
    ...overrides,
  };
}

describe('runCommand', () => {
  it('runs with the parsed options and resolves the exit code', async () => {
    // Prepare
    const c = capture();
    // Act
    const code = await runCommand(echoCommand(), ['--n', '3'], c.io);
    // Assess
    assert.equal(code, 0);
    assert.equal(c.out(), 'n=3\n');
  });

  it('a wrong lane config is exit 2 with what to fix and no usage (one JSON object with --json)', async () => {
    // Prepare
    const failing = echoCommand({
      jsonUsageErrors: true,
      run: async () => {
        throw new LaneConfigError('lane config x.json, lanes[0]: lane "eu": region is required');
      },
    });
    const plain = capture();
    const json = capture();
    // Act
    const codes = [await runCommand(failing, [], plain.io), await runCommand(failing, ['--json'], json.io)];
    // Assess
    assert.deepEqual(codes, [2, 2]);
    assert.equal(plain.err(), 'error: lane config x.json, lanes[0]: lane "eu": region is required\n');
    assert.deepEqual(JSON.parse(json.out()), { ok: false, error: { kind: 'config', message: 'lane config x.json, lanes[0]: lane "eu": region is required' } });
  });

  it("prints the usage for --help and -h on the command's stream and exits 0", async () => {
    // Prepare
    const onStderr = capture();
    const onStdout = capture();
    // Act
    const codes = [await runCommand(echoCommand(), ['--help'], onStderr.io), await runCommand(echoCommand({ helpTo: 'stdout' }), ['-h'], onStdout.io)];
    // Assess
    assert.deepEqual(codes, [0, 0]);
    assert.equal(onStderr.err(), 'Usage: echo [--n N]\n');
    assert.equal(onStdout.out(), 'Usage: echo [--n N]\n');
  });

  it('prints the message and the usage for a bad flag and exits 2', async () => {
    // Prepare
    const bad = capture();
    const unknown = capture();
    // Act
    const codes = [await runCommand(echoCommand(), ['--n', '10'], bad.io), await runCommand(echoCommand(), ['--nope'], unknown.io)];
    // Assess
    assert.deepEqual(codes, [2, 2]);
    assert.equal(bad.err(), 'error: --n must be a number in 1..9, got "10"\n\nUsage: echo [--n N]\n');
    assert.match(unknown.err(), /^error: Unknown option '--nope'/);
    assert.equal(bad.out(), '');
  });

  it('with --json, a usage error of a JSON command is one JSON object on stdout', async () => {
    // Prepare
    const c = capture();
    const command = echoCommand({
      jsonUsageErrors: true,
      run: async () => {
        throw new UsageError('nothing to do');
      },
    });
    // Act
    const code = await runCommand(command, ['--json'], c.io);
    // Assess
    assert.equal(code, 2);
    assert.deepEqual(JSON.parse(c.out()), { ok: false, error: { kind: 'usage', message: 'nothing to do' } });
    assert.equal(c.err(), '');
  });
});

describe('flags', () => {
  it('reads numbers in a range (rounded down on request), integers, booleans, strings and repeated strings', () => {
    // Act
    const v = parseFlags(['--a', '2.7', '--b', '3', '--flag', '--s', 'x', '--r', 'one', '--r', 'two'], {
      a: numberFlag({ min: 0, max: 5, round: 'floor' }),
      b: numberFlag({ min: 0, max: 5, integer: true, fallback: 0 }),
      c: numberFlag({ min: 0, max: 1, belowMax: true, fallback: 0.5 }),
      flag: booleanFlag(),
      off: booleanFlag(),
      s: stringFlag(),
      r: repeatedFlag(),
      none: repeatedFlag(),
    });
    // Assess
    assert.deepEqual(v, { a: 2, b: 3, c: 0.5, flag: true, off: false, s: 'x', r: ['one', 'two'], none: [] });
  });

  it('rejects blanks, fractions for integers, the excluded bound, missing values and positionals', () => {
    // Act + Assess
    const spec = { n: numberFlag({ min: 0, max: 1, belowMax: true }), i: numberFlag({ min: 0, max: 9, integer: true }) };
    assert.throws(() => parseFlags(['--n', ' '], spec), /--n must be a number in \[0, 1\), got " "/);
    assert.throws(() => parseFlags(['--n', '1'], spec), UsageError);
    assert.throws(() => parseFlags(['--i', '1.5'], spec), /--i must be an integer in 0..9/);
    assert.throws(() => parseFlags(['--i'], spec), UsageError);
    assert.throws(() => parseFlags(['extra'], spec), UsageError);
    assert.throws(() => parseFlags(['--x'], spec, { unknownOption: (o) => `unknown option ${o}` }), /^UsageError: unknown option --x$/);
  });

  it('reads endpoints from the flag, else RATELANE_ENDPOINTS, and rejects what is not endpoints JSON', () => {
    // Prepare
    const json = JSON.stringify({ sqs: 'http://127.0.0.1:1', s3: 'http://127.0.0.1:1' });
    // Act
    const fromFlag = endpointsFrom(json, {});
    const fromEnv = endpointsFrom(undefined, { RATELANE_ENDPOINTS: json });
    const none = endpointsFrom(undefined, {});
    // Assess
    assert.deepEqual(fromFlag, { sqs: 'http://127.0.0.1:1', s3: 'http://127.0.0.1:1', dynamodb: 'http://127.0.0.1:1' });
    assert.deepEqual(fromEnv, fromFlag);
    assert.equal(none, undefined);
    assert.throws(() => endpointsFrom('{nope', {}), /--endpoints is not valid JSON/);
    assert.throws(() => endpointsFrom(undefined, { RATELANE_ENDPOINTS: '{"sqs":1}' }), /^UsageError: RATELANE_ENDPOINTS: /);
  });
});

describe('the registry', () => {
  it('lists every command with its summary and loads each one under its own name', async () => {
    // Act
    const loaded = await Promise.all(Object.entries(COMMANDS).map(async ([name, entry]) => [name, (await entry.load()).name]));
    const usage = usageOf(COMMANDS, NPM_HELP);
    const installed = usageOf(PRODUCT_COMMANDS);
    // Assess
    assert.deepEqual(Object.keys(COMMANDS), [
      'local',
      'consume',
      'submit',
      'resume',
      'soak',
      'bench',
      'sim',
      'eval',
      'batch',
      'review',
      'residency',
      'erase',
      'cancel',
      'jobs',
      'redrive',
    ]);
    for (const [name, loadedName] of loaded) {
      assert.equal(loadedName, name);
      assert.match(usage, new RegExp(`\\n  ${name} +\\S.*\\(npm run ${name} -- --help\\)`));
    }
    assert.deepEqual(
      Object.keys(PRODUCT_COMMANDS),
      ['submit', 'resume', 'batch', 'review', 'residency', 'erase', 'cancel', 'jobs', 'redrive'],
      'the installed CLI has the product commands only',
    );
    for (const name of Object.keys(PRODUCT_COMMANDS)) assert.match(installed, new RegExp(`\\n  ${name} +\\S.*\\(ratelane ${name} --help\\)`));
    assert.equal(findCommand(COMMANDS, 'toString'), undefined);
    assert.equal(findCommand(COMMANDS, undefined), undefined);
  });
});

describe('submit: which bucket a producer writes to', () => {
  const options = (account?: string) => ({ region: 'us', account }) as Parameters<typeof lanesToSubmitTo>[1];
  const io = (env: Record<string, string> = {}) => ({ ...capture().io, env });

  it('in AWS, names each lane bucket after the lane account: --account, then RATELANE_ACCOUNT, then the caller', async () => {
    // Prepare
    const asked: (string | undefined)[] = [];
    const callerAccount = async (region: string | undefined) => {
      asked.push(region);
      return '222222222222';
    };
    // Act
    const byFlag = await lanesToSubmitTo(DEFAULT_LANES, options('111111111111'), io({ RATELANE_ACCOUNT: '333333333333' }), undefined, { callerAccount });
    const byEnv = await lanesToSubmitTo(DEFAULT_LANES, options(), io({ RATELANE_ACCOUNT: '333333333333' }), undefined, { callerAccount });
    const byCaller = await lanesToSubmitTo(DEFAULT_LANES, options(), io(), undefined, { callerAccount });
    // Assess
    assert.equal(byFlag.us?.resources.bucketName, 'ratelane-us-source-111111111111-us-east-1');
    assert.equal(byEnv.eu?.resources.bucketName, 'ratelane-eu-source-333333333333-eu-central-1');
    assert.equal(byCaller.us?.resources.bucketName, 'ratelane-us-source-222222222222-us-east-1');
    assert.deepEqual(asked, ['us-east-1'], 'the caller is asked only when nothing names the account');
  });

  it('keeps the config names on local endpoints, and refuses an account that is not 12 digits', async () => {
    // Act
    const local = await lanesToSubmitTo(DEFAULT_LANES, options(), io(), { sqs: 'http://x', s3: 'http://x', dynamodb: 'http://x' }, {});
    // Assess
    assert.equal(local.us?.resources.bucketName, DEFAULT_LANES.us?.resources.bucketName);
    await assert.rejects(lanesToSubmitTo(DEFAULT_LANES, options(), io({ RATELANE_ACCOUNT: 'prod' }), undefined, {}), UsageError);
  });
});

describe('local: the exit code', () => {
  it('fails a run that dead-lettered every job, one that lost a job or timed out; passes the rest', () => {
    // Prepare
    const card = (over: Partial<{ lost: number; timedOut: boolean; submitted: number; deadLettered: number }>) => ({
      lost: 0,
      timedOut: false,
      submitted: 20,
      deadLettered: 0,
      ...over,
    });
    const c = capture();
    // Act
    const codes = [card({}), card({ deadLettered: 20 }), card({ deadLettered: 3 }), card({ lost: 1 }), card({ timedOut: true })].map((k) =>
      localRunExitCode(k, c.io),
    );
    // Assess
    assert.deepEqual(codes, [0, 1, 0, 1, 1]);
    assert.match(c.err(), /every one of the 20 jobs was dead-lettered/);
  });
});

describe('endpoints: only http(s)', () => {
  it('refuses file: and other schemes', () => {
    // Act / Assess
    assert.throws(() => endpointsFrom(JSON.stringify({ sqs: 'file:///etc/passwd', s3: 'http://127.0.0.1:1' }), {}), UsageError);
    assert.throws(() => endpointsFrom(JSON.stringify({ sqs: 'http://127.0.0.1:1', s3: 'ftp://x' }), {}), /http:\/\/ or https:\/\//);
    assert.deepEqual(endpointsFrom(JSON.stringify({ sqs: 'https://sqs.example', s3: 'http://127.0.0.1:9' }), {})?.sqs, 'https://sqs.example');
  });
});
