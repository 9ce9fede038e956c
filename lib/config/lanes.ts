/**
 * The one lane config. Both the CDK stacks and the local stack read it: region lanes, resource names,
 * queue settings, consumer concurrency, provider and limits per lane. Validated with zod, so a typo
 * in an override fails loudly at start instead of deploying something else.
 *
 * Its parts live beside it and are re-exported here: the schema and its type (`schema.ts`), the provider
 * schema and helpers (`provider.ts`), names in an AWS account (`names.ts`), the deployment checks
 * (`deploy-checks.ts`) and the error (`errors.ts`); the live lane's settings are `live.ts`, the batch lane's `batch.ts`.
 */
import { z } from 'zod';
import { LaneConfigError } from './errors.js';
import { defaultBatchSettings } from './batch.js';
import { defaultLiveSettings } from './live.js';
import { geographyOfRegion } from './endpoints.js';
import { batchApiOf, defaultBucketName } from './names.js';
import { KIND_SPECIFIC_PROVIDER_FIELDS, type ProviderConfig, type ProviderLimits } from './provider.js';
import { LaneConfigSchema, type LaneConfig, type LaneSet } from './schema.js';

export { providerDialect, providerNeedsKeySecrets } from './provider.js';
export { LaneConfigError } from './errors.js';
export { AWS_LIMITS, type LaneConfig, LaneConfigSchema, type LaneSet } from './schema.js';
export { laneInAccount } from './names.js';
export {
  assertDeployable,
  type BedrockModelTarget,
  bedrockModelTarget,
  CONSUMER_REPAIR_ATTEMPTS,
  checkFunctionTimeout,
  deploymentProblems,
  INVOCATION_MARGIN_SECONDS,
  requiredFunctionTimeoutSeconds,
} from './deploy-checks.js';

function defaultLane(name: string, region: string): LaneConfig {
  return {
    name,
    region,
    resources: {
      bucketName: defaultBucketName(name, region),
      queueName: `ratelane-${name}-jobs`,
      dlqName: `ratelane-${name}-jobs-dlq`,
      resultsTable: `ratelane-${name}-results`,
      ledgerTable: `ratelane-${name}-ledger`,
      rateStateTable: `ratelane-${name}-rate-state`,
      providerSecretName: `ratelane/${name}/provider-keys`,
    },
    queue: {
      batchSize: 10,
      maxBatchingWindowSeconds: 0,
      visibilityTimeoutSeconds: 360,
      maxReceiveCount: 5,
      receiveWaitTimeSeconds: 20,
      retentionSeconds: 14 * 24 * 3600,
    },
    consumer: { maximumConcurrency: 5, timeoutSeconds: 60, memoryMb: 512 },
    backoff: {
      throttleBaseSeconds: 2,
      throttleCapSeconds: 300,
      failureBaseSeconds: 5,
      failureCapSeconds: 900,
      maxRateLimitHintSeconds: 3_600,
      maxQuotaHintSeconds: 32 * 86_400,
    },
    bounds: { horizonSeconds: 35 * 86_400, maxDeferrals: 100_000 },
    provider: {
      kind: 'openai-compatible',
      model: 'gpt-4o-mini',
      // A lane's text is processed in its geography (`endpoints.ts`): an EU lane calls OpenAI's European
      // data-residency host (a project with EU residency), any other the default host.
      ...(geographyOfRegion(region) === 'eu' ? { baseUrl: 'https://eu.api.openai.com/v1' } : {}),
      keys: [{ id: 'key-1', quotaOwner: `${name}-org` }],
      limits: { requestsPerMinute: 500, tokensPerMinute: 200_000, requestsPerDay: 10_000 },
      // 2 x 25 s (the call and one repair) + 5 s margin fits the 60 s function timeout: see checkFunctionTimeout.
      timeoutMs: 25_000,
    },
    live: defaultLiveSettings(),
    batch: defaultBatchSettings(),
    // Documents and ledger outlive the job horizon (35 days) with a margin; results are the product.
    erasure: { afterErasure: 'refuse' },
    // Urgent jobs take 90 % of a binding quota while bulk ones wait too; bulk keeps at least 10 %.
    fairness: { classWeights: { urgent: 9, bulk: 1 }, defaultTenantWeight: 1, tenantWeights: {} },
    retention: { documentsDays: 90, resultsDays: 365, ledgerDays: 90, batchArtifactsDays: 90, logsDays: 30, accessLogsDays: 365 },
    // A job older than an hour has been deferred (or failed) many times over, or waits for a long
    // quota reset: either way a person should know. Four times the message-age threshold.
    alarms: { oldestMessageAgeSeconds: 900, oldestJobAgeSeconds: 3600, throttleSharePercent: 20, admissionDenialSharePercent: 25 },
  };
}

/** The default lanes: `us` in us-east-1 and `eu` in eu-central-1. */
export const DEFAULT_LANES: LaneSet = Object.freeze({
  us: defaultLane('us', 'us-east-1'),
  eu: defaultLane('eu', 'eu-central-1'),
});

/** A partial lane, deep-merged over the defaults. */
export type LaneOverride = {
  region?: string;
  resources?: Partial<LaneConfig['resources']>;
  queue?: Partial<LaneConfig['queue']>;
  consumer?: Partial<LaneConfig['consumer']>;
  backoff?: Partial<LaneConfig['backoff']>;
  bounds?: Partial<LaneConfig['bounds']>;
  /**
   * Provider fields replace the base's (`azure`/`vertex` as whole objects; `limits` merge). An
   * override that changes `kind` drops the base's kind-specific fields (dialect, azure, vertex,
   * auth, baseUrl) unless it sets them itself.
   */
  provider?: Partial<Omit<LaneConfig['provider'], 'limits'>> & { limits?: Partial<ProviderLimits> };
  alarms?: Partial<LaneConfig['alarms']>;
  batch?: Partial<LaneConfig['batch']>;
  retention?: Partial<LaneConfig['retention']>;
  erasure?: Partial<LaneConfig['erasure']>;
  /** `classWeights` merge; `tenantWeights` replace the base's. */
  fairness?: Partial<Omit<LaneConfig['fairness'], 'classWeights'>> & { classWeights?: Partial<LaneConfig['fairness']['classWeights']> };
  /** Replaces the base's producers (who may state a job's tenant). */
  producers?: LaneConfig['producers'];
  /** Replaces the base's approved model endpoints. */
  modelEndpoints?: LaneConfig['modelEndpoints'];
  live?: Partial<Omit<LaneConfig['live'], 'throttle' | 'alarms'>> & {
    throttle?: Partial<LaneConfig['live']['throttle']>;
    alarms?: Partial<LaneConfig['live']['alarms']>;
  };
};

function mergeProvider(base: ProviderConfig, override: LaneOverride['provider']): ProviderConfig {
  if (!override) return base;
  const kept: Record<string, unknown> = { ...base };
  if (override.kind !== undefined && override.kind !== base.kind) {
    for (const field of KIND_SPECIFIC_PROVIDER_FIELDS) delete kept[field];
  }
  // An Azure resource and a base URL exclude each other: the one the override names replaces the other.
  if (override.azure !== undefined && override.baseUrl === undefined) delete kept.baseUrl;
  if (override.baseUrl !== undefined && override.azure === undefined) delete kept.azure;
  return { ...(kept as ProviderConfig), ...override, limits: { ...base.limits, ...override.limits } };
}

/** `lane` with `o` deep-merged over it (not yet validated). */
function mergeLane(lane: LaneConfig, o: LaneOverride): unknown {
  const name = lane.name;
  const region = o.region ?? lane.region;
  const provider = mergeProvider(lane.provider, o.provider);
  return {
    ...lane,
    region,
    resources: {
      ...lane.resources,
      ...(o.region && o.region !== lane.region ? { bucketName: defaultBucketName(name, region) } : {}),
      ...o.resources,
    },
    queue: { ...lane.queue, ...o.queue },
    consumer: { ...lane.consumer, ...o.consumer },
    backoff: { ...lane.backoff, ...o.backoff },
    bounds: { ...lane.bounds, ...o.bounds },
    provider,
    alarms: { ...lane.alarms, ...o.alarms },
    retention: { ...lane.retention, ...o.retention },
    erasure: { ...lane.erasure, ...o.erasure },
    fairness: { ...lane.fairness, ...o.fairness, classWeights: { ...lane.fairness.classWeights, ...o.fairness?.classWeights } },
    ...(o.producers !== undefined ? { producers: o.producers } : {}),
    ...(o.modelEndpoints !== undefined ? { modelEndpoints: o.modelEndpoints } : {}),
    // Batches are on by default only where the provider has a batch API ratelane drives (OpenAI's, Bedrock's).
    batch: { ...lane.batch, enabled: batchApiOf(provider) !== undefined, ...o.batch },
    live: { ...lane.live, ...o.live, throttle: { ...lane.live.throttle, ...o.live?.throttle }, alarms: { ...lane.live.alarms, ...o.live?.alarms } },
  };
}

/** `merged` checked against the lane schema; {@link LaneConfigError} names the lane and each wrong field. */
function validLane(name: string, merged: unknown): LaneConfig {
  const parsed = LaneConfigSchema.safeParse(merged);
  if (!parsed.success) throw new LaneConfigError(`lane "${name}": ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  return parsed.data;
}

/** A lane as its owner declares it: a name and a region, and whatever differs from the defaults. */
export type LaneInput = LaneOverride & {
  /** `us`, `eu`, `apac`…: lowercase letters and digits, 2–10 characters; names every resource of the lane. */
  name: string;
  /** The AWS region every resource of the lane lives in. */
  region: string;
};

/**
 * One lane from its declaration: the defaults for its name and region (resource names, queue, consumer,
 * backoff, an OpenAI-compatible provider, live and batch settings, alarms) with `input` deep-merged over
 * them, validated. A complete {@link LaneConfig} comes back as it is.
 *
 * @throws {@link LaneConfigError} naming the lane and each field that is wrong
 */
export function resolveLane(input: LaneInput): LaneConfig {
  if (typeof input?.name !== 'string' || !/^[a-z][a-z0-9]{1,9}$/.test(input.name)) {
    throw new LaneConfigError(`a lane's name is 2-10 lowercase letters and digits starting with a letter (e.g. us, eu), got ${JSON.stringify(input?.name)}`);
  }
  if (typeof input.region !== 'string') throw new LaneConfigError(`lane "${input.name}": region is required (e.g. us-east-1)`);
  const { name, region, ...override } = input;
  return validLane(name, mergeLane(defaultLane(name, region), override));
}

/**
 * Resolves the lane set: defaults, then per-lane overrides (e.g. regions from CDK context, scaled
 * limits for a local run). A region override renames the bucket so it stays globally unique and
 * names its own region. Throws {@link LaneConfigError} on anything invalid.
 */
export function resolveLanes(overrides: Readonly<Record<string, LaneOverride>> = {}, base: LaneSet = DEFAULT_LANES): LaneSet {
  const unknown = Object.keys(overrides).filter((name) => !(name in base));
  if (unknown.length > 0) {
    throw new LaneConfigError(`unknown lane(s): ${unknown.join(', ')}; known lanes: ${Object.keys(base).join(', ')}`);
  }
  const lanes: Record<string, LaneConfig> = {};
  for (const [name, lane] of Object.entries(base)) lanes[name] = validLane(name, mergeLane(lane, overrides[name] ?? {}));
  return laneSetOf(Object.values(lanes));
}

/**
 * The lanes as a set keyed by name, frozen.
 *
 * @throws {@link LaneConfigError} when two lanes share a name or a region (each lane is its own region)
 */
export function laneSetOf(lanes: readonly LaneConfig[]): LaneSet {
  const names = lanes.map((l) => l.name);
  const dupName = names.find((n, i) => names.indexOf(n) !== i);
  if (dupName !== undefined) throw new LaneConfigError(`two lanes are named "${dupName}": a lane's name names its resources`);
  const regions = lanes.map((l) => l.region);
  if (new Set(regions).size !== regions.length) {
    throw new LaneConfigError(`two lanes share a region (${regions.join(', ')}): each lane must be its own region`);
  }
  return Object.freeze(Object.fromEntries(lanes.map((l) => [l.name, l])));
}

/** How many quota owners the lane's keys belong to: each owner has its own limits (keys of one owner share them). */
export function quotaOwnerCount(lane: Pick<LaneConfig, 'provider'>): number {
  return new Set(lane.provider.keys.map((k) => k.quotaOwner)).size;
}

/** Looks a lane up by name; throws {@link LaneConfigError} naming the known lanes. */
export function laneByName(lanes: LaneSet, name: string): LaneConfig {
  const lane = lanes[name];
  if (!lane) throw new LaneConfigError(`unknown region lane "${name}"; known lanes: ${Object.keys(lanes).join(', ')}`);
  return lane;
}
