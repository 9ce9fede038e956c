/**
 * What `ratelane batch` runs on: the lane (by name or AWS region; in AWS, its bucket named after the
 * lane's account as `ratelane submit` names it), the lane's clients (local endpoints or real AWS), its
 * manifest, result store and ledger, its queue URL (`GetQueueUrl` by the lane's queue name, as the
 * producer resolves it), and the lane's batch client: the OpenAI Batch API with the key from
 * `--api-key-env NAME` or `RATELANE_PROVIDER_KEY` (never printed) at the lane's base URL (or
 * `--provider-base-url`), or Bedrock batch inference with the service role from `--bedrock-role-arn` or
 * `RATELANE_BATCH_SERVICE_ROLE_ARN`.
 */
import { GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { createAwsClients, type ServiceEndpoints } from '../platform/clients.js';
import { createBedrockBatchProvider } from '../lanes/batch/providers/bedrock.js';
import { createOpenAiBatchProvider } from '../lanes/batch/providers/openai.js';
import type { BatchProvider } from '../lanes/batch/providers/provider.js';
import { batchFileExpirySeconds } from '../lanes/batch/reconciler-deps.js';
import { configuredLanes } from '../config/file.js';
import type { LaneConfig, LaneSet } from '../config/lanes.js';
import { findLane } from '../intake/checks.js';
import type { Ledger } from '../store/ledger.js';
import { BatchManifest } from '../store/manifest.js';
import { manifestTableName } from '../store/manifest-model.js';
import type { ResultStore } from '../store/results.js';
import { UsageError, type CommandIo } from './command.js';
import { endpointsFrom } from './flags.js';
import { lanesToSubmitTo, type SubmitOptions, type SubmitWiring } from './submit.js';
import type { Cancellations } from '../store/cancellation.js';
import { laneStores } from '../store/lane-stores.js';

/** The env variable the provider key is read from when `--api-key-env` names none. */
export const PROVIDER_KEY_VARIABLE = 'RATELANE_PROVIDER_KEY';
/** The env variable of the Bedrock batch inference service role when `--bedrock-role-arn` is not given. */
const BEDROCK_ROLE_VARIABLE = 'RATELANE_BATCH_SERVICE_ROLE_ARN';
/** The shortest timeout of one batch API call (ms): uploads and result files are larger than one model call. */
const MIN_BATCH_CALL_TIMEOUT_MS = 60_000;

/** The clients a batch command uses, all in the lane's region. */
interface BatchClients {
  sqs: SQSClient;
  s3: S3Client;
  dynamodb: DynamoDBClient;
  destroy?(): void;
}

/** Wiring a test (or another entry point) may pass in; all optional. */
export interface BatchWiring {
  /** Lane set (default: the lane config file's, `configuredLanes`). */
  lanes?: LaneSet;
  now?: () => Date;
  /** Overrides how the caller's account is found in AWS (default: STS `GetCallerIdentity`). */
  callerAccount?: SubmitWiring['callerAccount'];
  /** Overrides client creation (default: {@link createAwsClients} in the lane's region, with the endpoints). */
  clientsFor?: (region: string, endpoints: ServiceEndpoints | undefined) => BatchClients;
  /** Overrides the batch client (default: the lane's provider, see the module's description). */
  providerFor?: (lane: LaneConfig, access: ProviderAccess) => BatchProvider;
}

/** The flags that say where and how to reach the lane and its provider. */
export interface LaneFlags {
  region: string;
  endpoints: string | undefined;
  account: string | undefined;
  apiKeyEnv: string | undefined;
  providerBaseUrl: string | undefined;
  bedrockRoleArn: string | undefined;
}

/** What the batch client is made with (the key is never printed). */
interface ProviderAccess {
  apiKey: string | undefined;
  baseUrl: string | undefined;
  bedrockRoleArn: string | undefined;
  clients: BatchClients;
}

/** A lane, its clients and stores, ready for the batch functions. */
export interface BatchContext {
  lane: LaneConfig;
  endpoints: ServiceEndpoints | undefined;
  clients: BatchClients;
  manifest: BatchManifest;
  results: ResultStore;
  ledger: Ledger;
  cancellations: Cancellations;
  now: () => Date;
  /** The lane's queue URL (resolved once, on first use). */
  queueUrl(): Promise<string>;
  /** The lane's batch client. @throws {UsageError} when the key or role it needs is not given */
  provider(): BatchProvider;
  destroy(): void;
}

/** The lane the flags name, as addressed in AWS (account-named bucket) or locally. @throws {UsageError} */
async function laneFrom(flags: LaneFlags, io: CommandIo, endpoints: ServiceEndpoints | undefined, wiring: BatchWiring): Promise<LaneConfig> {
  const lanes = wiring.lanes ?? configuredLanes({ env: io.env ?? process.env }).lanes;
  const found = findLane(lanes, flags.region);
  if (!found) throw new UsageError(`unknown region lane "${flags.region}"; known lanes: ${Object.keys(lanes).join(', ')}`);
  const asSubmit: SubmitOptions = {
    region: found.name,
    files: [],
    texts: [],
    dirs: [],
    sourceId: undefined,
    deadline: undefined,
    tenant: undefined,
    priority: undefined,
    schemaVersion: undefined,
    promptVersion: undefined,
    endpoints: flags.endpoints,
    account: flags.account,
    allOrNothing: false,
    json: false,
  };
  const addressed = await lanesToSubmitTo({ [found.name]: found }, asSubmit, io, endpoints, {
    ...(wiring.callerAccount ? { callerAccount: wiring.callerAccount } : {}),
  });
  return addressed[found.name] as LaneConfig;
}

/** Opens the lane the flags name: clients, stores, queue URL and batch client. @throws {UsageError} */
export async function openBatchContext(flags: LaneFlags, io: CommandIo, wiring: BatchWiring): Promise<BatchContext> {
  const env = io.env ?? process.env;
  const endpoints = endpointsFrom(flags.endpoints, env);
  const lane = await laneFrom(flags, io, endpoints, wiring);
  const clients = wiring.clientsFor ? wiring.clientsFor(lane.region, endpoints) : createAwsClients(lane.region, endpoints);
  const now = wiring.now ?? (() => new Date());
  const stores = laneStores(lane, clients.dynamodb);
  let queueUrl: Promise<string> | undefined;
  let provider: BatchProvider | undefined;
  return {
    lane,
    endpoints,
    clients,
    manifest: new BatchManifest({ dynamodb: clients.dynamodb, tableName: manifestTableName(lane), retentionDays: lane.retention.batchArtifactsDays, now }),
    results: stores.results,
    ledger: stores.ledger,
    cancellations: stores.cancellations,
    now,
    queueUrl: () => {
      queueUrl ??= clients.sqs.send(new GetQueueUrlCommand({ QueueName: lane.resources.queueName })).then((out) => {
        if (!out.QueueUrl) throw new Error(`GetQueueUrl of ${lane.resources.queueName} returned no QueueUrl`);
        return out.QueueUrl;
      });
      return queueUrl;
    },
    provider: () => {
      provider ??= (wiring.providerFor ?? defaultProvider)(lane, providerAccess(flags, env, lane, clients));
      return provider;
    },
    destroy: () => clients.destroy?.(),
  };
}

/** The key, base URL and role of the lane's provider from the flags and env. @throws {UsageError} */
function providerAccess(flags: LaneFlags, env: Readonly<Record<string, string | undefined>>, lane: LaneConfig, clients: BatchClients): ProviderAccess {
  const keyVariable = flags.apiKeyEnv ?? PROVIDER_KEY_VARIABLE;
  const apiKey = env[keyVariable] || undefined;
  if (flags.apiKeyEnv !== undefined && apiKey === undefined) throw new UsageError(`--api-key-env names ${flags.apiKeyEnv}, which is not set or empty`);
  return {
    apiKey,
    baseUrl: flags.providerBaseUrl ?? lane.provider.baseUrl,
    bedrockRoleArn: flags.bedrockRoleArn ?? (env[BEDROCK_ROLE_VARIABLE] || undefined),
    clients,
  };
}

/** The lane's batch client: OpenAI's Batch API or Bedrock batch inference. @throws {UsageError} */
function defaultProvider(lane: LaneConfig, access: ProviderAccess): BatchProvider {
  const timeoutMs = Math.max(lane.provider.timeoutMs, MIN_BATCH_CALL_TIMEOUT_MS);
  const p = lane.provider;
  if (p.kind === 'bedrock') {
    if (!access.bedrockRoleArn) throw new UsageError(`lane ${lane.name} runs batches on Bedrock: give --bedrock-role-arn or set ${BEDROCK_ROLE_VARIABLE}`);
    return createBedrockBatchProvider({
      region: lane.region,
      bucket: lane.resources.bucketName,
      roleArn: access.bedrockRoleArn,
      s3: access.clients.s3,
      timeoutMs,
      jobTimeoutHours: lane.batch.completionWindowHours,
    });
  }
  if (p.kind !== 'openai-compatible' || p.azure !== undefined || (p.dialect ?? 'openai') !== 'openai') {
    throw new UsageError(`lane ${lane.name}: ratelane has no batch client for provider ${p.kind}${p.azure ? ' (Azure OpenAI)' : ''}`);
  }
  if (!access.apiKey) throw new UsageError(`the provider key is missing: set ${PROVIDER_KEY_VARIABLE} or name another variable with --api-key-env`);
  return createOpenAiBatchProvider({
    apiKey: access.apiKey,
    timeoutMs,
    fileExpirySeconds: batchFileExpirySeconds(lane),
    ...(access.baseUrl ? { baseUrl: access.baseUrl } : {}),
  });
}
