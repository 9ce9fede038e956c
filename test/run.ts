/**
 * The test runner of both tiers. It starts the shared local services once (DynamoDB Local and fauxqs on
 * free loopback ports), runs the tier's `*.test.ts` files with Node's test runner, several files at a
 * time (each test makes its own queues, buckets and tables), then stops the services.
 *
 * - `npm test`: every test under test/ but test/e2e — unit tests, the adapters' contract tests against
 *   DynamoDB Local and fauxqs, the queue/live/batch lanes on them, and the CDK templates. This tier runs
 *   on virtual time: each test process loads `helpers/real-waits.ts`, which fails a file that waited in
 *   real time for more than 100 ms (see docs/testing.md).
 * - `npm run test:e2e`: test/e2e — whole local runs, the CLI commands, soak/bench/eval, the bundles
 *   `cdk synth` ships, and the HTML reports in headless Chromium.
 *
 * Usage: npm test [-- file-or-folder ...]; npm run test:e2e [-- file-or-folder ...]. Given files or folders
 * run whatever their tier. `RATELANE_TEST_CONCURRENCY` sets how many files run at once;
 * `RATELANE_TIER_TIMEOUT_S` how long a tier may run before it is stopped and fails.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { onShutdown } from '../workbench/local-stack/services/processes.js';
import { startDynamoLocal, startFauxqsLocal } from '../workbench/local-stack/services/services.js';

const E2E = join('test', 'e2e');
/**
 * Folders whose files run in one process: the CDK template tests load aws-cdk-lib once and synthesize
 * the default stacks once (`synthDefaultLanes`), instead of once per file.
 */
const ONE_PROCESS = [join('test', 'lib', 'infra')];
/**
 * The unit and contract tier's other files run this many to a process: loading tsx, the AWS SDK and the
 * lanes costs a process about 2 s of CPU, which a file per process paid 150 times on 2 cores. Each
 * process runs its files one after another; {@link SHARDS_PER_WORKER} processes per concurrent slot keep
 * the slots evenly busy without knowing how long each file takes.
 */
const SHARDS_PER_WORKER = 3;
const GROUPS_DIR = join('.cache', 'test-groups');

/** One generated entry that imports `members` (test files) in one process. */
function groupEntry(name: string, what: string, members: string[]): string {
  const entry = join(GROUPS_DIR, `${name}.test.mjs`);
  const imports = members.map((m) => `await import(${JSON.stringify(pathToFileURL(resolve(m)).href)});`);
  writeFileSync(entry, `// Written by test/run.ts: ${what} in one process.\n${imports.join('\n')}\n`);
  return entry;
}

/**
 * The entries to hand to the test runner: the files of a {@link ONE_PROCESS} folder in one generated
 * entry; in the unit and contract tier, the other files dealt round (so a folder's heavy files spread
 * out) into `shards` generated entries; in the e2e tier, each file on its own.
 */
function entries(files: string[], shards: number): string[] {
  const grouped = new Map<string, string[]>();
  const alone: string[] = [];
  for (const file of files) {
    const folder = ONE_PROCESS.find((f) => file.startsWith(f + sep));
    if (folder) grouped.set(folder, [...(grouped.get(folder) ?? []), file]);
    else alone.push(file);
  }
  mkdirSync(GROUPS_DIR, { recursive: true });
  const groups = [...grouped].map(([folder, members]) => groupEntry(folder.split(sep).join('-'), `the test files of ${folder}`, members));
  const shared = alone.filter((f) => !f.startsWith(E2E + sep));
  if (shards <= 1 || shared.length <= shards) return [...groups, ...alone];
  const dealt = Array.from({ length: shards }, (_, i) => shared.filter((_, j) => j % shards === i));
  const own = alone.filter((f) => f.startsWith(E2E + sep));
  return [...groups, ...dealt.map((members, i) => groupEntry(`shard-${i + 1}-of-${shards}`, `${members.length} test files`, members)), ...own];
}

function collect(path: string): string[] {
  if (statSync(path).isFile()) return path.endsWith('.test.ts') ? [path] : [];
  return readdirSync(path)
    .sort()
    .flatMap((name) => (name === 'node_modules' ? [] : collect(join(path, name))));
}

const args = process.argv.slice(2);
const e2e = args.includes('--e2e');
const targets = args.filter((a) => a !== '--e2e');
const inTier = (file: string) => (file === E2E || file.startsWith(E2E + sep)) === e2e;
const files =
  targets.length > 0
    ? targets.flatMap(collect).map((f) => relative(process.cwd(), f))
    : collect('test')
        .map((f) => relative(process.cwd(), f))
        .filter(inTier);
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
// The unit and contract tier mostly waits on the local services: more files than cores keep both busy.
// The e2e tier's local runs, soaks and benches load the machine and hold function timeouts of seconds:
// one at a time, as a lane's real consumers have their own machines (two soaks at once on 2 cores time out).
const concurrency = Number(process.env.RATELANE_TEST_CONCURRENCY) || (e2e ? 1 : 2 * availableParallelism());

const started = Date.now();
const [dynamo, fauxqs] = await Promise.all([startDynamoLocal(), startFauxqsLocal()]);
const stopAll = async () => {
  await Promise.allSettled([dynamo.stop(), fauxqs.stop()]);
};
onShutdown(stopAll);
console.log(`# local services up in ${Date.now() - started} ms: DynamoDB Local ${dynamo.endpoint}, fauxqs ${fauxqs.endpoint}`);
console.log(`# ${files.length} test files, ${concurrency} at a time`);

// The usual reporter, then a summary of the failed tests as the last lines (CI keeps only a log's tail).
const summary = new URL('helpers/failure-summary-reporter.mjs', import.meta.url);
const reporters = [
  `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`,
  '--test-reporter-destination=stdout',
  `--test-reporter=${summary.href}`,
  '--test-reporter-destination=stdout',
];
// The unit and contract tier runs on virtual time: its check on real waits is loaded into every test process.
const realWaits = e2e ? [] : ['--import', new URL('helpers/real-waits.ts', import.meta.url).href];
const child = spawn(
  process.execPath,
  ['--import', 'tsx', ...realWaits, '--test', `--test-concurrency=${concurrency}`, ...reporters, ...entries(files, e2e ? 0 : SHARDS_PER_WORKER * concurrency)],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      RATELANE_TEST_ENDPOINTS: JSON.stringify({ sqs: fauxqs.endpoint, s3: fauxqs.endpoint, dynamodb: dynamo.endpoint }),
    },
  },
);
// A file that never ends (a hung test, a handle left open) must not hold CI until its own limit: the tier
// is stopped, and fails, after `RATELANE_TIER_TIMEOUT_S` (default 10 min for the unit tier, 12 for e2e).
const tierTimeoutS = Number(process.env.RATELANE_TIER_TIMEOUT_S) || (e2e ? 720 : 600);
const watchdog = setTimeout(() => {
  console.error(`# the ${e2e ? 'e2e' : 'unit and contract'} tier ran past ${tierTimeoutS} s: stopped (a test file that never ends?)`);
  child.kill('SIGKILL');
}, tierTimeoutS * 1000);
const code: number = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
clearTimeout(watchdog);
await stopAll();
console.log(`# ${e2e ? 'e2e' : 'unit and contract'} tier: ${files.length} files in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(code);
