/**
 * A live request, from the HTTP event to checked fields: the JSON body (API Gateway may hand it over
 * base64-encoded), the fields with zod, and the lane check (a request for another region is refused
 * before anything is read or called). The document itself is checked afterwards exactly as the
 * producer checks it (`lib/intake/checks.ts`).
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { z } from 'zod';
import type { LaneConfig } from '../../config/lanes.js';
import type { RejectionReason as ProducerRejection } from '../../intake/checks.js';
import { DOCUMENT_PREFIX } from '../../platform/resources.js';

/** Why a live request was refused without a model call: the producer's reasons, plus the lane's own. */
export type LiveRejectionReason = ProducerRejection | 'region_mismatch' | 'document_not_found' | 'invalid_json';

/** The HTTP status of each refusal. */
export const LIVE_REJECTION_STATUS: Readonly<Record<LiveRejectionReason, number>> = Object.freeze({
  invalid_json: 400,
  bad_input: 400,
  unknown_region: 409,
  region_mismatch: 409,
  document_not_found: 404,
  document_too_large: 413,
  message_too_large: 413,
  empty_document: 422,
  not_text: 422,
  unknown_version: 422,
  deadline_passed: 422,
  mixed_versions: 422,
});

/** A refusal: the reason and a detail naming fields, sizes and limits (never document text). */
export interface LiveRefusal {
  reason: LiveRejectionReason;
  detail: string;
}

/** Where a stored document is: a key under the lane bucket's documents prefix. */
export interface DocumentRef {
  /** The lane's bucket (optional: the lane's own is assumed). */
  bucket?: string | undefined;
  key: string;
}

/** The body of `POST /v1/extractions`. */
const LiveRequestSchema = z
  .object({
    /** The document's text (UTF-8). */
    text: z.string().optional(),
    /** A document already stored in the lane's bucket. */
    documentRef: z
      .object({ bucket: z.string().min(3).max(63).optional(), key: z.string().min(1).max(1024) })
      .strict()
      .optional(),
    /** The caller's stable identity of the document (default: `text:<sha256>`, or the reference's key). */
    sourceId: z.string().min(1).max(512).optional(),
    schemaVersion: z.string().min(1).max(64).optional(),
    promptVersion: z.string().min(1).max(64).optional(),
    /** The total deadline (ms) the caller waits for an answer; bounded by the lane's settings. */
    deadlineMs: z.number().int().positive().max(3_600_000).optional(),
    /** The lane the caller means (its name or AWS region); another lane's is refused. */
    region: z.string().min(1).max(32).optional(),
  })
  .strict()
  .refine((r) => (r.text === undefined) !== (r.documentRef === undefined), { message: 'give exactly one of text or documentRef' });

/** A checked request body. */
export type LiveRequest = z.output<typeof LiveRequestSchema>;

/** A parsed body, or why it is refused. */
export type ParsedLiveRequest = { ok: true; request: LiveRequest } | { ok: false; refusal: LiveRefusal };

/** The request's JSON body, checked; or why it is refused. */
export function parseLiveRequest(event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded'>): ParsedLiveRequest {
  const refuse = (reason: LiveRejectionReason, detail: string): ParsedLiveRequest => ({ ok: false, refusal: { reason, detail } });
  if (event.body === undefined || event.body === '') return refuse('bad_input', 'the request has no body');
  let raw: unknown;
  try {
    const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    raw = JSON.parse(text);
  } catch {
    return refuse('invalid_json', 'the body is not JSON');
  }
  const parsed = LiveRequestSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);
    return refuse('bad_input', issues.join('; '));
  }
  return { ok: true, request: parsed.data };
}

/**
 * The lane check: a `region` naming another lane (or an unknown one) and a document reference to
 * another bucket are refused with `region_mismatch`; a reference outside the documents prefix is bad
 * input (the function may read only below it).
 */
export function checkLane(request: LiveRequest, lane: Pick<LaneConfig, 'name' | 'region' | 'resources'>): LiveRefusal | undefined {
  if (request.region !== undefined && request.region !== lane.name && request.region !== lane.region) {
    return { reason: 'region_mismatch', detail: `this is lane ${lane.name} (${lane.region}); the request names "${request.region}"` };
  }
  const ref = request.documentRef;
  if (ref) {
    if (ref.bucket !== undefined && ref.bucket !== lane.resources.bucketName) {
      return { reason: 'region_mismatch', detail: `documentRef names bucket ${ref.bucket}, not lane ${lane.name}'s` };
    }
    if (!ref.key.startsWith(DOCUMENT_PREFIX) || ref.key.includes('..')) {
      return { reason: 'bad_input', detail: `documentRef.key must be under ${DOCUMENT_PREFIX}` };
    }
  }
  return undefined;
}
