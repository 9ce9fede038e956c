/**
 * What a live request is answered, and its HTTP form: 200 committed or needs review, 202 pending with
 * where to ask later, 4xx for bad input or another region's request (no model call), 5xx only when the
 * job could be neither finished nor handed over. Every answer that is not a result (a refusal, a
 * rejection, pending, an error) carries a stable `code`, and the job id once a job exists; its body is
 * built here field by field, so no internal detail (a key id, an error class, an SDK message) reaches
 * the caller: those stay in the logs.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { TokenUsage } from '../../providers/model.js';
import { LIVE_ROUTES } from '../../platform/resources.js';
import type { RejectionReason } from '../../platform/telemetry.js';
import { LIVE_REJECTION_STATUS, LIVE_REQUEST_CONTENT_TYPE, type LiveRefusal } from './request.js';

/** The job's result is committed (now, or earlier: `duplicate`). */
interface CommittedAnswer {
  status: 'committed';
  /** The job that committed it (an earlier job's id when `duplicate`). */
  jobId: string;
  result: Record<string, unknown>;
  model: string;
  /** Model calls this request made (0 when the result was committed earlier). */
  attempts: number;
  usage: TokenUsage;
  committedAt?: string | undefined;
  /** The result was committed before this request (no model call). */
  duplicate?: boolean | undefined;
}

/** Handed over to the queue lane: ask `GET statusUrl` later. */
interface PendingAnswer {
  status: 'pending';
  jobId: string;
  /** Why the job could not finish in time (`rate_limited`, `quota_exhausted`, `admission_denied`, `out_of_time`, …); its `code`. */
  reason: string;
  /** When the queue lane will try it next (ISO 8601), when known. */
  eligibleAt?: string | undefined;
  /** A diagnostic for the logs (it may name keys or errors): never sent to the caller. */
  detail?: string | undefined;
}

/** The output stayed invalid after the repair: a person reviews it. */
interface NeedsReviewAnswer {
  status: 'needs_review';
  jobId: string;
}

/** Refused for good by the extraction core (after intake), with the ledger's reason. */
interface RejectedAnswer {
  status: 'rejected';
  jobId: string;
  reason: RejectionReason;
}

/** Neither finished nor handed over (a store or the queue failed): the caller may repeat the request. */
interface ErrorAnswer {
  status: 'error';
  jobId: string;
  /** A diagnostic for the logs: never sent to the caller (who gets the text of {@link LIVE_UNAVAILABLE}). */
  detail: string;
}

/** Every answer to a checked job. */
export type LiveAnswer = CommittedAnswer | PendingAnswer | NeedsReviewAnswer | RejectedAnswer | ErrorAnswer;

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } as const;

/** A JSON response. */
export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** Where one job's state is read (`GET /v1/extractions/{jobId}`), absolute when the API's domain is known. */
function statusUrlFor(jobId: string, domainName?: string): string {
  const path = LIVE_ROUTES.extraction.replace('{jobId}', encodeURIComponent(jobId));
  return domainName ? `https://${domainName}${path}` : path;
}

/**
 * The code and text of every 5xx: the request could not be taken on, its job neither finished nor
 * handed over, or its state not read. Repeating the request is safe (the same source, text and versions
 * have one idempotency key: nothing is committed twice).
 */
const LIVE_UNAVAILABLE = { code: 'unavailable', detail: 'the request could not be completed; repeat it' } as const;

/** A 503 ({@link LIVE_UNAVAILABLE}) the caller may repeat after a second, with the job's id when a job exists. */
export function unavailableResponse(jobId?: string): APIGatewayProxyStructuredResultV2 {
  return jsonResponse(503, { status: 'error', ...LIVE_UNAVAILABLE, ...(jobId !== undefined ? { jobId } : {}) }, { 'retry-after': '1' });
}

/** The HTTP response of an answer. */
export function answerResponse(answer: LiveAnswer, domainName?: string): APIGatewayProxyStructuredResultV2 {
  switch (answer.status) {
    case 'committed':
    case 'needs_review':
      return jsonResponse(200, answer);
    case 'pending': {
      const statusUrl = statusUrlFor(answer.jobId, domainName);
      const { jobId, reason, eligibleAt } = answer;
      return jsonResponse(202, { status: 'pending', code: reason, jobId, reason, eligibleAt, statusUrl }, { location: statusUrl });
    }
    case 'rejected': {
      const { jobId, reason } = answer;
      return jsonResponse(reason === 'region_mismatch' ? 409 : 422, { status: 'rejected', code: reason, jobId, reason });
    }
    case 'error':
      return unavailableResponse(answer.jobId);
  }
}

/** The HTTP response of a refusal before any job existed (a 415 says what it accepts). */
export function refusalResponse(refusal: LiveRefusal): APIGatewayProxyStructuredResultV2 {
  const { reason, detail, minDeadlineMs } = refusal;
  const headers: Record<string, string> = reason === 'unsupported_media_type' ? { 'accept-post': `${LIVE_REQUEST_CONTENT_TYPE}; charset=utf-8` } : {};
  return jsonResponse(
    LIVE_REJECTION_STATUS[reason],
    { status: 'rejected', code: reason, reason, detail, ...(minDeadlineMs !== undefined ? { minDeadlineMs } : {}) },
    headers,
  );
}
