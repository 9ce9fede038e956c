/**
 * The local run's scorecard: every submitted job is looked up in every place a job can end, so
 * `lost` is counted job by job (submitted and found nowhere), not derived from other totals.
 */

/** Where a job was found at the end of a run. */
type JobState = 'committed' | 'rejected' | 'needs_review' | 'dead_lettered' | 'waiting';

/** One submitted job, as the run remembers it. */
export interface SubmittedJob {
  jobId: string;
  idempotencyKey: string;
  lane: string;
  createdAt: number;
}

/** Everything the scorecard is computed from; each field is read from a real store or counter. */
export interface ScorecardInputs {
  submitted: SubmittedJob[];
  /** Results items: jobId, idempotencyKey, committedAt (ms). */
  results: { jobId: string; idempotencyKey: string; committedAt: number }[];
  /** Terminal ledger entries: jobId, kind, reason. */
  terminalLedger: { jobId: string; kind: 'rejected' | 'needs_review'; reason: string }[];
  /** Job ids of messages in each lane's DLQ. */
  deadLettered: string[];
  /** Job ids of messages still in a lane queue (visible, in flight or delayed). */
  waiting: string[];
  /** Metric totals from the consumer's EMF output. */
  metrics: Record<string, number>;
  /** Every QueueAgeMs value the consumer reported. */
  queueAgesMs: number[];
  /** Every AttemptsPerCompletion value the consumer reported. */
  attemptsPerCompletion: number[];
  /** The fake provider's own counts. */
  provider: { requests: number; rateLimited: number; byKind: Record<string, number> };
  elapsedMs: number;
  timedOut: boolean;
  /**
   * The quota-bound minimum drain time (ms): the jobs divided by the per-minute request limit of the
   * keys that serve them (per lane; the slowest lane bounds the run), in scaled minutes. Optional.
   */
  quotaBoundMinimumMs?: number | undefined;
}

/** The scorecard printed at the end of a run (and as JSON with `--json`). */
export interface Scorecard {
  submitted: number;
  /** Documents the producer could not send (reported per item at intake; not part of `submitted`). */
  notSent: number;
  committed: number;
  duplicatesSuppressed: number;
  doubleCommits: number;
  throttled429: number;
  throttledByKind: Record<string, number>;
  deferrals: number;
  modelCalls: number;
  modelCallsPerCompletion: number | null;
  attemptsPerCompletion: number | null;
  validationFailures: number;
  needsReview: number;
  rejected: number;
  rejectedByReason: Record<string, number>;
  regionMismatches: number;
  deadLettered: number;
  waiting: number;
  lost: number;
  oldestMessageAgeMs: number | null;
  latencyMs: { p50: number | null; p95: number | null };
  /** Calls the provider answered 429, as a share of every call it received (0..1). */
  throttleShareOfCalls: number | null;
  /** Calls admission deferred without calling the provider. */
  admissionDenied: number;
  /** Cooldowns recorded (a key or quota owner learned to be out), by reason. */
  keyCooldowns: Record<string, number>;
  /** Times a lane paused (every key out until a long reset). */
  lanePauses: number;
  /** From the first submission to the last commit (ms), or null when nothing committed. */
  drainMs: number | null;
  /** See {@link ScorecardInputs.quotaBoundMinimumMs}. */
  quotaBoundMinimumMs: number | null;
  /** drainMs / quotaBoundMinimumMs (1.0 = as fast as the keys' per-minute limits allow). */
  drainRatio: number | null;
  elapsedMs: number;
  timedOut: boolean;
}

/** The q-quantile (0..1) of values by nearest rank; null when there are none. */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? null;
}

/** `value` rounded to `digits` decimals. */
export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Computes the scorecard; pure. */
export function computeScorecard(inputs: ScorecardInputs): Scorecard {
  const submittedIds = new Set(inputs.submitted.map((j) => j.jobId));
  const byKey = new Map<string, number>();
  for (const r of inputs.results) byKey.set(r.idempotencyKey, (byKey.get(r.idempotencyKey) ?? 0) + 1);
  const committedResults = inputs.results.filter((r) => submittedIds.has(r.jobId));
  const states = new Map<string, Set<JobState>>();
  const mark = (jobId: string, state: JobState): void => {
    if (!submittedIds.has(jobId)) return;
    let set = states.get(jobId);
    if (!set) states.set(jobId, (set = new Set()));
    set.add(state);
  };
  for (const r of committedResults) mark(r.jobId, 'committed');
  for (const e of inputs.terminalLedger) mark(e.jobId, e.kind);
  for (const id of inputs.deadLettered) mark(id, 'dead_lettered');
  for (const id of inputs.waiting) mark(id, 'waiting');

  const rejectedByReason: Record<string, number> = {};
  const rejectedJobs = new Set<string>();
  for (const e of inputs.terminalLedger) {
    if (e.kind !== 'rejected' || !submittedIds.has(e.jobId) || rejectedJobs.has(e.jobId)) continue;
    rejectedJobs.add(e.jobId);
    rejectedByReason[e.reason] = (rejectedByReason[e.reason] ?? 0) + 1;
  }
  const count = (state: JobState): number => [...states.values()].filter((s) => s.has(state)).length;
  const createdAt = new Map(inputs.submitted.map((j) => [j.jobId, j.createdAt]));
  const latencies = committedResults.map((r) => r.committedAt - (createdAt.get(r.jobId) ?? r.committedAt));
  const committed = new Set(committedResults.map((r) => r.jobId)).size;
  const modelCalls = inputs.metrics.ModelCalls ?? 0;
  const m = (name: string): number => inputs.metrics[name] ?? 0;
  const firstSubmitted = inputs.submitted.length > 0 ? Math.min(...inputs.submitted.map((j) => j.createdAt)) : null;
  const lastCommit = committedResults.length > 0 ? Math.max(...committedResults.map((r) => r.committedAt)) : null;
  const drainMs = firstSubmitted !== null && lastCommit !== null ? Math.max(0, lastCommit - firstSubmitted) : null;
  const minimum = inputs.quotaBoundMinimumMs !== undefined && inputs.quotaBoundMinimumMs > 0 ? inputs.quotaBoundMinimumMs : null;
  const keyCooldowns = Object.fromEntries(
    (
      [
        ['rate_limit', 'KeyCooldownRateLimit'],
        ['quota_exhausted', 'KeyCooldownQuotaExhausted'],
        ['billing', 'KeyCooldownBilling'],
      ] as const
    )
      .map(([reason, metric]) => [reason, m(metric)] as const)
      .filter(([, n]) => n > 0),
  );
  return {
    submitted: inputs.submitted.length,
    notSent: 0,
    committed,
    duplicatesSuppressed: m('DuplicateSuppressed'),
    doubleCommits: [...byKey.values()].filter((n) => n > 1).length,
    throttled429: inputs.provider.rateLimited,
    throttledByKind: inputs.provider.byKind,
    deferrals: m('Deferred'),
    modelCalls,
    modelCallsPerCompletion: committed > 0 ? round(modelCalls / committed) : null,
    attemptsPerCompletion:
      inputs.attemptsPerCompletion.length > 0 ? round(inputs.attemptsPerCompletion.reduce((a, b) => a + b, 0) / inputs.attemptsPerCompletion.length) : null,
    validationFailures: m('ValidationFailed'),
    needsReview: count('needs_review'),
    rejected: rejectedJobs.size,
    rejectedByReason,
    regionMismatches: m('RegionMismatch'),
    deadLettered: count('dead_lettered'),
    waiting: count('waiting'),
    lost: inputs.submitted.filter((j) => !states.has(j.jobId)).length,
    oldestMessageAgeMs: inputs.queueAgesMs.length > 0 ? Math.max(...inputs.queueAgesMs) : null,
    latencyMs: { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95) },
    throttleShareOfCalls: inputs.provider.requests > 0 ? round(inputs.provider.rateLimited / inputs.provider.requests, 4) : null,
    admissionDenied: m('AdmissionDenied'),
    keyCooldowns,
    lanePauses: m('LanePaused'),
    drainMs,
    quotaBoundMinimumMs: minimum === null ? null : Math.round(minimum),
    drainRatio: drainMs !== null && minimum !== null ? round(drainMs / minimum) : null,
    elapsedMs: inputs.elapsedMs,
    timedOut: inputs.timedOut,
  };
}

/** Renders the scorecard for people. */
export function formatScorecard(card: Scorecard): string {
  const reasons = Object.entries(card.rejectedByReason)
    .map(([r, n]) => `${r} ${n}`)
    .join(', ');
  const kinds = Object.entries(card.throttledByKind)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const ms = (v: number | null): string => (v === null ? '-' : `${v} ms`);
  const rows: [string, string][] = [
    ['submitted', `${card.submitted}${card.notSent ? ` (${card.notSent} more NOT sent: see the submit errors above)` : ''}`],
    ['committed', String(card.committed)],
    ['duplicates suppressed', String(card.duplicatesSuppressed)],
    ['double commits', String(card.doubleCommits)],
    ['429s seen', `${card.throttled429}${kinds ? ` (${kinds})` : ''}`],
    ['429 share of calls', card.throttleShareOfCalls === null ? '-' : `${(card.throttleShareOfCalls * 100).toFixed(2)} %`],
    ['admission denied (no call)', String(card.admissionDenied)],
    [
      'key cooldowns',
      Object.keys(card.keyCooldowns).length === 0
        ? '0'
        : Object.entries(card.keyCooldowns)
            .map(([r, n]) => `${r} ${n}`)
            .join(', '),
    ],
    ['lane pauses', String(card.lanePauses)],
    ['deferrals (re-sent for later)', String(card.deferrals)],
    ['model calls', `${card.modelCalls}${card.modelCallsPerCompletion === null ? '' : ` (${card.modelCallsPerCompletion} per completion)`}`],
    ['attempts per completion', card.attemptsPerCompletion === null ? '-' : String(card.attemptsPerCompletion)],
    ['validation failures', String(card.validationFailures)],
    ['needs review', String(card.needsReview)],
    ['rejected', `${card.rejected}${reasons ? ` (${reasons})` : ''}`],
    ['region mismatches', String(card.regionMismatches)],
    ['dead-lettered', String(card.deadLettered)],
    ['still waiting', String(card.waiting)],
    ['LOST', String(card.lost)],
    ['oldest message age', ms(card.oldestMessageAgeMs)],
    ['end-to-end latency p50 / p95', `${ms(card.latencyMs.p50)} / ${ms(card.latencyMs.p95)}`],
    [
      'drain time / quota-bound minimum',
      card.drainMs === null ? '-' : `${ms(card.drainMs)} / ${ms(card.quotaBoundMinimumMs)}${card.drainRatio === null ? '' : ` = ${card.drainRatio}`}`,
    ],
    ['elapsed', `${(card.elapsedMs / 1000).toFixed(1)} s${card.timedOut ? ' (time limit reached)' : ''}`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return ['ratelane local run — scorecard', ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)].join('\n');
}
