/**
 * The queue lane's record processor: one SQS record through the extraction core, then the queue's own
 * effects for what the core left to it (`queue-executor.ts`). A record counts as handled (returns)
 * only after the write that settles it returned; anything else throws and is reported as a batch item
 * failure, so SQS brings it back.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSRecord } from 'aws-lambda';
import { extractRecord, type ModelTime } from '../extraction/index.js';
import { carryOut, type QueueDelivery, type QueueLaneDeps } from './queue-executor.js';

export { RecordFailedError } from './queue-executor.js';

/** Everything the queue lane's record processor needs; {@link createConsumerDeps} wires the real ones. */
export interface ConsumerDeps extends QueueLaneDeps {
  /**
   * Called once per record with its wall time and the time spent inside `model.extract` (for
   * `npm run bench`: the consumer's own overhead is the difference). Absent: nothing is timed.
   */
  onRecordTiming?: ((timing: RecordTiming) => void) | undefined;
}

/** How long one record took in the consumer; see {@link ConsumerDeps.onRecordTiming}. */
export interface RecordTiming {
  /** From the start of {@link processRecord} until it returned or threw (ms). */
  totalMs: number;
  /** Of that, time spent inside `model.extract` (ms). */
  modelMs: number;
  /** Model calls made for the record. */
  modelCalls: number;
  /** The record settled (returned); false: it threw and SQS brings it back. */
  settled: boolean;
}

/** The delivery facts of one SQS record. */
export function queueDelivery(record: SQSRecord, now: Date): QueueDelivery {
  const receiveCount = Math.max(1, Number(record.attributes.ApproximateReceiveCount) || 1);
  const sent = Number(record.attributes.SentTimestamp);
  return {
    messageId: record.messageId,
    receiptHandle: record.receiptHandle,
    receiveCount,
    queueAgeMs: Number.isFinite(sent) ? Math.max(0, now.getTime() - sent) : 0,
  };
}

/**
 * Handles one record. Returns when the record is settled (committed, duplicate, rejected, needs
 * review, deferred by a successful re-send, or moved to the DLQ); throws `RecordFailedError` (or a
 * store/queue error) when SQS must bring it back.
 */
export async function processRecord(record: SQSRecord, deps: ConsumerDeps): Promise<void> {
  const onTiming = deps.onRecordTiming;
  const started = onTiming ? performance.now() : 0;
  const model: ModelTime = { ms: 0, calls: 0 };
  if (!onTiming) return handleRecord(record, deps, model);
  let settled = false;
  try {
    await handleRecord(record, deps, model);
    settled = true;
  } finally {
    try {
      onTiming({ totalMs: performance.now() - started, modelMs: model.ms, modelCalls: model.calls, settled });
    } catch {
      // A timing listener must not change what happens to the record.
    }
  }
}

async function handleRecord(record: SQSRecord, deps: ConsumerDeps, model: ModelTime): Promise<void> {
  const delivery = queueDelivery(record, deps.now());
  deps.metrics.addMetric('QueueAgeMs', MetricUnit.Milliseconds, delivery.queueAgeMs);
  const outcome = await extractRecord(record.body, delivery, deps, model);
  await carryOut(outcome, delivery, deps);
}
