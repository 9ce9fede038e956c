/**
 * The end of a driver's run: every place a job can end (results tables, ledgers, DLQs, queues) read
 * once, and the scorecard computed from it. Call it after the pollers stopped.
 */
import type { FauxqsLocal } from '../local-stack/services/services.js';
import type { LocalStack } from '../local-stack/stack.js';
import { jobIdsIn, providerTotals } from './observe.js';
import { computeScorecard, type Scorecard } from './scorecard.js';
import type { StackSubmission } from './submit.js';

/** A terminal ledger entry: a job rejected or sent to review. */
interface TerminalEntry {
  jobId: string;
  kind: 'rejected' | 'needs_review';
  reason: string;
}

/** Where every job ended, read from the stores and queues of every lane. */
export interface FinalState {
  results: Awaited<ReturnType<LocalStack['lanes'][string]['results']['scanAll']>>;
  ledger: Awaited<ReturnType<LocalStack['lanes'][string]['ledger']['scanAll']>>;
  terminalLedger: TerminalEntry[];
  /** Job ids of the messages in the DLQs. */
  deadLettered: string[];
  /** Job ids of the messages still in the lane queues. */
  waiting: string[];
}

/**
 * Reads every lane's results table, ledger, DLQ and queue.
 *
 * @param fauxqs the fauxqs server to inspect queues on (default the stack's own; a stack on shared services has none)
 */
export async function collectFinalState(stack: LocalStack, fauxqs: Pick<FauxqsLocal, 'server'> | undefined = stack.fauxqs): Promise<FinalState> {
  const lanes = Object.values(stack.lanes);
  const results = (await Promise.all(lanes.map((l) => l.results.scanAll()))).flat();
  const ledger = (await Promise.all(lanes.map((l) => l.ledger.scanAll()))).flat();
  return {
    results,
    ledger,
    terminalLedger: ledger.flatMap((e) => (e.kind === 'rejected' || e.kind === 'needs_review' ? [{ jobId: e.jobId, kind: e.kind, reason: e.reason }] : [])),
    deadLettered: lanes.flatMap((l) => jobIdsIn(fauxqs, l.lane.resources.dlqName)),
    waiting: lanes.flatMap((l) => jobIdsIn(fauxqs, l.lane.resources.queueName)),
  };
}

/** How the run went, beside what the stores hold. */
export interface RunFigures {
  /** The consumer's metric totals at the end (a copy). */
  metrics: Record<string, number>;
  elapsedMs: number;
  timedOut: boolean;
  quotaBoundMinimumMs?: number;
}

/** The scorecard of a run: the final state, the consumer's metrics and the provider's counts (`notSent` included). */
export function scorecardOf(stack: LocalStack, final: FinalState, submission: StackSubmission, figures: RunFigures): Scorecard {
  const card = computeScorecard({
    submitted: submission.submitted,
    results: final.results.map((r) => ({ jobId: r.jobId, idempotencyKey: r.idempotencyKey, committedAt: Date.parse(r.committedAt) })),
    terminalLedger: final.terminalLedger,
    deadLettered: final.deadLettered,
    waiting: final.waiting,
    metrics: figures.metrics,
    queueAgesMs: stack.telemetry.totals.values.QueueAgeMs ?? [],
    attemptsPerCompletion: stack.telemetry.totals.values.AttemptsPerCompletion ?? [],
    provider: providerTotals(stack),
    elapsedMs: figures.elapsedMs,
    timedOut: figures.timedOut,
    ...(figures.quotaBoundMinimumMs !== undefined ? { quotaBoundMinimumMs: figures.quotaBoundMinimumMs } : {}),
  });
  return { ...card, notSent: submission.submission.total - submission.sent.length };
}
