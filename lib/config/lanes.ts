/**
 * The one lane config. Both the CDK stacks and the local stack read it: region lanes, resource names,
 * queue settings, consumer concurrency, provider and limits per lane. Validated with zod, so a typo
 * in an override fails loudly at start instead of deploying something else.
 */
import { z } from 'zod';
import { PROVIDER_NAMES } from '../providers/classify.js';
import { RatelaneError } from '../shared/errors.js';
import { defaultLiveSettings, LiveSettingsSchema } from './live.js';

/** SQS and Lambda hard limits that every lane must respect (AWS's rules, not the emulator's). */
export const AWS_LIMITS = {
  maxDelaySeconds: 900,
  maxMessageBytes: 256 * 1024,
  maxBatchEntries: 10,
  maxVisibilityTimeoutSeconds: 12 * 60 * 60,
  minMaximumConcurrency: 2,
  maxMaximumConcurrency: 1000,
} as const;

/** Provider limits of one key (per window). `windowScale` shrinks windows for tests and local runs. */
export const ProviderLimitsSchema = z.object({
  requestsPerMinute: z.number().int().positive(),
  tokensPerMinute: z.number().int().positive(),
  requestsPerDay: z.number().int().positive(),
});

/** One API key of a lane's provider; keys sharing a `quotaOwner` share (and cool down on) one quota. */
export const ProviderKeySchema = z.object({
  id: z.string().regex(/^[a-z0-9-]{1,64}$/),
  quotaOwner: z.string().min(1),
});

/**
 * Which provider's error wording an OpenAI-compatible endpoint speaks: the OpenAI-compatible
 * adapter passes it to the classifier (`classifyProviderError({ provider: dialect, ... })`). Any of
 * the classifier's providers: `openai` (default, also for a self-hosted server), `azure-openai`,
 * `groq`, `mistral`, `openrouter`, `cohere` (its compatibility API), `gemini` (its OpenAI endpoint),
 * `anthropic`, `vertex`, `bedrock`.
 */
export const ProviderDialectSchema = z.enum(PROVIDER_NAMES);
export type ProviderDialect = z.infer<typeof ProviderDialectSchema>;

/**
 * Azure OpenAI through the SDK's `AzureOpenAI` client (retries off). Requires `kind:
 * 'openai-compatible'` and `dialect: 'azure-openai'`. The lane's key secrets are Azure API keys
 * (`api-key` header); Entra ID tokens are not supported yet.
 */
export const AzureOpenAiSettingsSchema = z
  .object({
    /** The resource endpoint, e.g. `https://my-resource.openai.azure.com` (no `/openai` suffix). */
    endpoint: z.string().url(),
    /** The deployment name (Azure routes `/openai/deployments/<deployment>/chat/completions`). */
    deployment: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'deployment: letters, digits, ".", "_" or "-" (1-64)'),
    /** The `api-version` query parameter, e.g. `2024-10-21` or `2025-04-01-preview`. */
    apiVersion: z.string().regex(/^(?:\d{4}-\d{2}-\d{2}(?:-preview)?|preview|latest|v1)$/, 'apiVersion: e.g. 2024-10-21 or 2025-04-01-preview'),
  })
  .strict();

/**
 * Vertex AI through `GoogleGenAI({ vertexai: true, project, location })`; errors classify as
 * `vertex`. Requires `kind: 'gemini'`. Vertex authenticates with Google credentials (Application
 * Default Credentials: `GOOGLE_APPLICATION_CREDENTIALS`, workload identity federation, or the
 * metadata server), not an API key: the lane's keys then only name quota owners and need no secret.
 */
export const VertexSettingsSchema = z
  .object({
    /** The Google Cloud project ID. */
    project: z.string().regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, 'project: a Google Cloud project ID'),
    /** A Google Cloud region (`europe-west4`, `us-central1`) or `global`. */
    location: z.string().regex(/^(?:global|[a-z]+-[a-z]+\d+)$/, 'location: a Google Cloud region such as europe-west4, or global'),
  })
  .strict();

/** How the Bedrock adapter authenticates. */
export const BedrockAuthSchema = z.enum(['iam', 'api-key']);
export type BedrockAuth = z.infer<typeof BedrockAuthSchema>;

/**
 * The lane's provider. `kind` picks the adapter; the other fields are kind-specific and checked for
 * coherence:
 * - `dialect` (openai-compatible only; default `openai`, or `azure-openai` when `azure` is set);
 * - `azure` (openai-compatible with dialect `azure-openai`; exclusive with `baseUrl`);
 * - `vertex` (gemini only);
 * - `auth` (bedrock only; default `iam`: the function's IAM role, no secret needed; `api-key`: a
 *   Bedrock API key per configured key, sent as a bearer token).
 */
export const ProviderConfigSchema = z
  .object({
    kind: z.enum(['openai-compatible', 'bedrock', 'anthropic', 'gemini']),
    model: z.string().min(1),
    /**
     * API base URL (OpenAI-compatible, Anthropic, Gemini); for Bedrock an endpoint override. Set by
     * the local stack to the fake provider, and by tests.
     */
    baseUrl: z.string().url().optional(),
    dialect: ProviderDialectSchema.optional(),
    azure: AzureOpenAiSettingsSchema.optional(),
    vertex: VertexSettingsSchema.optional(),
    auth: BedrockAuthSchema.optional(),
    keys: z.array(ProviderKeySchema).min(1),
    limits: ProviderLimitsSchema,
    /** Request timeout for one model call. */
    timeoutMs: z.number().int().positive(),
  })
  .strict()
  .superRefine((p, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (p.dialect !== undefined && p.kind !== 'openai-compatible') {
      issue('dialect', `dialect applies only to kind openai-compatible (kind is ${p.kind})`);
    }
    if (p.azure !== undefined) {
      if (p.kind !== 'openai-compatible') issue('azure', `azure applies only to kind openai-compatible (kind is ${p.kind})`);
      else if (p.dialect !== undefined && p.dialect !== 'azure-openai') issue('dialect', `azure settings need dialect azure-openai (dialect is ${p.dialect})`);
      if (p.baseUrl !== undefined) issue('baseUrl', 'baseUrl and azure.endpoint are mutually exclusive: set azure.endpoint');
    }
    if (p.vertex !== undefined && p.kind !== 'gemini') issue('vertex', `vertex applies only to kind gemini (kind is ${p.kind})`);
    if (p.auth !== undefined && p.kind !== 'bedrock') issue('auth', `auth applies only to kind bedrock (kind is ${p.kind})`);
    const ids = p.keys.map((k) => k.id);
    const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
    if (duplicate !== undefined) issue('keys', `duplicate key id ${duplicate}`);
  });

export type ProviderConfig = z.infer<typeof ProviderConfigSchema>;

/** The classifier dialect a lane's provider speaks (`dialect`, else implied by kind and settings). */
export function providerDialect(provider: ProviderConfig): ProviderDialect {
  switch (provider.kind) {
    case 'openai-compatible':
      return provider.dialect ?? (provider.azure ? 'azure-openai' : 'openai');
    case 'gemini':
      return provider.vertex ? 'vertex' : 'gemini';
    case 'bedrock':
      return 'bedrock';
    case 'anthropic':
      return 'anthropic';
  }
}

/**
 * Whether the lane's keys need secrets: not for Bedrock with IAM auth (the function's role signs)
 * nor for Vertex (Google credentials); there the keys only name quota owners.
 */
export function providerNeedsKeySecrets(provider: ProviderConfig): boolean {
  if (provider.kind === 'bedrock') return (provider.auth ?? 'iam') === 'api-key';
  if (provider.kind === 'gemini' && provider.vertex) return false;
  return true;
}

/** Provider fields that only make sense for one kind: dropped from a base when an override changes the kind. */
const KIND_SPECIFIC_PROVIDER_FIELDS = ['dialect', 'azure', 'vertex', 'auth'] as const;

export const QueueSettingsSchema = z
  .object({
    batchSize: z.number().int().min(1).max(AWS_LIMITS.maxBatchEntries),
    maxBatchingWindowSeconds: z.number().int().min(0).max(300),
    visibilityTimeoutSeconds: z.number().int().min(0).max(AWS_LIMITS.maxVisibilityTimeoutSeconds),
    maxReceiveCount: z.number().int().min(1).max(1000),
    receiveWaitTimeSeconds: z.number().int().min(0).max(20),
    retentionSeconds: z
      .number()
      .int()
      .min(60)
      .max(14 * 24 * 3600),
  })
  .strict();

export const ConsumerSettingsSchema = z
  .object({
    /** The mapping's MaximumConcurrency (2..1000 in AWS). */
    maximumConcurrency: z.number().int().min(AWS_LIMITS.minMaximumConcurrency).max(AWS_LIMITS.maxMaximumConcurrency),
    timeoutSeconds: z.number().int().min(1).max(900),
    memoryMb: z.number().int().min(128).max(10240),
    /**
     * Optional reserved concurrency of the consumer function. Off by default: reserving leaves less
     * for the account (AWS keeps 10 unreserved), and `maximumConcurrency` already caps the mapping.
     * When set, it must be at least `maximumConcurrency`, or the mapping's invocations get throttled
     * (and a throttled batch counts as a receive towards the DLQ).
     */
    reservedConcurrency: z.number().int().min(1).optional(),
  })
  .strict()
  .refine((c) => c.reservedConcurrency === undefined || c.reservedConcurrency >= c.maximumConcurrency, {
    message: 'reservedConcurrency must be at least maximumConcurrency',
    path: ['reservedConcurrency'],
  });

export const BackoffSettingsSchema = z
  .object({
    /** Base of the capped full-jitter backoff for throttles without a provider hint. */
    throttleBaseSeconds: z.number().positive(),
    throttleCapSeconds: z.number().positive(),
    /** Visibility backoff for real failures (5xx, timeouts). */
    failureBaseSeconds: z.number().positive(),
    failureCapSeconds: z.number().positive(),
    /**
     * The longest wait a provider's rate limit may state and be believed (a stated wait of 15 minutes
     * or more already counts as a quota); beyond it the wait is treated as unknown: the normal backoff.
     */
    maxRateLimitHintSeconds: z.number().positive().max(86_400),
    /**
     * The longest wait an exhausted quota may state and be believed: the longest reset a provider
     * documents (a month, for monthly spend limits). Beyond it the wait is treated as unknown.
     */
    maxQuotaHintSeconds: z
      .number()
      .positive()
      .max(366 * 86_400),
  })
  .strict();

/** What the lane believes of a job's own scheduling fields (a message is input from outside). */
export const JobBoundsSchema = z
  .object({
    /** How far ahead a job's `eligibleAt` or `deadline` may lie (from its receipt). */
    horizonSeconds: z.number().int().positive(),
    /** The most throttle deferrals a job may carry (a counter beyond it is not believed). */
    maxDeferrals: z.number().int().positive().max(1_000_000_000),
  })
  .strict();

export const LaneConfigSchema = z
  .object({
    /** Lane name: `us`, `eu`, ... */
    name: z.string().regex(/^[a-z][a-z0-9]{1,9}$/),
    region: z.string().regex(/^[a-z]{2}(-gov)?-[a-z]+-\d$/),
    resources: z
      .object({
        bucketName: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/),
        queueName: z.string().regex(/^[A-Za-z0-9_-]{1,80}$/),
        dlqName: z.string().regex(/^[A-Za-z0-9_-]{1,80}$/),
        resultsTable: z.string().min(3).max(255),
        ledgerTable: z.string().min(3).max(255),
        rateStateTable: z.string().min(3).max(255),
        providerSecretName: z.string().min(1),
      })
      .strict(),
    queue: QueueSettingsSchema,
    consumer: ConsumerSettingsSchema,
    backoff: BackoffSettingsSchema,
    bounds: JobBoundsSchema,
    provider: ProviderConfigSchema,
    live: LiveSettingsSchema,
    alarms: z
      .object({
        /** The SQS age of the lane's oldest message (restarts with every re-send). */
        oldestMessageAgeSeconds: z.number().int().positive(),
        /**
         * The age of the oldest job a consumer saw, from the job's `createdAt` across every re-send
         * (the consumer's `OldestJobAgeMs`): what the message age cannot show for a job deferred again and again.
         */
        oldestJobAgeSeconds: z.number().int().positive(),
        throttleSharePercent: z.number().positive().max(100),
      })
      .strict(),
  })
  .strict()
  .superRefine((lane, ctx) => {
    if (lane.alarms.oldestJobAgeSeconds < lane.alarms.oldestMessageAgeSeconds) {
      ctx.addIssue({
        code: 'custom',
        path: ['alarms', 'oldestJobAgeSeconds'],
        message: `must be at least alarms.oldestMessageAgeSeconds (${lane.alarms.oldestMessageAgeSeconds}): a job is never younger than its message`,
      });
    }
    if (lane.queue.visibilityTimeoutSeconds < 6 * lane.consumer.timeoutSeconds) {
      ctx.addIssue({
        code: 'custom',
        path: ['queue', 'visibilityTimeoutSeconds'],
        message: `must be at least 6x the consumer timeout (${6 * lane.consumer.timeoutSeconds}s), as AWS recommends for SQS event sources`,
      });
    }
  });

export type LaneConfig = z.infer<typeof LaneConfigSchema>;
export type ProviderLimits = z.infer<typeof ProviderLimitsSchema>;

/** All lanes, keyed by name. */
export type LaneSet = Readonly<Record<string, LaneConfig>>;

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
      keys: [{ id: 'key-1', quotaOwner: `${name}-org` }],
      limits: { requestsPerMinute: 500, tokensPerMinute: 200_000, requestsPerDay: 10_000 },
      // 2 x 25 s (the call and one repair) + 5 s margin fits the 60 s function timeout: see checkFunctionTimeout.
      timeoutMs: 25_000,
    },
    live: defaultLiveSettings(),
    // A job older than an hour has been deferred (or failed) many times over, or waits for a long
    // quota reset: either way a person should know. Four times the message-age threshold.
    alarms: { oldestMessageAgeSeconds: 900, oldestJobAgeSeconds: 3600, throttleSharePercent: 20 },
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
   * auth) unless it sets them itself.
   */
  provider?: Partial<Omit<LaneConfig['provider'], 'limits'>> & { limits?: Partial<ProviderLimits> };
  alarms?: Partial<LaneConfig['alarms']>;
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
  return { ...(kept as ProviderConfig), ...override, limits: { ...base.limits, ...override.limits } };
}

/** Raised when a lane config or override does not validate. */
export class LaneConfigError extends RatelaneError {
  override name = 'LaneConfigError';
  readonly kind = 'config' as const;
  readonly retryable = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
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
  for (const [name, lane] of Object.entries(base)) {
    const o = overrides[name] ?? {};
    const region = o.region ?? lane.region;
    const merged = {
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
      provider: mergeProvider(lane.provider, o.provider),
      alarms: { ...lane.alarms, ...o.alarms },
      live: { ...lane.live, ...o.live, throttle: { ...lane.live.throttle, ...o.live?.throttle }, alarms: { ...lane.live.alarms, ...o.live?.alarms } },
    };
    const parsed = LaneConfigSchema.safeParse(merged);
    if (!parsed.success) {
      throw new LaneConfigError(`lane "${name}": ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
    }
    lanes[name] = parsed.data;
  }
  const regions = Object.values(lanes).map((l) => l.region);
  if (new Set(regions).size !== regions.length) {
    throw new LaneConfigError(`two lanes share a region (${regions.join(', ')}): each lane must be its own region`);
  }
  return Object.freeze(lanes);
}

/** Looks a lane up by name; throws {@link LaneConfigError} naming the known lanes. */
export function laneByName(lanes: LaneSet, name: string): LaneConfig {
  const lane = lanes[name];
  if (!lane) throw new LaneConfigError(`unknown region lane "${name}"; known lanes: ${Object.keys(lanes).join(', ')}`);
  return lane;
}

// ---------------------------------------------------------------------------------------------
// Names in an AWS account
// ---------------------------------------------------------------------------------------------

/** The bucket name a lane gets by default (and keeps locally): lane and region, no account. */
export function defaultBucketName(name: string, region: string): string {
  return `ratelane-${name}-source-${region}`;
}

/**
 * The bucket name of a lane deployed in `account`: bucket names are global across every AWS
 * account, so the deployed name carries the account id too (a staging and a production account can
 * both deploy the same lane, and nobody else's bucket can hold the name). At most 54 characters.
 */
export function accountBucketName(name: string, region: string, account: string): string {
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

// ---------------------------------------------------------------------------------------------
// What a deployed lane must satisfy beyond the schema (checked by the stack at synth)
// ---------------------------------------------------------------------------------------------

/**
 * Repair calls the consumer allows after a model call whose output failed validation (the default of
 * `lib/extraction/extract.ts`): one record may make 1 + this many model calls in one invocation.
 */
export const CONSUMER_REPAIR_ATTEMPTS = 1;

/**
 * Seconds one record needs in an invocation besides its model calls: reading the document and taking
 * an admission slot before the first call, and after the last one the conditional commit, the ledger
 * entry and the token settlement, or the re-send of a deferral. Each is one AWS call with SDK retries
 * off, normally tens of milliseconds; 5 s leaves room for a slow answer of each without inflating the
 * function timeout (the consumer also defers a record it has no time left for).
 */
export const INVOCATION_MARGIN_SECONDS = 5;

/** The shortest function timeout that fits one record: provider timeout x (1 + repairs) + margin, in whole seconds. */
export function requiredFunctionTimeoutSeconds(lane: Pick<LaneConfig, 'provider'>): number {
  return Math.ceil((lane.provider.timeoutMs * (1 + CONSUMER_REPAIR_ATTEMPTS)) / 1000) + INVOCATION_MARGIN_SECONDS;
}

/**
 * Checks that the consumer's function timeout fits one record's worst case (the call, its repairs and
 * the margin); returns the problem, or `undefined`. Not part of the schema: tests and local runs use
 * short function timeouts on purpose; the stack refuses at synth.
 */
export function checkFunctionTimeout(lane: Pick<LaneConfig, 'name' | 'consumer' | 'provider' | 'queue'>): string | undefined {
  const required = requiredFunctionTimeoutSeconds(lane);
  const timeout = lane.consumer.timeoutSeconds;
  if (timeout >= required) return undefined;
  const calls = 1 + CONSUMER_REPAIR_ATTEMPTS;
  const maxProviderTimeoutMs = Math.floor(((timeout - INVOCATION_MARGIN_SECONDS) * 1000) / calls);
  const raise =
    required <= 900
      ? `raise consumer.timeoutSeconds to at least ${required}${
          lane.queue.visibilityTimeoutSeconds < 6 * required ? ` (and queue.visibilityTimeoutSeconds to at least ${6 * required})` : ''
        }`
      : 'the Lambda maximum of 900 s cannot hold it';
  const lower = maxProviderTimeoutMs > 0 ? `, or lower provider.timeoutMs to at most ${maxProviderTimeoutMs}` : '';
  return (
    `lane ${lane.name}: consumer.timeoutSeconds ${timeout} s cannot hold one record: provider.timeoutMs ${lane.provider.timeoutMs} ms x ` +
    `${calls} calls (1 + ${CONSUMER_REPAIR_ATTEMPTS} repair) + ${INVOCATION_MARGIN_SECONDS} s margin = ${required} s; ${raise}${lower}`
  );
}

/**
 * Geographies of Bedrock's system-defined cross-region inference profiles (`<geography>.<model id>`)
 * and the lane regions that belong to each. A profile routes a request to another region of its
 * geography (AWS's list of destination regions, per model); a lane only uses a profile of its own
 * region's geography. `global.` profiles route to any commercial region and are refused.
 */
export const BEDROCK_PROFILE_GEOGRAPHIES: Readonly<Record<string, (region: string) => boolean>> = Object.freeze({
  us: (region: string) => /^us-(?:east|west)-\d$/.test(region),
  'us-gov': (region: string) => region.startsWith('us-gov-'),
  eu: (region: string) => region.startsWith('eu-'),
  apac: (region: string) => region.startsWith('ap-'),
  jp: (region: string) => region === 'ap-northeast-1' || region === 'ap-northeast-3',
  au: (region: string) => region === 'ap-southeast-2' || region === 'ap-southeast-4',
});

/** What a Bedrock lane's model id names: a foundation model in the lane's region, or a cross-region inference profile. */
export type BedrockModelTarget =
  | { readonly kind: 'foundation-model'; readonly modelId: string }
  | { readonly kind: 'inference-profile'; readonly profileId: string; readonly geography: string; readonly modelId: string };

/**
 * Reads a Bedrock model id as the stack grants it. Throws {@link LaneConfigError} for what the stack
 * cannot grant without leaving the lane's geography: an ARN (application inference profiles,
 * provisioned throughput), a `global.` profile, or a profile of another geography than the lane's region.
 */
export function bedrockModelTarget(lane: Pick<LaneConfig, 'name' | 'region'>, model: string): BedrockModelTarget {
  if (model.startsWith('arn:')) {
    throw new LaneConfigError(
      `lane ${lane.name}: Bedrock model "${model}" is an ARN; give a foundation model id (anthropic.claude-...) or a cross-region inference profile id of the lane's geography (us.anthropic.claude-...)`,
    );
  }
  const dot = model.indexOf('.');
  const prefix = dot > 0 ? model.slice(0, dot) : '';
  if (prefix === 'global') {
    throw new LaneConfigError(
      `lane ${lane.name}: Bedrock model "${model}" is a global inference profile, which may run the model in any commercial region of the world; the ${lane.name} lane (${lane.region}) must stay in its geography: use the foundation model id or a profile of the lane's geography`,
    );
  }
  const inGeography = BEDROCK_PROFILE_GEOGRAPHIES[prefix];
  if (!inGeography) return { kind: 'foundation-model', modelId: model };
  if (!inGeography(lane.region)) {
    const own = Object.keys(BEDROCK_PROFILE_GEOGRAPHIES).filter((g) => BEDROCK_PROFILE_GEOGRAPHIES[g]?.(lane.region));
    throw new LaneConfigError(
      `lane ${lane.name}: Bedrock model "${model}" is a cross-region inference profile of geography "${prefix}", but the lane's region ${lane.region} is ${
        own.length > 0 ? `in ${own.map((g) => `"${g}"`).join(' / ')}` : 'in none of the profile geographies'
      }: a job must not be processed outside its lane's geography; use ${own.length > 0 ? `"${own[0]}.${model.slice(dot + 1)}" or ` : ''}the foundation model id "${model.slice(dot + 1)}"`,
    );
  }
  return { kind: 'inference-profile', profileId: model, geography: prefix, modelId: model.slice(dot + 1) };
}

/**
 * Everything that keeps a valid lane config from running in AWS, as messages naming the lane, the
 * numbers and what to change: the function timeout (see {@link checkFunctionTimeout}), a Vertex AI
 * provider (the stack gives the function no Google credentials), a Bedrock model it cannot grant
 * (see {@link bedrockModelTarget}).
 */
export function deploymentProblems(lane: LaneConfig): string[] {
  const problems: string[] = [];
  const timeout = checkFunctionTimeout(lane);
  if (timeout) problems.push(timeout);
  const provider = lane.provider;
  if (provider.kind === 'gemini' && provider.vertex) {
    problems.push(
      `lane ${lane.name}: provider kind gemini with vertex cannot be deployed: Vertex AI authenticates with Google credentials, and the stack gives the function none (no service-account key in the lane's secret, no workload identity federation); use the Gemini API with API keys (drop provider.vertex) or another provider kind`,
    );
  }
  if (provider.kind === 'bedrock') {
    try {
      bedrockModelTarget(lane, provider.model);
    } catch (error) {
      if (!(error instanceof LaneConfigError)) throw error;
      problems.push(error.message);
    }
  }
  return problems;
}

/** Throws {@link LaneConfigError} listing every {@link deploymentProblems} of the lane. */
export function assertDeployable(lane: LaneConfig): void {
  const problems = deploymentProblems(lane);
  if (problems.length > 0) throw new LaneConfigError(`lane ${lane.name} cannot be deployed:\n- ${problems.join('\n- ')}`);
}
