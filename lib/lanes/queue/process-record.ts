/**
 * The queue lane's record processor: one SQS record through the extraction core, then the queue's own
 * effects for what the core left to it (`queue-executor.ts`). A record counts as handled (returns)
 * only after the write that settles it returned; anything else throws and is reported as a batch item
 * failure, so SQS brings it back.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSRecord } from 'aws-lambda';
import { withAbortSignal } from '../../platform/abort-scope.js';
import { traceHeaderOf } from '../../platform/tracing.js';
import type { Job } from '../../contract/job.js';
import { admissionWaitMs, bookingWindowAtStartMs, returnWaitMs } from '../../extraction/budget.js';
import { extractRecord, laneMayCarryOut, type ModelTime } from '../../extraction/index.js';
import type { Invocation } from './invocation.js';
import type { SettleClock } from './settle-clock.js';
import { reportRecordFailure } from './record-failure.js';
import { carryOut, type QueueDelivery, type QueueLaneDeps } from './queue-executor.js';

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
  /** Of that, time spent waiting in-process for booked admission slots (ms): scheduled, not overhead. */
  admissionWaitMs: number;
  /** Model calls made for the record. */
  modelCalls: number;
  /** The record settled (returned); false: it threw and SQS brings it back. */
  settled: boolean;
}

/** What one invocation's records share: its clock and stop signal, and what they report for the invocation. */
export interface InvocationScope {
  invocation: Invocation;
  /** The oldest job (by `createdAt`) among the invocation's records, as an age in ms. */
  oldestJobAgeMs: number;
  /** Some record found every key out until a person acts (billing, auth). */
  waitingForPerson: boolean;
  /** Learns how long settling a record takes (the settle margin of the next invocations). */
  settleClock?: SettleClock | undefined;
  /**
   * How long a record cut off in the middle of a step stays away (ms, drawn per record): about one function timeout. Its
   * invocation ran out of time while working — the environment is slower than its invocations — and a
   * job sent back at once would be received and cut off again, re-sent in a loop that feeds on the
   * slowness (a failed record would wait out the visibility timeout; a re-send spends no receive).
   */
  cutOffWaitMs?: (() => number) | undefined;
}

/** The delivery facts of one SQS record. */
function queueDelivery(record: SQSRecord, now: Date, scope?: InvocationScope): QueueDelivery {
  // The producer's trace, as SQS hands it on (checked: a message's attributes are a sender's to set).
  const traceHeader = traceHeaderOf(record.attributes.AWSTraceHeader);
  const receiveCount = Math.max(1, Number(record.attributes.ApproximateReceiveCount) || 1);
  const sent = Number(record.attributes.SentTimestamp);
  return {
    messageId: record.messageId,
    receiptHandle: record.receiptHandle,
    receiveCount,
    ...(record.attributes.SenderId ? { senderId: record.attributes.SenderId } : {}),
    ...(traceHeader ? { traceHeader } : {}),
    queueAgeMs: Number.isFinite(sent) ? Math.max(0, now.getTime() - sent) : 0,
    settled: false,
    ...(scope
      ? {
          deadlineAt: scope.invocation.workUntil,
          stopWork: scope.invocation.stopWork,
          cutOffWaitMs: scope.cutOffWaitMs?.(),
          onCommitted: (ms: number) => scope.settleClock?.observe(ms),
          onJob: (job: Job) => {
            const created = Date.parse(job.createdAt);
            if (Number.isFinite(created)) scope.oldestJobAgeMs = Math.max(scope.oldestJobAgeMs, now.getTime() - created);
          },
        }
      : {}),
  };
}

/**
 * Handles one record. Returns when the record is settled (committed, duplicate, rejected, needs
 * review, deferred by a successful re-send, or moved to the DLQ); throws `RecordFailedError` (or a
 * store/queue error) when SQS must bring it back, after logging and counting why. Within an
 * invocation (`scope`), every AWS and model call it makes is aborted when the invocation's time is up,
 * and the record fails then unless it was already settled.
 */
export async function processRecord(record: SQSRecord, deps: ConsumerDeps, scope?: InvocationScope): Promise<void> {
  const onTiming = deps.onRecordTiming;
  const started = onTiming ? performance.now() : 0;
  const model: ModelTime = { ms: 0, calls: 0 };
  const delivery = queueDelivery(record, deps.now(), scope);
  // Within an invocation a record may wait for a booked admission slot instead of being re-sent; a job
  // deferred for admission may then come back up to a second early and wait for its slot, within half
  // the booking window a record has at an invocation's start (one later in a crowded invocation finds
  // less: it books what it can or is deferred again).
  if (scope) {
    delivery.admissionWaitMs = admissionWaitMs(deps.lane);
    delivery.returnWaitMs = returnWaitMs(bookingWindowAtStartMs(deps.lane));
  }
  let settled = false;
  try {
    await (scope
      ? withinInvocation(scope.invocation, delivery, deps, () => handleRecord(record, delivery, deps, model, scope))
      : handleRecord(record, delivery, deps, model));
    settled = true;
  } catch (error) {
    reportRecordFailure(error, delivery, deps, scope?.invocation.signal.aborted ?? false);
    throw error;
  } finally {
    if (onTiming) {
      try {
        onTiming({ totalMs: performance.now() - started, modelMs: model.ms, admissionWaitMs: model.waitMs ?? 0, modelCalls: model.calls, settled });
      } catch {
        // A timing listener must not change what happens to the record.
      }
    }
  }
}

/** Runs the record's work with the invocation's abort signal; when time is up first, it fails unless settled. */
async function withinInvocation(invocation: Invocation, delivery: QueueDelivery, deps: ConsumerDeps, work: () => Promise<void>): Promise<void> {
  const running = withAbortSignal(invocation.signal, work, onRealClock(invocation.deadlineAt, deps.now));
  running.catch(() => undefined);
  const stopped = invocation.stopped.catch((reason: unknown) => {
    if (!delivery.settled) throw reason;
  });
  await Promise.race([running, stopped]);
}

async function handleRecord(record: SQSRecord, delivery: QueueDelivery, deps: ConsumerDeps, model: ModelTime, scope?: InvocationScope): Promise<void> {
  deps.metrics.addMetric('QueueAgeMs', MetricUnit.Milliseconds, delivery.queueAgeMs);
  // The work stops a settle margin before the deadline; what it leaves is carried out in the time left.
  const found = scope
    ? await withAbortSignal(
        scope.invocation.stopWork,
        () => extractRecord(record.body, delivery, deps, model),
        onRealClock(scope.invocation.workUntil, deps.now),
      )
    : await extractRecord(record.body, delivery, deps, model);
  // A re-send or a failure is carried out under the job id: the id is claimed first, in the settle time.
  const settling = performance.now();
  const outcome = await laneMayCarryOut(found);
  if (scope && (outcome.type === 'deferred' || outcome.type === 'rejected') && (outcome.laneOut?.reason === 'billing' || outcome.laneOut?.reason === 'auth')) {
    scope.waitingForPerson = true;
  }
  await carryOut(outcome, delivery, deps);
  // Only a settle that ended within the invocation is learned: a re-send that ran on after the deadline
  // (its record already reported failed) would teach a margin that leaves no time for any model call.
  if (scope && !scope.invocation.signal.aborted) scope.settleClock?.observe(performance.now() - settling);
}

/** An instant of the lane's clock (`deps.now`, which a test may run virtually) on the real clock the SDK's retries read. */
function onRealClock(at: number, now: () => Date): number {
  return at + (Date.now() - now().getTime());
}
