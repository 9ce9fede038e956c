/**
 * What a live request is answered, and its HTTP form: 200 committed or needs review, 202 pending with
 * where to ask later, 4xx for bad input or another region's request (no model call), 5xx only when the
 * job could be neither finished nor handed over.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { TokenUsage } from '../../providers/model.js';
import { LIVE_ROUTES } from '../../platform/resources.js';
import type { RejectionReason } from '../../platform/telemetry.js';
import { LIVE_REJECTION_STATUS, type LiveRefusal } from './request.js';

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
  /** Why the job could not finish in time (`rate_limited`, `quota_exhausted`, `admission_denied`, `out_of_time`, …). */
  reason: string;
  /** When the queue lane will try it next (ISO 8601), when known. */
  eligibleAt?: string | undefined;
  /** A short diagnostic (times, limits; never document text). */
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

/** The HTTP response of an answer. */
export function answerResponse(answer: LiveAnswer, domainName?: string): APIGatewayProxyStructuredResultV2 {
  switch (answer.status) {
    case 'committed':
    case 'needs_review':
      return jsonResponse(200, answer);
    case 'pending': {
      const statusUrl = statusUrlFor(answer.jobId, domainName);
      return jsonResponse(202, { ...answer, statusUrl }, { location: statusUrl });
    }
    case 'rejected':
      return jsonResponse(answer.reason === 'region_mismatch' ? 409 : 422, answer);
    case 'error':
      return jsonResponse(503, answer, { 'retry-after': '1' });
  }
}

/** The HTTP response of a refusal before any job existed. */
export function refusalResponse(refusal: LiveRefusal): APIGatewayProxyStructuredResultV2 {
  return jsonResponse(LIVE_REJECTION_STATUS[refusal.reason], { status: 'rejected', reason: refusal.reason, detail: refusal.detail });
}
