/**
 * The producer's second phase: store each lane's texts in its bucket (content-addressed), then
 * `SendMessageBatch` the jobs to the lane's queue in batches of at most 10 entries and 256 KiB.
 * Entries that fail server-side (`SenderFault: false`) and batch calls that throw (network, 5xx,
 * throttling) are retried a bounded number of times, waiting the policy's capped exponential backoff
 * (equal jitter); sender faults are not retried. Every document gets an outcome — never dropped.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { currentTraceHeader, traceSystemAttributes } from '../platform/tracing.js';
import { GetQueueUrlCommand, SendMessageBatchCommand, type SQSClient, type SendMessageBatchCommandOutput } from '@aws-sdk/client-sqs';
import { AWS_LIMITS } from '../config/lanes.js';
import { backoffCeilingMs, fullJitterBackoffMs } from '../policy/backoff.js';
import { errorCode, RatelaneError, shortMessage } from '../platform/errors.js';
import { putDocument } from '../store/documents.js';
import { jobFlowId } from '../contract/job.js';
import type { Prepared } from './checks.js';
import type { ItemError, RetrySettings, SubmitDeps } from './model.js';

/** Default bounded retry of batch calls, failed entries and S3 puts. */
export const DEFAULT_SEND_RETRY: RetrySettings = { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 3_000 };

/** GetQueueUrl answered without a URL. */
class MissingQueueUrlError extends RatelaneError {
  override name = 'MissingQueueUrlError';
  readonly kind = 'unavailable' as const;
  readonly retryable = true;
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

/** What sending needs: the deps, the retry settings, the sleep and jitter, and where outcomes go. */
export interface SendContext {
  deps: Pick<SubmitDeps, 'clientsFor' | 'queueUrlFor' | 'onProgress' | 'traceHeader'>;
  retry: RetrySettings;
  sleep(ms: number): Promise<void>;
  random(): number;
  record(p: Prepared, outcome: { status: 'sent'; messageId?: string } | { status: 'failed'; error: ItemError }): void;
}

const THROTTLING_CODES = new Set(['ThrottlingException', 'RequestThrottled', 'Throttling', 'SlowDown', 'RequestLimitExceeded', 'KmsThrottled']);

/** An SDK error's code: its `Code` (S3), else {@link errorCode} (a Node `code`, else the name). */
function sdkErrorCode(error: unknown): string {
  const code = (error as { Code?: unknown } | undefined)?.Code;
  return typeof code === 'string' ? code : errorCode(error);
}

/** A thrown call is retried unless the service says it was the caller's fault (and not throttling). */
function isRetryableError(error: unknown): boolean {
  const e = error as { $fault?: unknown; $retryable?: unknown } | undefined;
  if (e?.$retryable) return true;
  if (THROTTLING_CODES.has(sdkErrorCode(error))) return true;
  return e?.$fault !== 'client';
}

/**
 * The wait before retry number `attempt` (1 for the first retry): equal jitter on the policy's capped
 * exponential ceiling `min(maxDelayMs, baseDelayMs × 2^(attempt − 1))` — half the ceiling, plus a
 * full-jitter draw over the other half.
 */
function retryDelayMs(attempt: number, retry: RetrySettings, random: () => number): number {
  const ceiling = backoffCeilingMs({ exponent: attempt - 1, baseMs: retry.baseDelayMs, capMs: retry.maxDelayMs });
  return Math.round(ceiling / 2 + fullJitterBackoffMs({ exponent: 0, baseMs: ceiling / 2, capMs: ceiling / 2, random }));
}

/**
 * Sends one lane's documents: resolves the queue (a missing queue fails them all before anything is
 * stored), stores the texts, then sends the jobs in batches. Every document gets an outcome.
 */
export async function sendLane(items: Prepared[], ctx: SendContext): Promise<void> {
  const lane = items[0]!.lane;
  const clients = ctx.deps.clientsFor(lane.region);

  // The queue first: a missing queue fails fast, before anything is stored.
  let queueUrl: string;
  try {
    queueUrl = ctx.deps.queueUrlFor
      ? await ctx.deps.queueUrlFor(lane)
      : await withRetry(ctx, async () => {
          const out = await clients.sqs.send(new GetQueueUrlCommand({ QueueName: lane.resources.queueName }));
          if (!out.QueueUrl) throw new MissingQueueUrlError('GetQueueUrl returned no QueueUrl');
          return out.QueueUrl;
        });
  } catch (error) {
    const failure: ItemError = {
      code: sdkErrorCode(error),
      message: `queue ${lane.resources.queueName} in ${lane.region}: ${shortMessage(error)}`,
      stage: 'queue_url',
    };
    for (const p of items) ctx.record(p, { status: 'failed', error: failure });
    return;
  }

  const stored = await storeLane(items, clients.s3, ctx);
  const batches = planBatches(stored);
  for (const [i, batch] of batches.entries()) {
    await sendBatch(batch, i + 1, queueUrl, clients.sqs, ctx);
  }
}

/** Runs `call`, retrying retryable failures (of the error or its `cause`) up to `maxAttempts` tries. */
async function withRetry<T>(ctx: SendContext, call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause ?? error;
      if (attempt >= ctx.retry.maxAttempts || !isRetryableError(cause)) throw error;
      await ctx.sleep(retryDelayMs(attempt, ctx.retry, ctx.random));
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
        failedHashes.set(contentSha256, { code: sdkErrorCode(cause), message: shortMessage(error), stage: 'store' });
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

/** Sends one batch; retries entries that failed server-side and calls that threw, records each entry's outcome. */
async function sendBatch(batch: Prepared[], batchNo: number, queueUrl: string, sqs: SQSClient, ctx: SendContext): Promise<void> {
  const region = batch[0]!.lane.name;
  const pending = new Map(batch.map((p) => [entryIdFor(p), p]));
  const lastError = new Map<string, ItemError>();
  for (let attempt = 1; ; attempt++) {
    const trace = traceSystemAttributes(ctx.deps.traceHeader ?? currentTraceHeader());
    // Each job's flow is its message group: SQS fair queues deliver a quiet flow's messages before a backlogged one's.
    const entries = [...pending.values()].map((p) => ({
      Id: entryIdFor(p),
      MessageBody: p.body,
      MessageAttributes: p.attributes,
      MessageGroupId: jobFlowId(p.job),
      ...trace,
    }));
    let output: SendMessageBatchCommandOutput;
    try {
      output = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    } catch (error) {
      const failure: ItemError = { code: sdkErrorCode(error), message: shortMessage(error), stage: 'send' };
      const retrying = attempt < ctx.retry.maxAttempts && isRetryableError(error);
      ctx.deps.onProgress?.({
        type: 'batch',
        region,
        batch: batchNo,
        attempt,
        entries: entries.length,
        sent: 0,
        failed: retrying ? 0 : entries.length,
        retrying: retrying ? entries.length : 0,
        threw: failure.code,
      });
      if (!retrying) {
        for (const p of pending.values()) ctx.record(p, { status: 'failed', error: failure });
        return;
      }
      const delayMs = retryDelayMs(attempt, ctx.retry, ctx.random);
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
    const delayMs = retryDelayMs(attempt, ctx.retry, ctx.random);
    const reason = [...new Set([...pending.keys()].map((id) => lastError.get(id)!.code))].join(',');
    ctx.deps.onProgress?.({ type: 'retry', region, batch: batchNo, attempt, entries: pending.size, delayMs, reason });
    await ctx.sleep(delayMs);
  }
}
