/**
 * The consumer eval harness: a lane provisioned on the run's shared DynamoDB Local and fauxqs, jobs
 * submitted with the real producer, messages received by hand and handed to the real consumer
 * handler as a Lambda SQS event, with a model adapter the test scripts. `invoke` plays the event
 * source mapping's part after the handler returned: it deletes every record not reported failed.
 */
import { after } from 'node:test';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import { loadCorpus, type CorpusDocument } from '../../workbench/corpus/index.js';
import type { InvoiceV1 } from '../../lib/contract/schemas/invoice-v1.js';
import { resolveLanes, type LaneConfig, type LaneOverride } from '../../lib/config/lanes.js';
import { createConsumerDeps, createConsumerTelemetry } from '../../lib/lanes/queue/deps.js';
import type { ConfigurationCheck } from '../../lib/lanes/queue/configuration.js';
import { createConsumerHandler, type SqsHandler } from '../../lib/lanes/queue/handler.js';
import type { LanePauseRequester } from '../../lib/admission/pause/lane-pause.js';
import { roundRobinKeys, type KeyPool } from '../../lib/admission/keys/key-pool.js';
import type { ConsumerDeps } from '../../lib/lanes/queue/process-record.js';
import { sha256Hex, type Job } from '../../lib/contract/job.js';
import { DEFAULT_PROMPT_VERSION, DEFAULT_SCHEMA_VERSION, DOCUMENT_CLOSE, DOCUMENT_OPEN, isKnownPromptVersion } from '../../lib/contract/schemas/registry.js';
import { createAwsClients, type AwsClients } from '../../lib/platform/clients.js';
import { extractInvoice } from '../../workbench/fake-provider/extractors/invoice.js';
import { provisionLane } from '../../workbench/local-stack/services/provision.js';
import { FAUXQS_SENDER_ID } from '../../workbench/local-stack/services/services.js';
import { buildSqsEvent } from '../../workbench/local-stack/lambda/sqs-event.js';
import { createLambdaContext } from '../../workbench/local-stack/lambda/invocation.js';
import { redirectPowertoolsConsole, TelemetrySink } from '../../workbench/local-stack/lambda/telemetry.js';
import type { ProviderErrorClassification } from '../../lib/policy/classification.js';
import { ProviderError, type ExtractionRequest, type ExtractionResponse, type ModelAdapter } from '../../lib/providers/model.js';
import type { Sleep } from '../../lib/platform/sleep.js';
import { submitDocuments, type SubmitItemResult } from '../../lib/intake/producer.js';
import { Ledger } from '../../lib/store/ledger.js';
import { ResultStore } from '../../lib/store/results.js';
import { testEndpoints, uniqueLaneResources } from './endpoints.js';

/** A lane of one test, on the shared services, with its own queue, DLQ, bucket and tables. */
export interface TestLane {
  lane: LaneConfig;
  clients: AwsClients;
  queueUrl: string;
  queueArn: string;
  dlqUrl: string;
  results: ResultStore;
  ledger: Ledger;
  destroy(): void;
}

/** Settings a test may change (resources are always unique). */
export type TestLaneOverride = Omit<LaneOverride, 'resources' | 'region'>;

/**
 * Test lanes default to short timeouts: a 5 s function, 30 s queue visibility, and a 2 s model call (so
 * one call and its repair, with the settle margin, fit in the function's time).
 */
const TEST_LANE_DEFAULTS: TestLaneOverride = {
  queue: { visibilityTimeoutSeconds: 30, receiveWaitTimeSeconds: 0 },
  consumer: { timeoutSeconds: 5 },
  provider: { timeoutMs: 2_000 },
};

/** The `us` lane with unique resource names and the given overrides. */
export function testLaneConfig(override: TestLaneOverride = {}): LaneConfig {
  return resolveLanes({
    us: {
      ...TEST_LANE_DEFAULTS,
      ...override,
      queue: { ...TEST_LANE_DEFAULTS.queue, ...override.queue },
      consumer: { ...TEST_LANE_DEFAULTS.consumer, ...override.consumer },
      provider: { ...TEST_LANE_DEFAULTS.provider, ...override.provider },
      resources: uniqueLaneResources(),
    },
  }).us!;
}

/** Provisions a fresh `us` lane on the shared services. */
export async function provisionTestLane(override: TestLaneOverride = {}): Promise<TestLane> {
  const lane = testLaneConfig(override);
  const clients = createAwsClients(lane.region, testEndpoints());
  return testLaneOf(lane, clients, await provisionLane(lane, clients));
}

/** A provisioned lane as a {@link TestLane}: its queues, its stores on its tables, `destroy` closing its clients. */
export function testLaneOf(lane: LaneConfig, clients: AwsClients, provisioned: Awaited<ReturnType<typeof provisionLane>>): TestLane {
  return {
    lane,
    clients,
    queueUrl: provisioned.queueUrl,
    queueArn: provisioned.queueArn,
    dlqUrl: provisioned.dlqUrl,
    results: new ResultStore({ dynamodb: clients.dynamodb, tableName: lane.resources.resultsTable }),
    ledger: new Ledger({ dynamodb: clients.dynamodb, tableName: lane.resources.ledgerTable }),
    destroy: () => clients.destroy(),
  };
}

/** A fresh SQS client for the lane's region (so a test can wrap it without touching the lane's). */
/**
 * The `newLane` of one test file: provisions test lanes on the shared services and destroys their
 * clients after the file's tests.
 */
export function trackedLanes(): (override?: TestLaneOverride) => Promise<TestLane> {
  const lanes: TestLane[] = [];
  after(() => {
    for (const t of lanes) t.destroy();
  });
  return async (override = {}) => {
    const t = await provisionTestLane(override);
    lanes.push(t);
    return t;
  };
}

export function freshSqsClient(t: TestLane): SQSClient {
  return createAwsClients(t.lane.region, testEndpoints()).sqs;
}

/** English corpus documents (the `us` lane), in manifest order. */
export function englishDocuments(count: number): CorpusDocument<InvoiceV1>[] {
  const docs = loadCorpus().filter((d) => d.language === 'en');
  if (docs.length < count) throw new Error(`the corpus has only ${docs.length} English documents`);
  return docs.slice(0, count);
}

/** One document to submit to a test lane. */
export interface TestDocument {
  text: string;
  sourceId: string;
  deadline?: Date;
  /** The tenant the producer states (`Job.tenant`). */
  tenant?: string;
  /** The priority class the producer states (`Job.priority`). */
  priority?: 'urgent' | 'bulk';
}

/** Submits documents to the lane with the real producer; every one must be sent. */
export async function submitTo(t: TestLane, documents: readonly TestDocument[]): Promise<SubmitItemResult[]> {
  const submitted = await submitDocuments(
    {
      documents: documents.map((d) => ({
        text: d.text,
        sourceId: d.sourceId,
        region: 'us',
        ...(d.deadline ? { deadline: d.deadline } : {}),
        ...(d.tenant ? { tenant: d.tenant } : {}),
        ...(d.priority ? { priority: d.priority } : {}),
      })),
    },
    {
      lanes: { us: t.lane },
      clientsFor: () => ({ sqs: t.clients.sqs, s3: t.clients.s3 }),
      queueUrlFor: () => t.queueUrl,
      now: () => new Date(),
      isKnownVersion: isKnownPromptVersion,
      defaultVersions: { schemaVersion: DEFAULT_SCHEMA_VERSION, promptVersion: DEFAULT_PROMPT_VERSION },
    },
  );
  if (submitted.failed > 0) throw new Error(`${submitted.failed} document(s) were not sent`);
  return submitted.results;
}

/** Sends a raw body to the lane's queue (a bad body, or a hand-made job). */
export async function sendRaw(t: TestLane, body: string): Promise<string> {
  const out = await t.clients.sqs.send(new SendMessageCommand({ QueueUrl: t.queueUrl, MessageBody: body }));
  return out.MessageId!;
}

/**
 * Receives up to `max` messages (as Lambda's poller would: all system and message attributes).
 * Stops at the first empty receive after `waitSeconds` of long polling.
 */
export async function receive(
  t: TestLane,
  options: { max?: number; waitSeconds?: number; visibilityTimeout?: number; queueUrl?: string } = {},
): Promise<Message[]> {
  const max = options.max ?? 10;
  const messages: Message[] = [];
  while (messages.length < max) {
    const out = await t.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl ?? t.queueUrl,
        MaxNumberOfMessages: Math.min(10, max - messages.length),
        WaitTimeSeconds: messages.length === 0 ? (options.waitSeconds ?? 0) : 0,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
        ...(options.visibilityTimeout !== undefined ? { VisibilityTimeout: options.visibilityTimeout } : {}),
      }),
    );
    const got = out.Messages ?? [];
    if (got.length === 0) break;
    messages.push(...got);
  }
  return messages;
}

/** Message counts of a queue. */
export async function queueCounts(t: TestLane, which: 'queue' | 'dlq' = 'queue'): Promise<{ visible: number; notVisible: number; delayed: number }> {
  const out = await t.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: which === 'queue' ? t.queueUrl : t.dlqUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  const a = out.Attributes ?? {};
  return {
    visible: Number(a.ApproximateNumberOfMessages ?? 0),
    notVisible: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/** The job in a message body. */
export function jobOf(message: Message): Job {
  return JSON.parse(message.Body!) as Job;
}

// ---------------------------------------------------------------------------------------------
// The scripted model

/** One call the scripted model received. */
interface ModelCall {
  /** The document text between the markers of the user message. */
  text: string;
  /** SHA-256 of that text (a job's `input.contentSha256`). */
  sha: string;
  /** 1-based count of calls for this document so far. */
  callNo: number;
  /** Whether the call is a repair call (it carries the previous output). */
  repair: boolean;
  at: number;
}

/** What the scripted model does with one call: answer this content, throw this error, or (undefined) answer correctly. */
export type ModelScript = (call: ModelCall) => { content: string } | Error | undefined;

/** A {@link ModelAdapter} that answers from {@link extractInvoice} unless the script says otherwise. */
export interface ScriptedModel extends ModelAdapter {
  calls: ModelCall[];
  callsFor(sha: string): number;
  script: ModelScript;
}

/** The document text of an extraction request (between `<document>\n` and `\n</document>`). */
export function documentOf(request: ExtractionRequest): string {
  const user = request.messages.find((m) => m.role === 'user')?.content ?? '';
  const start = user.indexOf(DOCUMENT_OPEN);
  const end = user.indexOf(DOCUMENT_CLOSE, start + DOCUMENT_OPEN.length);
  if (start < 0 || end < 0) throw new Error('no document markers in the user message');
  return user.slice(start + DOCUMENT_OPEN.length, end);
}

/** The correct answer for a document, as the model's raw output. */
export function correctOutput(text: string): string {
  return JSON.stringify(extractInvoice(text));
}

/** A scripted model; `now` (default `Date.now`) times each call (`ModelCall.at`), on a test's virtual clock if it has one. */
export function scriptedModel(script: ModelScript = () => undefined, options: { now?: () => number } = {}): ScriptedModel {
  const now = options.now ?? Date.now;
  const calls: ModelCall[] = [];
  const model: ScriptedModel = {
    provider: 'scripted',
    calls,
    script,
    callsFor: (sha) => calls.filter((c) => c.sha === sha).length,
    async extract(request): Promise<ExtractionResponse> {
      const text = documentOf(request);
      const sha = sha256Hex(text);
      const user = request.messages.find((m) => m.role === 'user')?.content ?? '';
      const call: ModelCall = { text, sha, callNo: calls.filter((c) => c.sha === sha).length + 1, repair: user.includes('<previous_output>'), at: now() };
      calls.push(call);
      await new Promise((r) => setTimeout(r, 2));
      const verdict = model.script(call);
      if (verdict instanceof Error) throw verdict;
      return { content: verdict?.content ?? correctOutput(text), usage: { inputTokens: 120, outputTokens: 80 }, model: 'scripted-model' };
    },
  };
  return model;
}

/** A provider 429 with the given classification (what an adapter throws after classifying). */
export function throttle(classification: Partial<ProviderErrorClassification> & { kind: ProviderErrorClassification['kind'] }): ProviderError {
  return new ProviderError('429 from the scripted provider', 'scripted', 429, { retryAfterMs: null, resetAt: null, ...classification });
}

// ---------------------------------------------------------------------------------------------
// The consumer

/** A TelemetrySink that also keeps every line, to search logs for what must not be there. */
export class CapturingSink extends TelemetrySink {
  readonly lines: string[] = [];
  override line(text: string): void {
    this.lines.push(text);
    super.line(text);
  }
}

/** Options of {@link testConsumer}. */
export interface TestConsumerOptions {
  sink?: CapturingSink;
  sqs?: SQSClient;
  now?: () => Date;
  /** The in-process sleep beside `now` (a virtual clock's, `virtual-clock.ts`); default: the real one. */
  sleep?: Sleep;
  random?: () => number;
  maxRepairAttempts?: number;
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** Admission (default: one key, every call admitted, nothing shared). */
  keys?: KeyPool;
  /** Lane pause (default: none). */
  lanePause?: LanePauseRequester;
  /** The configuration check run before each batch (default: none). */
  checkConfiguration?: ConfigurationCheck;
  /** The lane's own senders (default: fauxqs's one sender, as the local stack has it). */
  laneSenders?: readonly string[];
}

/** A consumer handler with real stores and queues, the given model, and Powertools output captured. */
export function testConsumer(
  t: TestLane,
  model: ModelAdapter,
  options: TestConsumerOptions = {},
): { handler: SqsHandler; deps: ConsumerDeps; sink: CapturingSink } {
  const sink = options.sink ?? new CapturingSink();
  const { logger, metrics } = createConsumerTelemetry(t.lane, { logLevel: options.logLevel ?? 'DEBUG' });
  const console = sink.console();
  redirectPowertoolsConsole(logger, console);
  redirectPowertoolsConsole(metrics, console);
  const deps = createConsumerDeps(t.lane, t.clients, {
    queueUrl: t.queueUrl,
    dlqUrl: t.dlqUrl,
    laneSenders: options.laneSenders ?? [FAUXQS_SENDER_ID],
    sqs: options.sqs,
    results: t.results,
    ledger: t.ledger,
    model,
    keys: options.keys ?? roundRobinKeys([{ id: 'key-1', quotaOwner: 'us-org', secret: 'sk-test-key-1' }]),
    lanePause: options.lanePause,
    logger,
    metrics,
    now: options.now,
    sleep: options.sleep,
    random: options.random,
    maxRepairAttempts: options.maxRepairAttempts,
  });
  return { handler: createConsumerHandler(deps, { checkConfiguration: options.checkConfiguration }), deps, sink };
}

/** What one invocation returned. */
export interface Invocation {
  response: SQSBatchResponse;
  failedIds: Set<string>;
  elapsedMs: number;
}

/**
 * Invokes the handler with the messages as one Lambda SQS event, then (as the event source mapping
 * does) deletes every record the response did not report failed. `ack: false` skips the delete;
 * `timeoutMs` gives the invocation less time than the lane's function timeout; `senderId` is the
 * `SenderId` SQS would stamp had another principal sent them (fauxqs names every sender by its account).
 */
export async function invoke(
  t: TestLane,
  handler: SqsHandler,
  messages: readonly Message[],
  options: { ack?: boolean; timeoutMs?: number; senderId?: string } = {},
): Promise<Invocation> {
  const event = buildSqsEvent(messages, { queueArn: t.queueArn, awsRegion: t.lane.region });
  const { senderId } = options;
  if (senderId !== undefined) for (const record of event.Records) record.attributes.SenderId = senderId;
  const context = createLambdaContext({
    functionName: `ratelane-test-consumer`,
    awsRegion: t.lane.region,
    accountId: '000000000000',
    memoryLimitInMB: 512,
    deadline: Date.now() + (options.timeoutMs ?? t.lane.consumer.timeoutSeconds * 1000),
    now: Date.now,
  });
  const started = Date.now();
  const response = await handler(event, context);
  const elapsedMs = Date.now() - started;
  const failedIds = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  if (options.ack !== false) {
    const done = messages.filter((m) => !failedIds.has(m.MessageId!));
    for (let i = 0; i < done.length; i += 10) {
      const out = await t.clients.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: t.queueUrl,
          Entries: done.slice(i, i + 10).map((m, j) => ({ Id: `d${i + j}`, ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
      if ((out.Failed ?? []).length > 0) throw new Error(`delete failed: ${JSON.stringify(out.Failed)}`);
    }
  }
  return { response, failedIds, elapsedMs };
}

/** Polls until `predicate` holds, or fails with `what` after `timeoutMs`. */
export async function waitUntil(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000, everyMs = 100): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
