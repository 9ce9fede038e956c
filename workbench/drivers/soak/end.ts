/**
 * The soak's end: each step of it bounded in time (a step that fails or does not finish is a problem in
 * the report, not a run without one), the final state read from every place a job can end, and the
 * report built from it and from what the run counted.
 */
import type { LaneSet } from '../../../lib/config/lanes.js';
import { shortMessage } from '../../../lib/platform/errors.js';
import type { LocalStack } from '../../local-stack/stack.js';
import { inspectDepth, jobIdsIn, orTimeout, stopPollers } from '../observe.js';
import { collectFinalState, scorecardOf, type FinalState } from '../outcome.js';
import type { SoakOptions } from './soak.js';
import type { FaultLog } from './fault-log.js';
import type { CreditOutage } from './inputs.js';
import type { QueueMultiplication } from './queue.js';
import { reconcile, type QueueLeft, type SoakEnd, type SoakReport } from './report.js';
import type { SoakJobs } from './submit.js';

/** How long each step of the run's end may take before the soak reports without it. */
export const END_STEP_LIMIT_MS = { outage: 30_000, pollersAfterTimeout: 30_000, finalState: 120_000, stackStop: 60_000, submissionAfterLimit: 30_000 } as const;

/** Awaits a step of the run's end for at most `ms`; a failure or a timeout is recorded as a problem. Resolves its value or undefined. */
export async function stepWithin<T>(what: string, step: Promise<T>, ms: number, problems: string[]): Promise<T | undefined> {
  const guarded = step.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  const outcome = await orTimeout(guarded, ms);
  if (outcome === undefined) {
    problems.push(`${what} did not finish within ${Math.round(ms / 1000)} s`);
    return undefined;
  }
  if (!outcome.ok) {
    problems.push(`${what} failed: ${shortMessage(outcome.error)}`);
    return undefined;
  }
  return outcome.value;
}

/** The run's end: the credit outage over, the pollers stopped (running invocations aborted), every place a job can end read. */
export async function endRun(
  stack: LocalStack,
  outage: CreditOutage,
  lanes: LaneSet,
  problems: string[],
  say: (line: string) => void,
): Promise<{ final: FinalState; reconciled: boolean; queueLeft: QueueLeft | null }> {
  await stepWithin('ending the credit outage', outage.end(), END_STEP_LIMIT_MS.outage, problems);
  const functionTimeoutMs = Math.max(...Object.values(lanes).map((l) => l.consumer.timeoutSeconds * 1000));
  await stepWithin('stopping the pollers', stopPollers(stack), functionTimeoutMs + END_STEP_LIMIT_MS.pollersAfterTimeout, problems);
  const queueLeft = queueLeftIn(stack);
  let final: FinalState | undefined;
  for (let attempt = 1; attempt <= 2 && final === undefined; attempt++) {
    const failedBefore = problems.length;
    final = await stepWithin(`reading the final state (attempt ${attempt})`, collectFinalState(stack), END_STEP_LIMIT_MS.finalState, problems);
    if (final !== undefined)
      problems.splice(failedBefore); // an attempt that failed and was retried successfully is no problem
    else say(`  ${problems.at(-1)}`);
  }
  return { final: final ?? emptyFinalState(stack), reconciled: final !== undefined, queueLeft };
}

/** Messages left in every lane's queue (by state) and DLQ, by fauxqs inspection; null when the stack has none. */
function queueLeftIn(stack: LocalStack): QueueLeft | null {
  if (!stack.fauxqs) return null;
  const left: QueueLeft = { visible: 0, inFlight: 0, delayed: 0, deadLettered: 0 };
  for (const l of Object.values(stack.lanes)) {
    const queue = inspectDepth(stack.fauxqs, l.lane.resources.queueName);
    const dlq = inspectDepth(stack.fauxqs, l.lane.resources.dlqName);
    left.visible += queue?.visible ?? 0;
    left.inFlight += queue?.inFlight ?? 0;
    left.delayed += queue?.delayed ?? 0;
    left.deadLettered += (dlq?.visible ?? 0) + (dlq?.inFlight ?? 0) + (dlq?.delayed ?? 0);
  }
  return left;
}

/** A final state with nothing read from the stores (when they could not be read): what is still queued is all it knows. */
function emptyFinalState(stack: LocalStack): FinalState {
  const lanes = Object.values(stack.lanes);
  return {
    results: [],
    ledger: [],
    terminalLedger: [],
    deadLettered: lanes.flatMap((l) => jobIdsIn(stack.fauxqs, l.lane.resources.dlqName)),
    waiting: lanes.flatMap((l) => jobIdsIn(stack.fauxqs, l.lane.resources.queueName)),
  };
}

/** What the run itself counted, beside the stores. */
export interface SoakFigures {
  duplicateMessages: number;
  creditOutageMs: number;
  elapsedMs: number;
  end: SoakEnd;
  queue: QueueMultiplication;
  queueLeft: QueueLeft | null;
  reconciled: boolean;
  problems: string[];
  busyLoops: number;
}

/** The report from the final state; the log scan's figures (`leaks`, `secretLeaks`, `logLines`, `lateLogLines`) are filled in after the stack stops. */
export function soakReport(options: SoakOptions, stack: LocalStack, final: FinalState, jobs: SoakJobs, log: FaultLog, figures: SoakFigures): SoakReport {
  const { submission } = jobs;
  const providerStats = stack.provider.stats();
  const metrics = { ...stack.telemetry.totals.total };
  const scorecard = scorecardOf(stack, final, submission, { metrics, elapsedMs: figures.elapsedMs, timedOut: figures.end !== 'drained' });
  const { submitted } = submission;
  const { states, lost, multiState } = reconcile(submitted, {
    committed: final.results.map((r) => r.jobId),
    needs_review: final.terminalLedger.filter((e) => e.kind === 'needs_review').map((e) => e.jobId),
    rejected: final.terminalLedger.filter((e) => e.kind === 'rejected').map((e) => e.jobId),
    dead_lettered: final.deadLettered,
    waiting: final.waiting,
  });
  const submittedIds = new Set(submitted.map((j) => j.jobId));
  return {
    jobs: options.jobs,
    submitted: submitted.length,
    notSent: scorecard.notSent,
    states,
    lost: lost.length,
    doubleCommits: Math.max(scorecard.doubleCommits, [...log.commitsByKey.values()].filter((n) => n > 1).length),
    multiState: multiState.length,
    multiStateExamples: multiState.slice(0, 10),
    strayResults: final.results.filter((r) => !submittedIds.has(r.jobId)).length,
    injected: {
      duplicateMessages: figures.duplicateMessages,
      crashes: log.crashes,
      crashCopies: log.crashCopies,
      outages: log.outages,
      creditOutageMs: figures.creditOutageMs,
      providerFaults: { ...providerStats.faults },
    },
    throttled: { ...providerStats.rateLimited },
    poller: { wholeBatchFailures: log.wholeBatchFailures, wholeBatchFailureExamples: log.wholeBatchFailureExamples, deleteFailures: log.deleteFailures },
    metrics,
    sentinel: {
      documents: jobs.sentinelDocuments,
      leaks: 0,
      ledgerLeaks: final.ledger.filter((e) => JSON.stringify(e).includes(jobs.sentinel)).length,
      secretLeaks: 0,
      logLines: 0,
      unstructuredLines: stack.telemetry.unstructuredLines,
    },
    scorecard,
    elapsedMs: figures.elapsedMs,
    timedOut: figures.end === 'timeLimit',
    end: figures.end,
    stallLimitSeconds: options.stallLimitSeconds,
    submissionComplete: jobs.complete,
    busyLoops: figures.busyLoops,
    queuePeak: figures.queue.peak,
    queuePeakAtMs: figures.queue.peakAtMs,
    queueBound: submitted.length + figures.duplicateMessages + log.crashCopies,
    multiplication: {
      resentWhileQueued: figures.queue.resentWhileQueued,
      jobsWithSeveralChains: figures.queue.jobsWithSeveralChains,
      mostCopiesOfOneJob: figures.queue.mostCopiesOfOneJob,
      samples: figures.queue.samples,
    },
    queueLeft: figures.queueLeft,
    reconciled: figures.reconciled,
    problems: [...figures.problems],
    lateLogLines: 0,
  };
}
