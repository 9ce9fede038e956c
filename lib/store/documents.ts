/**
 * Document text in a lane's bucket. The queue only ever carries a reference (bucket, key, hash);
 * the text itself lives here, in the lane's own region.
 *
 * Keys are content-addressed: `documents/<sha256>.txt`. The same text always maps to the same
 * object, so re-submitting a document (or retrying a put) rewrites identical bytes and never
 * creates a second copy.
 *
 * Encryption is left to the bucket's default: no `ServerSideEncryption` header is sent. The lane's
 * stack owns the bucket's encryption (S3 encrypts every new object with SSE-S3 at least, and a
 * stack may choose SSE-KMS with a bucket key); a per-request `AES256` header would silently
 * override a KMS default with a weaker one.
 */
import { GetObjectCommand, PutObjectCommand, DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { sha256Hex } from '../contract/job.js';
import { errorCode, RatelaneError } from '../platform/errors.js';
import { DOCUMENT_PREFIX } from '../platform/resources.js';

/** Key prefix of every stored document (the one the stack grants reads on). */
const DOCUMENT_KEY_PREFIX = DOCUMENT_PREFIX;

/** Content type of stored documents (the producer stores text only). */
const DOCUMENT_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** Where one document was stored. */
export interface StoredDocument {
  bucket: string;
  key: string;
  contentSha256: string;
  bytes: number;
}

/** Raised when a document cannot be stored or read; names bucket, key and code, never the text. */
export class DocumentStoreError extends RatelaneError {
  override name = 'DocumentStoreError';
  readonly kind: 'input' | 'unavailable';
  /** A missing or altered document stays so; anything else (network, throttling) may pass. */
  readonly retryable: boolean;
  constructor(
    message: string,
    readonly details: { bucket: string; key: string; code: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.retryable = details.code !== 'NoSuchKey' && details.code !== 'ContentHashMismatch';
    this.kind = this.retryable ? 'unavailable' : 'input';
  }
}

/** The object key of a document with this SHA-256 (hex). */
export function documentKeyFor(contentSha256: string): string {
  if (!/^[a-f0-9]{64}$/.test(contentSha256)) throw new TypeError('contentSha256 must be 64 lowercase hex characters');
  return `${DOCUMENT_KEY_PREFIX}${contentSha256}.txt`;
}

/**
 * Stores a document's text (UTF-8) in `bucket` under its content-addressed key. The S3 client must
 * be in the lane's region. The hash is also written as object metadata (`content-sha256`).
 *
 * @param contentSha256 the text's SHA-256 when the caller already has it (it is recomputed otherwise)
 * @throws {DocumentStoreError} when the put fails (`cause` holds the SDK error)
 */
export async function putDocument(s3: S3Client, input: { bucket: string; text: string; contentSha256?: string }): Promise<StoredDocument> {
  const body = Buffer.from(input.text, 'utf8');
  const contentSha256 = input.contentSha256 ?? sha256Hex(body);
  const key = documentKeyFor(contentSha256);
  try {
    await s3.send(
      new PutObjectCommand({
        Bucket: input.bucket,
        Key: key,
        Body: body,
        ContentType: DOCUMENT_CONTENT_TYPE,
        ContentLength: body.byteLength,
        Metadata: { 'content-sha256': contentSha256 },
      }),
    );
  } catch (error) {
    const code = errorCode(error);
    throw new DocumentStoreError(
      `could not store document ${key} (${body.byteLength} bytes) in bucket ${input.bucket}: ${code}`,
      { bucket: input.bucket, key, code },
      { cause: error },
    );
  }
  return { bucket: input.bucket, key, contentSha256, bytes: body.byteLength };
}

/**
 * Deletes the document of `contentSha256` from `bucket` (idempotent: S3 answers a missing key the same).
 *
 * @throws {@link DocumentStoreError}
 */
export async function deleteDocument(s3: S3Client, input: { bucket: string; contentSha256: string }): Promise<string> {
  const key = documentKeyFor(input.contentSha256);
  try {
    await s3.send(new DeleteObjectCommand({ Bucket: input.bucket, Key: key }));
  } catch (error) {
    const code = errorCode(error);
    throw new DocumentStoreError(
      `could not delete document ${key} from bucket ${input.bucket}: ${code}`,
      { bucket: input.bucket, key, code },
      { cause: error },
    );
  }
  return key;
}

/**
 * Reads a stored document's bytes back and checks their hash.
 *
 * @throws {DocumentStoreError} when the get fails (`code` from the SDK) or the bytes do not match
 *   `expectedSha256` (`code` = `ContentHashMismatch`)
 */
export async function readDocumentBytes(s3: S3Client, ref: { bucket: string; key: string; expectedSha256?: string }): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: ref.bucket, Key: ref.key }));
    if (!out.Body) throw new Error('empty response body');
    bytes = await out.Body.transformToByteArray();
  } catch (error) {
    const code = errorCode(error);
    throw new DocumentStoreError(
      `could not read document ${ref.key} from bucket ${ref.bucket}: ${code}`,
      { bucket: ref.bucket, key: ref.key, code },
      { cause: error },
    );
  }
  if (ref.expectedSha256 !== undefined) {
    const actual = sha256Hex(bytes);
    if (actual !== ref.expectedSha256) {
      throw new DocumentStoreError(`document ${ref.key} in bucket ${ref.bucket} has hash ${actual}, expected ${ref.expectedSha256}`, {
        bucket: ref.bucket,
        key: ref.key,
        code: 'ContentHashMismatch',
      });
    }
  }
  return bytes;
}

/**
 * Reads a stored document back as text (strict UTF-8) and checks its hash.
 *
 * @throws {DocumentStoreError} as {@link readDocumentBytes}, or with `code` = `NotText` when the bytes are not UTF-8
 */
export async function readDocument(s3: S3Client, ref: { bucket: string; key: string; expectedSha256?: string }): Promise<string> {
  const bytes = await readDocumentBytes(s3, ref);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new DocumentStoreError(
      `document ${ref.key} in bucket ${ref.bucket} is not UTF-8 text`,
      { bucket: ref.bucket, key: ref.key, code: 'NotText' },
      { cause: error },
    );
  }
}
