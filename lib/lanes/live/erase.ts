/**
 * `DELETE /v1/extractions/{jobId}`: the job's tenant erases the job's **source** in this lane
 * (`lib/erasure/erase.ts`: the tombstone, then every job of the source — result, ledger entries, claim —
 * and its documents), and is answered the erasure's receipt. `by` is the caller's tenant, as the live
 * lane records a caller (a job's `tenant` and `submittedBy`).
 *
 * Who may: the job's tenant only. The job is read first exactly as `GET` reads it (`status.ts`, the same
 * reads and the same owner check): to another tenant it is unknown — the same 404 body as `GET`, nothing
 * erased. A lane-wide reader (`live.readers`) who is not its tenant reads the job but may not erase it
 * (403 `not_owner`). An erasure reaches every job of the source in the lane, so the API erases only a
 * source whose claimed jobs are all the caller's: one of another tenant's (or a job without a tenant)
 * sharing the source id is refused (409 `source_shared`) and left to an operator's `ratelane erase`.
 *
 * Answers: 200 `{ status: "erased", jobId, ...receipt }`; 200 `{ status: "erased", code: "already_erased",
 * jobId, erasedAt, erasedBy }` for a job already erased (to whoever may read that); 404 `unknown_job`;
 * 403 `not_owner`; 409 `source_not_recorded` (a job claimed before erasure existed: its claim names no
 * source) or `source_shared`; 503 `unavailable` (and `retry-after`) when a store failed or the time ran
 * out: what was removed stays removed, the same DELETE finishes it.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { eraseSource } from '../../erasure/erase.js';
import { withTimeLimit } from '../../platform/abort-scope.js';
import { errorName, shortMessage } from '../../platform/errors.js';
import { jobStatus } from '../../store/job-status.js';
import { jsonResponse, unavailableResponse } from './answer.js';
import { ownerNotingReader } from './caller.js';
import type { LiveDeps } from './deps.js';
import { noJobIdResponse, viewResponse } from './status.js';

/** What the erase route reads and writes. */
type EraseRouteDeps = Pick<LiveDeps, 'lane' | 'results' | 'ledger' | 'erasure' | 's3' | 'now' | 'logger'>;

/** A refusal of the erase route (no record changed). */
function refused(statusCode: number, code: string, jobId: string, detail: string): APIGatewayProxyStructuredResultV2 {
  return jsonResponse(statusCode, { status: 'rejected', code, reason: code, jobId, detail });
}

/**
 * Erases the source of `jobId` for `tenant` (see the module's description) and answers it. The whole
 * erasure is bounded by the lane's `live.maxDeadlineMs` (the live function's timeout is 2 s more), so a
 * long one is answered 503 to be repeated rather than cut by the function's timeout.
 */
export async function eraseResponse(jobId: string | undefined, tenant: string, deps: EraseRouteDeps): Promise<APIGatewayProxyStructuredResultV2> {
  if (!jobId) return noJobIdResponse();
  try {
    return await withTimeLimit(deps.lane.live.maxDeadlineMs, () => erase(jobId, tenant, deps));
  } catch (error) {
    deps.logger.warn('job source could not be erased', { lane: deps.lane.name, jobId, error: errorName(error), detail: shortMessage(error) });
    return unavailableResponse(jobId);
  }
}

async function erase(jobId: string, tenant: string, deps: EraseRouteDeps): Promise<APIGatewayProxyStructuredResultV2> {
  // The job as GET reads it to this caller, noting whose it is.
  const reader = ownerNotingReader(tenant, deps.lane.live.readers);
  const view = await jobStatus(jobId, deps, reader);
  if (view.state === 'unknown') return viewResponse(view);
  if (view.state === 'erased') {
    return jsonResponse(200, { status: 'erased', code: 'already_erased', jobId, erasedAt: view.erasedAt, erasedBy: view.erasedBy });
  }
  if (!reader.ownsIt()) {
    return refused(
      403,
      'not_owner',
      jobId,
      "a lane-wide reader reads the lane's jobs; only the job's tenant erases it (an operator: ratelane erase --source-id)",
    );
  }

  const claim = await deps.ledger.claimOf(jobId);
  const sourceId = claim?.sourceId;
  if (sourceId === undefined) {
    return refused(
      409,
      'source_not_recorded',
      jobId,
      'the job was claimed before erasure existed and its claim names no source: erase it with ratelane erase --source-id',
    );
  }
  const others = (await deps.erasure.jobsOf(sourceId)).filter((job) => job.jobId !== jobId);
  const claims = await Promise.all(others.map((job) => deps.ledger.claimOf(job.jobId)));
  if (claims.some((other) => other !== undefined && other.tenant !== tenant)) {
    return refused(409, 'source_shared', jobId, "the job's source id is also another owner's in this lane: an operator erases it (ratelane erase --source-id)");
  }

  const receipt = await eraseSource(deps, { sourceId, by: tenant });
  // The source index (a GSI) is read eventually consistent: a claim just written may not be in it yet.
  // The tombstone is laid (nothing of the source commits any more); the same DELETE finds the job then.
  if (!receipt.jobs.some((job) => job.jobId === jobId)) {
    deps.logger.warn('job source erased, but the job was not yet in the source index', { lane: deps.lane.name, jobId });
    return unavailableResponse(jobId);
  }
  deps.logger.info('job source erased through the live API', {
    lane: deps.lane.name,
    jobId,
    jobs: receipt.jobs.length,
    documents: receipt.documents.length,
    erasures: receipt.tombstone.erasures,
  });
  return jsonResponse(200, { status: 'erased', jobId, ...receipt });
}
