/**
 * Shared by the shipped live-function tests (`shipped-live*.test.ts`): the live function's bundle from
 * the `cdk.out` of a real offline synth of `ratelane-us` (the same cached synth as the consumer bundle
 * tests: test/helpers/shipped-bundle.ts), run in its own Node process by test/e2e/bundle/lambda-driver.mjs
 * with the function's synthesized environment, behind the local HTTP API stand-in
 * (workbench/local-stack/lambda/http-adapter.ts). The stand-in builds each request's API Gateway HTTP API payload
 * 2.0 event (IAM authorizer context, `timeEpoch` at arrival) exactly as `npm run local` does and turns
 * the handler's result into the HTTP answer as API Gateway would; its handler here is the shipped
 * bundle, one cold process per request. Only what a deployment fills in is replaced: the template's
 * tokens (queue URL, secret ARN) get local values, and the lane config gets unique resource names and
 * a fake provider as its `baseUrl`. SQS and S3 go to the run's fauxqs, DynamoDB to its DynamoDB Local,
 * Secrets Manager (and anything else) to the recording stub (test/helpers/aws-stub.ts).
 *
 * {@link useShippedLive} synthesizes (or reuses) the stack and starts the fake providers and the stub;
 * {@link deployLiveLane} "deploys" the live function of a lane from the template and serves it;
 * {@link request} sends one HTTP request to it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { LOCAL_CREDENTIALS } from '../../../lib/platform/clients.js';
import { LaneConfigSchema, type LaneConfig } from '../../../lib/config/lanes.js';
import { extractInvoice } from '../../../workbench/fake-provider/extractors/invoice.js';
import { startFakeProvider, type FakeProvider } from '../../../workbench/fake-provider/index.js';
import { startLiveHttpServer, type LiveHttpServer } from '../../../workbench/local-stack/lambda/http-adapter.js';
import { LIVE_ENV } from '../../../lib/platform/environment.js';
import { secretValues, startAwsStub, type AwsStub } from '../../helpers/aws-stub.js';
import { testLaneOf, type TestLane } from '../../helpers/consumer-harness.js';
import { testEndpoints } from '../../helpers/endpoints.js';
import { resolveEnvironment, resolveValue, shippedLive, type PseudoParameters, type ShippedLive } from '../../helpers/shipped-bundle.js';
import { SHIPPED_ACCOUNT as ACCOUNT, provisionTemplateLane } from '../../helpers/shipped-lane.js';

const DRIVER = join(dirname(fileURLToPath(import.meta.url)), 'lambda-driver.mjs');
/** The Node binary that runs the bundle: this one unless `RATELANE_SHIPPED_NODE` names another (as for the consumer bundle). */
const NODE = process.env.RATELANE_SHIPPED_NODE || process.execPath;
/** The API key of the provider that answers. */
export const GOOD_KEY = 'sk-shipped-live-good';
/** The API key of the provider whose daily quota is one request (a fixed day of 24 h). */
export const DAILY_KEY = 'sk-shipped-live-daily';
const pseudoFor = (region: string): PseudoParameters => ({ accountId: ACCOUNT, region });

/** The synthesized stack and its live function (set by {@link useShippedLive}). */
export let shipped: ShippedLive;
let templateLane: LaneConfig;
/** The fake provider that answers every call with {@link GOOD_KEY} (set by {@link useShippedLive}). */
export let provider: FakeProvider;
/** A fake provider with one request a day for {@link DAILY_KEY}: its second call gets 429 RPD, reset in about 24 h. */
export let dailyProvider: FakeProvider;
/** The recording stub of Secrets Manager (and of any AWS API without a local service). */
export let stub: AwsStub;

/**
 * Before the file's tests: synthesizes the stack (or reuses its output for the same sources), reads
 * the lane config the live function is deployed with, and starts the fake providers and the AWS stub;
 * after them, stops all three.
 */
export function useShippedLive(): void {
  before(async () => {
    const started = Date.now();
    shipped = await shippedLive('ratelane-us');
    const how = shipped.synthesized ? `synthesized in ${shipped.synthMs} ms` : `synth output of the same sources reused (${Date.now() - started} ms)`;
    console.log(`# ${shipped.stack}: ${how}; live bundle ${shipped.bundleDir}; run by ${NODE}`);
    const rawLane = resolveValue(shipped.function.environment[LIVE_ENV.laneConfig], shipped.template, pseudoFor(shipped.region), () => undefined);
    templateLane = LaneConfigSchema.parse(JSON.parse(rawLane));
    const extract = (text: string) => extractInvoice(text);
    provider = await startFakeProvider({ keys: [{ key: GOOD_KEY, quotaOwner: 'shipped-live-good' }], extract, latencyMs: 1 });
    dailyProvider = await startFakeProvider({
      keys: [{ key: DAILY_KEY, quotaOwner: 'shipped-live-daily' }],
      extract,
      latencyMs: 1,
      limits: { requestsPerDay: 1 },
    });
    stub = await startAwsStub({ region: templateLane.region });
  });

  after(async () => {
    await Promise.allSettled([provider?.stop(), dailyProvider?.stop(), stub?.stop()]);
  });
}

/** What one invocation of the shipped live bundle did. */
export interface LiveInvocation {
  /** The payload 2.0 event the function got. */
  event: APIGatewayProxyEventV2;
  /** The handler's answer, or what it threw. */
  result: { ok: true; response: APIGatewayProxyStructuredResultV2; ms: number } | { ok: false; error: { name?: string; message: string }; ms: number };
  /** The function's output lines, stdout then stderr (Powertools logs and EMF), parsed when JSON. */
  lines: Array<Record<string, unknown>>;
}

/** The live function of a lane "deployed" from the template, served on a loopback port. */
export interface LiveLane extends TestLane {
  /** The function's environment (the template's, resolved, plus what Lambda sets). */
  env: Record<string, string>;
  secretArn: string;
  /** The HTTP API stand-in in front of the shipped bundle. */
  api: LiveHttpServer;
  /** Every invocation so far, by the API request id (`apigw-requestid`). */
  invocations: Map<string, LiveInvocation>;
  /** Stops the API stand-in (waiting for running invocations) and closes the clients. */
  close(): Promise<void>;
}

/**
 * Provisions the template's lane under unique resource names (queue, DLQ, bucket, tables) with its
 * provider at `via` (and `apiKey` under the lane's key id in the secret), builds the live function's
 * environment from the template, and serves the shipped bundle behind the HTTP API stand-in.
 */
export async function deployLiveLane(via: FakeProvider, apiKey: string): Promise<LiveLane> {
  const { lane, endpoints, clients, provisioned, secretArn } = await provisionTemplateLane(templateLane, via.baseUrl);
  // Every token of the environment must be one of these: a new one fails here, not silently.
  const fromTemplate = resolveEnvironment(shipped, pseudoFor(lane.region), ({ attribute, resource }) => {
    const p = resource.Properties ?? {};
    if (resource.Type === 'AWS::SQS::Queue' && attribute === undefined && p.QueueName === templateLane.resources.queueName) return provisioned.queueUrl;
    if (resource.Type === 'AWS::SecretsManager::Secret' && attribute === undefined && p.Name === templateLane.resources.providerSecretName) return secretArn;
    return undefined;
  });
  const fn = shipped.function;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...fromTemplate,
    [LIVE_ENV.laneConfig]: JSON.stringify(lane),
    // What the Lambda service sets for every function (reserved: a function cannot override them).
    AWS_REGION: lane.region,
    AWS_DEFAULT_REGION: lane.region,
    // Dummy credentials with the access key id the tables were created with (DynamoDB Local keeps one database per key id and region).
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_SESSION_TOKEN: 'shipped-live-test-session',
    AWS_LAMBDA_FUNCTION_NAME: fn.functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.functionName}`,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
    LAMBDA_TASK_ROOT: shipped.bundleDir,
    _HANDLER: fn.handler,
    TZ: 'UTC',
    LANG: 'en_US.UTF-8',
    // No shared config or credentials files, no instance metadata: only what is set here.
    AWS_CONFIG_FILE: join(shipped.outDir, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(shipped.outDir, 'no-aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    // Where the AWS APIs are: the SDK reads these itself.
    AWS_ENDPOINT_URL_SQS: endpoints.sqs,
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: stub.endpoint,
    // Any other service lands on the stub, which records it as unknown (and never reaches AWS).
    AWS_ENDPOINT_URL: stub.endpoint,
  };
  stub.setSecret(secretArn, secretValues.keys({ [lane.provider.keys[0]!.id]: apiKey }));
  const invocations = new Map<string, LiveInvocation>();
  const api = await startLiveHttpServer({
    handler: async (event, context) => {
      const invocation = await invokeLive(env, event, context.getRemainingTimeInMillis(), context.awsRequestId, lane.region);
      invocations.set(event.requestContext.requestId, invocation);
      // A handler that threw is a failed invocation: API Gateway answers 500 (the adapter does too).
      if (!invocation.result.ok) throw Object.assign(new Error(invocation.result.error.message), { name: invocation.result.error.name ?? 'Error' });
      return invocation.result.response;
    },
    timeoutMs: fn.timeoutSeconds * 1000,
    awsRegion: lane.region,
    accountId: ACCOUNT,
    functionName: fn.functionName,
    memoryLimitInMB: fn.memoryMb,
  });
  return {
    ...testLaneOf(lane, clients, provisioned),
    close: async () => {
      await api.stop();
      clients.destroy();
    },
    env,
    secretArn,
    api,
    invocations,
  };
}

/** Runs the shipped bundle once in a new Node process (a cold start) on one HTTP API event. */
async function invokeLive(
  env: Record<string, string>,
  event: APIGatewayProxyEventV2,
  remainingMs: number,
  awsRequestId: string,
  region: string,
): Promise<LiveInvocation> {
  const fn = shipped.function;
  const context = {
    functionName: fn.functionName,
    invokedFunctionArn: `arn:aws:lambda:${region}:${ACCOUNT}:function:${fn.functionName}`,
    memoryLimitInMB: fn.memoryMb,
    timeoutMs: remainingMs,
    awsRequestId,
    logGroupName: `/aws/lambda/${fn.functionName}`,
    logStreamName: `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomBytes(16).toString('hex')}`,
  };
  const child = spawn(NODE, [DRIVER], { cwd: shipped.bundleDir, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(JSON.stringify({ event, context }));
  const killer = setTimeout(() => child.kill('SIGKILL'), fn.timeoutSeconds * 1000 + 15_000);
  const code: number | null = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c) => resolve(c));
  });
  clearTimeout(killer);
  const mark = 'RATELANE_DRIVER_RESULT ';
  const all = stdout.split('\n').filter((l) => l.trim() !== '');
  const resultLine = all.find((l) => l.startsWith(mark));
  if (!resultLine) throw new Error(`the driver printed no result (exit ${code}); stdout:\n${stdout.slice(-3000)}\nstderr:\n${stderr.slice(-3000)}`);
  // Powertools writes warnings and errors to stderr; Lambda sends both streams to the log group.
  const lines = [...all.filter((l) => !l.startsWith(mark)), ...stderr.split('\n').filter((l) => l.trim() !== '')].map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      return { text: l };
    }
  });
  return { event, result: JSON.parse(resultLine.slice(mark.length)), lines };
}

/** One answer of the live API, as the caller sees it, and the invocation that made it. */
export interface ApiAnswer {
  status: number;
  headers: Headers;
  /** The JSON body. */
  body: Record<string, unknown>;
  invocation: LiveInvocation;
}

/** Sends one request to the lane's live API (`POST` with a JSON body, or `GET`) and waits for its answer. */
export async function request(t: LiveLane, method: 'POST' | 'GET', path: string, body?: unknown): Promise<ApiAnswer> {
  const response = await fetch(`${t.api.url}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const invocation = t.invocations.get(response.headers.get('apigw-requestid') ?? '');
  assert.ok(invocation, `${method} ${path}: answered ${response.status} without invoking the bundle: ${text}`);
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    assert.fail(`${method} ${path}: ${response.status} with a body that is not JSON: ${text.slice(0, 500)}\n${problems(invocation)}`);
  }
  return { status: response.status, headers: response.headers, body: parsed, invocation };
}

/** The sum of one EMF metric over the invocation's output. */
export function metric(invocation: LiveInvocation, name: string): number {
  return invocation.lines.filter((l) => '_aws' in l && typeof l[name] === 'number').reduce((sum, l) => sum + (l[name] as number), 0);
}

/** The function's warnings, errors and other non-INFO output, for assertion messages. */
export function problems(invocation: LiveInvocation): string {
  const result = invocation.result.ok ? '' : `the handler threw ${invocation.result.error.name}: ${invocation.result.error.message}\n`;
  const lines = invocation.lines.filter((l) => !('_aws' in l) && l.level !== 'INFO' && l.level !== 'DEBUG');
  return `${result}function output (warnings, errors, other):\n${lines.map((l) => JSON.stringify(l)).join('\n')}`;
}

/** Every stub call was signed for the lane's region, and none was to an API the stub does not know. */
export function assertStubCallsSane(t: LiveLane): void {
  assert.deepEqual(
    stub.calls.filter((c) => c.service === 'unknown').map((c) => c.operation),
    [],
    'the bundle called no AWS API beyond the local services and the stubbed ones',
  );
  for (const c of stub.calls) assert.equal(c.signedRegion, t.lane.region, `${c.operation} is signed for the lane's region`);
}

/** One message as fauxqs holds it (the fields the tests read). */
export interface QueuedMessage {
  body: string;
  messageAttributes?: Record<string, { DataType: string; StringValue?: string }>;
  /** When it was sent, and until when it is delayed (epoch ms; none when it was sent without a delay). */
  sentTimestamp: number;
  delayUntil?: number;
}

/**
 * The messages fauxqs holds for the lane's queue, by state, from its non-destructive inspection
 * endpoint (`/_fauxqs/queues/<name>`): a delayed message, which `ReceiveMessage` cannot return before
 * its delay ends, included.
 */
export async function inspectQueue(t: LiveLane): Promise<Record<'ready' | 'delayed' | 'inflight', QueuedMessage[]>> {
  const response = await fetch(`${testEndpoints().sqs}/_fauxqs/queues/${encodeURIComponent(t.lane.resources.queueName)}`);
  assert.equal(response.status, 200, `fauxqs inspects queue ${t.lane.resources.queueName}`);
  const inspected = (await response.json()) as { messages: Record<string, unknown[]> };
  // In-flight entries wrap the message (`{ message, receiptHandle, visibilityDeadline }`).
  const flat = (list: unknown[] | undefined) => (list ?? []).map((m) => ((m as { message?: unknown }).message ?? m) as QueuedMessage);
  return { ready: flat(inspected.messages.ready), delayed: flat(inspected.messages.delayed), inflight: flat(inspected.messages.inflight) };
}
