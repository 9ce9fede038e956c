/**
 * The producer's vocabulary, at the bottom of lib/intake: what a caller submits, the dependencies and
 * settings of a submission, and what comes back for each document. The checks (`checks.ts`), the send
 * (`send.ts`) and the producer (`producer.ts`) build on it.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LaneConfig, LaneSet } from '../config/lanes.js';
import type { Priority } from '../contract/job.js';

/** One document to submit. Exactly one of `text` or `path`. */
export interface DocumentInput {
  /** The document text (UTF-8). */
  text?: string;
  /** A file to read the text from (UTF-8). */
  path?: string;
  /** The caller's stable identity of the document; defaults to `path`, else `text:<sha256>`. */
  sourceId?: string;
  /** Region lane name (`us`, `eu`, …) or the lane's AWS region (`us-east-1`). */
  region: string;
  schemaVersion?: string;
  promptVersion?: string;
  /** Processing deadline; must be in the future. */
  deadline?: Date | string;
  /** Job id; defaults to a random UUID. */
  jobId?: string;
  /**
   * Who the job belongs to (an IAM principal's ARN, or a name the lane's readers know): only it, or a
   * principal granted the lane-wide read, reads the job through the live API; part of the idempotency
   * key. Absent: the job is read by lane-wide readers only.
   */
  tenant?: string;
  /**
   * `urgent` or `bulk` (the default): when the lane's quota binds, urgent jobs start first by the lane's
   * class weights (`fairness`). Stating `urgent` needs a grant in the lane's `producers` config.
   */
  priority?: Priority;
}

/** What to submit. */
export interface SubmitRequest {
  documents: readonly DocumentInput[];
}

/** The SDK clients of one AWS region. */
interface LaneClients {
  sqs: SQSClient;
  s3: S3Client;
}

/** A progress event (for a CLI's stderr or a caller's metrics); never carries document text. */
export type SubmitProgress =
  /** All documents validated; sending of the `total` valid ones starts (`rejected` will not be sent). */
  | { type: 'validated'; total: number; rejected: number; lanes: Record<string, number> }
  /** A lane's documents were stored in its bucket (`failed` could not be stored). */
  | { type: 'stored'; region: string; stored: number; failed: number }
  /** One SendMessageBatch call completed (or threw: `threw` is set). */
  | { type: 'batch'; region: string; batch: number; attempt: number; entries: number; sent: number; failed: number; retrying: number; threw?: string }
  /** A batch (or some of its entries) will be retried after `delayMs`. */
  | { type: 'retry'; region: string; batch: number; attempt: number; entries: number; delayMs: number; reason: string };

/** Dependencies and settings of {@link submitDocuments}. */
export interface SubmitDeps {
  lanes: LaneSet;
  /** The clients for an AWS region (called with the lane's region, never another). */
  clientsFor(region: string): LaneClients;
  /** The lane's queue URL; when absent it is resolved with GetQueueUrl (once per lane per call). */
  queueUrlFor?(lane: LaneConfig): string | Promise<string>;
  now(): Date;
  /**
   * Whether a (schemaVersion, promptVersion) pair is known (default: the extraction schema registry's
   * `isKnownPromptVersion`).
   */
  isKnownVersion?(schemaVersion: string, promptVersion: string): boolean;
  /** Versions for documents that name none (default: the registry's `DEFAULT_SCHEMA_VERSION` / `DEFAULT_PROMPT_VERSION`). */
  defaultVersions?: { schemaVersion: string; promptVersion: string };
  /** Largest document in UTF-8 bytes (default {@link DEFAULT_MAX_DOCUMENT_BYTES}). */
  maxDocumentBytes?: number;
  /**
   * Largest document in estimated tokens. Default: the lane's provider `tokensPerMinute`, since a
   * document bigger than one minute's token budget could never be admitted.
   */
  maxInputTokens?: number;
  retry?: Partial<RetrySettings>;
  /** Waits between send retries (default: the real sleep). */
  sleep?(ms: number): Promise<void>;
  /** Source of jitter in [0, 1) (default Math.random). */
  random?(): number;
  /** New job ids (default randomUUID). */
  newJobId?(): string;
  onProgress?(event: SubmitProgress): void;
  /**
   * All-or-nothing intake (default `false`). When `true`, any invalid document makes the call throw
   * {@link SubmissionRejectedError} and nothing is sent; when `false`, invalid documents are reported
   * as `rejected` in the result and every valid document is stored and sent.
   */
  atomic?: boolean;
  /**
   * The producer's X-Ray trace header, sent with each job's message (`AWSTraceHeader`) so the lane's trace
   * of the job links to it. Default: the running Lambda invocation's (`_X_AMZN_TRACE_ID`), when there is one.
   */
  traceHeader?: string;
}

/** Bounded retry with capped exponential backoff (equal jitter). */
export interface RetrySettings {
  /** Total tries, including the first (≥ 1). */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Why one document could not be stored or sent. */
export interface ItemError {
  /** SQS/S3 error code (`InternalError`, `InvalidParameterValue`, `ECONNREFUSED`, …). */
  code: string;
  message: string;
  /** SQS's `SenderFault` for per-entry failures. */
  senderFault?: boolean;
  /** Which step failed (`validation`: the document was rejected at intake; `code` is its {@link RejectionReason}). */
  stage: 'validation' | 'queue_url' | 'store' | 'send';
}

/**
 * The outcome of one document. A `rejected` document was never stored or sent; its `sourceId`,
 * `jobId` and `idempotencyKey` are empty strings when they were never determined, and `region` is
 * the lane name when the lane was found, else the region as given (or empty).
 */
export interface SubmitItemResult {
  index: number;
  sourceId: string;
  jobId: string;
  /** The lane name. */
  region: string;
  idempotencyKey: string;
  status: 'sent' | 'failed' | 'rejected';
  messageId?: string;
  error?: ItemError;
}

/** The outcome of a submission: every document, in input order, plus counts. */
export interface SubmitResult {
  total: number;
  sent: number;
  /** Valid documents that could not be stored or sent. */
  failed: number;
  /** Invalid documents, never stored or sent (always 0 with `deps.atomic`, which throws instead). */
  rejected: number;
  results: SubmitItemResult[];
}
