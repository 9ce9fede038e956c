/**
 * `npm run local` as a user runs it: a child process that starts its own DynamoDB Local, fauxqs and
 * fake provider, and must leave no process behind — after a normal run and after a Ctrl-C.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';

const CLI = ['--import', 'tsx', 'bin/ratelane.ts', 'local'];

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

function startRun(args: string[]) {
  const child = spawn(process.execPath, [...CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RATELANE_TEST_ENDPOINTS: '' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

function javaPid(stderr: string): number {
  const match = /DynamoDB Local \S+ \(pid (\d+)\)/.exec(stderr);
  assert.ok(match, `no DynamoDB pid in the progress output:\n${stderr}`);
  return Number(match[1]);
}

describe('npm run local', () => {
  it('commits every job, loses none, ends with the JSON scorecard and stops its services', async () => {
    // Act
    const run = startRun(['--jobs', '20', '--json']);
    const code = await run.exited;
    // Assess
    assert.equal(code, 0, run.err());
    const lastLine = run.out().trim().split('\n').at(-1) ?? '';
    const card = JSON.parse(lastLine) as Record<string, unknown>;
    assert.equal(card.submitted, 20);
    assert.equal(card.committed, 20);
    assert.equal(card.lost, 0);
    assert.equal(card.deadLettered, 0);
    assert.equal(card.doubleCommits, 0);
    assert.match(run.out(), /LOST\s+0/);
    assert.match(run.err(), /\[\s*\d+ s\] committed/);
    const pid = javaPid(run.err());
    assert.ok(await waitUntil(() => !alive(pid), 3_000), `DynamoDB Local (pid ${pid}) still running after the run`);
  });

  it('leaves no DynamoDB Local behind after a Ctrl-C in the middle of a run', async () => {
    // Prepare: a run slow enough to interrupt (a tight provider limit)
    const run = startRun(['--jobs', '200', '--provider-rpm', '10']);
    assert.ok(await waitUntil(() => /submitted \d+ of/.test(run.err()), 30_000), run.err());
    const pid = javaPid(run.err());
    assert.ok(alive(pid));
    // Act
    run.child.kill('SIGINT');
    const code = await run.exited;
    // Assess
    assert.equal(code, 130);
    assert.ok(await waitUntil(() => !alive(pid), 5_000), `DynamoDB Local (pid ${pid}) survived Ctrl-C`);
  });

  it('kills DynamoDB Local even when the run is killed outright (SIGKILL: no handler runs)', async () => {
    // Prepare
    const run = startRun(['--jobs', '200', '--provider-rpm', '10']);
    assert.ok(await waitUntil(() => /submitted \d+ of/.test(run.err()), 30_000), run.err());
    const pid = javaPid(run.err());
    // Act
    run.child.kill('SIGKILL');
    await run.exited;
    // Assess: the watchdog notices within about a second
    assert.ok(await waitUntil(() => !alive(pid), 5_000), `DynamoDB Local (pid ${pid}) survived SIGKILL of its parent`);
  });

  it('rejects a bad flag with the usage and exit code 2', async () => {
    // Act
    const run = startRun(['--jobs', 'many']);
    // Assess
    assert.equal(await run.exited, 2);
    assert.match(run.err(), /--jobs must be a number/);
    assert.match(run.err(), /Usage: npm run local/);
  });
});

describe('requirements', () => {
  it('says how to install Java when it is missing', async () => {
    // Prepare: a PATH without java
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/ratelane.ts', 'local', '--jobs', '1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: '/nonexistent' },
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // Act
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    // Assess
    assert.equal(code, 1);
    assert.match(stderr, /Java was not found/);
    assert.match(stderr, /apt-get install -y openjdk-17-jre-headless/);
  });
});

describe('provider keys from the environment', () => {
  it('uses the lane keys given in RATELANE_<LANE>_PROVIDER_KEYS and never prints them', async () => {
    // Prepare
    const env = {
      ...process.env,
      RATELANE_TEST_ENDPOINTS: '',
      RATELANE_US_PROVIDER_KEYS: '{"key-1":"sk-from-env-us-SECRET"}',
      RATELANE_EU_PROVIDER_KEYS: '{"key-1":"sk-from-env-eu-SECRET"}',
    };
    const child = spawn(process.execPath, [...CLI, '--jobs', '6', '--json'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    // Act
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    // Assess
    assert.equal(code, 0, out);
    assert.equal(
      (
        JSON.parse(
          out
            .trim()
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .at(-1) ?? '{}',
        ) as { committed?: number }
      ).committed,
      6,
    );
    assert.doesNotMatch(out, /SECRET/);
  });

  it('refuses to start when a configured key id has no secret, naming the id only', async () => {
    // Prepare
    const env = { ...process.env, RATELANE_TEST_ENDPOINTS: '', RATELANE_US_PROVIDER_KEYS: '{"other":"sk-SECRET"}' };
    const child = spawn(process.execPath, [...CLI, '--jobs', '2'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    // Act
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    // Assess
    assert.equal(code, 1);
    assert.match(err, /key-1/);
    assert.doesNotMatch(err, /SECRET/);
  });
});
