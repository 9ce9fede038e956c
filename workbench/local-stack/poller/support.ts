/**
 * The event source poller's building blocks, each testable on its own: reading a handler's
 * `ReportBatchItemFailures` response, the invocation slots (`MaximumConcurrency`), an abortable sleep,
 * the function timeout (which aborts the invocation's signal), and deleting what succeeded.
 */
import { DeleteMessageBatchCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { DeleteFailedEvent } from './events.js';
import { FunctionTimeoutError, InvocationAbortError, SQS_MAX_BATCH } from './options.js';

/** The verdict on a handler's response: which records to keep, or why the whole batch failed. */
export type BatchResponseVerdict = { ok: true; failedIds: ReadonlySet<string> } | { ok: false; message: string };

/**
 * Reads a handler response with `ReportBatchItemFailures` semantics (pure).
 * Success: null/undefined, no `batchItemFailures`, or an empty list. Whole-batch failure: not
 * JSON-serializable, `batchItemFailures` not a list, an entry without a non-empty string
 * `itemIdentifier`, or an `itemIdentifier` that is not a message id of the batch.
 */
export function interpretBatchResponse(response: unknown, messageIds: readonly string[]): BatchResponseVerdict {
  let json: unknown;
  try {
    // What Lambda sees is the serialized response.
    json = JSON.parse(JSON.stringify(response) ?? 'null');
  } catch (error) {
    return { ok: false, message: `response is not JSON-serializable: ${String(error)}` };
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return { ok: true, failedIds: new Set() };
  const failures = (json as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return { ok: true, failedIds: new Set() };
  if (!Array.isArray(failures)) return { ok: false, message: 'batchItemFailures is not a list' };
  const known = new Set(messageIds);
  const failedIds = new Set<string>();
  for (const entry of failures as unknown[]) {
    const id = entry !== null && typeof entry === 'object' ? (entry as { itemIdentifier?: unknown }).itemIdentifier : undefined;
    if (typeof id !== 'string' || id === '') {
      return { ok: false, message: `batchItemFailures entry without an itemIdentifier: ${JSON.stringify(entry)}` };
    }
    if (!known.has(id)) return { ok: false, message: `itemIdentifier ${JSON.stringify(id)} is not a message id of the batch` };
    failedIds.add(id);
  }
  return { ok: true, failedIds };
}

/** A counting semaphore whose waiters give up when the signal aborts. */
export class Slots {
  #free: number;
  readonly #waiters: Array<() => void> = [];

  constructor(size: number) {
    this.#free = size;
  }

  /** Resolves with a release function, or `undefined` when `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<(() => void) | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve) => {
      const onAbort = () => {
        const index = this.#waiters.indexOf(waiter);
        if (index !== -1) this.#waiters.splice(index, 1);
        resolve(undefined);
      };
      const waiter = () => {
        signal.removeEventListener('abort', onAbort);
        resolve(this.#releaser());
      };
      this.#waiters.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (next) next();
      else this.#free++;
    };
  }
}

/** Resolves after `ms`, or early (without error) when `signal` aborts; leaves no timer behind. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Runs `fn` and rejects with {@link FunctionTimeoutError} when `deadline` (epoch ms, real time) passes.
 * At that moment `controller` (when given) is aborted with an {@link InvocationAbortError} naming the
 * timeout, so work that listens to its signal stops as it would when Lambda ends an invocation. A
 * handler that ignores the signal cannot be killed: it keeps running in the background, its result
 * ignored.
 */
export async function runWithTimeout<T>(fn: () => Promise<T>, deadline: number, controller?: AbortController): Promise<T> {
  const timeoutMs = Math.max(0, deadline - Date.now());
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new FunctionTimeoutError(`Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`);
      controller?.abort(new InvocationAbortError('timeout', `invocation aborted: ${error.message} (the function timeout)`, { cause: error }));
      reject(error);
    }, timeoutMs);
  });
  try {
    const run = new Promise<T>((resolve) => resolve(fn()));
    run.catch(() => undefined); // a late rejection after a timeout is not unhandled
    return await Promise.race([run, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Deletes messages in chunks of 10 (`DeleteMessageBatch`); each chunk's failed entries (or the whole
 * chunk, when the call throws) go to `onFailures`. Never throws.
 *
 * @returns how many were deleted
 */
export async function deleteInChunks(
  sqs: SQSClient,
  queueUrl: string,
  messages: readonly Message[],
  onFailures: (failures: DeleteFailedEvent['failures']) => void,
): Promise<number> {
  let deleted = 0;
  for (let offset = 0; offset < messages.length; offset += SQS_MAX_BATCH) {
    const chunk = messages.slice(offset, offset + SQS_MAX_BATCH);
    const failures: DeleteFailedEvent['failures'] = [];
    try {
      const out = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
      deleted += out.Successful?.length ?? 0;
      for (const f of out.Failed ?? []) {
        failures.push({ messageId: chunk[Number(f.Id)]?.MessageId ?? '', code: f.Code ?? 'Unknown', message: f.Message });
      }
    } catch (error) {
      const code = error instanceof Error ? error.name : 'Unknown';
      const message = error instanceof Error ? error.message : String(error);
      for (const m of chunk) failures.push({ messageId: m.MessageId ?? '', code, message });
    }
    if (failures.length > 0) onFailures(failures);
  }
  return deleted;
}
