/**
 * The producer: how a service team puts documents on a region lane.
 *
 * `submitDocuments` works in two phases:
 * 1. **Validate everything** (shape, lane, versions, deadline, size, token budget, job contract,
 *    message size). An invalid document is never stored or sent: by default it is reported in the
 *    result as `rejected` with its reason (`error.stage: 'validation'`) and the valid documents go on
 *    as usual. With `deps.atomic` the submission is all-or-nothing instead: any invalid document makes
 *    it throw {@link SubmissionRejectedError} listing each bad item, and nothing is written anywhere —
 *    not to S3, not to SQS. The checks are in intake-checks.ts.
 * 2. **Send** the valid documents, lane by lane: store each text in the lane's bucket (content-addressed), then
 *    `SendMessageBatch` the jobs to the lane's queue in batches of at most 10 entries and 256 KiB.
 *    Entries that fail server-side (`SenderFault: false`) and batch calls that throw (network,
 *    5xx, throttling) are retried a bounded number of times with the policy's backoff; sender faults
 *    are not retried (send.ts). Every document ends up in the result as `sent`, `failed` or
 *    `rejected` — never dropped.
 *
 * A retried batch call whose first try reached SQS but lost its response can enqueue a job twice;
 * that is safe because the consumer commits once per `idempotencyKey`.
 *
 * Nothing here logs or puts document text in an error: items are named by index, sourceId, sizes
 * and hashes.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LaneConfig, LaneSet } from '../config/lanes.js';
import { RatelaneError } from '../platform/errors.js';
import { findLane, prepareDocument, type Prepared, type RejectedItem, type RejectionReason } from './checks.js';
import { DEFAULT_SEND_RETRY, sendLane, type RetrySettings, type SendContext } from './send.js';

export { DEFAULT_MAX_DOCUMENT_BYTES, messageSizeBytes, type RejectedItem, type RejectionReason } from './checks.js';
export { DEFAULT_SEND_RETRY, planBatches, retryDelayMs, type RetrySettings } from './send.js';

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
}

/** What to submit. */
export interface SubmitRequest {
  documents: readonly DocumentInput[];
}

/** The SDK clients of one AWS region. */
export interface LaneClients {
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
}

/**
 * Raised when a submission is empty, or (with `deps.atomic`) when at least one document is invalid;
 * nothing was stored or sent.
 */
export class SubmissionRejectedError extends RatelaneError {
  override name = 'SubmissionRejectedError';
  readonly kind = 'input' as const;
  readonly retryable = false;

  constructor(
    readonly items: readonly RejectedItem[],
    readonly total: number,
    options?: { cause?: unknown },
  ) {
    const shown = items
      .slice(0, 5)
      .map((i) => `#${i.index}${i.sourceId ? ` (${i.sourceId})` : ''} ${i.reason}: ${i.detail}`)
      .join('; ');
    super(`rejected ${items.length} of ${total} document(s), nothing was sent: ${shown}${items.length > 5 ? '; …' : ''}`, options);
  }
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

/**
 * Validates, stores and enqueues documents. See the module comment for the two phases.
 *
 * @throws {SubmissionRejectedError} when no documents are given, or with `deps.atomic` when any document is invalid (then nothing was sent)
 * @returns every document as `sent`, `failed` or `rejected`, in input order
 */
export async function submitDocuments(request: SubmitRequest, deps: SubmitDeps): Promise<SubmitResult> {
  const documents: readonly unknown[] = Array.isArray(request?.documents) ? request.documents : [];
  if (documents.length === 0) {
    throw new SubmissionRejectedError([{ index: 0, reason: 'bad_input', detail: 'no documents given' }], 0);
  }
  const now = deps.now();
  const { prepared, rejected } = await validateAll(documents, deps, now);
  if (rejected.length > 0 && deps.atomic) throw new SubmissionRejectedError(rejected, documents.length);

  const results: SubmitItemResult[] = new Array(documents.length);
  for (const item of rejected) results[item.index] = rejectedResult(item, documents[item.index], deps);

  const byLane = new Map<string, Prepared[]>();
  for (const p of prepared) byLane.set(p.lane.name, [...(byLane.get(p.lane.name) ?? []), p]);
  deps.onProgress?.({
    type: 'validated',
    total: prepared.length,
    rejected: rejected.length,
    lanes: Object.fromEntries([...byLane].map(([n, ps]) => [n, ps.length])),
  });

  const record = (p: Prepared, outcome: { status: 'sent'; messageId?: string } | { status: 'failed'; error: ItemError }): void => {
    results[p.index] = {
      index: p.index,
      sourceId: p.job.input.sourceId,
      jobId: p.job.jobId,
      region: p.job.region,
      idempotencyKey: p.job.idempotencyKey,
      ...outcome,
    };
  };
  const ctx: SendContext = {
    deps,
    retry: { ...DEFAULT_SEND_RETRY, ...deps.retry },
    sleep: deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    random: deps.random ?? Math.random,
    record,
  };
  for (const items of byLane.values()) {
    await sendLane(items, ctx);
  }
  const sent = results.filter((r) => r.status === 'sent').length;
  const failed = results.filter((r) => r.status === 'failed').length;
  return { total: results.length, sent, failed, rejected: rejected.length, results };
}

/** The result entry of a document rejected at intake: what is known of it, and why. */
function rejectedResult(item: RejectedItem, raw: unknown, deps: SubmitDeps): SubmitItemResult {
  const doc = typeof raw === 'object' && raw !== null ? (raw as Partial<Record<keyof DocumentInput, unknown>>) : {};
  const givenRegion = typeof doc.region === 'string' ? doc.region : '';
  const lane = givenRegion ? findLane(deps.lanes, givenRegion) : undefined;
  return {
    index: item.index,
    sourceId: item.sourceId ?? '',
    jobId: typeof doc.jobId === 'string' ? doc.jobId : '',
    region: lane?.name ?? givenRegion,
    idempotencyKey: '',
    status: 'rejected',
    error: { code: item.reason, message: item.detail, stage: 'validation' },
  };
}

// ---------------------------------------------------------------------------------------------
// Phase 1: validation

/** Validates every document; returns the valid ones and the rejected ones (sorted by index). */
async function validateAll(documents: readonly unknown[], deps: SubmitDeps, now: Date): Promise<{ prepared: Prepared[]; rejected: RejectedItem[] }> {
  const rejected: RejectedItem[] = [];
  const prepared: Prepared[] = [];
  for (const [index, doc] of documents.entries()) {
    const outcome = await prepareDocument(doc, index, deps, now);
    if ('reason' in outcome) rejected.push(outcome);
    else prepared.push(outcome);
  }
  const seenJobIds = new Map<string, number>();
  const unique: Prepared[] = [];
  for (const p of prepared) {
    const first = seenJobIds.get(p.job.jobId);
    if (first !== undefined) {
      rejected.push({ index: p.index, sourceId: p.job.input.sourceId, reason: 'bad_input', detail: `jobId ${p.job.jobId} repeats document #${first}'s` });
    } else {
      seenJobIds.set(p.job.jobId, p.index);
      unique.push(p);
    }
  }
  return { prepared: unique, rejected: rejected.sort((a, b) => a.index - b.index) };
}
