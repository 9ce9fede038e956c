/**
 * The queue lane's effects: what a deferral, a real failure or a lane that ran out of keys means for
 * an SQS record. A deferral is a new message with `DelaySeconds`, sent before the original is
 * acknowledged; a real failure sets the original's visibility backoff and reports it failed (SQS
 * redelivers it, and dead-letters it after `maxReceiveCount`), or moves it to the DLQ when failures
 * carried across re-sends spent the budget; a lane with no key left is paused.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { withAbortSignal } from '../../platform/abort-scope.js';
import type { Job } from '../../contract/job.js';
import {
  count,
  ledgerBase,
  log,
  newJobRun,
  runLogFields,
  type Delivery,
  type ExtractionDeps,
  type ExtractionOutcome,
  type JobRun,
  type LaneOut,
} from '../../extraction/index.js';
import type { DeferAction, FailAction } from '../../policy/index.js';
import { sendToDeadLetterQueue } from './dead-letter.js';
import { deleteReceived, extendVisibility, resendDeferred } from './reschedule.js';
import { errorName, RatelaneError, shortMessage } from '../../platform/errors.js';

/** What the queue lane adds to the extraction core's dependencies. */
export interface QueueLaneDeps extends ExtractionDeps {
  queueUrl: string;
  dlqUrl: string;
  sqs: SQSClient;
}

/** A record the consumer could not settle now: reported as a batch item failure, SQS brings it back. */
export class RecordFailedError extends RatelaneError {
  override name = 'RecordFailedError';
  readonly kind = 'unavailable' as const;
  readonly retryable = true;
  constructor(
    message: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** One received SQS record as the executor needs it. */
export interface QueueDelivery extends Delivery {
  /** Not logged. */
  receiptHandle: string;
  /**
   * Set once the record's fate is written (a commit, a rejection, a re-send, a dead-letter): from then
   * on it must be acknowledged, even if the invocation's time runs out before the record returns —
   * failing it then would bring a job back that is already re-sent or settled.
   */
  settled: boolean;
}

/**
 * Carries out the core's outcome for one record: pauses the lane when every key is out, re-sends a
 * deferral, backs a real failure off (throwing {@link RecordFailedError}) or dead-letters it. Terminal
 * outcomes need nothing more: the record is acknowledged when this returns.
 */
export async function carryOut(outcome: ExtractionOutcome, delivery: QueueDelivery, deps: QueueLaneDeps): Promise<void> {
  const laneOut = outcome.type === 'deferred' || outcome.type === 'rejected' ? outcome.laneOut : undefined;
  if (outcome.type !== 'deferred' && outcome.type !== 'failed') {
    delivery.settled = true;
    if (laneOut) await pauseLane(deps, delivery, undefined, laneOut);
    return;
  }
  const run = newJobRun(deps, delivery, outcome.job);
  if (laneOut) await pauseLane(deps, delivery, run, laneOut);
  if (outcome.type === 'deferred') return defer(run, deps, delivery, outcome.action, outcome.detail);
  return fail(run, deps, delivery, outcome.action, outcome.detail);
}

async function pauseLane(deps: QueueLaneDeps, delivery: Delivery, run: JobRun | undefined, out: LaneOut): Promise<void> {
  if (!deps.lanePause) return;
  const fields = { ...(run ? runLogFields(run) : { lane: deps.lane.name, messageId: delivery.messageId }), until: out.until.toISOString(), reason: out.reason };
  try {
    if (await deps.lanePause.requestPause(out.until, out.reason)) {
      count(deps, 'LanePaused');
      log(deps, 'warn', 'lane paused: every key is out', { ...fields, outcome: 'lane_paused' });
    }
  } catch (error) {
    log(deps, 'error', 'could not pause the lane', { ...fields, error: errorName(error), detail: shortMessage(error) });
  }
}

async function defer(run: JobRun, deps: QueueLaneDeps, delivery: QueueDelivery, action: DeferAction, detail?: string): Promise<void> {
  const next: Job = { ...run.job, attempt: action.attempt, deferrals: action.deferrals, eligibleAt: action.eligibleAt };
  const { sent, released } = await settleOutsideInvocation(deps, delivery, () =>
    resendDeferred({ sqs: deps.sqs, queueUrl: deps.queueUrl, job: next, delaySeconds: action.delaySeconds, traceHeader: delivery.traceHeader }),
  );
  const hop = action.reason === 'not_yet_eligible';
  count(deps, hop ? 'EligibilityHops' : 'Deferred');
  if (action.alarm === 'billing') count(deps, 'BillingAlarm');
  if (action.alarm === 'auth') count(deps, 'AuthAlarm');
  log(deps, 'info', hop ? 'not yet eligible: hop' : 'deferred', {
    ...runLogFields(run),
    attempt: next.attempt,
    deferrals: next.deferrals,
    outcome: hop ? 'hop' : 'deferred',
    reason: action.reason,
    basis: action.basis,
    delaySeconds: sent.delaySeconds,
    waitSeconds: action.waitSeconds,
    eligibleAt: action.eligibleAt,
    ...(action.cooldown ? { cooldown: action.cooldown } : {}),
    ...(detail ? { detail } : {}),
  });
  // The re-send is what makes the original safe to acknowledge; the ledger line (every deferral and
  // every hop: a job hopping for long is visible in its history) is an audit trail.
  const ledgerLine = deps.ledger
    .record({
      ...ledgerBase(run, next),
      kind: 'deferred',
      reason: action.reason,
      eligibleAt: action.eligibleAt,
      details: `${action.basis}: wait ${action.waitSeconds} s, delay ${sent.delaySeconds} s${detail ? `; ${detail}` : ''}`,
    })
    .catch((error: unknown) => log(deps, 'warn', 'ledger write for a deferral failed', { jobId: run.job.jobId, error: errorName(error) }));
  // The early delete is not awaited: it changes nothing for the record (the batch response acknowledges
  // it too), and its time must not count in the settle time the next invocations keep a margin for.
  void released;
  await ledgerLine;
}

/**
 * Writes a record's fate elsewhere (`write`: a re-send, a move to the DLQ), marks it settled and starts
 * deleting its original — in abort scopes of their own instead of the invocation's. A send cut at the
 * deadline may already have reached SQS: the record would then be failed back beside a copy nobody
 * knows about. So the send may outlive the invocation for as long as the original stays hidden anyway
 * ({@link lateSendMs}): if the invocation's time is up first, the record is reported failed (its fate is
 * unknown then), and once the send is confirmed the original is deleted by its receipt handle (with a
 * function timeout of its own) — one message either way, and no receive spent.
 */
async function settleOutsideInvocation<T>(
  deps: QueueLaneDeps,
  delivery: QueueDelivery,
  write: () => Promise<T>,
): Promise<{ sent: T; released: Promise<void> }> {
  return withAbortSignal(AbortSignal.timeout(lateSendMs(deps.lane)), async () => {
    const sent = await write();
    delivery.settled = true;
    const released = withAbortSignal(AbortSignal.timeout(deps.lane.consumer.timeoutSeconds * 1000), () => releaseOriginal(deps, delivery));
    return { sent, released };
  });
}

/**
 * How long a re-send may run on after its invocation (ms): while the original is still hidden by the
 * queue's visibility timeout (less the invocation it was received in), so that the original, once the
 * send is confirmed, can still be deleted before it would come back; at least one function timeout.
 */
function lateSendMs(lane: Pick<QueueLaneDeps['lane'], 'queue' | 'consumer'>): number {
  const timeoutMs = lane.consumer.timeoutSeconds * 1000;
  return Math.max(timeoutMs, lane.queue.visibilityTimeoutSeconds * 1000 - timeoutMs);
}

/**
 * Deletes a settled record's original message at once (it was re-sent or dead-lettered): if the
 * invocation then dies, Lambda fails the whole batch and the original would come back beside its copy.
 * A failed delete is only logged: the batch response still acknowledges the record.
 */
export async function releaseOriginal(deps: QueueLaneDeps, delivery: Pick<QueueDelivery, 'messageId' | 'receiptHandle'>): Promise<void> {
  try {
    await deleteReceived({ sqs: deps.sqs, queueUrl: deps.queueUrl, receiptHandle: delivery.receiptHandle });
  } catch (error) {
    log(deps, 'warn', 'could not delete a settled original early; the batch response acknowledges it', {
      lane: deps.lane.name,
      messageId: delivery.messageId,
      error: errorName(error),
      detail: shortMessage(error),
    });
  }
}

async function fail(run: JobRun, deps: QueueLaneDeps, delivery: QueueDelivery, action: FailAction, detail: string): Promise<void> {
  const { job } = run;
  const fields = { ...runLogFields(run), attempt: action.carriedAttempt + delivery.receiveCount, deferrals: job.deferrals, reason: action.reason, detail };
  if (action.lastReceive) {
    await deps.ledger.record({ ...ledgerBase(run), kind: 'dead_letter_pending', reason: action.reason, details: detail });
    if (delivery.receiveCount < action.maxReceiveCount) {
      // Failures carried over from earlier messages exhausted the budget: SQS would not count them.
      const spent: Job = { ...job, attempt: action.carriedAttempt + delivery.receiveCount };
      const { released } = await settleOutsideInvocation(deps, delivery, () =>
        sendToDeadLetterQueue({ sqs: deps.sqs, dlqUrl: deps.dlqUrl, job: spent, reason: `${action.reason}: ${detail}`, traceHeader: delivery.traceHeader }),
      );
      void released;
      count(deps, 'DeadLettered');
      log(deps, 'error', 'retry budget spent: moved to the DLQ', { ...fields, outcome: 'dead_lettered' });
      return;
    }
  }
  try {
    await extendVisibility({
      sqs: deps.sqs,
      queueUrl: deps.queueUrl,
      receiptHandle: delivery.receiptHandle,
      visibilityTimeoutSeconds: action.visibilityTimeoutSeconds,
    });
  } catch (error) {
    log(deps, 'warn', 'could not set the visibility backoff', { ...fields, error: errorName(error) });
  }
  count(deps, 'Failed');
  log(deps, 'warn', action.lastReceive ? 'real failure: last receive, the DLQ takes it next' : 'real failure: redelivery after backoff', {
    ...fields,
    outcome: 'failed',
    visibilityTimeoutSeconds: action.visibilityTimeoutSeconds,
  });
  throw new RecordFailedError(`${action.reason}: ${detail}`, action.reason);
}
