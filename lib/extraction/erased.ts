/**
 * A job of an erased source (`ratelane erase`): found at its receive (the source's tombstone, read beside
 * its document) or at its commit (the commit is one transaction with the tombstone's absence, so an
 * erasure that lands while the model answers still wins). Either way nothing of the job is kept: its claim,
 * ledger entries and document are removed and its erased marker left, no model call is made (at receive), no result
 * is written (at commit). A message that names another job's id is rejected under its message id instead,
 * and nothing of that other job is touched.
 */
import { deleteDocument } from '../store/documents.js';
import { erasedFor } from '../store/erasure.js';
import type { RejectedOutcome } from './outcome.js';
import { count, log, runLogFields, type JobRun, type ReceiveGuards } from './context.js';
import { rejectUnverified } from './verify.js';

/** Who the erased marker of a job stopped by the lane names. */
const STOPPED_BY_LANE = 'ratelane (a job of an erased source)';

/** Whether the run's source is erased, from its tombstone as read at the job's receive (`Cancellations.atReceive`, beside the document). */
export function startErasureCheck(run: JobRun, guards: ReceiveGuards): Promise<boolean> {
  const { deps, job } = run;
  const checking = guards.then((g) => erasedFor(g.tombstone, job.createdAt, deps.lane.erasure.afterErasure));
  checking.catch(() => undefined);
  return checking;
}

/**
 * Settles a job whose source is erased: its records removed, its marker left, counted `Erased`;
 * `rejected` with reason `erased` (terminal: the lane acknowledges it).
 */
export async function settleErased(run: JobRun, when: 'receive' | 'commit'): Promise<RejectedOutcome> {
  const { deps, job, delivery } = run;
  const claim = await deps.ledger.claimOf(job.jobId);
  if (claim && claim.idempotencyKey !== job.idempotencyKey) {
    return rejectUnverified(delivery, deps, 'job_id_reused', 'the job id belongs to another job (another idempotency key)', job);
  }
  await deps.erasure.eraseJob(job.jobId, job.input.sourceId, STOPPED_BY_LANE);
  // Its document too (an erasure run before the job was received did not know its hash), recorded on the tombstone.
  await deleteDocument(deps.s3, { bucket: job.input.bucket, contentSha256: job.input.contentSha256 });
  await deps.erasure.recordHashes(job.input.sourceId, [job.input.contentSha256]);
  count(deps, 'Erased');
  log(deps, 'info', 'job of an erased source stopped: nothing of it kept', {
    ...runLogFields(run),
    outcome: 'rejected',
    reason: 'erased',
    detail: when === 'receive' ? 'at its receive: no model call' : 'at its commit: the answer was not committed',
  });
  return { type: 'rejected', reason: 'erased' };
}
