/**
 * The soak's reconciliation and report: every submitted job gets exactly one final state from where
 * it was found; `lost` counts jobs found nowhere; the report is rendered for people and as JSON.
 */
import type { Scorecard } from '../scorecard.js';
import type { CrashPoint, OutagePoint } from './faults.js';

/** Where a job was found at the end. */
export type SoakState = 'committed' | 'needs_review' | 'rejected' | 'dead_lettered' | 'waiting';

/** Precedence of a job's final state when copies of it ended in several places (a commit wins). */
export const STATE_PRECEDENCE: readonly SoakState[] = ['committed', 'needs_review', 'rejected', 'dead_lettered', 'waiting'];

/**
 * How a soak ended: every queue drained; the time limit passed; the consumers stalled (no job settled
 * and no model call for the stall limit); or the process hit an uncaught error and the run was ended
 * to report. Anything but `drained` fails the soak.
 */
export type SoakEnd = 'drained' | 'timeLimit' | 'stalled' | 'crashed';

/** Messages left in the lane queues (by state) and the DLQs when the run was reconciled. */
export interface QueueLeft {
  visible: number;
  inFlight: number;
  delayed: number;
  deadLettered: number;
}

/** What a soak found. */
export interface SoakReport {
  /** Jobs asked for. */
  jobs: number;
  /** Jobs the producer sent (the reconciliation's universe). */
  submitted: number;
  /** Jobs the producer could not send (reported at intake, not part of `submitted`). */
  notSent: number;
  /** Final state of each submitted job, counted: these add up to `submitted - lost`. */
  states: Record<SoakState, number>;
  /** Submitted jobs found in no place at all. */
  lost: number;
  /** Idempotency keys committed more than once. */
  doubleCommits: number;
  /**
   * Jobs whose copies (a duplicate delivery, a crash after a re-send) ended in more than one place,
   * e.g. committed and also dead-lettered; the final state is the first of {@link STATE_PRECEDENCE}.
   */
  multiState: number;
  /** Up to 10 of them: job id and every place it was found. */
  multiStateExamples: { jobId: string; places: SoakState[] }[];
  /** Results items of jobs that were never submitted (must be 0). */
  strayResults: number;
  injected: {
    duplicateMessages: number;
    crashes: Record<CrashPoint, number>;
    /** Copies of jobs a crash made (re-sent by an invocation that then died). */
    crashCopies: number;
    outages: Record<OutagePoint, number>;
    creditOutageMs: number;
    providerFaults: Record<string, number>;
  };
  /** Invocations the poller counted failed as a whole (by reason: `timeout` is how a crash ends), and failed deletes. */
  poller: { wholeBatchFailures: Record<string, number>; wholeBatchFailureExamples: Record<string, string>; deleteFailures: number };
  /** 429s the provider answered, by kind (`insufficient_quota` is out of credit). */
  throttled: Record<string, number>;
  /** Consumer metric totals (EMF). */
  metrics: Record<string, number>;
  sentinel: {
    documents: number;
    /** Log lines (logs and EMF metrics) that contain the sentinel: must be 0. */
    leaks: number;
    /** Ledger entries that contain it: must be 0. */
    ledgerLeaks: number;
    /** Log lines that contain a provider key secret: must be 0. */
    secretLeaks: number;
    logLines: number;
    unstructuredLines: number;
  };
  /** The `npm run local` scorecard over the same stores. */
  scorecard: Scorecard;
  elapsedMs: number;
  /** True when the run ended by its time limit. */
  timedOut: boolean;
  /** How the run ended (see {@link SoakEnd}). */
  end: SoakEnd;
  /** Seconds without a settled job or a model call after which the run counts as stalled (0: never). */
  stallLimitSeconds: number;
  /** Whether every job was submitted (a run can hit its time limit while still submitting). */
  submissionComplete: boolean;
  /** Busy-loop processes that competed for the CPUs during the run (`--starve`). */
  busyLoops: number;
  /** The most messages the lane queues held at once (visible + in flight + delayed), sampled about once a second. */
  queuePeak: number;
  /** When the peak was first seen (ms since the start), null when no sample was taken. */
  queuePeakAtMs: number | null;
  /** `submitted + injected duplicate messages`: a run where no message multiplies stays within it. */
  queueBound: number;
  /** Copies of a job waiting beside a later re-send of it (sampled; a lower bound). */
  multiplication: {
    /** Distinct messages seen waiting while a copy of the same job re-sent later was also queued, beyond injected duplicates. */
    resentWhileQueued: number;
    /** Jobs with such a copy: two chains of one job at once. */
    jobsWithSeveralChains: number;
    /** The most messages one job had in the lane queues at one sample. */
    mostCopiesOfOneJob: number;
    samples: number;
  };
  /** What was left in the queues when the run was reconciled (after the pollers stopped); null when unknown. */
  queueLeft: QueueLeft | null;
  /** False when the final state could not be read in full: `states` and `lost` are then not to be trusted. */
  reconciled: boolean;
  /** Steps of the run's end that failed or did not finish in time, and a crash: each fails the soak. */
  problems: string[];
  /** Consumer log lines written after the stack stopped (work the poller did not stop). */
  lateLogLines: number;
}

/** Why a soak failed, one reason per line (empty when it passed). */
export function soakFailures(report: SoakReport): string[] {
  const failures: string[] = [];
  if (report.end !== 'drained') failures.push(`the run did not drain: ${endLabel(report)}`);
  if (!report.reconciled) failures.push('the final state could not be read in full: the reconciliation is incomplete');
  if (report.lost > 0) failures.push(`${report.lost} job(s) lost`);
  if (report.doubleCommits > 0) failures.push(`${report.doubleCommits} double commit(s)`);
  if (report.strayResults > 0) failures.push(`${report.strayResults} result(s) of jobs never submitted`);
  if (report.sentinel.leaks > 0 || report.sentinel.ledgerLeaks > 0) failures.push('the sentinel leaked into logs or the ledger');
  if (report.sentinel.secretLeaks > 0) failures.push('a key secret leaked into the logs');
  if (report.queuePeak > report.queueBound) {
    failures.push(`messages multiplied: the queues held ${report.queuePeak} > ${report.queueBound} (submitted + injected duplicates)`);
  }
  for (const problem of report.problems) failures.push(problem);
  return failures;
}

/** 0 when the soak passed (drained in time, nothing lost, committed twice, leaked or multiplied, every step ended); else 1. */
export function soakExitCode(report: SoakReport): number {
  return soakFailures(report).length === 0 ? 0 : 1;
}

/** How the run ended, in words. */
function endLabel(report: SoakReport): string {
  const seconds = `${(report.elapsedMs / 1000).toFixed(1)} s`;
  switch (report.end) {
    case 'drained':
      return `drained in ${seconds}`;
    case 'timeLimit':
      return `TIME LIMIT reached after ${seconds}${report.submissionComplete ? '' : ' (while still submitting)'}`;
    case 'stalled':
      return `STALLED: no job settled and no model call for ${report.stallLimitSeconds} s (after ${seconds})`;
    case 'crashed':
      return `CRASHED after ${seconds} (an uncaught error; the run was ended to report)`;
  }
}

/** Renders the report for people. */
export function formatSoakReport(report: SoakReport): string {
  const entries = (record: Record<string, number>): string =>
    Object.entries(record)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || '-';
  const m = report.metrics;
  const rows: [string, string][] = [
    ['submitted', `${report.submitted} of ${report.jobs}${report.notSent ? ` (${report.notSent} NOT sent)` : ''}`],
    ...STATE_PRECEDENCE.map((s): [string, string] => [`  ${s}`, String(report.states[s])]),
    ['LOST', String(report.lost)],
    ['DOUBLE COMMITS', String(report.doubleCommits)],
    ['jobs in several places', `${report.multiState}${report.multiState ? ' (a copy of a committed job also ended elsewhere; the commit counts)' : ''}`],
    ['duplicate messages sent', String(report.injected.duplicateMessages)],
    ['duplicates suppressed', String(m.DuplicateSuppressed ?? 0)],
    ['crashes injected', entries(report.injected.crashes)],
    ['outages injected', entries(report.injected.outages)],
    ['provider faults', entries(report.injected.providerFaults)],
    ['whole-batch failures', entries(report.poller.wholeBatchFailures)],
    ['429s', entries(report.throttled)],
    ['key out of credit for', `${(report.injected.creditOutageMs / 1000).toFixed(1)} s`],
    ['model calls', String(m.ModelCalls ?? 0)],
    ['deferrals / real failures', `${m.Deferred ?? 0} / ${m.Failed ?? 0}`],
    ['billing alarms', String(m.BillingAlarm ?? 0)],
    ['validation failures', String(m.ValidationFailed ?? 0)],
    ['sentinel documents', String(report.sentinel.documents)],
    ['sentinel in logs / ledger', `${report.sentinel.leaks} / ${report.sentinel.ledgerLeaks} (of ${report.sentinel.logLines} log lines)`],
    ['key secrets in logs', String(report.sentinel.secretLeaks)],
    ['queue peak / bound', queuePeakLabel(report)],
    [
      're-sent beside a copy',
      `${report.multiplication.resentWhileQueued} message(s) of ${report.multiplication.jobsWithSeveralChains} job(s); most copies of one job ${report.multiplication.mostCopiesOfOneJob}`,
    ],
    ['still waiting', stillWaitingLabel(report)],
    ['busy loops (--starve)', String(report.busyLoops)],
    ['ended', endLabel(report)],
    ['elapsed', `${(report.elapsedMs / 1000).toFixed(1)} s`],
  ];
  if (!report.reconciled) rows.splice(0, 0, ['RECONCILIATION', 'INCOMPLETE: the final state could not be read in full (see problems)']);
  const failures = soakFailures(report);
  const width = Math.max(...rows.map(([k]) => k.length));
  return [
    'ratelane soak — reconciliation',
    ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`),
    failures.length === 0 ? '  PASSED' : `  FAILED:\n${failures.map((f) => `    - ${f}`).join('\n')}`,
  ].join('\n');
}

/** `peak / bound (submitted + duplicates), at … s`, flagged when the peak exceeds the bound. */
function queuePeakLabel(report: SoakReport): string {
  const at = report.queuePeakAtMs === null ? '' : ` at ${(report.queuePeakAtMs / 1000).toFixed(0)} s`;
  const over = report.queuePeak > report.queueBound ? ' — EXCEEDED: messages multiplied' : '';
  return `${report.queuePeak} / ${report.queueBound} (submitted ${report.submitted} + ${report.injected.duplicateMessages} duplicate messages${report.injected.crashCopies ? ` + ${report.injected.crashCopies} crash copies` : ''})${at}${over}`;
}

/** Jobs still waiting and the messages left in the queues (by state) and the DLQs. */
function stillWaitingLabel(report: SoakReport): string {
  const q = report.queueLeft;
  const queue = q ? `; queues: ${q.visible} visible, ${q.inFlight} in flight, ${q.delayed} delayed; DLQs ${q.deadLettered}` : '; queues: unknown';
  return `${report.states.waiting} job(s)${queue}`;
}

/**
 * Gives each submitted job exactly one final state from where it was found (pure). A job found in
 * several places gets the first of {@link STATE_PRECEDENCE}; a job found nowhere is lost.
 */
export function reconcile(
  submitted: readonly { jobId: string }[],
  found: Readonly<Record<SoakState, Iterable<string>>>,
): { states: Record<SoakState, number>; lost: string[]; multiState: { jobId: string; places: SoakState[] }[] } {
  const places = new Map<string, Set<SoakState>>(submitted.map((j) => [j.jobId, new Set<SoakState>()]));
  for (const state of STATE_PRECEDENCE) {
    for (const jobId of found[state]) places.get(jobId)?.add(state);
  }
  const states = Object.fromEntries(STATE_PRECEDENCE.map((s) => [s, 0])) as Record<SoakState, number>;
  const lost: string[] = [];
  const multiState: { jobId: string; places: SoakState[] }[] = [];
  for (const [jobId, set] of places) {
    const final = STATE_PRECEDENCE.find((s) => set.has(s));
    if (!final) {
      lost.push(jobId);
      continue;
    }
    states[final] += 1;
    if (set.size > 1) multiState.push({ jobId, places: STATE_PRECEDENCE.filter((s) => set.has(s)) });
  }
  return { states, lost, multiState };
}
