/**
 * The one place that builds a lane's batch reconciler dependencies (the scheduled function of the batch
 * lane), as the queue and live lanes build theirs: the lane's manifest, result store and ledger on its
 * tables, Powertools telemetry under the batch service name, the lane's queue (an invalid output goes
 * there for its repair), and the lane's batch client for each invocation:
 * - an OpenAI-compatible lane (OpenAI's dialect): the OpenAI Batch API with the SDK's retries off, with
 *   the lane's **first** key read from the provider secret (a batch belongs to the organization of the
 *   key that created it: submitting and reconciling use the same key); a changed secret builds a new client;
 * - a Bedrock lane: Bedrock batch inference in the lane's region, input and output in the lane's bucket
 *   under `batch/`, run with the batch inference service role (`RATELANE_BATCH_SERVICE_ROLE_ARN`).
 * Also the function's environment schema (`BATCH_RECONCILER_ENV`).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { ProviderKeyRing } from '../../admission/keys/key-ring.js';
import type { LaneConfig } from '../../config/lanes.js';
import { BATCH_RECONCILER_ENV, batchApiOf, batchServiceName } from '../../config/names.js';
import { createLaneTelemetry, type LaneLogLevel } from '../../extraction/deps.js';
import { ConsumerEnvironmentSchema } from '../../platform/environment.js';
import { RatelaneError } from '../../platform/errors.js';
import type { Cancellations } from '../../store/cancellation.js';
import type { Ledger } from '../../store/ledger.js';
import { BatchManifest } from '../../store/manifest.js';
import { manifestTableName } from '../../store/manifest-model.js';
import type { ResultStore } from '../../store/results.js';
import { createBedrockBatchProvider } from './providers/bedrock.js';
import { createOpenAiBatchProvider } from './providers/openai.js';
import type { BatchProvider } from './providers/provider.js';
import { laneStores } from '../../store/lane-stores.js';

/** The shortest timeout of one batch API call (ms): uploads and result files are larger than one model call. */
const MIN_BATCH_CALL_TIMEOUT_MS = 60_000;

/** The reconciler's environment, checked (the consumer's names where they are the same). Unknown variables are ignored. */
export const BatchReconcilerEnvironmentSchema = ConsumerEnvironmentSchema.pick({
  [BATCH_RECONCILER_ENV.laneConfig]: true,
  [BATCH_RECONCILER_ENV.queueUrl]: true,
  [BATCH_RECONCILER_ENV.providerSecretArn]: true,
  [BATCH_RECONCILER_ENV.logLevel]: true,
}).extend({ [BATCH_RECONCILER_ENV.bedrockServiceRoleArn]: z.string().min(1).optional() });

/** The reconciler cannot run with this lane or environment (no batch client for the provider, a missing role or secret). A person fixes it. */
export class BatchReconcilerConfigurationError extends RatelaneError {
  override name = 'BatchReconcilerConfigurationError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/** What the reconciler handler runs on; the batch client comes per invocation (its key may have changed). */
export interface BatchReconcilerDeps {
  lane: LaneConfig;
  s3: S3Client;
  sqs: SQSClient;
  queueUrl: string;
  manifest: BatchManifest;
  results: ResultStore;
  ledger: Ledger;
  /** The lane's job cancel markers (a part submitted again leaves out cancelled jobs' items). */
  cancellations: Pick<Cancellations, 'marker'>;
  logger: Logger;
  metrics: Metrics;
  now: () => Date;
  /** The lane's batch client for this invocation. */
  provider: () => Promise<BatchProvider>;
  /** The most batch passes per sweep (default: all). */
  maxBatches?: number;
  /** No batch pass starts with less than this left in the invocation (ms). */
  reserveMs?: number;
}

/** What differs between reconcilers of the same lane; everything else defaults. */
export interface BatchReconcilerWiring extends Partial<Omit<BatchReconcilerDeps, 'lane' | 's3' | 'sqs' | 'queueUrl' | 'provider'>> {
  queueUrl: string;
  provider: () => Promise<BatchProvider>;
  /** Level of the default Logger (ignored when `logger` is given). */
  logLevel?: LaneLogLevel | undefined;
}

/** A reconciler's dependencies: the lane's manifest (its retention), result store, ledger and telemetry, the real clock, unless `wiring` gives its own. */
export function createBatchReconcilerDeps(
  lane: LaneConfig,
  clients: { s3: S3Client; sqs: SQSClient; dynamodb: DynamoDBClient },
  wiring: BatchReconcilerWiring,
): BatchReconcilerDeps {
  const { logLevel, logger, metrics, ...rest } = wiring;
  const made = logger && metrics ? undefined : createLaneTelemetry(lane, { serviceName: batchServiceName(lane), logLevel });
  const now = rest.now ?? (() => new Date());
  const stores = laneStores(lane, clients.dynamodb);
  return {
    ...rest,
    lane,
    s3: clients.s3,
    sqs: clients.sqs,
    manifest:
      rest.manifest ??
      new BatchManifest({ dynamodb: clients.dynamodb, tableName: manifestTableName(lane), retentionDays: lane.retention.batchArtifactsDays, now }),
    results: rest.results ?? stores.results,
    ledger: rest.ledger ?? stores.ledger,
    cancellations: rest.cancellations ?? stores.cancellations,
    logger: logger ?? (made as NonNullable<typeof made>).logger,
    metrics: metrics ?? (made as NonNullable<typeof made>).metrics,
    now,
  };
}

/** How the lane's batch client is made. */
export interface BatchProviderSource {
  /** The lane's bucket client (Bedrock's input and output files). */
  s3: S3Client;
  /** Reads the provider secret `{ "<key id>": "<api key>" }` (OpenAI-compatible lanes; the caller caches it). */
  readSecret?: (() => Promise<unknown>) | undefined;
  /** The batch inference service role (Bedrock lanes). */
  bedrockServiceRoleArn?: string | undefined;
  /** Bedrock control-plane endpoint and credentials (tests). */
  bedrock?: { endpoint?: string; credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } } | undefined;
  /** Timeout of one batch API call (ms). Default the larger of the provider's timeout and {@link MIN_BATCH_CALL_TIMEOUT_MS}. */
  timeoutMs?: number | undefined;
}

/** How long the batch provider keeps a lane's batch files (s): the lane's `retention.batchArtifactsDays` (OpenAI keeps at most 30 days). */
export function batchFileExpirySeconds(lane: Pick<LaneConfig, 'retention'>): number {
  return lane.retention.batchArtifactsDays * 86_400;
}

/**
 * The lane's batch client per invocation. Checks at once what can be checked without a call (the
 * provider has a batch client, the role or secret is given): an OpenAI lane's secret is read at each
 * call (a `ProviderSecretError` names the key ids, never a secret), and a new client is made only when
 * the key changed.
 *
 * @throws {@link BatchReconcilerConfigurationError}
 */
export function batchProviderFactory(lane: LaneConfig, source: BatchProviderSource): () => Promise<BatchProvider> {
  const api = batchApiOf(lane.provider);
  const timeoutMs = source.timeoutMs ?? Math.max(lane.provider.timeoutMs, MIN_BATCH_CALL_TIMEOUT_MS);
  if (api === 'bedrock') {
    const roleArn = source.bedrockServiceRoleArn;
    if (!roleArn) throw new BatchReconcilerConfigurationError(`lane ${lane.name}: ${BATCH_RECONCILER_ENV.bedrockServiceRoleArn} is not set`);
    const provider = createBedrockBatchProvider({
      region: lane.region,
      bucket: lane.resources.bucketName,
      roleArn,
      s3: source.s3,
      timeoutMs,
      jobTimeoutHours: lane.batch.completionWindowHours,
      ...(source.bedrock?.endpoint ? { endpoint: source.bedrock.endpoint } : {}),
      ...(source.bedrock?.credentials ? { credentials: source.bedrock.credentials } : {}),
    });
    return async () => provider;
  }
  if (api === 'openai') {
    const readSecret = source.readSecret;
    if (!readSecret) throw new BatchReconcilerConfigurationError(`lane ${lane.name}: ${BATCH_RECONCILER_ENV.providerSecretArn} is not set`);
    const ring = new ProviderKeyRing(lane.provider.keys.slice(0, 1));
    let current: { secret: string; provider: BatchProvider } | undefined;
    return async () => {
      ring.update(await readSecret());
      const secret = ring.keys[0]!.secret;
      if (current?.secret !== secret) {
        current = {
          secret,
          provider: createOpenAiBatchProvider({
            apiKey: secret,
            timeoutMs,
            fileExpirySeconds: batchFileExpirySeconds(lane),
            ...(lane.provider.baseUrl ? { baseUrl: lane.provider.baseUrl } : {}),
          }),
        };
      }
      return current.provider;
    };
  }
  throw new BatchReconcilerConfigurationError(
    `lane ${lane.name}: ratelane has no batch client for provider ${lane.provider.kind}${lane.provider.azure ? ' (Azure OpenAI)' : ''}; set batch.enabled to false`,
  );
}
