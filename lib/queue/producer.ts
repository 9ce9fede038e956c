/**
 * The producer: how a service team puts documents on a region lane.
 *
 * `submitDocuments` works in two phases:
 * 1. **Validate everything** (shape, lane, versions, deadline, size, token budget, job contract,
 *    message size). An invalid document is never stored or sent: by default it is reported in the
 *    result as `rejected` with its reason (`error.stage: 'validation'`) and the valid documents go on
 *    as usual. With `deps.atomic` the submission is all-or-nothing instead: any invalid document makes
 *    it throw {@link SubmissionRejectedError} listing each bad item, and nothing is written anywhere —
 *    not to S3, not to SQS.
 * 2. **Send** the valid documents, lane by lane: store each text in the lane's bucket (content-addressed), then
 *    `SendMessageBatch` the jobs to the lane's queue in batches of at most 10 entries and 256 KiB.
 *    Entries that fail server-side (`SenderFault: false`) and batch calls that throw (network,
 *    5xx, throttling) are retried a bounded number of times with a short backoff; sender faults are
 *    not retried. Every document ends up in the result as `sent`, `failed` or `rejected` — never
 *    dropped.
 *
 * A retried batch call whose first try reached SQS but lost its response can enqueue a job twice;
 * that is safe because the consumer commits once per `idempotencyKey`.
 *
 * Nothing here logs or puts document text in an error: items are named by index, sourceId, sizes
 * and hashes.
 */
import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { GetQueueUrlCommand, SendMessageBatchCommand, type SQSClient, type SendMessageBatchCommandOutput } from '@aws-sdk/client-sqs';
import { AWS_LIMITS, type LaneConfig, type LaneSet } from '../config/lanes.js';
import { JOB_CONTRACT_VERSION, JobSchema, estimateTokens, idempotencyKeyFor, jobMessageAttributes, sha256Hex, type Job } from '../contract/job.js';
import { documentKeyFor, putDocument } from '../store/documents.js';

/** Default largest document accepted (UTF-8 bytes): 1 MiB. */
export const DEFAULT_MAX_DOCUMENT_BYTES = 1024 * 1024;

/**
 * Versions used when neither the document nor `deps.defaultVersions` names one. They mirror the
 * extraction schema registry's defaults; wire the registry's constants through `deps.defaultVersions`.
 */
export const FALLBACK_VERSIONS = { schemaVersion: 'invoice@1', promptVersion: 'invoice-extract@1' } as const;

/** Default bounded retry of batch calls, failed entries and S3 puts. */
export const DEFAULT_SEND_RETRY: RetrySettings = { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 3_000 };

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

/** Bounded retry with capped exponential backoff (equal jitter). */
export interface RetrySettings {
  /** Total tries, including the first (≥ 1). */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
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
  /** Whether a (schemaVersion, promptVersion) pair is known; wire the extraction schema registry here. */
  isKnownVersion?(schemaVersion: string, promptVersion: string): boolean;
  /** Versions for documents that name none (default {@link FALLBACK_VERSIONS}). */
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

/** Why a document was rejected before anything was sent. */
export type RejectionReason =
  | 'unknown_region'
  | 'empty_document'
  | 'document_too_large'
  | 'unknown_version'
  | 'deadline_passed'
  | 'bad_input'
  | 'message_too_large';

/** One rejected document. `detail` names sizes, limits and fields — never the text. */
export interface RejectedItem {
  index: number;
  sourceId?: string;
  reason: RejectionReason;
  detail: string;
}

/**
 * Raised when a submission is empty, or (with `deps.atomic`) when at least one document is invalid;
 * nothing was stored or sent.
 */
export class SubmissionRejectedError extends Error {
  override name = 'SubmissionRejectedError';
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

/** A validated document, ready to store and send. */
interface Prepared {
  index: number;
  lane: LaneConfig;
  text: string;
  job: Job;
  body: string;
  attributes: ReturnType<typeof jobMessageAttributes>;
  messageBytes: number;
}

const VERSION_PATTERN = /^[a-z][a-z0-9-]*@\d+$/;

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

/** Finds a lane by its name or by its AWS region. */
function findLane(lanes: LaneSet, region: string): LaneConfig | undefined {
  return lanes[region] ?? Object.values(lanes).find((lane) => lane.region === region);
}

function reject(index: number, sourceId: string | undefined, reason: RejectionReason, detail: string): RejectedItem {
  return sourceId === undefined ? { index, reason, detail } : { index, sourceId, reason, detail };
}

async function prepareDocument(raw: unknown, index: number, deps: SubmitDeps, now: Date): Promise<Prepared | RejectedItem> {
  if (typeof raw !== 'object' || raw === null) return reject(index, undefined, 'bad_input', 'document is not an object');
  const doc = raw as Partial<Record<keyof DocumentInput, unknown>>;
  const givenSourceId = typeof doc.sourceId === 'string' ? doc.sourceId : undefined;
  const path = typeof doc.path === 'string' ? doc.path : undefined;
  const provisionalId = givenSourceId ?? path ?? (typeof doc.text === 'string' ? `text:${sha256Hex(doc.text)}` : undefined);
  const bad = (reason: RejectionReason, detail: string) => reject(index, provisionalId, reason, detail);

  // Shape.
  if (doc.text !== undefined && doc.path !== undefined) return bad('bad_input', 'give exactly one of text or path, not both');
  if (doc.text === undefined && doc.path === undefined) return bad('bad_input', 'give exactly one of text or path');
  if (doc.text !== undefined && typeof doc.text !== 'string') return bad('bad_input', 'text must be a string');
  if (doc.path !== undefined && (typeof doc.path !== 'string' || doc.path.length === 0)) return bad('bad_input', 'path must be a non-empty string');
  if (doc.sourceId !== undefined && (typeof doc.sourceId !== 'string' || doc.sourceId.length === 0 || doc.sourceId.length > 512)) {
    return bad('bad_input', 'sourceId must be a string of 1 to 512 characters');
  }
  for (const field of ['region', 'schemaVersion', 'promptVersion', 'jobId'] as const) {
    if (doc[field] !== undefined && typeof doc[field] !== 'string') return bad('bad_input', `${field} must be a string`);
  }

  // Lane.
  if (typeof doc.region !== 'string' || doc.region.length === 0) return bad('unknown_region', 'region is missing');
  const lane = findLane(deps.lanes, doc.region);
  if (!lane) return bad('unknown_region', `unknown region "${doc.region}"; known lanes: ${Object.keys(deps.lanes).join(', ')}`);

  // Versions.
  const defaults = deps.defaultVersions ?? FALLBACK_VERSIONS;
  const schemaVersion = (doc.schemaVersion as string | undefined) ?? defaults.schemaVersion;
  const promptVersion = (doc.promptVersion as string | undefined) ?? defaults.promptVersion;
  if (!VERSION_PATTERN.test(schemaVersion) || !VERSION_PATTERN.test(promptVersion)) {
    return bad('unknown_version', `versions must look like name@N (schemaVersion "${schemaVersion}", promptVersion "${promptVersion}")`);
  }
  if (deps.isKnownVersion && !deps.isKnownVersion(schemaVersion, promptVersion)) {
    return bad('unknown_version', `unknown schemaVersion/promptVersion pair ${schemaVersion} / ${promptVersion}`);
  }

  // Deadline.
  let deadline: string | undefined;
  if (doc.deadline !== undefined) {
    const d = doc.deadline instanceof Date ? doc.deadline : typeof doc.deadline === 'string' ? new Date(doc.deadline) : undefined;
    if (!d || Number.isNaN(d.getTime())) return bad('bad_input', 'deadline is not a valid date (use ISO 8601)');
    if (d.getTime() <= now.getTime()) return bad('deadline_passed', `deadline ${d.toISOString()} is not after now (${now.toISOString()})`);
    deadline = d.toISOString();
  }

  // Job id.
  const jobId = (doc.jobId as string | undefined) ?? (deps.newJobId ?? randomUUID)();
  if (!JobSchema.shape.jobId.safeParse(jobId).success) return bad('bad_input', 'jobId must be 1 to 128 of A-Z a-z 0-9 . _ : -');

  // Content.
  const maxBytes = deps.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
  let text: string;
  if (path !== undefined) {
    try {
      const info = await stat(path);
      if (!info.isFile()) return bad('bad_input', 'path is not a regular file');
      if (info.size > maxBytes) return bad('document_too_large', `file has ${info.size} bytes, over the limit of ${maxBytes}`);
      text = await readFile(path, 'utf8');
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      return bad('bad_input', `cannot read file (${typeof code === 'string' ? code : 'error'})`);
    }
  } else {
    text = doc.text as string;
  }
  const contentSha256 = sha256Hex(text);
  const sourceId = givenSourceId ?? path ?? `text:${contentSha256}`;
  const badDoc = (reason: RejectionReason, detail: string) => reject(index, sourceId, reason, detail);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (text.trim().length === 0) return badDoc('empty_document', bytes === 0 ? 'document is empty' : `document is whitespace only (${bytes} bytes)`);
  if (bytes > maxBytes) return badDoc('document_too_large', `document has ${bytes} bytes, over the limit of ${maxBytes}`);
  const estimatedTokens = estimateTokens(text);
  const maxTokens = deps.maxInputTokens ?? lane.provider.limits.tokensPerMinute;
  if (estimatedTokens > maxTokens) {
    return badDoc('document_too_large', `document is ~${estimatedTokens} tokens, over the input budget of ${maxTokens}`);
  }

  // Job contract.
  const candidate: Job = {
    contractVersion: JOB_CONTRACT_VERSION,
    jobId,
    idempotencyKey: idempotencyKeyFor({ sourceId, contentSha256, promptVersion, schemaVersion }),
    region: lane.name,
    input: { bucket: lane.resources.bucketName, key: documentKeyFor(contentSha256), sourceId, contentSha256, bytes, estimatedTokens },
    schemaVersion,
    promptVersion,
    attempt: 0,
    deferrals: 0,
    eligibleAt: now.toISOString(),
    ...(deadline !== undefined ? { deadline } : {}),
    createdAt: now.toISOString(),
  };
  const parsed = JobSchema.safeParse(candidate);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).slice(0, 3);
    return badDoc('bad_input', `job contract invalid: ${fields.join('; ')}`);
  }
  const job = parsed.data;
  const body = JSON.stringify(job);
  const attributes = jobMessageAttributes(job);
  const messageBytes = messageSizeBytes(body, attributes);
  if (messageBytes > AWS_LIMITS.maxMessageBytes) {
    return badDoc('message_too_large', `job message is ${messageBytes} bytes, over SQS's ${AWS_LIMITS.maxMessageBytes}`);
  }
  return { index, lane, text, job, body, attributes, messageBytes };
}

/**
 * Size of an SQS message as SQS counts it: the body plus every attribute's name, data type and
 * value (UTF-8 bytes).
 */
export function messageSizeBytes(body: string, attributes: Readonly<Record<string, { DataType: string; StringValue?: string }>>): number {
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, value] of Object.entries(attributes)) {
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value.DataType, 'utf8') + Buffer.byteLength(value.StringValue ?? '', 'utf8');
  }
  return size;
}

/**
 * Splits items into SendMessageBatch-sized groups, in order: at most `maxEntries` entries and at
 * most `maxBytes` summed message size per group. An item bigger than `maxBytes` alone gets a group
 * of its own (the producer rejects such items before this point).
 */
export function planBatches<T extends { messageBytes: number }>(
  items: readonly T[],
  maxEntries: number = AWS_LIMITS.maxBatchEntries,
  maxBytes: number = AWS_LIMITS.maxMessageBytes,
): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length > 0 && (current.length >= maxEntries || bytes + item.messageBytes > maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += item.messageBytes;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

// ---------------------------------------------------------------------------------------------
// Phase 2: store and send

interface SendContext {
  deps: SubmitDeps;
  retry: RetrySettings;
  sleep(ms: number): Promise<void>;
  random(): number;
  record(p: Prepared, outcome: { status: 'sent'; messageId?: string } | { status: 'failed'; error: ItemError }): void;
}

const THROTTLING_CODES = new Set(['ThrottlingException', 'RequestThrottled', 'Throttling', 'SlowDown', 'RequestLimitExceeded', 'KmsThrottled']);

function errorCode(error: unknown): string {
  const e = error as { name?: unknown; code?: unknown; Code?: unknown } | undefined;
  if (typeof e?.Code === 'string') return e.Code;
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.name === 'string' && e.name !== 'Error') return e.name;
  return 'Error';
}

function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}

/** A thrown call is retried unless the service says it was the caller's fault (and not throttling). */
function isRetryableError(error: unknown): boolean {
  const e = error as { $fault?: unknown; $retryable?: unknown } | undefined;
  if (e?.$retryable) return true;
  if (THROTTLING_CODES.has(errorCode(error))) return true;
  return e?.$fault !== 'client';
}

function backoffMs(attempt: number, ctx: SendContext): number {
  const ceiling = Math.min(ctx.retry.maxDelayMs, ctx.retry.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (ctx.random() * ceiling) / 2);
}

async function sendLane(items: Prepared[], ctx: SendContext): Promise<void> {
  const lane = items[0]!.lane;
  const clients = ctx.deps.clientsFor(lane.region);

  // The queue first: a missing queue fails fast, before anything is stored.
  let queueUrl: string;
  try {
    queueUrl = ctx.deps.queueUrlFor
      ? await ctx.deps.queueUrlFor(lane)
      : await withRetry(ctx, async () => {
          const out = await clients.sqs.send(new GetQueueUrlCommand({ QueueName: lane.resources.queueName }));
          if (!out.QueueUrl) throw new Error('GetQueueUrl returned no QueueUrl');
          return out.QueueUrl;
        });
  } catch (error) {
    const failure: ItemError = { code: errorCode(error), message: `queue ${lane.resources.queueName} in ${lane.region}: ${errorMessage(error)}`, stage: 'queue_url' };
    for (const p of items) ctx.record(p, { status: 'failed', error: failure });
    return;
  }

  const stored = await storeLane(items, clients.s3, ctx);
  const batches = planBatches(stored);
  for (const [i, batch] of batches.entries()) {
    await sendBatch(batch, i + 1, queueUrl, clients.sqs, ctx);
  }
}

async function withRetry<T>(ctx: SendContext, call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause ?? error;
      if (attempt >= ctx.retry.maxAttempts || !isRetryableError(cause)) throw error;
      await ctx.sleep(backoffMs(attempt, ctx));
    }
  }
}

/** Stores a lane's texts (each distinct content once, a few at a time); returns those stored. */
async function storeLane(items: Prepared[], s3: S3Client, ctx: SendContext): Promise<Prepared[]> {
  const lane = items[0]!.lane;
  const byHash = new Map<string, Prepared[]>();
  for (const p of items) byHash.set(p.job.input.contentSha256, [...(byHash.get(p.job.input.contentSha256) ?? []), p]);
  const pending = [...byHash.entries()];
  const failedHashes = new Map<string, ItemError>();
  const worker = async (): Promise<void> => {
    for (let next = pending.shift(); next; next = pending.shift()) {
      const [contentSha256, group] = next;
      try {
        await withRetry(ctx, () => putDocument(s3, { bucket: lane.resources.bucketName, text: group[0]!.text, contentSha256 }));
      } catch (error) {
        const cause = (error as { cause?: unknown }).cause ?? error;
        failedHashes.set(contentSha256, { code: errorCode(cause), message: errorMessage(error), stage: 'store' });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, pending.length) }, worker));
  const stored: Prepared[] = [];
  for (const p of items) {
    const failure = failedHashes.get(p.job.input.contentSha256);
    if (failure) ctx.record(p, { status: 'failed', error: failure });
    else stored.push(p);
  }
  ctx.deps.onProgress?.({ type: 'stored', region: lane.name, stored: stored.length, failed: items.length - stored.length });
  return stored;
}

/** Entry ids are the document index: unique within any batch of one submission. */
const entryIdFor = (p: Prepared): string => `d${p.index}`;

async function sendBatch(batch: Prepared[], batchNo: number, queueUrl: string, sqs: SQSClient, ctx: SendContext): Promise<void> {
  const region = batch[0]!.lane.name;
  const pending = new Map(batch.map((p) => [entryIdFor(p), p]));
  const lastError = new Map<string, ItemError>();
  for (let attempt = 1; ; attempt++) {
    const entries = [...pending.values()].map((p) => ({ Id: entryIdFor(p), MessageBody: p.body, MessageAttributes: p.attributes }));
    let output: SendMessageBatchCommandOutput;
    try {
      output = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    } catch (error) {
      const failure: ItemError = { code: errorCode(error), message: errorMessage(error), stage: 'send' };
      const retrying = attempt < ctx.retry.maxAttempts && isRetryableError(error);
      ctx.deps.onProgress?.({
        type: 'batch', region, batch: batchNo, attempt, entries: entries.length, sent: 0,
        failed: retrying ? 0 : entries.length, retrying: retrying ? entries.length : 0, threw: failure.code,
      });
      if (!retrying) {
        for (const p of pending.values()) ctx.record(p, { status: 'failed', error: failure });
        return;
      }
      const delayMs = backoffMs(attempt, ctx);
      ctx.deps.onProgress?.({ type: 'retry', region, batch: batchNo, attempt, entries: entries.length, delayMs, reason: failure.code });
      await ctx.sleep(delayMs);
      continue;
    }

    let sent = 0;
    let failed = 0;
    for (const ok of output.Successful ?? []) {
      const p = ok.Id !== undefined ? pending.get(ok.Id) : undefined;
      if (!p) continue;
      ctx.record(p, ok.MessageId !== undefined ? { status: 'sent', messageId: ok.MessageId } : { status: 'sent' });
      pending.delete(ok.Id!);
      sent++;
    }
    for (const bad of output.Failed ?? []) {
      const p = bad.Id !== undefined ? pending.get(bad.Id) : undefined;
      if (!p) continue;
      const failure: ItemError = { code: bad.Code ?? 'Unknown', message: bad.Message ?? '', senderFault: bad.SenderFault === true, stage: 'send' };
      if (bad.SenderFault) {
        ctx.record(p, { status: 'failed', error: failure });
        pending.delete(bad.Id!);
        failed++;
      } else {
        lastError.set(bad.Id!, failure);
      }
    }
    // Entries in neither list are treated like a server-side failure: retried, never dropped.
    const reported = new Set((output.Failed ?? []).map((f) => f.Id));
    for (const id of pending.keys()) {
      if (!reported.has(id)) {
        lastError.set(id, { code: 'MissingFromResponse', message: 'entry was neither in Successful nor in Failed', senderFault: false, stage: 'send' });
      }
    }

    const retrying = pending.size > 0 && attempt < ctx.retry.maxAttempts;
    if (pending.size > 0 && !retrying) {
      for (const [id, p] of pending) ctx.record(p, { status: 'failed', error: lastError.get(id)! });
      failed += pending.size;
    }
    ctx.deps.onProgress?.({ type: 'batch', region, batch: batchNo, attempt, entries: entries.length, sent, failed, retrying: retrying ? pending.size : 0 });
    if (!retrying) return;
    const delayMs = backoffMs(attempt, ctx);
    const reason = [...new Set([...pending.keys()].map((id) => lastError.get(id)!.code))].join(',');
    ctx.deps.onProgress?.({ type: 'retry', region, batch: batchNo, attempt, entries: pending.size, delayMs, reason });
    await ctx.sleep(delayMs);
  }
}
