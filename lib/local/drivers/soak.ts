/**
 * `npm run soak`: N jobs (default 5,000) through the local stack with faults injected at given rates,
 * then a reconciliation.
 *
 * Faults: provider 429s of each kind (small per-key rpm / tpm / daily limits, and one key per lane out
 * of credit for a while), 5xx, timeouts, garbage and schema-invalid output (the fake provider, seeded);
 * duplicate deliveries (some job messages are sent twice, some of the copies later); DynamoDB and SQS
 * unavailable for some calls; and consumer crashes between steps — after the model call (before the
 * commit), after the commit (before the acknowledgement) and after a re-send (before the
 * acknowledgement). A crash is a call that never returns: the poller's function timeout ends the
 * invocation and the whole batch comes back after its visibility timeout, as in Lambda.
 *
 * Reconciliation: every submitted job is looked up in every place a job can end (results tables,
 * ledgers, DLQs, queues) and given exactly one final state; `lost` counts jobs found nowhere,
 * `doubleCommits` idempotency keys committed more than once (seen by the commit itself and in the
 * results tables). Some documents carry a sentinel string: it must appear in no log line and no metric.
 */
import type { CommandIo } from '../../commands/command.js';
import type { LaneSet } from '../../config/lanes.js';
import { seededRandom, type RandomSource } from '../../shared/random.js';
import type { PollerEvent } from '../lambda/poller.js';
import { startLocalStack, type LocalStack } from '../stack.js';
import { localRunLanes, type LocalLaneSettings } from './lanes.js';
import { elapsedLabel, lineWriter, stackReadyLine, stopPollers, watchUntilDrained, type DrainSnapshot } from './observe.js';
import { collectFinalState, scorecardOf, type FinalState } from './outcome.js';
import { withDepFaults, type CrashPoint, type DepFaults, type OutagePoint } from './soak-faults.js';
import {
  capturingProducer,
  fileSize,
  newSentinel,
  scanLog,
  scheduleCreditOutage,
  sendDuplicates,
  soakDocuments,
  type CapturingProducer,
} from './soak-inputs.js';
import { formatSoakReport, reconcile, type SoakReport } from './soak-report.js';
import { submitToStack, type StackSubmission } from './submit.js';

export { withDepFaults, withOverrides, neverSettles, sqsUnavailableError, type CrashPoint, type DepFaults, type OutagePoint } from './soak-faults.js';
export { operatorResume, newSentinel, soakDocuments } from './soak-inputs.js';
export { formatSoakReport, reconcile, soakExitCode, STATE_PRECEDENCE, type SoakReport, type SoakState } from './soak-report.js';

/** Options of one soak (the CLI flags). */
export interface SoakOptions extends LocalLaneSettings {
  jobs: number;
  /** How many provider minutes a provider "day" lasts (the daily budget refills continuously over it). */
  dayMinutes: number;
  /** Provider faults, as shares of admitted calls. */
  faults: { serverError: number; timeout: number; garbageJson: number; schemaInvalid: number };
  /** Share of jobs whose message is sent twice. */
  duplicates: number;
  /** Chance of a consumer crash at each crash point it passes. */
  crashes: number;
  /** Share of commits that find DynamoDB unavailable. */
  storeOutages: number;
  /** Share of the consumer's SendMessage / ChangeMessageVisibility calls that find SQS unavailable. */
  sqsOutages: number;
  /** Provider minutes key-1 of each lane is out of credit (0: never), starting one minute in. */
  creditOutageMinutes: number;
  /** Share of documents that carry the sentinel string. */
  sentinels: number;
  /** Admission (shared key pool, buckets, lane pause) on (default) or off. */
  admission: boolean;
  seed: number;
  timeLimitSeconds: number;
  json: boolean;
  logFile: string | undefined;
}

/** Where consumer logs and EMF metrics go by default. */
export const SOAK_LOG_FILE = '.cache/soak/consumer.log';

/** What the injected faults did, counted as the run goes. */
interface FaultLog {
  faults: DepFaults;
  crashes: Record<CrashPoint, number>;
  outages: Record<OutagePoint, number>;
  /** Commits that reached the store and committed, per idempotency key. */
  commitsByKey: Map<string, number>;
  wholeBatchFailures: Record<string, number>;
  wholeBatchFailureExamples: Record<string, string>;
  deleteFailures: number;
  onPollerEvent(event: PollerEvent): void;
}

/** Runs the soak and returns its report (printed to `io`; `--json` adds one JSON line at the end). */
export async function runSoak(options: SoakOptions, io: CommandIo): Promise<SoakReport> {
  const say = lineWriter(io.stderr);
  const started = Date.now();
  const random = seededRandom(options.seed ^ 0x50a4);
  const chance = (p: number): boolean => p > 0 && random() < p;
  const lanes = localRunLanes(options);
  const logFile = options.logFile ?? SOAK_LOG_FILE;
  const logOffset = fileSize(logFile);
  const log = faultLog(options, chance);
  const stack = await startSoakStack(options, lanes, logFile, log, say);
  const producer = capturingProducer(stack);
  say(stackReadyLine(stack, started));
  const outage = scheduleCreditOutage(stack, lanes, { minutes: options.creditOutageMinutes, minuteMs: options.minuteMs }, say);
  try {
    const jobs = await submitSoakJobs(stack, lanes, options, producer, random, say);
    const duplicateMessages = await sendDuplicates(producer, options.duplicates, chance, random);
    say(`  sent ${duplicateMessages} duplicate message(s)`);
    const { timedOut } = await watchSoak(stack, options, jobs.submission, log, () => !outage.active, started, say);
    await outage.end();
    await stopPollers(stack);
    const report = soakReport(options, stack, await collectFinalState(stack), jobs, log, {
      duplicateMessages,
      creditOutageMs: outage.totalMs,
      elapsedMs: Date.now() - started,
      timedOut,
    });
    await stack.stop(); // flushes the log file
    const scan = await scanLog(logFile, logOffset, { sentinel: jobs.sentinel, secret: 'sk-local-' });
    Object.assign(report.sentinel, { leaks: scan.hits.sentinel ?? 0, secretLeaks: scan.hits.secret ?? 0, logLines: scan.lines });
    report.elapsedMs = Date.now() - started;
    say('');
    io.stdout.write(`${formatSoakReport(report)}\n`);
    say(`  consumer logs and EMF metrics: ${logFile}`);
    if (options.json) io.stdout.write(`${JSON.stringify(report)}\n`);
    return report;
  } finally {
    outage.dispose();
    producer.destroy();
    await stack.stop();
  }
}

/** What the soak submitted: the submission, and the sentinel some of its documents carry. */
interface SoakJobs {
  submission: StackSubmission;
  sentinel: string;
  sentinelDocuments: number;
}

/** Submits the soak's documents (a share carrying a new sentinel) through the capturing producer. */
async function submitSoakJobs(
  stack: LocalStack,
  lanes: LaneSet,
  options: SoakOptions,
  producer: CapturingProducer,
  random: RandomSource,
  say: (line: string) => void,
): Promise<SoakJobs> {
  const sentinel = newSentinel();
  const { documents, sentinelDocuments } = soakDocuments(options.jobs, sentinel, options.sentinels, random);
  const submission = await submitToStack(stack, lanes, documents, {
    clientsFor: (region) => {
      const clients = producer.clientsFor(region);
      return { sqs: clients.sqs, s3: clients.s3 };
    },
    onProgress: (event) => {
      if (event.type === 'batch' && event.batch % 50 === 0) say(`  submitting: ${event.region} batch ${event.batch}`);
    },
  });
  const { submission: result, sent, submitStarted } = submission;
  say(
    `  submitted ${sent.length} of ${documents.length} jobs in ${Date.now() - submitStarted} ms (${sentinelDocuments} carry the sentinel)${result.failed ? `; ${result.failed} NOT sent` : ''}`,
  );
  return { submission, sentinel, sentinelDocuments };
}

/** The fault decisions of a soak (seeded), and the counters of what they and the poller saw. */
function faultLog(options: SoakOptions, chance: (p: number) => boolean): FaultLog {
  const log: FaultLog = {
    crashes: { afterModelCall: 0, afterCommit: 0, afterResend: 0 },
    outages: { commit: 0, send: 0, visibility: 0 },
    commitsByKey: new Map(),
    wholeBatchFailures: {},
    wholeBatchFailureExamples: {},
    deleteFailures: 0,
    faults: {
      crash: (point) => {
        const hit = chance(options.crashes);
        if (hit) log.crashes[point] += 1;
        return hit;
      },
      outage: (point) => {
        const hit = chance(point === 'commit' ? options.storeOutages : options.sqsOutages);
        if (hit) log.outages[point] += 1;
        return hit;
      },
      onCommit: (record, status) => {
        if (status === 'committed') log.commitsByKey.set(record.idempotencyKey, (log.commitsByKey.get(record.idempotencyKey) ?? 0) + 1);
      },
    },
    onPollerEvent: (event) => {
      if (event.type === 'batchFailed') {
        log.wholeBatchFailures[event.reason] = (log.wholeBatchFailures[event.reason] ?? 0) + 1;
        log.wholeBatchFailureExamples[event.reason] ??= `${(event.error as Error)?.name ?? 'Error'}: ${event.message}`.slice(0, 300);
      }
      if (event.type === 'deleteFailed') log.deleteFailures += event.failures.length;
    },
  };
  return log;
}

/** Starts the soak's stack: small provider limits with a continuous daily window, the consumer faults, the poller counters. */
async function startSoakStack(options: SoakOptions, lanes: LaneSet, logFile: string, log: FaultLog, say: (line: string) => void): Promise<LocalStack> {
  say(`ratelane soak: ${options.jobs} jobs; starting DynamoDB Local, fauxqs and the fake provider (a provider minute lasts ${options.minuteMs} ms)…`);
  return startLocalStack({
    lanes,
    logFile,
    provider: {
      limits: { requestsPerMinute: options.providerRpm, tokensPerMinute: options.providerTpm, requestsPerDay: options.providerDaily },
      minuteMs: options.minuteMs,
      dayMs: Math.round(options.minuteMs * options.dayMinutes),
      dailyWindow: 'continuous',
      faults: options.faults,
      seed: options.seed,
    },
    overrideDeps: (_lane, deps) => withDepFaults(deps, log.faults),
    ...(options.admission ? {} : { admission: false as const }),
    onLanePause: (lane, state) => say(state.paused ? `  lane ${lane} PAUSED until ${state.until?.toISOString()} (${state.reason})` : `  lane ${lane} resumed`),
    onPollerEvent: (_lane, event) => log.onPollerEvent(event),
  });
}

/** Waits until every queue is empty, nothing is in flight and no credit outage is on; progress every 5 s. */
async function watchSoak(
  stack: LocalStack,
  options: SoakOptions,
  { sent }: StackSubmission,
  log: FaultLog,
  mayEnd: () => boolean,
  started: number,
  say: (line: string) => void,
): Promise<{ timedOut: boolean }> {
  let lastProgress = 0;
  const progress = (q: DrainSnapshot): void => {
    lastProgress = Date.now();
    const m = stack.telemetry.totals.total;
    const p = stack.provider.stats();
    const throttled = Object.values(p.rateLimited).reduce((a, b) => a + b, 0);
    const crashed = Object.values(log.crashes).reduce((a, b) => a + b, 0);
    const batchFailures = Object.values(log.wholeBatchFailures).reduce((a, b) => a + b, 0);
    say(
      `  [${elapsedLabel(started)} s] committed ${m.Completed ?? 0}/${sent.length} · in queue ${q.waiting} · DLQ ${q.deadLettered} · model calls ${m.ModelCalls ?? 0} · ` +
        `429s ${throttled} · 5xx ${p.faults.serverError} · timeouts ${p.faults.timeout} · bad output ${p.faults.garbageJson + p.faults.schemaInvalid} · ` +
        `deferred ${m.Deferred ?? 0} · failed ${m.Failed ?? 0} · review ${m.NeedsReview ?? 0} · duplicates ${m.DuplicateSuppressed ?? 0} · crashes ${crashed} · ` +
        `batch failures ${batchFailures}${q.paused.length ? ` · PAUSED ${q.paused.join(', ')}` : ''}`,
    );
  };
  return watchUntilDrained(stack, {
    intervalMs: 1000,
    deadline: started + options.timeLimitSeconds * 1000,
    readTimeoutMs: 10_000,
    mayEnd,
    onStall: (stalls) =>
      say(
        `  queue depths did not answer within 10 s (${stalls} time(s)); poller stats ${JSON.stringify(Object.fromEntries(Object.values(stack.lanes).map((l) => [l.lane.name, l.poller?.stats])))}`,
      ),
    onCheck: (snapshot, end) => {
      if (Date.now() - lastProgress >= 5000 || end === 'drained') progress(snapshot);
      if (end === 'timeLimit') say(`  time limit of ${options.timeLimitSeconds} s reached; ${snapshot.waiting} message(s) still waiting`);
    },
  });
}

/** What the run itself counted, beside the stores. */
interface SoakFigures {
  duplicateMessages: number;
  creditOutageMs: number;
  elapsedMs: number;
  timedOut: boolean;
}

/** The report from the final state; the log scan's figures (`leaks`, `secretLeaks`, `logLines`) are filled in after the stack stops. */
function soakReport(options: SoakOptions, stack: LocalStack, final: FinalState, jobs: SoakJobs, log: FaultLog, figures: SoakFigures): SoakReport {
  const { submission } = jobs;
  const providerStats = stack.provider.stats();
  const metrics = { ...stack.telemetry.totals.total };
  const scorecard = scorecardOf(stack, final, submission, { metrics, elapsedMs: figures.elapsedMs, timedOut: figures.timedOut });
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
    timedOut: figures.timedOut,
  };
}
