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
 * - Lambda stops an invocation at its timeout; a function in this process cannot be stopped, so each
 *   invocation's context carries an `AbortSignal` (`INVOCATION_ABORT_SIGNAL`, lib/platform/invocation.ts)
 *   that is aborted at the timeout, and when the poller is stopped; a handler passes it to its calls;
 * - `getRemainingTimeInMillis()` counts down in real time from the handler's call to the timeout;
 * - never more than `maximumConcurrency` invocations at once; each batch is one invocation.
 *
 * The options, their checks and the poller's errors are in `options.ts`, the events in `events.ts`, the
 * invocation's context and its function timeout in `../lambda/invocation.ts`; the building blocks
 * (the response's verdict, the invocation slots, an abortable sleep, the deletes) close this module.
 */
import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { limitedConcurrency } from '../../../lib/admission/pause/lane-pause.js';
import { createLambdaContext, FunctionTimeoutError, InvocationAbortError, runWithTimeout } from '../lambda/invocation.js';
import { buildSqsEvent, parseArn } from '../lambda/sqs-event.js';
import type { DeleteFailedEvent, PollerEvent, WholeBatchFailureReason } from './events.js';
import {
  checkQueue,
  EventSourcePollerError,
  resolvePollerOptions,
  SQS_MAX_BATCH,
  type EventSourcePollerOptions,
  type PollerStats,
  type ResolvedPollerOptions,
} from './options.js';

/** Lifecycle state of a poller. */
export type PollerState = 'idle' | 'starting' | 'held' | 'running' | 'paused' | 'stopping' | 'stopped';

/**
 * Plays the Lambda SQS event source mapping for one queue and one in-process handler.
 * Lifecycle: `start()` (held until its `when`, if given) → (`pause()` ⇄ `resume()`)* → `stop()`; a stopped poller cannot restart.
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
  /** The abort controllers of the invocations whose handler is running. */
  readonly #running = new Set<AbortController>();
  #stopping: Promise<void> | undefined;
  /** Held by `start(when)` and `when` not resolved yet (a pause and resume meanwhile leave it held). */
  #awaitingStart = false;
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
   * than the function timeout), then starts polling — at once, or, given `when`, once it resolves
   * (`held` until then: a supervisor starts several consumer processes together; a rejection, or
   * `stop()` first, never starts it). Resolves when the queue is checked.
   *
   * @throws PollerConfigError when the queue does not fit; EventSourcePollerError when it cannot be read.
   */
  async start(when?: Promise<void>): Promise<void> {
    if (this.#state !== 'idle') throw new EventSourcePollerError(`cannot start a poller that is ${this.#state}`);
    this.#state = 'starting';
    try {
      await checkQueue(this.options);
    } catch (error) {
      this.#state = 'stopped';
      throw error;
    }
    if (this.#state !== 'starting') return; // stopped meanwhile
    if (!when) return this.#run();
    this.#state = 'held';
    this.#awaitingStart = true;
    when.then(
      () => {
        this.#awaitingStart = false;
        // Paused while held: it stays paused until `resume()`.
        if (this.#state === 'held') this.#run();
      },
      () => undefined,
    );
  }

  #run(): void {
    this.#state = 'running';
    this.#spawnLoops(this.options.pollers);
  }

  /**
   * Stops pulling new batches; receives already waiting and invocations already running finish (their
   * batches are handled as usual, so no message is stranded and no receive count is spent).
   * Resolves when nothing is in flight (or when `resume()`/`stop()` comes first). A held poller
   * (`start(when)`) paused stays paused when `when` comes, until `resume()`.
   */
  pause(): Promise<void> {
    if (this.#state === 'running' || this.#state === 'held') {
      this.#state = 'paused';
      this.#emit({ type: 'paused', inFlight: this.#stats.inFlight });
    }
    return this.#state === 'paused' ? this.#settle(() => this.#state === 'paused') : Promise.resolve();
  }

  /**
   * Runs at most {@link limitedConcurrency}(maximumConcurrency, share) invocations at once (share 1:
   * all of them), as a lowered `ScalingConfig.MaximumConcurrency` does: invocations beyond it finish,
   * no new batch is received until fewer run.
   */
  limit(share: number): void {
    this.#slots.resize(share >= 1 ? this.options.maximumConcurrency : limitedConcurrency(this.options.maximumConcurrency, share));
  }

  /** Starts pulling again after `pause()` (or, held and `when` still to come, is held again); a no-op in any other state. */
  resume(): void {
    if (this.#state !== 'paused') return;
    if (this.#awaitingStart) this.#state = 'held';
    else {
      this.#state = 'running';
      this.#spawnLoops(this.options.pollers - this.#activeLoops);
    }
    this.#emit({ type: 'resumed' });
  }

  /**
   * Stops for good: aborts waiting long polls at once (a message the server hands to an aborted
   * receive comes back after its visibility timeout), aborts the signal of every running invocation
   * (as Lambda ends an invocation whose environment goes away), waits for those invocations (at most
   * their function timeout) and their deletes, and leaves no timer or request behind. Safe to call
   * more than once.
   */
  stop(): Promise<void> {
    if (this.#stopping) return this.#stopping;
    this.#state = 'stopping';
    this.#stopController.abort();
    for (const controller of this.#running) this.#abortStopped(controller);
    this.#stopping = this.#settle(() => true).then(() => {
      this.#state = 'stopped';
    });
    return this.#stopping;
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

    // Lambda's clock starts when the handler is called: the timer and getRemainingTimeInMillis() share
    // this real-time deadline. The signal is how the stand-in stops what Lambda would stop.
    const controller = new AbortController();
    const arn = parseArn(this.options.queueArn);
    const deadline = Date.now() + functionTimeoutMs;
    const context = createLambdaContext({
      functionName: this.options.functionName,
      awsRegion: this.options.awsRegion,
      accountId: arn?.accountId ?? '000000000000',
      partition: arn?.partition ?? 'aws',
      memoryLimitInMB: this.options.memoryLimitInMB,
      deadline,
      now: Date.now,
      awsRequestId: requestId,
      abortSignal: controller.signal,
    });

    this.#stats.inFlight++;
    this.#stats.maxInFlightObserved = Math.max(this.#stats.maxInFlightObserved, this.#stats.inFlight);
    this.#running.add(controller);
    if (this.#stopController.signal.aborted) this.#abortStopped(controller);
    let response: unknown;
    try {
      response = await runWithTimeout(() => handler(event, context), deadline, controller);
    } catch (error) {
      this.#stats.inFlight--;
      this.#failWhole(requestId, messageIds, error instanceof FunctionTimeoutError ? 'timeout' : 'handlerError', error, started);
      return;
    } finally {
      this.#running.delete(controller);
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

  #abortStopped(controller: AbortController): void {
    controller.abort(new InvocationAbortError('stopped', 'invocation aborted: the event source poller was stopped'));
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

  /** Deletes what succeeded; returns how many were deleted. Never throws. */
  async #delete(requestId: string, messages: Message[]): Promise<number> {
    const deleted = await deleteInChunks(this.options.sqs, this.options.queueUrl, messages, (failures) => {
      this.#stats.deleteFailures += failures.length;
      this.#emit({ type: 'deleteFailed', requestId, failures });
    });
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

/** Creates a poller; call `start()` to begin. */
export function createEventSourcePoller(options: EventSourcePollerOptions): EventSourcePoller {
  return new EventSourcePoller(options);
}

// ---------------------------------------------------------------------------------------------------------
// Building blocks: the response's verdict, the invocation slots, an abortable sleep, the deletes

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

/** A counting semaphore whose waiters give up when the signal aborts; its size may change while held. */
export class Slots {
  #size: number;
  #held = 0;
  readonly #waiters: Array<() => void> = [];

  constructor(size: number) {
    this.#size = size;
  }

  /** Resolves with a release function, or `undefined` when `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<(() => void) | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (this.#held < this.#size) {
      this.#held++;
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
        this.#held++;
        resolve(this.#releaser());
      };
      this.#waiters.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Sets the number of slots: a smaller size takes effect as held slots are released, a larger one at once. */
  resize(size: number): void {
    this.#size = size;
    this.#wake();
  }

  #wake(): void {
    while (this.#held < this.#size && this.#waiters.length > 0) this.#waiters.shift()!();
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held--;
      this.#wake();
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

/**
 * Deletes messages in chunks of 10 (`DeleteMessageBatch`); each chunk's failed entries (or the whole
 * chunk, when the call throws) go to `onFailures`. Never throws.
 *
 * @returns how many were deleted
 */
async function deleteInChunks(
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
