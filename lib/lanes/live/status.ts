/**
 * `GET /v1/extractions/{jobId}`: one job's state from the lane's results table and ledger
 * (`lib/store/job-status.ts`), the same view for a live job and a queue job: committed with its
 * result, pending with `eligibleAt`, needs review, rejected, dead-lettered, received, erased (its source
 * erased: `erase.ts`), or unknown (404, code `unknown_job`) — also to a reader who may not read the job
 * (another tenant's: `caller.ts`). A read that fails is a 503 (code `unavailable`); its error stays in the log.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { withTimeLimit } from '../../platform/abort-scope.js';
import { errorName, shortMessage } from '../../platform/errors.js';
import { jobStatus, type JobStatusView, type StatusReader } from '../../store/job-status.js';
import { jsonResponse, unavailableResponse } from './answer.js';
import type { LiveDeps } from './deps.js';

/** How long a status read may take before the caller is told to try again (ms). */
const STATUS_READ_TIMEOUT_MS = 5_000;

/** The answer to a request that names no job id in its path (400 `bad_input`). */
export function noJobIdResponse(): APIGatewayProxyStructuredResultV2 {
  return jsonResponse(400, { status: 'rejected', code: 'bad_input', reason: 'bad_input', detail: 'no job id in the path' });
}

/** A job's view as `GET` answers it: 200 with the view (its `state` as `status`), 404 `unknown_job` for an unknown one. */
export function viewResponse(view: JobStatusView): APIGatewayProxyStructuredResultV2 {
  const { state, ...rest } = view;
  return state === 'unknown' ? jsonResponse(404, { status: state, code: 'unknown_job', ...rest }) : jsonResponse(200, { status: state, ...rest });
}

/** The state of `jobId` as `reader` may see it, as an HTTP response: 200 with the view (its `state` as `status`), 404 for an id this lane never saw or the reader may not read. */
export async function statusResponse(
  jobId: string | undefined,
  deps: Pick<LiveDeps, 'results' | 'ledger' | 'logger'> & Partial<Pick<LiveDeps, 'erasure'>>,
  reader?: StatusReader,
): Promise<APIGatewayProxyStructuredResultV2> {
  if (!jobId) return noJobIdResponse();
  try {
    return viewResponse(await withTimeLimit(STATUS_READ_TIMEOUT_MS, () => jobStatus(jobId, deps, reader)));
  } catch (error) {
    deps.logger.warn('job status could not be read', { jobId, error: errorName(error), detail: shortMessage(error) });
    return unavailableResponse(jobId);
  }
}
