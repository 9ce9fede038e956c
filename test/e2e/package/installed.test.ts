/**
 * ratelane as a platform team meets it: `npm pack` of this repository, the tarball installed in a fresh
 * project in a temporary folder (with aws-cdk-lib, constructs and cdk-nag, at the versions this
 * repository uses, from npm's cache when it has them), the README's CDK app synthesized there by the
 * `cdk` CLI with cdk-nag, and a job submitted and waited for with `ratelane/client` from that project
 * against the local stack. Nothing in the project reaches into this repository: it imports the package.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { resolveLane } from '../../../lib/config/lanes.js';
import { LaneStack } from '../../../lib/infra/lane-stack.js';
import { loadCorpus } from '../../../workbench/corpus/index.js';
import { startLocalStack } from '../../../workbench/local-stack/stack.js';
import { testEndpoints, uniqueLaneResources } from '../../helpers/endpoints.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..');

/** The version of a dependency this repository has installed (so npm finds it in its cache). */
function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The README's fenced block after `<!-- quick-start: <name> -->`. */
function quickStart(name: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const match = new RegExp(`<!-- quick-start: ${name.replace('.', '\\.')} -->\\n\`\`\`js\\n([\\s\\S]*?)\`\`\``).exec(readme);
  assert.ok(match, `README has the ${name} quick start`);
  return match[1]!;
}

/** Runs a command, its output kept for the failure message; resolves stdout. */
async function step(what: string, file: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<string> {
  const started = Date.now();
  try {
    const out = await run(file, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      timeout: options.timeoutMs ?? 180_000,
      maxBuffer: 32 * 1024 * 1024,
    });
    process.stderr.write(`# package: ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
    return out.stdout;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    const tail = (text = '') => (text.length > 4000 ? `…${text.slice(-4000)}` : text);
    throw new Error(`${what} failed: ${tail(e.message)}\n${tail(e.stdout)}\n${tail(e.stderr)}`);
  }
}

describe('the installed package', () => {
  const work = mkdtempSync(join(tmpdir(), 'ratelane-package-'));
  const project = join(work, 'platform-app');
  let tarball = '';

  before(async () => {
    const packed = await step('npm pack', 'npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, timeoutMs: 300_000 });
    const [info] = JSON.parse(packed.slice(packed.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, info!.filename);
    const files = info!.files.map((f) => f.path);
    assert.ok(
      files.includes('dist/lib/cdk.js') && files.includes('dist/lib/cdk.d.ts') && files.includes('dist/assets/consumer/index.mjs'),
      'compiled JavaScript, declarations and bundles',
    );
    assert.equal(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).length, 0, 'no TypeScript source in the package');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'platform-app', private: true, type: 'module' }, null, 2));
    const peers = ['aws-cdk-lib', 'constructs', 'cdk-nag'].map((name) => `${name}@${installedVersion(name)}`);
    await step(
      'npm install <tarball> aws-cdk-lib constructs cdk-nag',
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball, ...peers],
      {
        cwd: project,
        timeoutMs: 600_000,
      },
    );
  });

  after(() => rmSync(work, { recursive: true, force: true }));

  it("synthesizes the README's app: one lane with its three functions from the package's bundles, cdk-nag clean", async () => {
    // Prepare
    writeFileSync(join(project, 'app.mjs'), quickStart('app.mjs'));
    const out = join(project, 'cdk.out');
    // Act
    await step('cdk synth', join(ROOT, 'node_modules', '.bin', 'cdk'), ['synth', '--app', 'node app.mjs', '--output', out, '--quiet', '--no-notices'], {
      cwd: project,
      env: { CDK_DISABLE_CLI_TELEMETRY: 'true', CDK_DISABLE_VERSION_CHECK: '1', HOME: work, AWS_EC2_METADATA_DISABLED: 'true' },
    });
    // Assess
    const template = JSON.parse(readFileSync(join(out, 'Extraction.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: Record<string, any> }>;
    };
    const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    assert.deepEqual(functions.map((f) => f.Properties.FunctionName).sort(), ['ratelane-eu-batch-reconciler', 'ratelane-eu-consumer', 'ratelane-eu-live']);
    const assets = JSON.parse(readFileSync(join(out, 'Extraction.assets.json'), 'utf8')) as { files: Record<string, { source: { path: string } }> };
    for (const f of functions) {
      assert.equal(f.Properties.Handler, 'index.handler');
      assert.equal(f.Properties.Runtime, 'nodejs24.x');
      const asset = assets.files[String(f.Properties.Code.S3Key).replace(/\.zip$/, '')];
      assert.ok(asset, `${f.Properties.FunctionName}: its code is an asset of the stack`);
      const bundle = join(out, asset.source.path, 'index.mjs');
      assert.ok(existsSync(bundle), `${f.Properties.FunctionName}: the package's prebuilt bundle`);
      const mod = (await import(pathToFileURL(bundle).href)) as { handler?: unknown };
      assert.equal(typeof mod.handler, 'function', `${f.Properties.FunctionName}: the bundle exports its handler`);
    }
    // The same lane as this repository's own lane stack deploys it (the stack the template tests check):
    // every resource type, as many times.
    const own = new LaneStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Own', {
      lane: resolveLane({ name: 'eu', region: 'eu-central-1', provider: { limits: { requestsPerMinute: 300, tokensPerMinute: 150_000 } } }),
      env: { account: '123456789012', region: 'eu-central-1' },
      alarmDestination: { kind: 'email', addresses: ['oncall@example.com'] },
    });
    const countTypes = (resources: Record<string, { Type: string }>) => {
      const counts: Record<string, number> = {};
      for (const r of Object.values(resources)) if (r.Type !== 'AWS::CDK::Metadata') counts[r.Type] = (counts[r.Type] ?? 0) + 1;
      return counts;
    };
    const expected = countTypes(Template.fromStack(own).toJSON().Resources);
    assert.deepEqual(countTypes(template.Resources), expected);
    assert.ok(expected['AWS::CloudWatch::Alarm']! > 10 && expected['AWS::ApiGatewayV2::Api'] === 1 && expected['AWS::SNS::Subscription'] === 1);
    const lane = JSON.parse(functions.find((f) => f.Properties.FunctionName === 'ratelane-eu-consumer')!.Properties.Environment.Variables.RATELANE_LANE_CONFIG);
    assert.equal(lane.provider.limits.requestsPerMinute, 300, "the app's override reached the deployed lane");
    assert.equal(lane.resources.bucketName.includes('123456789012'), true);
    const manifest = readFileSync(join(out, 'manifest.json'), 'utf8');
    assert.doesNotMatch(manifest, /"aws:cdk:error"/, 'no synth error (cdk-nag findings are errors)');
  });

  it('cdk-nag in that app is live: a queue of the platform team without TLS-only access fails the synth', async () => {
    // Prepare: the README's app plus an SQS queue of the platform team's own, with no DLQ and no TLS-only policy
    const app = quickStart('app.mjs')
      .replace("import { ExtractionLane } from 'ratelane/cdk';", "import { ExtractionLane } from 'ratelane/cdk';\nimport { Queue } from 'aws-cdk-lib/aws-sqs';")
      .replace('Validations.of(app)', "new Queue(stack, 'Plain');\nValidations.of(app)");
    writeFileSync(join(project, 'nagged.mjs'), app);
    // Act
    const failed = await step(
      'cdk synth (nagged)',
      join(ROOT, 'node_modules', '.bin', 'cdk'),
      ['synth', '--app', 'node nagged.mjs', '--output', join(work, 'nagged.out'), '--quiet', '--no-notices'],
      {
        cwd: project,
        env: { CDK_DISABLE_CLI_TELEMETRY: 'true', CDK_DISABLE_VERSION_CHECK: '1', HOME: work, AWS_EC2_METADATA_DISABLED: 'true' },
      },
    ).then(
      () => '',
      (error: Error) => error.message,
    );
    // Assess
    assert.match(failed, /AwsSolutions-SQS4/, "the finding on the platform team's queue");
    assert.doesNotMatch(failed, /Extraction\/Lane\//, 'nothing on the lane');
  });

  it('refuses a lane the props get wrong at synth, naming the field', async () => {
    // Prepare
    writeFileSync(join(project, 'bad.mjs'), quickStart('app.mjs').replace('requestsPerMinute: 300', "requestsPerMinute: 'many'"));
    // Act
    const failed = await run('node', ['bad.mjs'], { cwd: project, env: { ...process.env, CDK_OUTDIR: join(work, 'bad.out') } }).then(
      () => undefined,
      (error: { stderr?: string }) => error.stderr ?? '',
    );
    // Assess
    assert.ok(failed !== undefined, 'the app does not synthesize');
    assert.match(failed, /LaneConfigError: lane "eu"/);
    assert.match(failed, /provider\.limits\.requestsPerMinute/);
  });

  it('submits a job with ratelane/client from the project and waits for the committed object, against the local stack', async () => {
    // Prepare: the local stack (poller, consumer, fake provider) for one eu lane on the run's services
    const lane = resolveLane({ name: 'eu', region: 'eu-central-1', resources: uniqueLaneResources() });
    const stack = await startLocalStack({ lanes: { eu: lane }, endpoints: testEndpoints() });
    const doc = loadCorpus().find((d) => d.schemaVersion.startsWith('invoice') && d.expectedOutcome === 'committed' && d.shapes.length === 0)!;
    writeFileSync(join(project, 'invoice.txt'), doc.text);
    writeFileSync(
      join(project, 'client.mjs'),
      `import { RatelaneClient } from 'ratelane/client';

const client = new RatelaneClient({ lanes: JSON.parse(process.env.LANES), endpoints: JSON.parse(process.env.ENDPOINTS) });
const { results: [sent] } = await client.submit({ region: 'eu', path: 'invoice.txt', sourceId: 'invoice-0001' });
const settled = await client.wait(sent.jobId, { timeoutMs: 60_000, pollMs: 200 });
console.log(JSON.stringify({ sent, settled }));
client.close();
`,
    );
    try {
      // Act
      const out = await step('node client.mjs', 'node', ['client.mjs'], {
        cwd: project,
        env: { LANES: JSON.stringify([lane]), ENDPOINTS: JSON.stringify(testEndpoints()) },
        timeoutMs: 90_000,
      });
      // Assess
      const { sent, settled } = JSON.parse(out) as {
        sent: { status: string; jobId: string };
        settled: { state: string; jobId: string; result: Record<string, unknown> };
      };
      assert.equal(sent.status, 'sent');
      assert.equal(settled.state, 'committed');
      assert.equal(settled.jobId, sent.jobId);
      assert.equal(settled.result.invoiceNumber, (doc.expected as Record<string, unknown>).invoiceNumber);
      const stored = await stack.lanes.eu!.results.scanAll();
      assert.deepEqual(
        stored.map((r) => r.jobId),
        [sent.jobId],
        'committed once, in the lane the client named',
      );
    } finally {
      await stack.stop();
    }
  });

  it('the package has no test, workbench or TypeScript source, and its own command runs', async () => {
    // Act
    const installed = join(project, 'node_modules', 'ratelane');
    const top = readdirSync(installed).sort();
    const help = await step('npx ratelane --help', join(project, 'node_modules', '.bin', 'ratelane'), ['--help'], { cwd: project });
    // Assess
    assert.deepEqual(top, ['README.md', 'dist', 'package.json']);
    assert.deepEqual(readdirSync(join(installed, 'dist')).sort(), ['assets', 'lib']);
    assert.match(help, /submit .*\(ratelane submit --help\)/);
  });
});
