/**
 * `POST /v1/extractions/{jobId}/cancel`: the job's tenant cancels it (`lib/store/cancellation.ts`: its cancel
 * marker, written only while it is not committed; from then on no model call, never committed). `DELETE` on
 * the job's URL erases its source (`erase.ts`); cancelling keeps what the job has (its document, its ledger)
 * and only stops it, so it is a route of its own, as other job APIs have one (OpenAI's
 * `POST /v1/batches/{id}/cancel`).
 *
 * Who may: the job's tenant only, read exactly as `GET` reads it: to another tenant the job is unknown (the
 * same 404 as `GET`, nothing written); a lane-wide reader who is not its tenant is refused (403 `not_owner`).
 *
 * Answers: 200 `{ status: "cancelled", jobId, cancelledAt, cancelledBy }`; 200 with `code: "already_cancelled"`
 * for a job cancelled before; 409 `committed` (with `committedBy`, `committedAt`) for a committed job: nothing
 * changes; 404 `unknown_job`; 403 `not_owner`; 503 `unavailable` when a table failed (the same request
 * finishes it).
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { withTimeLimit } from '../../platform/abort-scope.js';
import { errorName, shortMessage } from '../../platform/errors.js';
import type { CancelOutcome } from '../../store/cancellation.js';
import { jobStatus } from '../../store/job-status.js';
import { jsonResponse, unavailableResponse } from './answer.js';
import { ownerNotingReader } from './caller.js';
import type { LiveDeps } from './deps.js';
import { noJobIdResponse, viewResponse } from './status.js';

/** What the cancel route reads and writes. */
type CancelRouteDeps = Pick<LiveDeps, 'lane' | 'results' | 'ledger' | 'erasure' | 'cancellations' | 'logger'>;

/** How long the route may take before the caller is told to try again (ms). */
const CANCEL_TIMEOUT_MS = 5_000;

/** Cancels `jobId` for `tenant` (see the module's description) and answers it. */
export async function cancelResponse(jobId: string | undefined, tenant: string, deps: CancelRouteDeps): Promise<APIGatewayProxyStructuredResultV2> {
  if (!jobId) return noJobIdResponse();
  try {
    return await withTimeLimit(CANCEL_TIMEOUT_MS, () => cancel(jobId, tenant, deps));
  } catch (error) {
    deps.logger.warn('job could not be cancelled', { lane: deps.lane.name, jobId, error: errorName(error), detail: shortMessage(error) });
    return unavailableResponse(jobId);
  }
}

function answer(jobId: string, outcome: CancelOutcome): APIGatewayProxyStructuredResultV2 {
  switch (outcome.status) {
    case 'cancelled':
      return jsonResponse(200, { status: 'cancelled', jobId, cancelledAt: outcome.marker.cancelledAt, cancelledBy: outcome.marker.cancelledBy });
    case 'already_cancelled':
      return jsonResponse(200, {
        status: 'cancelled',
        code: 'already_cancelled',
        jobId,
        cancelledAt: outcome.marker.cancelledAt,
        cancelledBy: outcome.marker.cancelledBy,
      });
    case 'committed':
      return jsonResponse(409, {
        status: 'committed',
        code: 'committed',
        jobId,
        committedBy: outcome.committedBy,
        committedAt: outcome.committedAt,
        detail: 'the job is committed: nothing changed',
      });
  }
}

async function cancel(jobId: string, tenant: string, deps: CancelRouteDeps): Promise<APIGatewayProxyStructuredResultV2> {
  // The job as GET reads it to this caller, noting whose it is.
  const reader = ownerNotingReader(tenant, deps.lane.live.readers);
  const view = await jobStatus(jobId, deps, reader);
  if (view.state === 'unknown') return viewResponse(view);
  if (!reader.ownsIt()) {
    return jsonResponse(403, {
      status: 'rejected',
      code: 'not_owner',
      reason: 'not_owner',
      jobId,
      detail: "a lane-wide reader reads the lane's jobs; only the job's tenant cancels it (an operator: ratelane cancel)",
    });
  }
  const outcome = await deps.cancellations.cancel(jobId, tenant);
  if (outcome.status === 'cancelled') deps.logger.info('job cancelled through the live API', { lane: deps.lane.name, jobId, received: outcome.received });
  return answer(jobId, outcome);
}
