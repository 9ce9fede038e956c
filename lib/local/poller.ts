/**
 * A local stand-in for Lambda's SQS event source mapping with `ReportBatchItemFailures`: it long-polls
 * a queue, hands each batch to an in-process handler as one "invocation", and deletes what the
 * handler did not report as failed. It keeps AWS's documented rules rather than the emulator's:
 *
 * - batch size 1..10,000 (10 for FIFO; more than 10 needs a batching window of at least 1 s),
 *   batching window 0..300 s, `MaximumConcurrency` 2..1000, function timeout up to 900 s, and the
 *   queue's visibility timeout must not be shorter than the function timeout;
 * - no `batchItemFailures` (null, undefined, `{}`, an empty list) → every record is deleted;
 * - listed records are left alone (no delete, no visibility change): SQS returns them after their
 *   visibility timeout, and moves them to the DLQ at `maxReceiveCount`;
 * - an entry whose `itemIdentifier` is missing, empty, or not a message id of the batch, a response
 *   that is not JSON, a handler error or a timeout → the whole batch failed: nothing is deleted;
 * - never more than `maximumConcurrency` invocations at once; each batch is one invocation.
 */
import { randomUUID } from 'node:crypto';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { buildSqsEvent, createLambdaContext, parseArn } from './sqs-event.js';

/** An SQS-triggered Lambda handler, async style. */
export type SqsLambdaHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void | null>;

/** Base class of the poller's errors. */
export class EventSourcePollerError extends Error {
  override name = 'EventSourcePollerError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Options that AWS would reject when creating the mapping. */
export class PollerConfigError extends EventSourcePollerError {
  override name = 'PollerConfigError';
}

/** The handler ran longer than the function timeout (what Lambda reports as "Task timed out"). */
export class FunctionTimeoutError extends EventSourcePollerError {
  override name = 'FunctionTimeoutError';
}

/** Why a whole batch counted as failed. */
export type WholeBatchFailureReason = 'handlerError' | 'timeout' | 'invalidResponse' | 'invalidMessage';

/** A batch was received and is about to be handed to the handler. */
export interface BatchReceivedEvent {
  type: 'batchReceived';
  requestId: string;
  messageIds: string[];
}

/** An invocation ended and the poller has acted on it (deleted what succeeded). */
export interface InvocationFinishedEvent {
  type: 'invocationFinished';
  requestId: string;
  outcome: 'success' | 'partial' | 'failed';
  records: number;
  /** Records deleted from the queue. */
  deleted: number;
  /** Records left on the queue because they (or their whole batch) failed. */
  failed: number;
  /** Successful records whose delete failed (they will come back). */
  deleteFailed: number;
  durationMs: number;
}

/** The whole batch failed: nothing of it was deleted. */
export interface BatchFailedEvent {
  type: 'batchFailed';
  requestId: string;
  reason: WholeBatchFailureReason;
  message: string;
  messageIds: string[];
  error?: unknown;
}

/** Some deletes of successful records failed (per-entry failures or the whole call). */
export interface DeleteFailedEvent {
  type: 'deleteFailed';
  requestId: string;
  failures: Array<{ messageId: string; code: string; message?: string }>;
}

/** A ReceiveMessage call failed; the poller waits `retryInMs` before that poller tries again. */
export interface ReceiveErrorEvent {
  type: 'receiveError';
  error: unknown;
  retryInMs: number;
}

/** `pause()` was called: no new receives; receives and invocations already under way finish. */
export interface PausedEvent {
  type: 'paused';
  inFlight: number;
}

/** `resume()` was called: polling starts again. */
export interface ResumedEvent {
  type: 'resumed';
}

/** Everything the poller reports through `onEvent`. */
export type PollerEvent =
  | BatchReceivedEvent
  | InvocationFinishedEvent
  | BatchFailedEvent
  | DeleteFailedEvent
  | ReceiveErrorEvent
  | PausedEvent
  | ResumedEvent;

/** Options of one mapping (queue → handler). */
export interface EventSourcePollerOptions {
  sqs: SQSClient;
  queueUrl: string;
  /** The queue's ARN: `eventSourceARN` of every record. Checked against the queue at `start()`. */
  queueArn: string;
  /** Region of the mapping: `awsRegion` of every record; must be the queue ARN's region. */
  awsRegion: string;
  handler: SqsLambdaHandler;
  /** Records per invocation, 1..10,000 (AWS default 10). */
  batchSize?: number;
  /** Seconds to keep gathering records after the first arrives, 0..300 (default 0: one receive). */
  maximumBatchingWindowSeconds?: number;
  /** Most invocations at once, 2..1000 (the mapping's `ScalingConfig.MaximumConcurrency`; default 1000). */
  maximumConcurrency?: number;
  /** Long-poll wait of each ReceiveMessage, 1..20 s (default 20, as Lambda). */
  waitTimeSeconds?: number;
  /** The function timeout, 1..900,000 ms (default 3,000: Lambda's default). */
  functionTimeoutMs?: number;
  /** Concurrent ReceiveMessage loops (default min(5, maximumConcurrency), as Lambda starts with five). */
  pollers?: number;
  functionName?: string;
  memoryLimitInMB?: number;
  /** Pause of one poller after a failed receive (default 1,000 ms). */
  receiveErrorBackoffMs?: number;
  /** Listener for {@link PollerEvent}s; an exception it throws is ignored. */
  onEvent?: (event: PollerEvent) => void;
  /** Clock for durations and `getRemainingTimeInMillis` (default `Date.now`); timers stay real. */
  now?: () => number;
}

/** Options after defaults and validation. */
export type ResolvedPollerOptions = Required<Omit<EventSourcePollerOptions, 'onEvent'>> & Pick<EventSourcePollerOptions, 'onEvent'>;

/** Counters since `start()`. */
export interface PollerStats {
  batches: number;
  records: number;
  deleted: number;
  /** Records not deleted because they were reported failed or their whole batch failed. */
  failedRecords: number;
  wholeBatchFailures: number;
  deleteFailures: number;
  receiveErrors: number;
  /** Invocations running now. */
  inFlight: number;
  maxInFlightObserved: number;
}

const SQS_MAX_BATCH = 10;

function requireInt(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new PollerConfigError(`${name} must be an integer in ${min}..${max}, got ${value}`);
  }
}

/**
 * Applies defaults and AWS's limits to the options (pure: no I/O).
 *
 * @throws PollerConfigError for a value the Lambda API would reject.
 */
export function resolvePollerOptions(options: EventSourcePollerOptions): ResolvedPollerOptions {
  const maximumConcurrency = options.maximumConcurrency ?? 1000;
  const resolved: ResolvedPollerOptions = {
    sqs: options.sqs,
    queueUrl: options.queueUrl,
    queueArn: options.queueArn,
    awsRegion: options.awsRegion,
    handler: options.handler,
    batchSize: options.batchSize ?? 10,
    maximumBatchingWindowSeconds: options.maximumBatchingWindowSeconds ?? 0,
    maximumConcurrency,
    waitTimeSeconds: options.waitTimeSeconds ?? 20,
    functionTimeoutMs: options.functionTimeoutMs ?? 3000,
    pollers: options.pollers ?? Math.min(5, maximumConcurrency),
    functionName: options.functionName ?? 'ratelane-local-consumer',
    memoryLimitInMB: options.memoryLimitInMB ?? 128,
    receiveErrorBackoffMs: options.receiveErrorBackoffMs ?? 1000,
    onEvent: options.onEvent,
    now: options.now ?? Date.now,
  };
  const fifo = resolved.queueUrl.endsWith('.fifo');
  requireInt('maximumConcurrency', resolved.maximumConcurrency, 2, 1000);
  requireInt('batchSize', resolved.batchSize, 1, fifo ? SQS_MAX_BATCH : 10_000);
  requireInt('maximumBatchingWindowSeconds', resolved.maximumBatchingWindowSeconds, 0, fifo ? 0 : 300);
  if (resolved.batchSize > SQS_MAX_BATCH && resolved.maximumBatchingWindowSeconds < 1) {
    throw new PollerConfigError(`batchSize ${resolved.batchSize} > 10 needs maximumBatchingWindowSeconds >= 1`);
  }
  requireInt('waitTimeSeconds', resolved.waitTimeSeconds, 1, 20);
  requireInt('functionTimeoutMs', resolved.functionTimeoutMs, 1, 900_000);
  requireInt('pollers', resolved.pollers, 1, resolved.maximumConcurrency);
  requireInt('memoryLimitInMB', resolved.memoryLimitInMB, 128, 10_240);
  requireInt('receiveErrorBackoffMs', resolved.receiveErrorBackoffMs, 0, 3_600_000);
  const arn = parseArn(resolved.queueArn);
  if (!arn || arn.service !== 'sqs') throw new PollerConfigError(`queueArn is not an SQS queue ARN: ${resolved.queueArn}`);
  if (arn.region !== resolved.awsRegion) {
    throw new PollerConfigError(`queue ${resolved.queueArn} is not in the mapping's region ${resolved.awsRegion}`);
  }
  if (!resolved.queueUrl) throw new PollerConfigError('queueUrl is required');
  return resolved;
}

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
class Slots {
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
function sleep(ms: number, signal: AbortSignal): Promise<void> {
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

/** Lifecycle state of a poller. */
export type PollerState = 'idle' | 'starting' | 'running' | 'paused' | 'stopping' | 'stopped';

/**
 * Plays the Lambda SQS event source mapping for one queue and one in-process handler.
 * Lifecycle: `start()` → (`pause()` ⇄ `resume()`)* → `stop()`; a stopped poller cannot restart.
 */
export class EventSourcePoller {
  readonly options: ResolvedPollerOptions;
  #state: PollerState = 'idle';
  readonly #stopController = new AbortController();
  readonly #slots: Slots;
  readonly #loops = new Set<Promise<void>>();
  /** Poll loops that have not returned yet (kept in step synchronously, unlike `#loops`). */
  #activeLoops = 0;
  readonly #invocations = new Set<Promise<void>>();
  #stopping: Promise<void> | undefined;
  readonly #stats: PollerStats = {
    batches: 0,
    records: 0,
    deleted: 0,
    failedRecords: 0,
    wholeBatchFailures: 0,
    deleteFailures: 0,
    receiveErrors: 0,
    inFlight: 0,
    maxInFlightObserved: 0,
  };

  /** @throws PollerConfigError for options AWS would reject. */
  constructor(options: EventSourcePollerOptions) {
    this.options = resolvePollerOptions(options);
    this.#slots = new Slots(this.options.maximumConcurrency);
  }

  /** A snapshot of the counters. */
  get stats(): PollerStats {
    return { ...this.#stats };
  }

  /** `idle`, `starting`, `running`, `paused`, `stopping` or `stopped`. */
  get state(): PollerState {
    return this.#state;
  }

  /**
   * Checks the queue as CreateEventSourceMapping would (its ARN, and a visibility timeout not shorter
   * than the function timeout), then starts polling.
   *
   * @throws PollerConfigError when the queue does not fit; EventSourcePollerError when it cannot be read.
   */
  async start(): Promise<void> {
    if (this.#state !== 'idle') throw new EventSourcePollerError(`cannot start a poller that is ${this.#state}`);
    this.#state = 'starting';
    try {
      await this.#checkQueue();
    } catch (error) {
      this.#state = 'stopped';
      throw error;
    }
    if (this.#state !== 'starting') return; // stopped meanwhile
    this.#state = 'running';
    this.#spawnLoops(this.options.pollers);
  }

  /**
   * Stops pulling new batches; receives already waiting and invocations already running finish (their
   * batches are handled as usual, so no message is stranded and no receive count is spent).
   * Resolves when nothing is in flight (or when `resume()`/`stop()` comes first).
   */
  pause(): Promise<void> {
    if (this.#state === 'running') {
      this.#state = 'paused';
      this.#emit({ type: 'paused', inFlight: this.#stats.inFlight });
    }
    return this.#state === 'paused' ? this.#settle(() => this.#state === 'paused') : Promise.resolve();
  }

  /** Starts pulling again after `pause()`; a no-op in any other state. */
  resume(): void {
    if (this.#state !== 'paused') return;
    this.#state = 'running';
    this.#spawnLoops(this.options.pollers - this.#activeLoops);
    this.#emit({ type: 'resumed' });
  }

  /**
   * Stops for good: aborts waiting long polls at once (a message the server hands to an aborted
   * receive comes back after its visibility timeout), waits for running invocations and their
   * deletes, and leaves no timer or request behind. Safe to call more than once.
   */
  stop(): Promise<void> {
    if (this.#stopping) return this.#stopping;
    this.#state = 'stopping';
    this.#stopController.abort();
    this.#stopping = this.#settle(() => true).then(() => {
      this.#state = 'stopped';
    });
    return this.#stopping;
  }

  async #checkQueue(): Promise<void> {
    const { sqs, queueUrl, queueArn, functionTimeoutMs } = this.options;
    let attributes: Record<string, string>;
    try {
      const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn', 'VisibilityTimeout'] }));
      attributes = out.Attributes ?? {};
    } catch (error) {
      throw new EventSourcePollerError(`cannot read queue ${queueUrl}`, { cause: error });
    }
    if (attributes.QueueArn !== undefined && attributes.QueueArn !== queueArn) {
      throw new PollerConfigError(`queueArn ${queueArn} does not match the queue's ARN ${attributes.QueueArn}`);
    }
    const visibility = Number(attributes.VisibilityTimeout);
    if (Number.isFinite(visibility) && visibility * 1000 < functionTimeoutMs) {
      throw new PollerConfigError(
        `Queue visibility timeout: ${visibility} seconds is less than Function timeout: ${functionTimeoutMs / 1000} seconds`,
      );
    }
  }

  /** Waits until no poll loop and no invocation is left, or `keepWaiting()` turns false. */
  async #settle(keepWaiting: () => boolean): Promise<void> {
    while (keepWaiting() && (this.#loops.size > 0 || this.#invocations.size > 0)) {
      await Promise.race([...this.#loops, ...this.#invocations]);
    }
  }

  #spawnLoops(count: number): void {
    for (let i = 0; i < count; i++) {
      const loop: Promise<void> = this.#pollLoop(this.#stopController.signal)
        .catch(() => undefined)
        .finally(() => this.#loops.delete(loop));
      this.#loops.add(loop);
    }
  }

  /** One poller: take an invocation slot, receive a batch into it, hand it off, repeat. */
  async #pollLoop(signal: AbortSignal): Promise<void> {
    this.#activeLoops++;
    try {
      await this.#pollUntilPaused(signal);
    } finally {
      this.#activeLoops--;
    }
  }

  async #pollUntilPaused(signal: AbortSignal): Promise<void> {
    while (this.#state === 'running') {
      const release = await this.#slots.acquire(signal);
      if (!release) return;
      if (this.#state !== 'running') {
        release();
        return;
      }
      let handedOff = false;
      let failed = false;
      try {
        const messages = await this.#gather(signal);
        if (messages.length > 0) {
          handedOff = true;
          this.#dispatch(messages, release);
        }
      } catch (error) {
        if (signal.aborted) return;
        failed = true;
        this.#stats.receiveErrors++;
        this.#emit({ type: 'receiveError', error, retryInMs: this.options.receiveErrorBackoffMs });
      } finally {
        if (!handedOff) release();
      }
      if (failed) await sleep(this.options.receiveErrorBackoffMs, signal);
    }
  }

  /**
   * Receives one batch: a single long poll when there is no batching window; otherwise, once the
   * first record is in, keeps receiving until the batch is full or the window has passed.
   */
  async #gather(signal: AbortSignal): Promise<Message[]> {
    const { batchSize, maximumBatchingWindowSeconds, waitTimeSeconds } = this.options;
    const batch: Message[] = [];
    let deadline: number | undefined;
    while (batch.length < batchSize) {
      let wait = waitTimeSeconds;
      if (deadline !== undefined) {
        const remainingMs = deadline - Date.now();
        if (remainingMs <= 0) break;
        wait = Math.min(waitTimeSeconds, Math.floor(remainingMs / 1000));
      }
      let received: Message[];
      try {
        received = await this.#receive(Math.min(SQS_MAX_BATCH, batchSize - batch.length), wait, signal);
      } catch (error) {
        if (batch.length === 0) throw error;
        if (!signal.aborted) {
          this.#stats.receiveErrors++;
          this.#emit({ type: 'receiveError', error, retryInMs: 0 });
        }
        break; // invoke what is already in hand rather than strand it
      }
      for (const message of received) {
        // A visibility timeout shorter than the window can hand the same message over twice: keep
        // the newest receipt handle (the only one that still deletes) in the first position.
        const index = batch.findIndex((m) => m.MessageId === message.MessageId);
        if (index === -1) batch.push(message);
        else batch[index] = message;
      }
      if (maximumBatchingWindowSeconds === 0 || batch.length === 0) break;
      deadline ??= Date.now() + maximumBatchingWindowSeconds * 1000; // real time: it drives real timers
      if (received.length === 0 && wait === 0) await sleep(Math.min(100, deadline - Date.now()), signal);
      if (signal.aborted) break;
    }
    return batch;
  }

  async #receive(maxMessages: number, waitSeconds: number, signal: AbortSignal): Promise<Message[]> {
    const out = await this.options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queueUrl,
        MaxNumberOfMessages: maxMessages,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: signal },
    );
    return out.Messages ?? [];
  }

  #dispatch(messages: Message[], release: () => void): void {
    const invocation: Promise<void> = this.#invoke(messages)
      .catch(() => undefined)
      .finally(() => {
        release();
        this.#invocations.delete(invocation);
      });
    this.#invocations.add(invocation);
  }

  /** One invocation: build the event, run the handler under the timeout, act on the response. */
  async #invoke(messages: Message[]): Promise<void> {
    const { handler, functionTimeoutMs, now } = this.options;
    const requestId = randomUUID();
    const messageIds = messages.map((m) => m.MessageId ?? '');
    this.#stats.batches++;
    this.#stats.records += messages.length;
    const started = now();

    let event: SQSEvent;
    try {
      event = buildSqsEvent(messages, { queueArn: this.options.queueArn, awsRegion: this.options.awsRegion });
    } catch (error) {
      this.#failWhole(requestId, messageIds, 'invalidMessage', error, started);
      return;
    }
    this.#emit({ type: 'batchReceived', requestId, messageIds });

    const arn = parseArn(this.options.queueArn);
    const context = createLambdaContext({
      functionName: this.options.functionName,
      awsRegion: this.options.awsRegion,
      accountId: arn?.accountId ?? '000000000000',
      partition: arn?.partition ?? 'aws',
      memoryLimitInMB: this.options.memoryLimitInMB,
      deadline: started + functionTimeoutMs,
      now,
      awsRequestId: requestId,
    });

    this.#stats.inFlight++;
    this.#stats.maxInFlightObserved = Math.max(this.#stats.maxInFlightObserved, this.#stats.inFlight);
    let response: unknown;
    try {
      response = await runWithTimeout(() => handler(event, context), functionTimeoutMs);
    } catch (error) {
      this.#stats.inFlight--;
      this.#failWhole(requestId, messageIds, error instanceof FunctionTimeoutError ? 'timeout' : 'handlerError', error, started);
      return;
    }
    this.#stats.inFlight--;

    const verdict = interpretBatchResponse(response, messageIds);
    if (!verdict.ok) {
      this.#failWhole(requestId, messageIds, 'invalidResponse', new EventSourcePollerError(verdict.message), started);
      return;
    }
    const toDelete = messages.filter((m) => !verdict.failedIds.has(m.MessageId ?? ''));
    const deleted = await this.#delete(requestId, toDelete);
    const failed = verdict.failedIds.size;
    this.#stats.failedRecords += failed;
    this.#emit({
      type: 'invocationFinished',
      requestId,
      outcome: failed === 0 ? 'success' : 'partial',
      records: messages.length,
      deleted,
      failed,
      deleteFailed: toDelete.length - deleted,
      durationMs: now() - started,
    });
  }

  #failWhole(requestId: string, messageIds: string[], reason: WholeBatchFailureReason, error: unknown, started: number): void {
    this.#stats.wholeBatchFailures++;
    this.#stats.failedRecords += messageIds.length;
    const message = error instanceof Error ? error.message : String(error);
    this.#emit({ type: 'batchFailed', requestId, reason, message, messageIds, error });
    this.#emit({
      type: 'invocationFinished',
      requestId,
      outcome: 'failed',
      records: messageIds.length,
      deleted: 0,
      failed: messageIds.length,
      deleteFailed: 0,
      durationMs: this.options.now() - started,
    });
  }

  /** Deletes in chunks of 10; returns how many were deleted. Never throws. */
  async #delete(requestId: string, messages: Message[]): Promise<number> {
    let deleted = 0;
    for (let offset = 0; offset < messages.length; offset += SQS_MAX_BATCH) {
      const chunk = messages.slice(offset, offset + SQS_MAX_BATCH);
      const failures: DeleteFailedEvent['failures'] = [];
      try {
        const out = await this.options.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: this.options.queueUrl,
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
      if (failures.length > 0) {
        this.#stats.deleteFailures += failures.length;
        this.#emit({ type: 'deleteFailed', requestId, failures });
      }
    }
    this.#stats.deleted += deleted;
    return deleted;
  }

  #emit(event: PollerEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A listener must not break the poller.
    }
  }
}

/**
 * Runs `fn` and rejects with {@link FunctionTimeoutError} after `timeoutMs`. The handler cannot be
 * killed as Lambda would: it keeps running in the background, its result ignored.
 */
async function runWithTimeout<T>(fn: () => Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new FunctionTimeoutError(`Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`)),
      timeoutMs,
    );
  });
  try {
    const run = new Promise<T>((resolve) => resolve(fn()));
    run.catch(() => undefined); // a late rejection after a timeout is not unhandled
    return await Promise.race([run, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Creates a poller; call `start()` to begin. */
export function createEventSourcePoller(options: EventSourcePollerOptions): EventSourcePoller {
  return new EventSourcePoller(options);
}
