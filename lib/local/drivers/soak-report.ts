/**
 * The soak's reconciliation and report: every submitted job gets exactly one final state from where
 * it was found; `lost` counts jobs found nowhere; the report is rendered for people and as JSON.
 */
import type { Scorecard } from './scorecard.js';
import type { CrashPoint, OutagePoint } from './soak-faults.js';

/** Where a job was found at the end. */
export type SoakState = 'committed' | 'needs_review' | 'rejected' | 'dead_lettered' | 'waiting';

/** Precedence of a job's final state when copies of it ended in several places (a commit wins). */
export const STATE_PRECEDENCE: readonly SoakState[] = ['committed', 'needs_review', 'rejected', 'dead_lettered', 'waiting'];

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
  timedOut: boolean;
}

/** 0 when the soak passed (nothing lost, nothing committed twice, no leak, in time); else 1. */
export function soakExitCode(report: SoakReport): number {
  const clean = report.lost === 0 && report.doubleCommits === 0 && report.strayResults === 0 && report.sentinel.leaks === 0;
  return clean && report.sentinel.ledgerLeaks === 0 && report.sentinel.secretLeaks === 0 && !report.timedOut ? 0 : 1;
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
    ['elapsed', `${(report.elapsedMs / 1000).toFixed(1)} s${report.timedOut ? ' (time limit reached)' : ''}`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return ['ratelane soak — reconciliation', ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)].join('\n');
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
