/**
 * The shipped batch reconciler (`ratelane-us-batch-reconciler`): its bundle from the `cdk.out` of a real
 * offline synth of `ratelane-us` (the same cached synth as the other bundle tests:
 * test/helpers/shipped-bundle.ts), run per invocation in its own Node process by
 * test/e2e/bundle/lambda-driver.mjs with the function's synthesized environment, as the schedule would
 * invoke it. Only what a deployment fills in is replaced: the template's tokens (queue URL, secret ARN)
 * get local values, and the lane config unique resource names and the fake provider (its OpenAI Batch
 * API) as its `baseUrl`. SQS and S3 go to the run's fauxqs, DynamoDB to its DynamoDB Local, Secrets
 * Manager (and anything else) to the recording stub. A batch submitted in-process is swept to the end
 * by the bundle: every item committed or unresolved, the gauges in its EMF, the key read from the
 * secret in the lane's region, no document text in its output.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { LOCAL_CREDENTIALS } from '../../../lib/platform/clients.js';
import { createOpenAiBatchProvider } from '../../../lib/lanes/batch/providers/openai.js';
import { submitBatch } from '../../../lib/lanes/batch/submit.js';
import { LaneConfigSchema, type LaneConfig } from '../../../lib/config/lanes.js';
import { BATCH_RECONCILER_ENV, batchDimensions, batchReconcilerFunctionName } from '../../../lib/config/names.js';
import { startFakeProvider, type FakeProvider } from '../../../workbench/fake-provider/index.js';
import { extractInvoice } from '../../../workbench/fake-provider/extractors/invoice.js';
import { BatchManifest } from '../../../lib/store/manifest.js';
import { manifestTableName } from '../../../lib/store/manifest-model.js';
import { ResultStore } from '../../../lib/store/results.js';
import { secretValues, startAwsStub, type AwsStub } from '../../helpers/aws-stub.js';
import { englishDocuments } from '../../helpers/consumer-harness.js';
import {
  type PseudoParameters,
  readShippedFunction,
  resolveEnvironment,
  resolveValue,
  shippedConsumer,
  type ShippedConsumer,
} from '../../helpers/shipped-bundle.js';
import { SHIPPED_ACCOUNT as ACCOUNT, provisionTemplateLane } from '../../helpers/shipped-lane.js';

const DRIVER = join(dirname(fileURLToPath(import.meta.url)), 'lambda-driver.mjs');
/** The Node binary that runs the bundle: this one unless `RATELANE_SHIPPED_NODE` names another (as for the other bundles). */
const NODE = process.env.RATELANE_SHIPPED_NODE || process.execPath;
const KEY = 'sk-shipped-batch';
const pseudoFor = (region: string): PseudoParameters => ({ accountId: ACCOUNT, region });

let shipped: Omit<ShippedConsumer, 'synthesized' | 'synthMs'>;
let templateLane: LaneConfig;
let fake: FakeProvider;
let stub: AwsStub;

before(async () => {
  const started = Date.now();
  const consumer = await shippedConsumer('ratelane-us');
  shipped = readShippedFunction(consumer.stack, consumer.outDir, batchReconcilerFunctionName('us'));
  const how = consumer.synthesized ? `synthesized in ${consumer.synthMs} ms` : `synth output of the same sources reused (${Date.now() - started} ms)`;
  console.log(`# ${shipped.stack}: ${how}; batch reconciler bundle ${shipped.bundleDir}; run by ${NODE}`);
  const raw = resolveValue(shipped.function.environment[BATCH_RECONCILER_ENV.laneConfig], shipped.template, pseudoFor(shipped.region), () => undefined);
  templateLane = LaneConfigSchema.parse(JSON.parse(raw));
  fake = await startFakeProvider({
    keys: [{ key: KEY }],
    extract: (text) => extractInvoice(text),
    minuteMs: 600,
    seed: 41,
    batch: { completionMs: 1_000, validationMs: 100, finalizingMs: 100, dropRate: 0.25 },
  });
  stub = await startAwsStub({ region: templateLane.region });
});

after(async () => {
  await Promise.allSettled([fake?.stop(), stub?.stop()]);
});

/** What one invocation of the shipped bundle did: its result and its output lines (logs and EMF), parsed when JSON. */
interface Invocation {
  result: { ok: true; response: Record<string, any> } | { ok: false; error: { name?: string; message: string } };
  lines: Array<Record<string, any>>;
}

/** The template's lane under unique names, provisioned locally, with the function's environment resolved as Lambda would set it. */
async function deployReconciler() {
  const { lane, endpoints, clients, provisioned, secretArn } = await provisionTemplateLane(templateLane, fake.baseUrl);
  // Every token of the environment must be one of these: a new one fails here, not silently.
  const fromTemplate = resolveEnvironment(shipped, pseudoFor(lane.region), ({ attribute, resource }) => {
    const p = resource.Properties ?? {};
    if (resource.Type === 'AWS::SQS::Queue' && attribute === undefined && p.QueueName === templateLane.resources.queueName) return provisioned.queueUrl;
    if (resource.Type === 'AWS::SecretsManager::Secret' && attribute === undefined && p.Name === templateLane.resources.providerSecretName) return secretArn;
    return undefined;
  });
  stub.setSecret(secretArn, secretValues.keys({ [lane.provider.keys[0]!.id]: KEY }));
  const fn = shipped.function;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...fromTemplate,
    [BATCH_RECONCILER_ENV.laneConfig]: JSON.stringify(lane),
    AWS_REGION: lane.region,
    AWS_DEFAULT_REGION: lane.region,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_SESSION_TOKEN: 'shipped-batch-test-session',
    AWS_LAMBDA_FUNCTION_NAME: fn.functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.functionName}`,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
    LAMBDA_TASK_ROOT: shipped.bundleDir,
    _HANDLER: fn.handler,
    TZ: 'UTC',
    AWS_CONFIG_FILE: join(shipped.outDir, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(shipped.outDir, 'no-aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    AWS_ENDPOINT_URL_SQS: endpoints.sqs,
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: stub.endpoint,
    AWS_ENDPOINT_URL: stub.endpoint,
  };
  return { lane, clients, env, secretArn };
}

/** Runs the shipped bundle once in a new Node process (a cold start), as the schedule invokes it. */
async function invoke(env: Record<string, string>): Promise<Invocation> {
  const fn = shipped.function;
  const context = {
    functionName: fn.functionName,
    invokedFunctionArn: `arn:aws:lambda:${env.AWS_REGION}:${ACCOUNT}:function:${fn.functionName}`,
    memoryLimitInMB: fn.memoryMb,
    timeoutMs: fn.timeoutSeconds * 1000,
    awsRequestId: randomBytes(16).toString('hex'),
    logGroupName: `/aws/lambda/${fn.functionName}`,
    logStreamName: `test/[$LATEST]${randomBytes(8).toString('hex')}`,
  };
  // What EventBridge Scheduler sends a Lambda target without an input: nothing the handler reads.
  const event = {};
  const child = spawn(NODE, [DRIVER], { cwd: shipped.bundleDir, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(JSON.stringify({ event, context }));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code: number | null = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c) => resolve(c));
  });
  clearTimeout(killer);
  const mark = 'RATELANE_DRIVER_RESULT ';
  const all = [...stdout.split('\n'), ...stderr.split('\n')].filter((l) => l.trim() !== '');
  const resultLine = all.find((l) => l.startsWith(mark));
  if (!resultLine) throw new Error(`the driver printed no result (exit ${code}); output:\n${all.join('\n').slice(-3000)}`);
  const lines = all
    .filter((l) => !l.startsWith(mark))
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, any>;
      } catch {
        return { text: l };
      }
    });
  return { result: JSON.parse(resultLine.slice(mark.length)), lines };
}

describe('the shipped batch reconciler bundle (cdk.out)', () => {
  it('is the synthesized reconciler: its handler, a timeout within the schedule’s interval, and the environment naming the lane queue and the secret', () => {
    // Prepare
    const fn = shipped.function;
    const resourceOf = (name: string) => shipped.template.Resources[(fn.environment[name] as { Ref?: string }).Ref ?? ''];
    // Assess
    assert.equal(fn.functionName, 'ratelane-us-batch-reconciler');
    assert.equal(fn.handler, 'index.handler');
    assert.equal(fn.timeoutSeconds, templateLane.batch.reconcileEveryMinutes * 60);
    assert.deepEqual(
      Object.keys(fn.environment).sort(),
      [
        'NODE_OPTIONS',
        BATCH_RECONCILER_ENV.laneConfig,
        BATCH_RECONCILER_ENV.queueUrl,
        BATCH_RECONCILER_ENV.providerSecretArn,
        BATCH_RECONCILER_ENV.serviceName,
        BATCH_RECONCILER_ENV.metricsNamespace,
        BATCH_RECONCILER_ENV.logLevel,
      ].sort(),
    );
    assert.equal(resourceOf(BATCH_RECONCILER_ENV.queueUrl)?.Properties?.QueueName, 'ratelane-us-jobs', 'repairs go to the lane queue, not the DLQ');
    assert.equal(resourceOf(BATCH_RECONCILER_ENV.providerSecretArn)?.Type, 'AWS::SecretsManager::Secret');
  });

  it('sweeps a submitted batch to the end: every item committed or unresolved, the gauges in its EMF, the key from the secret in the lane’s region', async () => {
    // Prepare: a batch submitted through the fake provider's Batch API, as the submit command does
    const { lane, clients, env, secretArn } = await deployReconciler();
    const manifest = new BatchManifest({ dynamodb: clients.dynamodb, tableName: manifestTableName(lane) });
    const docs = englishDocuments(10).map((d, i) => ({ text: d.text, sourceId: `shipped-batch-${i}` }));
    const provider = createOpenAiBatchProvider({ apiKey: KEY, baseUrl: fake.baseUrl, timeoutMs: 10_000 });
    const submitted = await submitBatch(docs, { lane, s3: clients.s3, manifest, provider, now: () => new Date() });
    assert.ok(submitted.batchId);
    stub.clearCalls();
    const invocations: Invocation[] = [];
    // Act: the schedule's ticks, until the batch is done
    const until = Date.now() + 60_000;
    while (Date.now() < until) {
      const invocation = await invoke(env);
      invocations.push(invocation);
      assert.ok(invocation.result.ok, `the invocation failed: ${JSON.stringify(invocation.result)}\n${JSON.stringify(invocation.lines.slice(-5))}`);
      if (invocation.result.response.open === 0) break;
      await new Promise((r) => setTimeout(r, 300));
    }
    // Assess: the manifest and the results
    const counts = await manifest.counts(submitted.batchId);
    const last = invocations.at(-1)!;
    assert.ok(last.result.ok && last.result.response.open === 0, 'the batch is done');
    assert.equal(counts.committed + counts.unresolved, 10, JSON.stringify(counts));
    assert.ok(counts.unresolved > 0, 'the fake dropped some lines');
    assert.equal((await new ResultStore({ dynamodb: clients.dynamodb, tableName: lane.resources.resultsTable }).scanAll()).length, counts.committed);
    // Assess: the EMF of the last tick, with the reconciler's dimensions
    const emf = last.lines.filter((l) => '_aws' in l);
    assert.equal(emf.length, 1);
    const metrics = emf[0]!;
    for (const [name, value] of Object.entries(batchDimensions(lane))) assert.equal(metrics[name], value, `dimension ${name}`);
    assert.deepEqual(
      ['BatchItemsUnresolved', 'BatchOldestAgeSeconds', 'BatchesOpen', 'BatchSweepErrors'].map((n) => metrics[n]),
      [counts.unresolved, 0, 0, 0],
    );
    const settled = invocations.flatMap((i) => i.lines.filter((l) => '_aws' in l)).reduce((sum, l) => sum + (l.BatchItemsSettled ?? 0), 0);
    assert.equal(settled, 10, 'every item settled once across the ticks');
    // Assess: what it called and wrote
    const secretCalls = stub.callsOf('secretsmanager', 'GetSecretValue');
    assert.ok(secretCalls.length >= 1 && secretCalls.length <= invocations.length, `one read per cold start at most (${secretCalls.length})`);
    for (const call of secretCalls) assert.deepEqual([call.input.SecretId, call.signedRegion], [secretArn, lane.region]);
    assert.deepEqual(
      stub.calls.filter((c) => c.service === 'unknown').map((c) => c.operation),
      [],
      'no AWS API beyond the local services and the secret',
    );
    const output = JSON.stringify(invocations.map((i) => i.lines));
    assert.ok(!output.includes(KEY), 'the key is never printed');
    for (const doc of docs) assert.ok(!output.includes(doc.text.slice(0, 40).trim()), 'no document text in the output');
    const done = last.lines.find((l) => l.message === 'batch sweep done');
    assert.deepEqual([done?.level, done?.service, done?.lane, done?.unresolvedItems], ['INFO', 'ratelane-batch-us', 'us', counts.unresolved]);
  });
});
