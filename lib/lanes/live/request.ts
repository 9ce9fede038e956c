/**
 * A live request, from the HTTP event to checked fields: its content type (JSON only), its body as
 * text (API Gateway may hand it over base64-encoded; decoded strictly by `lib/contract/text.ts`), the
 * JSON (every string well-formed), the fields with zod, the deadline's bounds, and the lane check (a
 * request for another region is refused before anything is read or called). The document itself is
 * checked afterwards exactly as the producer checks it (`lib/intake/checks.ts`).
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { z } from 'zod';
import type { LaneConfig } from '../../config/lanes.js';
import type { LiveSettings } from '../../config/live.js';
import { decodeText } from '../../contract/text.js';
import type { RejectionReason as ProducerRejection } from '../../intake/checks.js';
import { DOCUMENT_PREFIX } from '../../platform/resources.js';
import { minDeadlineMs } from './deadline.js';

/** Why a live request was refused without a model call: the producer's reasons, plus the lane's own. */
export type LiveRejectionReason =
  | ProducerRejection
  | 'region_mismatch'
  | 'document_not_found'
  | 'invalid_json'
  | 'unsupported_media_type'
  | 'deadline_too_short';

/** The HTTP status of each refusal. */
export const LIVE_REJECTION_STATUS: Readonly<Record<LiveRejectionReason, number>> = Object.freeze({
  invalid_json: 400,
  bad_input: 400,
  not_text: 400,
  deadline_too_short: 400,
  unknown_region: 409,
  region_mismatch: 409,
  document_not_found: 404,
  document_too_large: 413,
  message_too_large: 413,
  unsupported_media_type: 415,
  empty_document: 422,
  unknown_version: 422,
  deadline_passed: 422,
  mixed_versions: 422,
});

/** A refusal: the reason and a detail naming fields, sizes and limits (never document text). */
export interface LiveRefusal {
  reason: LiveRejectionReason;
  detail: string;
  /** The lane's shortest deadline (ms), with `deadline_too_short`. */
  minDeadlineMs?: number | undefined;
}

/** Where a stored document is: a key under the lane bucket's documents prefix. */
export interface DocumentRef {
  /** The lane's bucket (optional: the lane's own is assumed). */
  bucket?: string | undefined;
  key: string;
}

/** The content type `POST /v1/extractions` takes (UTF-8 JSON; `; charset=utf-8` may be said). */
export const LIVE_REQUEST_CONTENT_TYPE = 'application/json';

/** A document already stored in the lane's bucket. */
const DocumentRefSchema = z.object({ bucket: z.string().min(3).max(63).optional(), key: z.string().min(1).max(1024) }).strict();

/** The fields of `POST /v1/extractions`. */
const LiveRequestFields = z
  .object({
    /** The document's text (UTF-8). */
    text: z.string().optional(),
    /** A document already stored in the lane's bucket. */
    documentRef: DocumentRefSchema.optional(),
    /** The caller's stable identity of the document (default: `text:<sha256>`, or the reference's key). */
    sourceId: z.string().min(1).max(512).optional(),
    schemaVersion: z.string().min(1).max(64).optional(),
    promptVersion: z.string().min(1).max(64).optional(),
    /** The total deadline (ms) the caller waits for an answer: below the lane's minimum is refused, above its maximum cut to it. */
    deadlineMs: z.number().int().max(3_600_000).optional(),
    /** The lane the caller means (its name or AWS region); another lane's is refused. */
    region: z.string().min(1).max(32).optional(),
  })
  .strict();

/** The body of `POST /v1/extractions`. */
const LiveRequestSchema = LiveRequestFields.refine((r) => (r.text === undefined) !== (r.documentRef === undefined), {
  message: 'give exactly one of text or documentRef',
});

/** A checked request body. */
export type LiveRequest = z.output<typeof LiveRequestSchema>;

/** A parsed body, or why it is refused. */
export type ParsedLiveRequest = { ok: true; request: LiveRequest } | { ok: false; refusal: LiveRefusal };

/** The fields a detail may name (anything else a caller sent is not echoed). */
const FIELD_NAMES: ReadonlySet<string> = new Set([...Object.keys(LiveRequestFields.shape), ...Object.keys(DocumentRefSchema.shape)]);

/**
 * The request's content type, body and JSON, checked; or why it is refused: a content type other than
 * JSON in UTF-8 (`unsupported_media_type`), no body (`bad_input`), a body that is not UTF-8 text or a
 * JSON string holding a lone surrogate (`not_text`), a body that is not JSON (`invalid_json`), fields
 * that are not the request's (`bad_input`).
 */
export function parseLiveRequest(event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded' | 'headers'>): ParsedLiveRequest {
  const refuse = (reason: LiveRejectionReason, detail: string): ParsedLiveRequest => ({ ok: false, refusal: { reason, detail } });
  const contentType = headerOf(event.headers, 'content-type');
  if (!isJsonInUtf8(contentType)) {
    const given = contentType === undefined ? 'no content type' : `content type ${JSON.stringify(contentType.slice(0, 100))}`;
    return refuse('unsupported_media_type', `the body must be ${LIVE_REQUEST_CONTENT_TYPE} (optionally with "; charset=utf-8"); got ${given}`);
  }
  if (event.body === undefined || event.body === '') return refuse('bad_input', 'the request has no body');
  // API Gateway hands a text body over as a string it decoded, replacing bytes that are not UTF-8 with
  // U+FFFD; other bodies as base64, whose bytes are decoded here.
  const body = event.isBase64Encoded ? decodeText(Buffer.from(event.body, 'base64')) : decodeText(event.body, { decodedLeniently: true });
  if (!body.ok) return refuse('not_text', `the request body is not UTF-8 text: ${body.detail}`);
  let raw: unknown;
  let illFormed: string | undefined;
  try {
    raw = JSON.parse(body.text, (key, value: unknown) => {
      if (illFormed === undefined && (!decodeText(key).ok || (typeof value === 'string' && !decodeText(value).ok))) {
        illFormed = FIELD_NAMES.has(key) ? key : 'a key or value';
      }
      return value;
    });
  } catch {
    return refuse('invalid_json', 'the body is not JSON');
  }
  if (illFormed !== undefined)
    return refuse('not_text', `the JSON string of ${illFormed} holds a lone surrogate (\\ud800..\\udfff outside a pair): not UTF-8 text`);
  const parsed = LiveRequestSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);
    return refuse('bad_input', issues.join('; '));
  }
  return { ok: true, request: parsed.data };
}

/** A header's value (names in any case: API Gateway lower-cases them, a test may not). */
function headerOf(headers: APIGatewayProxyEventV2['headers'] | undefined, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === name) return value;
  return undefined;
}

/** Whether a content type is JSON in UTF-8: `application/json`, with no charset or `charset=utf-8` (any case, quoted or not). */
function isJsonInUtf8(contentType: string | undefined): boolean {
  const [type, ...parameters] = (contentType ?? '').split(';').map((part) => part.trim().toLowerCase());
  if (type !== LIVE_REQUEST_CONTENT_TYPE) return false;
  const charsets = parameters.filter((p) => p.split('=', 1)[0]!.trim() === 'charset').map((p) => p.slice(p.indexOf('=') + 1).trim());
  return charsets.every((charset) => charset === 'utf-8' || charset === '"utf-8"');
}

/**
 * The deadline's lower bound: a `deadlineMs` below the lane's minimum (its hand-over margin plus a
 * tenth of a second: a shorter one could only ever answer "pending") is refused, naming the minimum.
 */
export function checkDeadline(request: LiveRequest, live: Pick<LiveSettings, 'handoverMarginMs'>): LiveRefusal | undefined {
  const min = minDeadlineMs(live);
  if (request.deadlineMs === undefined || request.deadlineMs >= min) return undefined;
  return {
    reason: 'deadline_too_short',
    detail: `deadlineMs ${request.deadlineMs} is below this lane's minimum of ${min} ms (its hand-over margin of ${live.handoverMarginMs} ms plus 100 ms)`,
    minDeadlineMs: min,
  };
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
