/**
 * `npm test`: starts the shared local services once (DynamoDB Local and fauxqs on free loopback
 * ports), runs every `*.test.ts` under test/ with Node's test runner, then stops the services.
 * Usage: npm test [-- file-or-folder ...]
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { onShutdown } from '../lib/local/services/processes.js';
import { startDynamoLocal, startFauxqsLocal } from '../lib/local/services/services.js';

function collect(path: string): string[] {
  if (statSync(path).isFile()) return path.endsWith('.test.ts') ? [path] : [];
  return readdirSync(path)
    .sort()
    .flatMap((name) => (name === 'node_modules' ? [] : collect(join(path, name))));
}

const targets = process.argv.slice(2);
const files = (targets.length > 0 ? targets : ['test']).flatMap(collect).map((f) => relative(process.cwd(), f));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

const started = Date.now();
const [dynamo, fauxqs] = await Promise.all([startDynamoLocal(), startFauxqsLocal()]);
const stopAll = async () => {
  await Promise.allSettled([dynamo.stop(), fauxqs.stop()]);
};
onShutdown(stopAll);
console.log(`# local services up in ${Date.now() - started} ms: DynamoDB Local ${dynamo.endpoint}, fauxqs ${fauxqs.endpoint}`);

// The usual reporter, then a summary of the failed tests as the last lines (CI keeps only a log's tail).
const summary = new URL('helpers/failure-summary-reporter.mjs', import.meta.url);
const reporters = [
  `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`,
  '--test-reporter-destination=stdout',
  `--test-reporter=${summary.href}`,
  '--test-reporter-destination=stdout',
];
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...reporters, ...files], {
  stdio: 'inherit',
  env: {
    ...process.env,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    RATELANE_TEST_ENDPOINTS: JSON.stringify({ sqs: fauxqs.endpoint, s3: fauxqs.endpoint, dynamodb: dynamo.endpoint }),
  },
});
const code: number = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
await stopAll();
process.exit(code);
