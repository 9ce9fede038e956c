/**
 * The local event source poller's settings, checked against AWS's documented limits for an SQS event
 * source mapping, and its errors.
 */
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { RatelaneError, type ErrorKind } from '../../../lib/platform/errors.js';
import type { PollerEvent } from './events.js';
import { parseArn } from '../lambda/sqs-event.js';

/** An SQS-triggered Lambda handler, async style. */
type SqsLambdaHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void | null>;

/** Base class of the poller's errors. */
export class EventSourcePollerError extends RatelaneError {
  override name = 'EventSourcePollerError';
  readonly kind: ErrorKind = 'internal';
  readonly retryable: boolean = false;
}

/** Options that AWS would reject when creating the mapping. */
export class PollerConfigError extends EventSourcePollerError {
  override name = 'PollerConfigError';
  override readonly kind: ErrorKind = 'config';
}

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
  /**
   * Clock for the durations the poller reports (default `Date.now`). The function timeout and
   * `context.getRemainingTimeInMillis()` run on real time, as Lambda's do.
   */
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

/** The most messages one ReceiveMessage or DeleteMessageBatch call takes. */
export const SQS_MAX_BATCH = 10;

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
  if (arn?.service !== 'sqs') throw new PollerConfigError(`queueArn is not an SQS queue ARN: ${resolved.queueArn}`);
  if (arn.region !== resolved.awsRegion) {
    throw new PollerConfigError(`queue ${resolved.queueArn} is not in the mapping's region ${resolved.awsRegion}`);
  }
  if (!resolved.queueUrl) throw new PollerConfigError('queueUrl is required');
  return resolved;
}

/**
 * Checks the queue as CreateEventSourceMapping would: its ARN, and a visibility timeout not shorter
 * than the function timeout.
 *
 * @throws PollerConfigError when the queue does not fit; EventSourcePollerError when it cannot be read.
 */
export async function checkQueue(options: Pick<ResolvedPollerOptions, 'sqs' | 'queueUrl' | 'queueArn' | 'functionTimeoutMs'>): Promise<void> {
  const { sqs, queueUrl, queueArn, functionTimeoutMs } = options;
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
    throw new PollerConfigError(`Queue visibility timeout: ${visibility} seconds is less than Function timeout: ${functionTimeoutMs / 1000} seconds`);
  }
}
