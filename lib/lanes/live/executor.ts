/**
 * The live lane's executor: one checked job through the shared extraction core inside one total
 * deadline. A wait that fits the time left (a stated `retry-after`, an admission slot, a backoff) is
 * waited out in the request and the job tried again; one that does not — or a provider that hangs
 * until the work must end — hands the job over to the lane's queue with the same contract and
 * idempotency key (`handover.ts`), so the queue lane finishes it and it is still committed once.
 */
import { currentTraceHeader } from '../../platform/tracing.js';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { timeoutSignal, withAbortSignal } from '../../platform/abort-scope.js';
import type { Job } from '../../contract/job.js';
import { count, extract, intake, laneMayCarryOut, newJobRun, type Delivery, type ExtractionOutcome, type JobRun } from '../../extraction/index.js';
import { errorName } from '../../platform/errors.js';
import { putDocument } from '../../store/documents.js';
import { retryFits, type LiveBudget } from './deadline.js';
import { handOver, type Handover } from './handover.js';
import type { LiveAnswer } from './answer.js';
import type { LiveDeps } from './deps.js';

/** A job ready for the live lane: checked as the producer checks it, its text in hand. */
export interface LiveJob {
  job: Job;
  text: string;
}

/**
 * Runs `live` within `budget`: the committed result, needs review, a rejection, or "pending" after a
 * hand-over. Never throws: what cannot be answered nor handed over is an `error` answer (a 5xx: the
 * caller may repeat the request, which carries the same idempotency key).
 */
export async function runLive(live: LiveJob, budget: LiveBudget, requestId: string, deps: LiveDeps): Promise<LiveAnswer> {
  const { job, text } = live;
  try {
    const earlier = await deps.results.get(job.idempotencyKey);
    if (earlier) return committedEarlier(deps, earlier);
  } catch {
    // The conditional commit still catches a duplicate.
  }
  // Work ends a little before the answer is due; AWS calls after then are cut, a model call already
  // the expected commit time before, so what it found can still be committed.
  const workLeft = budget.workUntil - deps.now().getTime();
  const workLimit = timeoutSignal(Math.max(0, Math.floor(workLeft)));
  const callsLimit = timeoutSignal(Math.max(0, Math.floor(workLeft - deps.callTimes.expectedCommitMs())));
  let handover: Handover | undefined;
  try {
    const outcome = await withAbortSignal(
      workLimit.signal,
      async () => {
        await putDocument(deps.s3, { bucket: job.input.bucket, text, contentSha256: job.input.contentSha256 });
        return work(live, budget, deliveryFor(requestId, job.tenant, budget, callsLimit.signal, deps), deps);
      },
      Date.now() + Math.max(0, workLeft),
    );
    if (outcome.type === 'answer') return outcome.answer;
    handover = outcome.handover;
  } catch (error) {
    // Cut off, or failed where the core could not settle (a bug, the document store): hand the job over as it came.
    const reason = workLimit.signal.aborted ? 'invocation_deadline' : 'unexpected_error';
    handover = { job, delaySeconds: 0, reason, detail: `live work stopped: ${errorName(error) ?? 'error'}` };
  } finally {
    workLimit.clear();
    callsLimit.clear();
  }
  return handOver(handover, budget, deps);
}

/** The core's delivery for a live request from `caller`: one receive, the work's deadline and stop signal, the measurements. */
function deliveryFor(requestId: string, caller: string | undefined, budget: LiveBudget, stopCalls: AbortSignal, deps: LiveDeps): Delivery {
  // The request's own trace (the live invocation's): on its log lines and ledger entries.
  const traceHeader = currentTraceHeader();
  return {
    messageId: requestId,
    ...(caller !== undefined ? { senderId: caller } : {}),
    ...(traceHeader ? { traceHeader } : {}),
    receiveCount: 1,
    queueAgeMs: 0,
    deadlineAt: budget.workUntil - deps.callTimes.expectedCommitMs(),
    stopWork: stopCalls,
    // The first call is tried whenever its measured time fits (unmeasured: whenever any time is left); it is cut at the deadline.
    expectedCallMs: deps.callTimes.measuredCallMs() ?? 0,
    onModelCall: (call) => {
      if (call.answered) deps.callTimes.observeCall(call.quotaOwner, call.ms);
    },
    onCommitted: (ms) => deps.callTimes.observeCommit(ms),
  };
}

type WorkResult = { type: 'answer'; answer: LiveAnswer } | { type: 'handover'; handover: Handover };

/** Intake, then extraction tries while each wait fits the time left. */
async function work(live: LiveJob, budget: LiveBudget, delivery: Delivery, deps: LiveDeps): Promise<WorkResult> {
  const intook = await intake(JSON.stringify(live.job), delivery, deps);
  if (intook.type === 'settled') return settle(await laneMayCarryOut(intook), live.job, 0, deps);
  let run: JobRun = intook.run;
  for (;;) {
    const outcome = await laneMayCarryOut({ outcome: await extract(run, intook.text), run });
    if (outcome.type !== 'deferred' && outcome.type !== 'failed') return settle(outcome, run.job, run.model.calls, deps);
    const next = nextTry(outcome, run.job, deps);
    if (outcome.type === 'deferred' && outcome.action.reason === 'in_progress') {
      // Another request or delivery holds the key and calls the model: its result is waited for, not paid for twice.
      const held = await awaitHolder(run.job, Date.parse(outcome.action.eligibleAt), budget, delivery, deps);
      if (held) return { type: 'answer', answer: committedEarlier(deps, held) };
      if (deps.now().getTime() + deps.callTimes.expectedCallMs() + deps.callTimes.expectedCommitMs() > budget.workUntil) {
        // Pending as the holder's job: the queue finishes that job if its holder never does (an identical request is the same job).
        const jobId = run.keyHeldBy ?? run.job.jobId;
        return { type: 'handover', handover: { ...next.handover, job: { ...next.handover.job, jobId } } };
      }
      // The hold ended without a result (its holder gave the key back, or died): claim it again.
      run = newJobRun(deps, { ...delivery, expectedCallMs: deps.callTimes.expectedCallMs() }, run.job, run.model, run.claim);
      continue;
    }
    const now = deps.now().getTime();
    const fits =
      outcome.type === 'failed'
        ? run.job.attempt + 1 < deps.lane.queue.maxReceiveCount
        : outcome.action.reason !== 'invocation_deadline' && !delivery.stopWork?.aborted;
    const cost = { waitMs: next.waitMs, callMs: deps.callTimes.expectedCallMs(), commitMs: deps.callTimes.expectedCommitMs() };
    if (!fits || !retryFits(budget, now, cost)) return { type: 'handover', handover: next.handover };
    try {
      if (next.waitMs > 0) await deps.sleep(next.waitMs, delivery.stopWork);
    } catch {
      return { type: 'handover', handover: next.handover };
    }
    deps.metrics.addMetric('LiveInRequestRetries', MetricUnit.Count, 1);
    run = newJobRun(deps, { ...delivery, expectedCallMs: deps.callTimes.expectedCallMs() }, next.handover.job, run.model, run.claim);
  }
}

/** How often a request waiting for another holder's result reads the results table (ms). */
const HOLDER_POLL_MS = 250;

/**
 * Waits for the result of the request or delivery that holds `job`'s key: reads the results table every
 * {@link HOLDER_POLL_MS} until it is committed (returned), the holder's hold ends (`holdEndsAt`), or the
 * request's work must end — whichever comes first (then `undefined`).
 */
async function awaitHolder(
  job: Job,
  holdEndsAt: number,
  budget: LiveBudget,
  delivery: Delivery,
  deps: LiveDeps,
): Promise<NonNullable<Awaited<ReturnType<LiveDeps['results']['get']>>> | undefined> {
  const until = Math.min(holdEndsAt, budget.workUntil);
  for (;;) {
    const found = await deps.results.get(job.idempotencyKey).catch(() => undefined);
    if (found) return found;
    const now = deps.now().getTime();
    if (now + HOLDER_POLL_MS > until || delivery.stopWork?.aborted) return undefined;
    try {
      await deps.sleep(HOLDER_POLL_MS, delivery.stopWork);
    } catch {
      return undefined;
    }
  }
}

/** What a deferral or a failure means for the next try: its wait, and the job to hand over instead. */
function nextTry(outcome: Extract<ExtractionOutcome, { type: 'deferred' | 'failed' }>, job: Job, deps: LiveDeps): { waitMs: number; handover: Handover } {
  if (outcome.type === 'deferred') {
    const { action } = outcome;
    const waitMs = Math.max(0, Date.parse(action.eligibleAt) - deps.now().getTime());
    const next: Job = { ...job, attempt: action.attempt, deferrals: action.deferrals, eligibleAt: action.eligibleAt };
    return { waitMs, handover: { job: next, delaySeconds: action.delaySeconds, reason: action.reason, detail: outcome.detail, eligibleAt: action.eligibleAt } };
  }
  const { action } = outcome;
  const attempt = Math.min(action.carriedAttempt + 1, deps.lane.queue.maxReceiveCount - 1);
  const waitMs = action.visibilityTimeoutSeconds * 1000;
  const eligibleAt = new Date(deps.now().getTime() + waitMs).toISOString();
  return {
    waitMs,
    handover: { job: { ...job, attempt }, delaySeconds: action.visibilityTimeoutSeconds, reason: action.reason, detail: outcome.detail, eligibleAt },
  };
}

/** A terminal outcome as the caller's answer. */
async function settle(outcome: ExtractionOutcome, job: Job, modelCalls: number, deps: LiveDeps): Promise<WorkResult> {
  const answer = (a: LiveAnswer): WorkResult => ({ type: 'answer', answer: a });
  switch (outcome.type) {
    case 'committed':
      return answer({ status: 'committed', jobId: job.jobId, result: outcome.result, model: outcome.model, attempts: modelCalls, usage: outcome.usage });
    case 'duplicate': {
      const existing = await deps.results.get(job.idempotencyKey).catch(() => undefined);
      return existing
        ? answer(committedEarlier(deps, existing))
        : answer({ status: 'error', jobId: job.jobId, detail: 'committed before, but the result could not be read' });
    }
    case 'rejected':
      return answer({ status: 'rejected', jobId: job.jobId, reason: outcome.reason });
    case 'needs_review':
      return answer({ status: 'needs_review', jobId: job.jobId });
    case 'deferred':
      // Only intake defers before any call (a job not yet eligible): the queue keeps it.
      return {
        type: 'handover',
        handover: {
          job,
          delaySeconds: outcome.action.delaySeconds,
          reason: outcome.action.reason,
          detail: outcome.detail,
          eligibleAt: outcome.action.eligibleAt,
        },
      };
    case 'failed':
      return {
        type: 'handover',
        handover: { job, delaySeconds: outcome.action.visibilityTimeoutSeconds, reason: outcome.action.reason, detail: outcome.detail },
      };
  }
}

/** A result committed before (by this job or another with the same source and versions). */
function committedEarlier(deps: LiveDeps, record: NonNullable<Awaited<ReturnType<LiveDeps['results']['get']>>>): LiveAnswer {
  count(deps, 'DuplicateSuppressed');
  return {
    status: 'committed',
    jobId: record.jobId,
    result: record.result,
    model: record.model,
    attempts: 0,
    usage: record.usage,
    committedAt: record.committedAt,
    duplicate: true,
  };
}
