/**
 * Names in an AWS account: the bucket name a lane gets by default, the account-qualified name it gets
 * when deployed, and the lane as deployed in an account (re-exported by `lanes.ts`); and the batch
 * lane's names, environment, metrics and batch API, which its reconciler function and the lane stack
 * share.
 */
import type { LaneConfig } from './schema.js';

/** The bucket name a lane gets by default (and keeps locally): lane and region, no account. */
export function defaultBucketName(name: string, region: string): string {
  return `ratelane-${name}-source-${region}`;
}

/**
 * The bucket name of a lane deployed in `account`: bucket names are global across every AWS
 * account, so the deployed name carries the account id too (a staging and a production account can
 * both deploy the same lane, and nobody else's bucket can hold the name). At most 54 characters.
 */
function accountBucketName(name: string, region: string, account: string): string {
  return `ratelane-${name}-source-${account}-${region}`;
}

/**
 * The lane as deployed in `account` (a 12-digit id, or the stack's account token): a bucket left at
 * its default name gets the account-qualified name ({@link accountBucketName}); a bucket named
 * explicitly in the config keeps that name. The stack, its consumer and a producer sending to AWS use
 * this; the local stack keeps the config's names.
 */
export function laneInAccount(lane: LaneConfig, account: string): LaneConfig {
  if (lane.resources.bucketName !== defaultBucketName(lane.name, lane.region)) return lane;
  return { ...lane, resources: { ...lane.resources, bucketName: accountBucketName(lane.name, lane.region, account) } };
}

/*
 * The batch lane's names: what its reconciler function and the lane stack agree on (plain data, no
 * SDK, no CDK; the stack creates and grants under these names, the function reads the same).
 */

/** Key prefix of the batch lane's provider files in a lane's bucket (Bedrock: `batch/<batchId>/input/`, `batch/<batchId>/output/`). */
export const BATCH_PREFIX = 'batch/';

/** The lane's batch reconciler function name. */
export function batchReconcilerFunctionName(lane: string): string {
  return `ratelane-${lane}-batch-reconciler`;
}

/** The EventBridge Scheduler schedule (in the default group) that runs a lane's batch reconciler. */
export function batchReconcileScheduleName(lane: string): string {
  return `ratelane-${lane}-batch-reconcile`;
}

/** The Powertools service name of a lane's batch reconciler (`POWERTOOLS_SERVICE_NAME`, a metric dimension). */
export function batchServiceName(lane: { name: string }): string {
  return `ratelane-batch-${lane.name}`;
}

/** The dimensions every batch reconciler metric carries: Powertools' `service` plus the lane and its region. */
export function batchDimensions(lane: { name: string; region: string }): Record<'service' | 'lane' | 'region', string> {
  return { service: batchServiceName(lane), lane: lane.name, region: lane.region };
}

/** The environment variables of a lane's batch reconciler function. */
export const BATCH_RECONCILER_ENV = {
  /** The lane's config as JSON (checked against the lane schema). */
  laneConfig: 'RATELANE_LANE_CONFIG',
  /** The lane's ingress queue URL: an output that fails validation goes there for its repair. */
  queueUrl: 'RATELANE_QUEUE_URL',
  /** The Secrets Manager secret `{ "<key id>": "<api key>" }` (OpenAI-compatible lanes). */
  providerSecretArn: 'RATELANE_PROVIDER_SECRET_ARN',
  /** The batch inference service role Bedrock assumes to read a job's input and write its output (Bedrock lanes). */
  bedrockServiceRoleArn: 'RATELANE_BATCH_SERVICE_ROLE_ARN',
  /** Powertools settings. */
  serviceName: 'POWERTOOLS_SERVICE_NAME',
  metricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
  logLevel: 'POWERTOOLS_LOG_LEVEL',
} as const;

/** The item states a reconcile pass settles an item in, each with its `BatchItemsSettled<State>` metric. */
export const BATCH_SETTLED_METRICS = {
  committed: 'BatchItemsSettledCommitted',
  duplicate: 'BatchItemsSettledDuplicate',
  redriven: 'BatchItemsSettledRedriven',
  unresolved: 'BatchItemsSettledUnresolved',
  needs_review: 'BatchItemsSettledNeedsReview',
  rejected: 'BatchItemsSettledRejected',
} as const;

/** The EMF metrics a lane's batch reconciler emits, one set per sweep (all counts unless the name ends in `Seconds`). */
export const BATCH_METRICS = [
  /** Items in state `unresolved` across the lane's batches that are not cancelled (a gauge: each sweep's count). */
  'BatchItemsUnresolved',
  /** Age of the oldest batch not yet done or cancelled, from its creation (s; 0 when none is open). */
  'BatchOldestAgeSeconds',
  /** Batches not yet done or cancelled (a gauge). */
  'BatchesOpen',
  /** Items a sweep settled (any state), and per state below ({@link BATCH_SETTLED_METRICS}). */
  'BatchItemsSettled',
  ...Object.values(BATCH_SETTLED_METRICS),
  /** Batches whose pass failed in a sweep (the others went on). */
  'BatchSweepErrors',
  /** A sweep did not run: the batch client's host is not approved for the lane's geography (nothing sent). */
  'EndpointMismatch',
] as const;

/** One of {@link BATCH_METRICS}. */
export type BatchMetricName = (typeof BATCH_METRICS)[number];

/** The batch API a lane's provider is reconciled through, or `undefined` when ratelane has no batch client for it. */
export type BatchApi = 'openai' | 'bedrock';

/**
 * The batch API of a provider: OpenAI's Batch API for an OpenAI-compatible provider speaking OpenAI's
 * dialect (not Azure OpenAI, not another vendor's compatible endpoint), Bedrock batch inference for a
 * Bedrock provider whatever its auth (batch jobs are created with the function's IAM role); no batch
 * client exists for the others.
 */
export function batchApiOf(provider: LaneConfig['provider']): BatchApi | undefined {
  if (provider.kind === 'bedrock') return 'bedrock';
  if (provider.kind === 'openai-compatible' && provider.azure === undefined && (provider.dialect ?? 'openai') === 'openai') return 'openai';
  return undefined;
}
