/**
 * A live request's `documentRef`: a document already stored under the lane bucket's documents prefix,
 * read with its size checked first (HeadObject) so an oversize object is refused without being read,
 * then decoded strictly as text. Missing objects are `document_not_found`.
 *
 * Telling a missing document from a forbidden one does not rest on how S3 evaluates a policy
 * condition on its implicit `s3:ListBucket` check (undocumented): S3 answers a read of a missing key
 * with 404 only to a caller that may list the bucket, else with 403 (the HeadObject and GetObject API
 * references). The live role may list the bucket only under `documents/` (`s3:prefix`, the condition
 * key S3 documents for ListObjectsV2), so S3 may answer a missing key either way. A 404 is missing; a
 * 403 for a key under `documents/` is missing only once a ListObjectsV2 with that exact key as its
 * prefix confirms that no object has the key (keys are listed in order, so the key itself would come
 * first); any other 403, or a listing that fails, is the error it was.
 */
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { withTimeLimit } from '../../platform/abort-scope.js';
import { textOf } from '../../contract/text.js';
import { DEFAULT_MAX_DOCUMENT_BYTES } from '../../intake/checks.js';
import { errorName } from '../../platform/errors.js';
import { DOCUMENT_PREFIX } from '../../platform/resources.js';
import { readDocumentBytes } from '../../store/documents.js';
import type { LiveBudget } from './deadline.js';
import type { LiveDeps } from './deps.js';
import type { DocumentRef, LiveRefusal } from './request.js';

/** The referenced document's text, or why it is refused. */
export type ReferencedText = { ok: true; text: string } | { ok: false; refusal: LiveRefusal };

/** S3's answers for a key (or bucket) that does not exist, to a caller that may list the bucket. */
const MISSING = new Set(['NoSuchKey', 'NotFound', 'NoSuchBucket']);
/** S3's answers for a read it refuses (GetObject names it; a HeadObject 403 has no body, so no name). */
const FORBIDDEN = new Set(['AccessDenied', 'Forbidden']);

/** The S3 error's code (the SDK's name, or the code `readDocumentBytes` wrapped it with) and HTTP status. */
function s3Failure(error: unknown): { code: string; status: number | undefined } {
  const code = (error as { details?: { code?: string } }).details?.code ?? errorName(error) ?? 'Error';
  const statusOf = (e: unknown) => (e as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
  return { code, status: statusOf(error) ?? statusOf((error as { cause?: unknown }).cause) };
}

/**
 * Whether no object of `bucket` has exactly `key`: one ListObjectsV2 with the key as prefix and at most
 * one key back (a key sorts before every longer key it prefixes). A listing that fails answers `false`.
 */
async function confirmedAbsent(deps: Pick<LiveDeps, 's3'>, bucket: string, key: string): Promise<boolean> {
  try {
    const listed = await deps.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, MaxKeys: 1 }));
    return !(listed.Contents ?? []).some((object) => object.Key === key);
  } catch {
    return false;
  }
}

/** Reads the text `ref` names in the lane's bucket, within the request's work time. */
export async function readReferencedText(
  deps: Pick<LiveDeps, 's3' | 'lane' | 'now'>,
  ref: DocumentRef,
  budget: Pick<LiveBudget, 'workUntil'>,
  maxBytes = DEFAULT_MAX_DOCUMENT_BYTES,
): Promise<ReferencedText> {
  const bucket = deps.lane.resources.bucketName;
  const refuse = (reason: LiveRefusal['reason'], detail: string): ReferencedText => ({ ok: false, refusal: { reason, detail } });
  return withTimeLimit(Math.max(1, Math.floor(budget.workUntil - deps.now().getTime())), async (): Promise<ReferencedText> => {
    try {
      const head = await deps.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: ref.key }));
      const size = head.ContentLength ?? 0;
      if (size > maxBytes) return refuse('document_too_large', `documentRef object has ${size} bytes, over the limit of ${maxBytes}`);
      const bytes = await readDocumentBytes(deps.s3, { bucket, key: ref.key });
      if (bytes.byteLength > maxBytes) return refuse('document_too_large', `documentRef object has ${bytes.byteLength} bytes, over the limit of ${maxBytes}`);
      const verdict = textOf(bytes);
      return verdict.ok ? { ok: true, text: verdict.text } : refuse(verdict.problem, verdict.detail);
    } catch (error) {
      const notFound = () => refuse('document_not_found', `no object ${ref.key} in the lane's bucket`);
      const { code, status } = s3Failure(error);
      if (MISSING.has(code) || status === 404) return notFound();
      const forbidden = FORBIDDEN.has(code) || status === 403;
      if (forbidden && ref.key.startsWith(DOCUMENT_PREFIX) && (await confirmedAbsent(deps, bucket, ref.key))) return notFound();
      throw error;
    }
  });
}
