/**
 * The job contract: what a producer puts on a lane's queue and what every consumer reads. It never
 * carries the document text, only a reference into the lane's bucket with hash and size estimates.
 * The contract survives a model swap: adapters and prompts change, the contract does not.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { RatelaneError } from '../platform/errors.js';

/** Version of this contract; bumped only with a migration path for queued messages. */
export const JOB_CONTRACT_VERSION = 1 as const;

const isoDate = z.iso.datetime({ offset: true });

/** Where the document text lives: an object in the lane's own bucket. */
const JobInputSchema = z
  .object({
    bucket: z.string().min(3),
    key: z.string().min(1).max(1024),
    /** The caller's stable identity for the source document (a file path, a URI, a record id). */
    sourceId: z.string().min(1).max(512),
    contentSha256: z.string().regex(/^[a-f0-9]{64}$/),
    bytes: z.number().int().positive(),
    estimatedTokens: z.number().int().positive(),
  })
  .strict();

/** The most real failures any job can carry: SQS's largest `maxReceiveCount`. */
export const MAX_ATTEMPT = 1000;

/** The most throttle deferrals any job can carry (a lane's own limit is usually far lower). */
const MAX_DEFERRALS = 1_000_000_000;

/**
 * A tenant: who a job belongs to. The live lane's is the caller's IAM principal (`live/caller.ts`: an
 * ARN); a queue or batch producer may state one. ARN characters only, at most 256.
 */
export const TENANT_PATTERN = /^[A-Za-z0-9+=,.@_:/-]{1,256}$/;

/** An IAM or STS principal's ARN (a user, a role, an assumed-role session, the root, a federated user). */
export const PRINCIPAL_ARN_PATTERN = /^arn:aws[a-z-]*:(iam|sts)::\d{12}:[A-Za-z0-9+=,.@_/-]+$/;

const ASSUMED_ROLE = /^arn:(aws[a-z-]*):sts::(\d{12}):assumed-role\/([^/]+)\/[^/]+$/;
const ROLE = /^arn:(aws[a-z-]*):iam::(\d{12}):role\/(?:[^/]*\/)*([^/]+)$/;

/**
 * The tenant of an IAM principal's ARN, so that every way of naming one principal is one tenant:
 * - `arn:<p>:sts::<account>:assumed-role/<role>/<session>` → `arn:<p>:iam::<account>:role/<role>`;
 * - `arn:<p>:iam::<account>:role/<path>/<role>` → `arn:<p>:iam::<account>:role/<role>` (a role's name is
 *   unique in its account, whatever its path; the assumed-role ARN has no path);
 * - anything else (a user, the account root, a federated user, a name that is no ARN) as it is.
 */
export function tenantOfPrincipal(arn: string): string {
  const role = ASSUMED_ROLE.exec(arn) ?? ROLE.exec(arn);
  return role ? `arn:${role[1]}:iam::${role[2]}:role/${role[3]}` : arn;
}

/** The priority classes of a lane's jobs, first the one admission starts first when the quota binds. */
export const PRIORITIES = ['urgent', 'bulk'] as const;
/** A job's priority class. */
export type Priority = (typeof PRIORITIES)[number];

export const JobSchema = z
  .object({
    contractVersion: z.literal(JOB_CONTRACT_VERSION),
    jobId: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/),
    /**
     * Who the job belongs to (see {@link TENANT_PATTERN}): only its tenant, or a principal granted a
     * lane-wide read, reads it; part of its idempotency key, so tenants never share a result. Absent:
     * no tenant's (only lane-wide readers read it).
     */
    tenant: z.string().regex(TENANT_PATTERN).optional(),
    /**
     * Its priority class within the lane (see {@link PRIORITIES}): when the quota binds, admission shares
     * it between flows (a tenant's jobs of one class) by weight, the class's weight from the lane config
     * (`fairness`). A producer states `urgent` only where the lane grants it (`producers`). Absent: `bulk`.
     */
    priority: z.enum(PRIORITIES).optional(),
    idempotencyKey: z.string().regex(/^[a-f0-9]{64}$/),
    /** The region lane, fixed at intake. */
    region: z.string().regex(/^[a-z][a-z0-9]{1,9}$/),
    input: JobInputSchema,
    schemaVersion: z.string().regex(/^[a-z][a-z0-9-]*@\d+$/),
    promptVersion: z.string().regex(/^[a-z][a-z0-9-]*@\d+$/),
    /** Real failures so far (5xx, timeouts, unknown). Throttles never increase it. At most SQS's largest `maxReceiveCount`. */
    attempt: z.number().int().min(0).max(MAX_ATTEMPT),
    /** Throttle reschedules so far (bounded: a counter is input from outside). */
    deferrals: z.number().int().min(0).max(MAX_DEFERRALS),
    /** Not to be processed before this instant. */
    eligibleAt: isoDate,
    deadline: isoDate.optional(),
    createdAt: isoDate,
  })
  .strict();

/** One extraction job, as carried in an SQS message body. */
export type Job = z.infer<typeof JobSchema>;

/** Raised when a body is not a valid job; `issues` says which fields and why. */
export class InvalidJobError extends RatelaneError {
  override name = 'InvalidJobError';
  readonly kind = 'input' as const;
  readonly retryable = false;
  constructor(
    message: string,
    readonly issues: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A lane's limits on a job's counters (its `maxReceiveCount` and its most deferrals). */
export interface JobCounterLimits {
  maxAttempt: number;
  maxDeferrals: number;
}

/**
 * Parses an SQS body into a {@link Job}; throws {@link InvalidJobError} with a reason. With `limits`,
 * `attempt` and `deferrals` above the lane's are refused too (they would poison metrics and budgets).
 */
export function parseJob(body: string, limits?: JobCounterLimits): Job {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (error) {
    throw new InvalidJobError('body is not JSON', ['body: not JSON'], { cause: error });
  }
  const parsed = JobSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new InvalidJobError(`body is not a valid job: ${issues.slice(0, 5).join('; ')}`, issues, { cause: parsed.error });
  }
  const job = parsed.data;
  if (limits && (job.attempt > limits.maxAttempt || job.deferrals > limits.maxDeferrals)) {
    const issues = [
      ...(job.attempt > limits.maxAttempt ? [`attempt: ${job.attempt} is over the lane's ${limits.maxAttempt}`] : []),
      ...(job.deferrals > limits.maxDeferrals ? [`deferrals: ${job.deferrals} is over the lane's ${limits.maxDeferrals}`] : []),
    ];
    throw new InvalidJobError(`body is not a valid job: ${issues.join('; ')}`, issues);
  }
  return job;
}

/** SHA-256 hex of a string or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * The idempotency key: one result per (tenant, source identity, content, prompt version, schema
 * version). Re-submitting the same document with the same versions maps to the same committed result;
 * another tenant's same document has its own key (a job without a tenant keeps the key it always had).
 */
export function idempotencyKeyFor(parts: {
  sourceId: string;
  contentSha256: string;
  promptVersion: string;
  schemaVersion: string;
  tenant?: string | undefined;
}): string {
  const tenant = parts.tenant === undefined ? [] : [`tenant:${parts.tenant}`];
  return sha256Hex(['ratelane/v1', parts.sourceId, parts.contentSha256, parts.promptVersion, parts.schemaVersion, ...tenant].join('\n'));
}

/** Whether the job's idempotency key is the one its tenant, source id, content hash and versions give. */
export function hasOwnIdempotencyKey(job: Pick<Job, 'idempotencyKey' | 'input' | 'promptVersion' | 'schemaVersion' | 'tenant'>): boolean {
  return (
    idempotencyKeyFor({
      sourceId: job.input.sourceId,
      contentSha256: job.input.contentSha256,
      promptVersion: job.promptVersion,
      schemaVersion: job.schemaVersion,
      tenant: job.tenant,
    }) === job.idempotencyKey
  );
}

/** Rough token estimate for admission and budgeting (about 4 bytes a token for Latin text). */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(Buffer.byteLength(text, 'utf8') / 4));
}

/**
 * The job's flow: its priority class, and a hash of its tenant (`<class>` for a job with no tenant, else
 * `<class>:<12 hex of the tenant's SHA-256>`: short, and no tenant name where it is stored). It is the
 * `MessageGroupId` of every message of the job on the lane's standard queue, so SQS fair queues deliver a
 * quiet flow's messages before a backlogged one's, and the flow admission shares a binding quota by
 * (`admission/bucket/flows.ts`).
 */
export function jobFlowId(job: Pick<Job, 'tenant' | 'priority'>): string {
  const priority = job.priority ?? 'bulk';
  return job.tenant === undefined ? priority : `${priority}:${sha256Hex(job.tenant).slice(0, 12)}`;
}

/** SQS message attributes mirroring the job's scheduling fields (for filtering and inspection). */
export function jobMessageAttributes(job: Job): Record<string, { DataType: 'String' | 'Number'; StringValue: string }> {
  return {
    jobId: { DataType: 'String', StringValue: job.jobId },
    region: { DataType: 'String', StringValue: job.region },
    schemaVersion: { DataType: 'String', StringValue: job.schemaVersion },
    promptVersion: { DataType: 'String', StringValue: job.promptVersion },
    attempt: { DataType: 'Number', StringValue: String(job.attempt) },
    deferrals: { DataType: 'Number', StringValue: String(job.deferrals) },
    eligibleAt: { DataType: 'String', StringValue: job.eligibleAt },
  };
}
