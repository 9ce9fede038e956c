/**
 * A live request's `documentRef`: a document already stored under the lane bucket's documents prefix,
 * read with its size checked first (HeadObject) so an oversize object is refused without being read,
 * then decoded strictly as text. Missing objects are `document_not_found`.
 */
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { withAbortSignal } from '../../platform/abort-scope.js';
import { textOf } from '../../contract/text.js';
import { DEFAULT_MAX_DOCUMENT_BYTES } from '../../intake/checks.js';
import { errorName } from '../../platform/errors.js';
import { readDocumentBytes } from '../../store/documents.js';
import type { LiveBudget } from './deadline.js';
import type { LiveDeps } from './deps.js';
import type { DocumentRef, LiveRefusal } from './request.js';

/** The referenced document's text, or why it is refused. */
export type ReferencedText = { ok: true; text: string } | { ok: false; refusal: LiveRefusal };

const MISSING = new Set(['NoSuchKey', 'NotFound', 'NoSuchBucket']);

/** Reads the text `ref` names in the lane's bucket, within the request's work time. */
export async function readReferencedText(
  deps: Pick<LiveDeps, 's3' | 'lane' | 'now'>,
  ref: DocumentRef,
  budget: Pick<LiveBudget, 'workUntil'>,
  maxBytes = DEFAULT_MAX_DOCUMENT_BYTES,
): Promise<ReferencedText> {
  const bucket = deps.lane.resources.bucketName;
  const refuse = (reason: LiveRefusal['reason'], detail: string): ReferencedText => ({ ok: false, refusal: { reason, detail } });
  const signal = AbortSignal.timeout(Math.max(1, Math.floor(budget.workUntil - deps.now().getTime())));
  try {
    const head = await withAbortSignal(signal, () => deps.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: ref.key })));
    const size = head.ContentLength ?? 0;
    if (size > maxBytes) return refuse('document_too_large', `documentRef object has ${size} bytes, over the limit of ${maxBytes}`);
    const bytes = await withAbortSignal(signal, () => readDocumentBytes(deps.s3, { bucket, key: ref.key }));
    if (bytes.byteLength > maxBytes) return refuse('document_too_large', `documentRef object has ${bytes.byteLength} bytes, over the limit of ${maxBytes}`);
    const verdict = textOf(bytes);
    return verdict.ok ? { ok: true, text: verdict.text } : refuse(verdict.problem, verdict.detail);
  } catch (error) {
    const code = (error as { details?: { code?: string } }).details?.code ?? errorName(error) ?? 'Error';
    if (MISSING.has(code)) return refuse('document_not_found', `no object ${ref.key} in the lane's bucket`);
    throw error;
  }
}
