/**
 * The lane config's schema: every setting of a region lane (resources, queue, consumer, backoff, job
 * bounds, provider, live and batch lanes, alarms) as one zod schema, its type, and the AWS limits it
 * holds every lane to. The bottom of lib/config: the defaults and overrides (`lanes.ts`), names in an
 * account (`names.ts`) and the deployment checks (`deploy-checks.ts`) build on it.
 */
import { z } from 'zod';
import { BatchSettingsSchema } from './batch.js';
import { LiveSettingsSchema } from './live.js';
import { ProviderConfigSchema } from './provider.js';
import { PRIORITIES, TENANT_PATTERN } from '../contract/job.js';
import { ANY_TENANT, SENDER_PRINCIPAL_PATTERN } from '../policy/index.js';

/** SQS and Lambda hard limits that every lane must respect (AWS's rules, not the emulator's). */
export const AWS_LIMITS = {
  maxDelaySeconds: 900,
  maxMessageBytes: 256 * 1024,
  maxBatchEntries: 10,
  maxVisibilityTimeoutSeconds: 12 * 60 * 60,
  minMaximumConcurrency: 2,
  maxMaximumConcurrency: 1000,
} as const;

const QueueSettingsSchema = z
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

const ConsumerSettingsSchema = z
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

const BackoffSettingsSchema = z
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
const JobBoundsSchema = z
  .object({
    /** How far ahead a job's `eligibleAt` or `deadline` may lie (from its receipt). */
    horizonSeconds: z.number().int().positive(),
    /** The most throttle deferrals a job may carry (a counter beyond it is not believed). */
    maxDeferrals: z.number().int().positive().max(1_000_000_000),
  })
  .strict();

/**
 * A producer allowed to state tenants for its queue jobs (`policy/tenancy.ts`): SQS names every sender
 * by its IAM unique id, so that is what a grant names (`aws iam get-role --role-name <role> --query
 * Role.RoleId`; a role deleted and made again has a new id and needs a new grant).
 */
const TenantGrantSchema = z
  .object({
    /** The producer's IAM unique id: `AROA…` (a role: every session of it), `AIDA…` (a user), or a 12-digit account id. */
    senderId: z.string().regex(SENDER_PRINCIPAL_PATTERN, {
      error: 'a senderId is an IAM role or user unique id (AROA… / AIDA…, from `aws iam get-role … --query Role.RoleId`) or a 12-digit account id',
    }),
    /** What it may name: this list of tenants, or `["*"]` for any (a platform that submits for many tenants). */
    tenants: z
      .array(z.string().regex(TENANT_PATTERN, { error: 'a tenant is 1-256 characters of an ARN (letters, digits, +=,.@_:/-)' }).or(z.literal(ANY_TENANT)))
      .min(1)
      .max(1000)
      .optional(),
    /** The priority classes beyond `bulk` it may state (`["urgent"]`). Absent: bulk only. */
    priorities: z.array(z.enum(PRIORITIES)).min(1).max(PRIORITIES.length).optional(),
    /** Who it is, for people reading the config (e.g. the role's name). */
    note: z.string().max(200).optional(),
  })
  .strict()
  .refine((grant) => grant.tenants !== undefined || grant.priorities !== undefined, { error: 'a producer grant names tenants, priorities or both' });

const weight = z.number().positive().max(1_000_000);

/**
 * How a binding quota is shared (`admission/bucket/flows.ts`): between flows — one tenant's jobs of one
 * priority class — by weight, a flow's weight being its class's times its tenant's.
 */
const FairnessSchema = z
  .object({
    /** Weight of each priority class: urgent 9 and bulk 1 give urgent jobs 90 % of a binding quota while both wait, bulk never less than 10 %. */
    classWeights: z.object({ urgent: weight, bulk: weight }).strict(),
    /** Weight of a tenant not named in `tenantWeights`, and of jobs with no tenant. */
    defaultTenantWeight: weight,
    /** Weights of named tenants (as jobs state them: a principal's ARN, or a name). */
    tenantWeights: z.record(z.string().regex(TENANT_PATTERN), weight).refine((w) => Object.keys(w).length <= 1000, { error: 'at most 1000 tenant weights' }),
  })
  .strict();

/** The retentions CloudWatch Logs accepts (days). */
const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const;

const days = (max: number) => z.number().int().min(1).max(max);

/**
 * How long the lane keeps what it holds of a job, as one policy: applied by the stack as S3 lifecycle
 * rules, DynamoDB TTL and log group retention, and shown by `ratelane residency`.
 */
const RetentionSchema = z
  .object({
    /** The documents' text in the lane's bucket (`documents/`): S3 lifecycle expiry. */
    documentsDays: days(3650),
    /** Committed results (results table TTL `expiresAt`, from the commit). */
    resultsDays: days(3650),
    /** Ledger entries and job statuses (ledger table TTL `expiresAt`, from each entry). */
    ledgerDays: days(3650),
    /** A batch's manifest (TTL from its creation) and its provider files in the bucket (`batch/`, S3 lifecycle). */
    batchArtifactsDays: days(400),
    /** The lane functions' log groups (they hold no document text). */
    logsDays: z.union(LOG_RETENTION_DAYS.map((d) => z.literal(d)) as unknown as [z.ZodLiteral<number>, z.ZodLiteral<number>]),
    /** The source bucket's server access logs (object keys and requesters, no text). */
    accessLogsDays: days(3650),
  })
  .strict();

/** A model endpoint approved for a lane, and where it processes (as the operator attests it): `config/endpoints.ts`. */
const ModelEndpointSchema = z
  .object({
    /** The host the lane's model calls go to (`eu.api.openai.com`, `my-resource.openai.azure.com`, …). */
    host: z.string().regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, { error: 'a host name, lowercase, no scheme or path' }),
    /** The geography it processes in, as a region's prefix: `us`, `eu`, `ap`, … */
    geography: z.string().regex(/^[a-z]{2,4}$/),
    /** Why it is approved (the provider's residency commitment, a contract), for people reading the config. */
    note: z.string().max(300).optional(),
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
    batch: BatchSettingsSchema,
    /**
     * Producers allowed to state a job's tenant on the queue (`Job.tenant`): a queue job that states one
     * from any other sender is rejected (`tenant_not_allowed`); the lane's own functions may always
     * (their re-sends carry the tenant the first sender stated). Absent: no producer may state one.
     */
    producers: z.array(TenantGrantSchema).max(100).optional(),
    /** Shares of a binding quota between tenants and priority classes (see `FairnessSchema`). */
    fairness: FairnessSchema,
    /**
     * The model endpoints approved for the lane and the geography each processes in. `cdk synth` refuses a
     * lane whose model endpoint is not approved for its region's geography. Absent: the hosts whose place
     * of processing ratelane knows (Bedrock in the lane's region, Vertex AI locations, OpenAI's `api` and `eu.api`).
     */
    modelEndpoints: z.array(ModelEndpointSchema).min(1).max(20).optional(),
    retention: RetentionSchema,
    /**
     * What the lane does with a job of an erased source (`ratelane erase`) created after the erasure:
     * `refuse` (the default: the source stays erased) or `accept` (a new submission of it runs again).
     * Jobs created before the erasure are never committed either way.
     */
    erasure: z.object({ afterErasure: z.enum(['refuse', 'accept']) }).strict(),
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
        /**
         * The share of admission decisions (calls started and jobs deferred by admission) that deferred
         * the job, sustained for 30 minutes: the mapping pulls more records than the lane's keys can start.
         */
        admissionDenialSharePercent: z.number().positive().max(100),
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
    // A job may wait up to its horizon: its document and its ledger must outlive that wait.
    const horizonDays = Math.ceil(lane.bounds.horizonSeconds / 86_400);
    for (const field of ['documentsDays', 'ledgerDays'] as const) {
      if (lane.retention[field] < horizonDays) {
        ctx.addIssue({
          code: 'custom',
          path: ['retention', field],
          message: `must be at least the job horizon (bounds.horizonSeconds: ${horizonDays} days): a job may wait that long`,
        });
      }
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

/** All lanes, keyed by name. */
export type LaneSet = Readonly<Record<string, LaneConfig>>;
