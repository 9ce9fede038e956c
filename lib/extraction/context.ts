/**
 * What the extraction core works with: its dependencies (lane-neutral: no queue, no HTTP), the
 * delivery a job arrived in, and the per-record state every step reads and updates. One object per
 * record instead of positional `(job, facts, deps, …)` parameters.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { S3Client } from '@aws-sdk/client-s3';
import type { KeyAdmission, KeyPool } from '../admission/keys/key-pool.js';
import type { LanePauseRequester } from '../admission/pause/lane-pause.js';
import type { Flow } from '../admission/model/bucket.js';
import type { LaneConfig } from '../config/lanes.js';
import type { Job } from '../contract/job.js';
import type { ModelAdapter, TokenUsage } from '../providers/model.js';
import type { Sleep } from '../platform/sleep.js';
import type { ConsumerMetricName, RecordLogFields } from '../platform/telemetry.js';
import { traceIdOf } from '../platform/tracing.js';
import type { CancelMarker, Cancellations } from '../store/cancellation.js';
import type { ErasureLedger, Tombstone } from '../store/erasure.js';
import type { Ledger, LedgerEntryInput } from '../store/ledger.js';
import type { ClaimResult, HeldClaim, KeyClaims } from '../store/claims.js';
import type { ResultStore } from '../store/results.js';
import type { ExtractionOutcome, RejectedOutcome } from './outcome.js';

/** What stops a job at its receive, read beside its document (`Cancellations.atReceive`): its source's tombstone, its cancel marker. */
export type ReceiveGuards = Promise<{ tombstone: Tombstone | undefined; marker: CancelMarker | undefined }>;

/** What a step of the pipeline (`pipeline.ts`) says happens next: go on with `go`, or end the record with the outcome `end`. */
export type Next<T> = { go: T } | { end: ExtractionOutcome };

/** Everything the extraction core needs, whatever lane drives it. */
export interface ExtractionDeps {
  lane: LaneConfig;
  s3: S3Client;
  results: ResultStore;
  ledger: Ledger;
  /** The in-progress claims of idempotency keys: one model call per key at a time (see `claim.ts`). */
  claims: KeyClaims;
  /** The lane's erasure records: a job of an erased source is never called for nor committed (`erased.ts`). */
  erasure: ErasureLedger;
  /** The lane's cancel markers: a cancelled job makes no further call and is never committed (`cancelled.ts`). */
  cancellations: Cancellations;
  model: ModelAdapter;
  /** Admission: a key for each model call, or when to come back (see `lib/admission`). */
  keys: KeyPool;
  /**
   * Pauses the lane when every key is out until a long reset, and limits what it pulls while some
   * quota owners are (the queue lane's; absent: the lane never pauses, as live and batch).
   */
  lanePause?: LanePauseRequester | undefined;
  logger: Logger;
  metrics: Metrics;
  now: () => Date;
  /** Waits in-process on the clock of {@link now} (an admission slot, a live retry's wait). */
  sleep: Sleep;
  random: () => number;
  /** Repair calls allowed after a validation failure (default 1). */
  maxRepairAttempts?: number;
  /**
   * The lane's own senders' IAM unique ids (its functions' roles), where a job's sender is known but its
   * tenant is not the lane's to set (the queue lane): a job that states a tenant must come from one of
   * them or from a producer the lane's `producers` grant it (`policy/tenancy.ts`). Absent: not checked
   * (the live lane takes the tenant from the caller; the batch lane from its manifest).
   */
  laneSenders?: readonly string[];
}

/** How a job reached the core: one SQS receive (or, for a synchronous lane, one request). */
export interface Delivery {
  /** The SQS message id (or request id): on log lines, and the ledger id of a body that is no job. */
  messageId: string;
  /** SQS `ApproximateReceiveCount` (1 for a first delivery or a request). */
  receiveCount: number;
  /** How long the message waited in the queue before this receive (ms; 0 for a request). */
  queueAgeMs: number;
  /**
   * Who sent it: an SQS message's `SenderId` (the sender's IAM unique id, or its account), a live
   * request's caller (its tenant). Recorded on the job's claim as who submitted the job (its first sender).
   */
  senderId?: string | undefined;
  /** The job's X-Ray trace header as it arrived (`AWSTraceHeader`; a request's own invocation's): carried to every message sent on for it. */
  traceHeader?: string | undefined;
  /**
   * Epoch ms by which the record's work must end (the invocation's or the request's deadline less the
   * lane's settle margin): no model call starts that cannot end by then. Absent: no deadline.
   */
  deadlineAt?: number | undefined;
  /**
   * Fires when the record's work must stop, a settle margin before its deadline: a model call is
   * aborted, and whatever step was cut off ends the record as out of time (sent back), not as a failure.
   */
  stopWork?: AbortSignal | undefined;
  /**
   * How long a record whose step {@link stopWork} cut off in the middle stays away before it comes
   * back (ms). Absent: it comes back at once (a live request's deadline is the caller's, not slowness).
   */
  cutOffWaitMs?: number | undefined;
  /**
   * How long a model call is expected to take (ms), for deciding whether one more fits the record's
   * time. Absent: the provider's timeout (a call may take that long). The live lane gives its measured
   * recent p95 and cuts a slower call with {@link stopWork}.
   */
  expectedCallMs?: number | undefined;
  /**
   * The longest the record may wait in-process for an admission slot (ms; absent or 0: never): a key
   * pool may then book a call on a slot that near instead of denying it, and the record waits for it
   * rather than being sent back. The wait is also bounded by the record's time: the call that follows
   * must still fit before {@link deadlineAt}.
   */
  admissionWaitMs?: number | undefined;
  /**
   * How long a job deferred for admission may wait in-process for its slot when the lane brings it
   * back (ms; absent or 0: not at all): its delay may then be rounded down to whole seconds instead
   * of up (`AdmissionDeniedOutcome.mayWaitMs`).
   */
  returnWaitMs?: number | undefined;
  /** Told of every model call's duration, with the key's quota owner, whether or not it answered. */
  onModelCall?: ((call: ModelCallTiming) => void) | undefined;
  /** Told how long the commit took (ms), so the lane can learn how long settling takes. */
  onCommitted?: ((ms: number) => void) | undefined;
  /** Told the job once its body is parsed (the lane's own metrics, e.g. job age). */
  onJob?: ((job: Job) => void) | undefined;
}

/** One model call's duration (ms), the key that made it, and whether it returned an answer (false: it threw — a throttle, an error, a cut). */
interface ModelCallTiming {
  keyId: string;
  quotaOwner: string;
  ms: number;
  answered: boolean;
}

/** Time spent inside the model adapter for one record, and the calls made. */
export interface ModelTime {
  ms: number;
  calls: number;
  /** Time spent waiting in-process for booked admission slots and for a first call's answer (ms; see `Delivery.admissionWaitMs`). */
  waitMs?: number;
}

/** The per-record state of a parsed job: what every step after intake reads and updates. */
export interface JobRun {
  readonly deps: ExtractionDeps;
  readonly delivery: Delivery;
  readonly job: Job;
  /** Time inside the model adapter, accumulated over the record's calls. */
  readonly model: ModelTime;
  /** Tokens the record's model calls used so far. */
  readonly usage: TokenUsage;
  /** The claim of the job's id (`verify.ts`), shared by the runs of one job. */
  readonly claim: JobIdClaim;
  /** The claim of the job's idempotency key, from when it is asked (beside the document read) until it is given back (`claim.ts`). */
  keyClaim?: KeyClaimState | undefined;
  /** The job that held the key when this run found it held (`claim.ts`): the job a live request answers pending with. */
  keyHeldBy?: string | undefined;
  /** The take made beside the document read for the first model call, until that call uses it (`admit.ts`). */
  early?: EarlyAdmission | undefined;
  /** When the job's cancel marker was last read absent (epoch ms of `deps.now`; `cancelled.ts`). */
  cancelCheckedAt?: number | undefined;
  /** The job's flow for admission (`flow.ts`), worked out at its first take. */
  flow?: Flow | undefined;
}

/**
 * The claim of a job's id, once started: `undefined` when the id is the job's, else the rejection
 * (recorded under the message id). Started beside the first model call, or by the first step that
 * writes under the job id, whichever comes first (`claimed` in `verify.ts`).
 */
export interface JobIdClaim {
  pending?: Promise<RejectedOutcome | undefined>;
}

/** A run's claim of its job's idempotency key: the claim's answer, and the claim once the run holds the key. */
interface KeyClaimState {
  answer: Promise<ClaimResult>;
  held: HeldClaim | false;
}

/** A take made before the prompt is built: the tokens it was made for, and its answer. */
interface EarlyAdmission {
  estimatedTokens: number;
  answer: Promise<KeyAdmission>;
}

/** A new run for `job` (`claim`: a claim of the job's id an earlier run of it already made). */
export function newJobRun(deps: ExtractionDeps, delivery: Delivery, job: Job, model: ModelTime = { ms: 0, calls: 0 }, claim: JobIdClaim = {}): JobRun {
  return { deps, delivery, job, model, usage: { inputTokens: 0, outputTokens: 0 }, claim };
}

/** Adds one to a consumer metric (or `value`). */
export function count(deps: Pick<ExtractionDeps, 'metrics'>, name: ConsumerMetricName, value = 1): void {
  deps.metrics.addMetric(name, MetricUnit.Count, value);
}

/** The delivery's fields on every log line. */
export function deliveryLogFields(delivery: Delivery): Pick<RecordLogFields, 'messageId' | 'receiveCount' | 'queueAgeMs' | 'traceId'> {
  const traceId = traceIdOf(delivery.traceHeader);
  return { messageId: delivery.messageId, receiveCount: delivery.receiveCount, queueAgeMs: delivery.queueAgeMs, ...(traceId ? { traceId } : {}) };
}

/** The fields of every log line about a run's job (never document text). */
export function runLogFields(run: JobRun): RecordLogFields {
  return { lane: run.deps.lane.name, jobId: run.job.jobId, ...deliveryLogFields(run.delivery) };
}

/** Logs a line with typed fields. */
export function log(deps: Pick<ExtractionDeps, 'logger'>, level: 'info' | 'warn' | 'error', message: string, fields: RecordLogFields): void {
  deps.logger[level](message, { ...fields });
}

/** The ledger fields every entry of a run's job carries (`job` may be the next message's job). */
export function ledgerBase(run: JobRun, job: Job = run.job): Omit<LedgerEntryInput, 'kind' | 'reason'> {
  const traceId = traceIdOf(run.delivery.traceHeader);
  return {
    jobId: job.jobId,
    idempotencyKey: job.idempotencyKey,
    ...(job.tenant !== undefined ? { tenant: job.tenant } : {}),
    region: job.region,
    schemaVersion: job.schemaVersion,
    promptVersion: job.promptVersion,
    // Real failures so far: those the body carries plus this message's earlier receives.
    attempt: job.attempt + run.delivery.receiveCount - 1,
    deferrals: job.deferrals,
    receiveCount: run.delivery.receiveCount,
    ...(traceId ? { traceId } : {}),
  };
}
