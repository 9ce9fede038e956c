/**
 * A model of one SQS standard queue and its dead-letter queue, in virtual time, holding AWS's rules
 * itself (not the emulator's): `DelaySeconds` is an integer in 0..900, a visibility timeout an
 * integer in 0..43200, a receive returns at most 10 messages, every receive adds one to the
 * message's receive count, and a message whose receive count has reached `maxReceiveCount` is moved
 * to the DLQ on its next receive instead of being delivered (the redrive policy). A re-sent message
 * is a new message: its receive count starts again at 0.
 *
 * Messages live in typed arrays (job id, receive count) with a free list; waiting messages (delayed
 * or invisible after a failure) in a {@link TimeHeap} keyed by the time they become visible; visible
 * ones in a FIFO ring. Received messages are held by their consumer until it deletes them or changes
 * their visibility. Every API call is counted, and billed as AWS bills it: one request per started
 * 64 KiB of payload (see `cost.ts`).
 */
import { TimeHeap } from './heap.js';

/**
 * SQS limits the model enforces: AWS's documented limits (the lane config checks the same ones against
 * `AWS_LIMITS` in `lib/config/lanes.ts`).
 */
const SQS_LIMITS = {
  maxDelaySeconds: 900,
  maxVisibilityTimeoutSeconds: 43_200,
  maxBatch: 10,
  minReceiveCount: 1,
  maxReceiveCount: 1000,
  billingChunkBytes: 64 * 1024,
} as const;

/** Construction options of {@link SqsModel}. */
export interface SqsModelOptions {
  /** The redrive policy's `maxReceiveCount` (1..1000). */
  maxReceiveCount: number;
  /** The queue's default visibility timeout, seconds (applies when a consumer lets a message go without a change). */
  visibilityTimeoutSeconds: number;
  /** Size of one message body in bytes (for the 64 KiB billing chunks). */
  messageBytes: number;
  /** Called when a message is moved to the DLQ by the redrive policy. */
  onDeadLetter?: (jobId: number, now: number) => void;
}

/** API calls made against the queue, and the requests AWS bills for them. */
export interface SqsCounters {
  sendMessage: number;
  sendMessageBatch: number;
  /** ReceiveMessage calls that returned at least one message. */
  receiveMessage: number;
  /** ReceiveMessage calls that returned nothing (long polls that ran out). */
  emptyReceives: number;
  deleteMessageBatch: number;
  changeMessageVisibility: number;
  /** SendMessage calls to the DLQ made by the consumer (a redrive move by SQS itself is free). */
  dlqSendMessage: number;
  /** Billed requests: every call, one per started 64 KiB of its payload. */
  billedRequests: number;
  /** Messages moved to the DLQ by the redrive policy. */
  redriven: number;
}

/** How many 64 KiB chunks a call carrying `bytes` of payload is billed as (at least 1). */
export function billedChunks(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / SQS_LIMITS.billingChunkBytes));
}

function checkDelaySeconds(seconds: number): void {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > SQS_LIMITS.maxDelaySeconds) {
    throw new RangeError(`DelaySeconds must be an integer in 0..${SQS_LIMITS.maxDelaySeconds}, got ${seconds}`);
  }
}

function checkVisibilitySeconds(seconds: number): void {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > SQS_LIMITS.maxVisibilityTimeoutSeconds) {
    throw new RangeError(`VisibilityTimeout must be an integer in 0..${SQS_LIMITS.maxVisibilityTimeoutSeconds}, got ${seconds}`);
  }
}

/** One queue with its DLQ. Times are epoch ms of virtual time. */
export class SqsModel {
  readonly options: SqsModelOptions;
  readonly counters: SqsCounters = {
    sendMessage: 0,
    sendMessageBatch: 0,
    receiveMessage: 0,
    emptyReceives: 0,
    deleteMessageBatch: 0,
    changeMessageVisibility: 0,
    dlqSendMessage: 0,
    billedRequests: 0,
    redriven: 0,
  };
  private jobOf: Int32Array;
  private receives: Uint16Array;
  /** 0 free, 1 waiting (heap), 2 visible (ring), 3 in flight (held by a consumer). */
  private state: Uint8Array;
  private freeList: Int32Array;
  private freeCount = 0;
  private allocated = 0;
  private readonly waiting = new TimeHeap(1 << 14);
  private ring: Int32Array;
  private ringHead = 0;
  private ringCount = 0;
  private live = 0;
  private inFlightCount = 0;

  constructor(options: SqsModelOptions, initialCapacity = 1 << 14) {
    if (
      !Number.isInteger(options.maxReceiveCount) ||
      options.maxReceiveCount < SQS_LIMITS.minReceiveCount ||
      options.maxReceiveCount > SQS_LIMITS.maxReceiveCount
    ) {
      throw new RangeError(`maxReceiveCount must be an integer in 1..1000, got ${options.maxReceiveCount}`);
    }
    checkVisibilitySeconds(options.visibilityTimeoutSeconds);
    this.options = options;
    const capacity = Math.max(16, initialCapacity);
    this.jobOf = new Int32Array(capacity);
    this.receives = new Uint16Array(capacity);
    this.state = new Uint8Array(capacity);
    this.freeList = new Int32Array(capacity);
    this.ring = new Int32Array(capacity);
  }

  /** Messages in the queue (waiting, visible or in flight). */
  get size(): number {
    return this.live;
  }

  /** Messages visible now (as of the last receive or {@link release}). */
  get visibleCount(): number {
    return this.ringCount;
  }

  /** Messages held by consumers. */
  get inFlight(): number {
    return this.inFlightCount;
  }

  /** Messages delayed or invisible after a failure. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /** The job a message carries. */
  jobOfMessage(message: number): number {
    return this.jobOf[message]!;
  }

  /** The message's receive count (`ApproximateReceiveCount` once received). */
  receiveCountOf(message: number): number {
    return this.receives[message]!;
  }

  /** The earliest time a waiting message becomes visible; `-Infinity` when one is visible now; `Infinity` when none waits. */
  nextVisibleAt(): number {
    return this.ringCount > 0 ? -Infinity : this.waiting.peekTime();
  }

  /** The producer's initial load: `jobIds` sent in `SendMessageBatch` calls of 10, visible at `at`. */
  sendInitial(jobIds: ArrayLike<number>, at: number): void {
    for (let i = 0; i < jobIds.length; i += SQS_LIMITS.maxBatch) {
      const n = Math.min(SQS_LIMITS.maxBatch, jobIds.length - i);
      this.counters.sendMessageBatch++;
      this.counters.billedRequests += billedChunks(n * this.options.messageBytes);
      for (let k = 0; k < n; k++) this.enqueue(jobIds[i + k]!, at);
    }
  }

  /** `SendMessage` at `at` with `DelaySeconds` (0..900): the message becomes visible at `at + delay`. */
  send(jobId: number, delaySeconds: number, at: number): number {
    checkDelaySeconds(delaySeconds);
    this.counters.sendMessage++;
    this.counters.billedRequests += billedChunks(this.options.messageBytes);
    return this.enqueue(jobId, at + delaySeconds * 1000);
  }

  /** The consumer's own move to the DLQ (`SendMessage` to the DLQ): counted, the job leaves the queue system. */
  sendToDlq(): void {
    this.counters.dlqSendMessage++;
    this.counters.billedRequests += billedChunks(this.options.messageBytes);
  }

  /**
   * `ReceiveMessage` at `now` for up to `max` (1..10) messages, written to `out`; returns how many.
   * Messages whose receive count already reached `maxReceiveCount` are moved to the DLQ instead. An
   * empty result counts as an empty receive only when `countEmpty` (a poll that really happened).
   */
  receive(now: number, max: number, out: Int32Array, countEmpty = true): number {
    if (!Number.isInteger(max) || max < 1 || max > SQS_LIMITS.maxBatch) throw new RangeError(`MaxNumberOfMessages must be 1..10, got ${max}`);
    this.release(now);
    let n = 0;
    const limit = this.options.maxReceiveCount;
    while (n < max && this.ringCount > 0) {
      const message = this.ring[this.ringHead]!;
      this.ringHead = (this.ringHead + 1) % this.ring.length;
      this.ringCount--;
      if (this.receives[message]! >= limit) {
        this.counters.redriven++;
        const job = this.jobOf[message]!;
        this.free(message);
        this.options.onDeadLetter?.(job, now);
        continue;
      }
      this.receives[message] = this.receives[message]! + 1;
      this.state[message] = 3;
      this.inFlightCount++;
      out[n++] = message;
    }
    if (n > 0) {
      this.counters.receiveMessage++;
      this.counters.billedRequests += billedChunks(n * this.options.messageBytes);
    } else if (countEmpty) {
      this.counters.emptyReceives++;
      this.counters.billedRequests += 1;
    }
    return n;
  }

  /** Counts `count` empty long polls (an idle poller's receives that returned nothing). */
  countEmptyReceives(count: number): void {
    if (count <= 0) return;
    this.counters.emptyReceives += count;
    this.counters.billedRequests += count;
  }

  /** The event source mapping's `DeleteMessageBatch` for `messages` (at most 10) of one batch. */
  deleteBatch(messages: ArrayLike<number>, count: number): void {
    if (count === 0) return;
    if (count > SQS_LIMITS.maxBatch) throw new RangeError(`DeleteMessageBatch takes at most 10 entries, got ${count}`);
    this.counters.deleteMessageBatch++;
    this.counters.billedRequests += 1;
    for (let i = 0; i < count; i++) this.settle(messages[i]!);
  }

  /** Forgets an in-flight message without a request (its deletion is billed by {@link deleteBatch}). */
  settle(message: number): void {
    if (this.state[message] !== 3) throw new Error(`message ${message} is not in flight`);
    this.inFlightCount--;
    this.free(message);
  }

  /** `ChangeMessageVisibility` at `at`: the in-flight message becomes visible again at `at + seconds`. */
  changeVisibility(message: number, seconds: number, at: number): void {
    checkVisibilitySeconds(seconds);
    if (this.state[message] !== 3) throw new Error(`message ${message} is not in flight`);
    this.counters.changeMessageVisibility++;
    this.counters.billedRequests += 1;
    this.inFlightCount--;
    this.state[message] = 1;
    this.waiting.push(at + seconds * 1000, message);
  }

  /** A consumer lets an in-flight message go (failure reported, no change): visible after the queue's timeout from `receivedAt`. */
  abandon(message: number, receivedAt: number): void {
    if (this.state[message] !== 3) throw new Error(`message ${message} is not in flight`);
    this.inFlightCount--;
    this.state[message] = 1;
    this.waiting.push(receivedAt + this.options.visibilityTimeoutSeconds * 1000, message);
  }

  /** Makes every waiting message due at `now` visible (in the order they became due). */
  release(now: number): void {
    const waiting = this.waiting;
    while (waiting.size > 0 && waiting.peekTime() <= now) {
      const message = waiting.pop();
      this.state[message] = 2;
      this.pushRing(message);
    }
  }

  private enqueue(jobId: number, visibleAt: number): number {
    const message = this.allocate();
    this.jobOf[message] = jobId;
    this.receives[message] = 0;
    this.state[message] = 1;
    this.live++;
    this.waiting.push(visibleAt, message);
    return message;
  }

  private allocate(): number {
    if (this.freeCount > 0) return this.freeList[--this.freeCount]!;
    if (this.allocated === this.jobOf.length) this.grow();
    return this.allocated++;
  }

  private free(message: number): void {
    this.state[message] = 0;
    this.live--;
    this.freeList[this.freeCount++] = message;
  }

  private pushRing(message: number): void {
    if (this.ringCount === this.ring.length) {
      const bigger = new Int32Array(this.ring.length * 2);
      for (let i = 0; i < this.ringCount; i++) bigger[i] = this.ring[(this.ringHead + i) % this.ring.length]!;
      this.ring = bigger;
      this.ringHead = 0;
    }
    this.ring[(this.ringHead + this.ringCount) % this.ring.length] = message;
    this.ringCount++;
  }

  private grow(): void {
    const capacity = this.jobOf.length * 2;
    const jobOf = new Int32Array(capacity);
    jobOf.set(this.jobOf);
    const receives = new Uint16Array(capacity);
    receives.set(this.receives);
    const state = new Uint8Array(capacity);
    state.set(this.state);
    const freeList = new Int32Array(capacity);
    freeList.set(this.freeList);
    this.jobOf = jobOf;
    this.receives = receives;
    this.state = state;
    this.freeList = freeList;
  }
}
