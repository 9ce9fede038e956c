/**
 * A message is input from outside: anyone with `SendMessage` on the lane's queue can write one. Before
 * the core trusts a job, it checks what it can recompute: the idempotency key from the source id,
 * the content hash and the versions; the document's place (the lane's own bucket, its documents
 * prefix, the content-addressed key of the hash); and that the job id is this job's (the first job to
 * use an id claims it). A job that fails is rejected under its message id, not under the job id it
 * claims, so no one can write into another job's history.
 *
 * The claim is a write of its own, so it is kept off a record's path: it is made beside the first
 * model call (whose wait hides it), or by the first step that writes under the job id, and every such
 * write — a commit, a ledger entry, a lane's re-send — waits for it ({@link claimed}). A job that
 * reuses another's id may so spend one model call before it is rejected, as any new job id could.
 */
import { hasOwnIdempotencyKey, type Job } from '../contract/job.js';
import type { RejectionReason } from '../platform/telemetry.js';
import { mayStatePriority, mayStateTenant, senderPrincipalId } from '../policy/index.js';
import { documentKeyFor } from '../store/documents.js';
import { count, deliveryLogFields, log, type Delivery, type ExtractionDeps, type JobRun } from './context.js';
import type { ExtractionOutcome, RejectedOutcome } from './outcome.js';

/**
 * Rejects a message that is not (yet) a trusted job: a ledger entry under `msg:<message id>` (with the
 * job id it claims, if any, in the details), the `Rejected` metric and a log line.
 */
export async function rejectUnverified(
  delivery: Delivery,
  deps: ExtractionDeps,
  reason: RejectionReason,
  details: string,
  job?: Pick<Job, 'jobId' | 'attempt' | 'deferrals'>,
): Promise<RejectedOutcome> {
  await deps.ledger.record({
    jobId: `msg:${delivery.messageId}`,
    region: deps.lane.name,
    kind: 'rejected',
    reason,
    attempt: 0,
    deferrals: 0,
    receiveCount: delivery.receiveCount,
    details: job ? `claims job ${job.jobId}: ${details}` : details,
  });
  count(deps, 'Rejected');
  if (reason === 'region_mismatch') count(deps, 'RegionMismatch');
  log(deps, 'warn', 'record rejected', {
    lane: deps.lane.name,
    ...deliveryLogFields(delivery),
    outcome: 'rejected',
    reason,
    ...(job ? { jobId: job.jobId } : {}),
  });
  return { type: 'rejected', reason };
}

/**
 * What a parsed job claims that can be checked without a call: its idempotency key, its document's
 * place (the lane's own bucket, under the content key), and — where the lane checks senders (the queue
 * lane: `ExtractionDeps.laneSenders`) — a tenant its sender may state (`policy/tenancy.ts`). The
 * rejection's reason and detail when a claim is false, else `undefined`.
 */
export function falseClaimOf(
  job: Job,
  delivery: Pick<Delivery, 'senderId'>,
  deps: Pick<ExtractionDeps, 'lane' | 'laneSenders'>,
): { reason: RejectionReason; detail: string } | undefined {
  if (job.tenant !== undefined && deps.laneSenders !== undefined) {
    const allowed = mayStateTenant({ tenant: job.tenant, senderId: delivery.senderId, laneSenders: deps.laneSenders, grants: deps.lane.producers ?? [] });
    if (!allowed) {
      const sender = delivery.senderId === undefined ? 'a sender SQS did not name' : `sender ${senderPrincipalId(delivery.senderId)}`;
      return { reason: 'tenant_not_allowed', detail: `${sender} may not state this tenant: the lane's producers config grants it none` };
    }
  }
  if (job.priority !== undefined && deps.laneSenders !== undefined) {
    const allowed = mayStatePriority({ priority: job.priority, senderId: delivery.senderId, laneSenders: deps.laneSenders, grants: deps.lane.producers ?? [] });
    if (!allowed) {
      const sender = delivery.senderId === undefined ? 'a sender SQS did not name' : `sender ${senderPrincipalId(delivery.senderId)}`;
      return { reason: 'priority_not_allowed', detail: `${sender} may not state priority ${job.priority}: the lane's producers config grants it none` };
    }
  }
  if (!hasOwnIdempotencyKey(job)) {
    return { reason: 'idempotency_key_mismatch', detail: 'the idempotency key is not the one of its source id, content hash and versions' };
  }
  const bucket = deps.lane.resources.bucketName;
  if (job.input.bucket !== bucket || job.input.key !== documentKeyFor(job.input.contentSha256)) {
    // Never read a document from anywhere else: another lane's bucket would take the job out of its region.
    return { reason: 'region_mismatch', detail: `the document is not in this lane's bucket under its content key (bucket ${job.input.bucket})` };
  }
  return undefined;
}

/**
 * The claim of the run's job id, made once per job (the first call starts it): `undefined` when the id
 * is this job's, else the rejection. Await it before any write under the job id. Throws what the
 * claim's write threw (the store could not be reached).
 */
export async function claimed(run: JobRun): Promise<RejectedOutcome | undefined> {
  try {
    return await pendingClaim(run);
  } catch (error) {
    // A claim cut off with the record's work (it ran beside a model call) is made again in the settle time.
    if (!run.delivery.stopWork?.aborted) throw error;
    return pendingClaim(run);
  }
}

/** The run's claim in flight or made; a failed one is forgotten, so the next asks again. */
function pendingClaim(run: JobRun): Promise<RejectedOutcome | undefined> {
  run.claim.pending ??= claimJobId(run.job, run.delivery, run.deps).catch((error: unknown) => {
    run.claim.pending = undefined;
    throw error;
  });
  return run.claim.pending;
}

/** Starts the claim without waiting for it (beside a model call); a failed one is made again by the next {@link claimed}. */
export function startClaim(run: JobRun): void {
  pendingClaim(run).catch(() => undefined);
}

/**
 * A deferral or a real failure is carried out by the lane under the job id (a re-send, a ledger
 * line): the job's id must be its own first, else the outcome is the rejection for reusing it. Without
 * a run (the body was no trusted job) the outcome is the lane's as it is.
 */
export async function laneMayCarryOut(found: { outcome: ExtractionOutcome; run?: JobRun | undefined }): Promise<ExtractionOutcome> {
  const { outcome, run } = found;
  if (!run || (outcome.type !== 'deferred' && outcome.type !== 'failed')) return outcome;
  return (await claimed(run)) ?? outcome;
}

/**
 * Checks that the job id is this job's: the first job to use an id claims it (one conditional write).
 * Returns the rejection when another job holds the id, else `undefined`. Call after {@link falseClaimOf}.
 */
async function claimJobId(job: Job, delivery: Delivery, deps: ExtractionDeps): Promise<RejectedOutcome | undefined> {
  const claim = await deps.ledger.claimJob({
    jobId: job.jobId,
    idempotencyKey: job.idempotencyKey,
    region: deps.lane.name,
    tenant: job.tenant,
    submittedBy: delivery.senderId,
    source: { sourceId: job.input.sourceId, contentSha256: job.input.contentSha256 },
    facts: {
      createdAt: job.createdAt,
      eligibleAt: job.eligibleAt,
      ...(job.deadline !== undefined ? { deadline: job.deadline } : {}),
      attempt: job.attempt,
      deferrals: job.deferrals,
      receiveCount: delivery.receiveCount,
      schemaVersion: job.schemaVersion,
      promptVersion: job.promptVersion,
      ...(job.priority !== undefined ? { priority: job.priority } : {}),
    },
  });
  if (!claim.claimed) return rejectUnverified(delivery, deps, 'job_id_reused', 'the job id belongs to another job (another idempotency key)', job);
  return undefined;
}
