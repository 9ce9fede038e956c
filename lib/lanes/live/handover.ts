/**
 * Handing a live job over to the queue lane: the job (same contract, same idempotency key, its
 * counters and `eligibleAt` as the policy set them) is sent to the lane's queue with `DelaySeconds`,
 * a ledger line says so, and the caller is answered "pending". The queue lane then finishes the job
 * and commits it once; `GET /v1/extractions/{jobId}` shows where it is.
 */
import type { Job } from '../../contract/job.js';
import { withTimeLimit } from '../../platform/abort-scope.js';
import { count, log } from '../../extraction/index.js';
import { resendDeferred } from '../queue/reschedule.js';
import { errorName, shortMessage } from '../../platform/errors.js';
import { currentTraceHeader } from '../../platform/tracing.js';
import type { LiveAnswer } from './answer.js';
import type { LiveBudget } from './deadline.js';
import type { LiveDeps } from './deps.js';

/** A job to hand over: as the queue should read it next, and for how long SQS hides it. */
export interface Handover {
  job: Job;
  delaySeconds: number;
  /** Why (the policy's deferral or failure reason, or `out_of_time`). */
  reason: string;
  /** For the ledger and logs (no source text). */
  detail?: string | undefined;
  /** When the queue lane should try it (ISO 8601). */
  eligibleAt?: string | undefined;
}

/**
 * Sends the job to the lane's queue before the answer is due and answers "pending"; an `error`
 * answer when the send failed (the job then exists only as the caller's request: its repeat carries
 * the same idempotency key, so nothing is committed twice). The hand-over's detail and the error's
 * name go to the log line (and the ledger), never into the caller's answer (`answer.ts`).
 */
export async function handOver(handover: Handover, budget: LiveBudget, deps: LiveDeps): Promise<LiveAnswer> {
  const { job } = handover;
  const fields = { lane: deps.lane.name, jobId: job.jobId, reason: handover.reason };
  try {
    // Every write ends before the answer is due.
    const timeLeft = () => Math.max(50, Math.floor(budget.answerBy - deps.now().getTime() - 50));
    const sent = await withTimeLimit(timeLeft(), () =>
      resendDeferred({ sqs: deps.sqs, queueUrl: deps.queueUrl, job, delaySeconds: handover.delaySeconds, traceHeader: currentTraceHeader() }),
    );
    count(deps, 'Deferred');
    log(deps, 'info', 'live: handed over to the queue', {
      ...fields,
      outcome: 'deferred',
      delaySeconds: sent.delaySeconds,
      deferrals: job.deferrals,
      attempt: job.attempt,
      ...(handover.detail ? { detail: handover.detail } : {}),
    });
    // The send is what makes the job safe; the ledger line is its history (GET shows it as pending).
    await withTimeLimit(timeLeft(), () =>
      deps.ledger.record({
        jobId: job.jobId,
        idempotencyKey: job.idempotencyKey,
        ...(job.tenant !== undefined ? { tenant: job.tenant } : {}),
        region: job.region,
        schemaVersion: job.schemaVersion,
        promptVersion: job.promptVersion,
        attempt: job.attempt,
        deferrals: job.deferrals,
        receiveCount: 1,
        kind: 'deferred',
        reason: handover.reason,
        ...(handover.eligibleAt ? { eligibleAt: handover.eligibleAt } : { eligibleAt: job.eligibleAt }),
        details: `live hand-over: delay ${sent.delaySeconds} s${handover.eligibleAt ? `, eligible ${handover.eligibleAt}` : ''}${handover.detail ? `; ${handover.detail}` : ''}`,
      }),
    ).catch((error: unknown) => log(deps, 'warn', 'ledger write for a hand-over failed', { ...fields, error: errorName(error) }));
    return { status: 'pending', jobId: job.jobId, reason: handover.reason, eligibleAt: handover.eligibleAt ?? job.eligibleAt, detail: handover.detail };
  } catch (error) {
    log(deps, 'error', 'live: could not hand the job over', { ...fields, error: errorName(error), detail: shortMessage(error) });
    return { status: 'error', jobId: job.jobId, detail: 'the job could not be finished nor handed over' };
  }
}
