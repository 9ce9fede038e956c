/**
 * `npm run soak`: N jobs (default 5,000) through the local stack with faults injected at given rates,
 * then a reconciliation.
 *
 * Faults: provider 429s of each kind (small per-key rpm / tpm / daily limits, and one key per lane out
 * of credit for a while), 5xx, timeouts, garbage and schema-invalid output (the fake provider, seeded);
 * duplicate deliveries (some job messages are sent twice, some of the copies later); DynamoDB and SQS
 * unavailable for some calls; and consumer crashes between steps — after the model call (before the
 * commit), after the commit (before the acknowledgement) and after a re-send (before the
 * acknowledgement). A crash is the process dying: the call fails at once and the whole invocation
 * fails (`crashEndsInvocation`), so the whole batch comes back after its visibility timeout — also
 * the records it had settled — as in Lambda.
 *
 * Reconciliation: every submitted job is looked up in every place a job can end (results tables,
 * ledgers, DLQs, queues) and given exactly one final state; `lost` counts jobs found nowhere,
 * `doubleCommits` idempotency keys committed more than once (seen by the commit itself and in the
 * results tables). Some documents carry a sentinel string: it must appear in no log line and no metric.
 *
 * Slowness must not amplify: the lane queues are sampled through the run and their peak must stay
 * within `submitted + injected duplicate messages` (`queue.ts`). `starve` runs busy loops beside the
 * soak. The reconciliation is printed however the run ends — drained, at the time limit, when the
 * consumers stall, or after an uncaught error — with what is still waiting; only `drained` passes.
 */
import type { CommandIo } from '../../../lib/cli/command.js';
import type { LaneSet } from '../../../lib/config/lanes.js';
import { shortMessage } from '../../../lib/platform/errors.js';
import { seededRandom, type RandomSource } from '../../../lib/platform/random.js';
import { startLogFile } from '../../local-stack/lambda/telemetry.js';
import { onCrash, startBusyLoops } from '../../local-stack/services/processes.js';
import { laneChangeLine } from '../../local-stack/pause.js';
import { startLocalStack, type LocalStack } from '../../local-stack/stack.js';
import { localRunLanes, type LocalLaneSettings } from '../lanes.js';
import { elapsedLabel, inspectDepth, jobIdsIn, lineWriter, orTimeout, stackReadyLine, stopPollers, watchUntilDrained, type DrainSnapshot } from '../observe.js';
import { collectFinalState, scorecardOf, type FinalState } from '../outcome.js';
import { submitToStack, type StackSubmission } from '../submit.js';
import { crashEndsInvocation, faultLog, withDepFaults, type FaultLog } from './faults.js';
import {
  capturingProducer,
  fileSize,
  newSentinel,
  scanLog,
  scheduleCreditOutage,
  sendDuplicates,
  sentJobs,
  soakDocuments,
  type CapturingProducer,
  type CreditOutage,
  type InjectedDuplicates,
} from './inputs.js';
import { startQueueSampler, type QueueMultiplication, type QueueSampler } from './queue.js';
import { formatSoakReport, reconcile, type QueueLeft, type SoakEnd, type SoakReport } from './report.js';

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
  /** Seconds without a settled job or a model call (no lane paused) after which the run ends as stalled (0: never). */
  stallLimitSeconds: number;
  /** Busy-loop child processes to run beside the soak, starving the CPUs (0: none). */
  starve: number;
  json: boolean;
  logFile: string | undefined;
}

/** Where consumer logs and EMF metrics go by default. */
const SOAK_LOG_FILE = '.cache/soak/consumer.log';

/**
 * Runs the soak and returns its report (printed to `io`; `--json` adds one JSON line at the end). The
 * report is printed however the run ends: drained, at its time limit, when the consumers stall, or
 * after an uncaught error (the run is then ended early); each step of the end is bounded in time, and
 * a step that fails or does not finish is a problem in the report rather than a run without one.
 */
export async function runSoak(options: SoakOptions, io: CommandIo): Promise<SoakReport> {
  const say = lineWriter(io.stderr);
  const started = Date.now();
  const random = seededRandom(options.seed ^ 0x50a4);
  const chance = (p: number): boolean => p > 0 && random() < p;
  const lanes = localRunLanes(options);
  const logFile = options.logFile ?? SOAK_LOG_FILE;
  startLogFile(logFile);
  const logOffset = fileSize(logFile);
  const log = faultLog(options, chance);
  const problems: string[] = [];
  // An uncaught error ends the run early, and the soak still reconciles and reports (within a hard limit).
  const crashed = new AbortController();
  const unregisterCrash = onCrash((error) => {
    const message = `CRASH: ${(error as Error)?.name ?? 'Error'}: ${(error as Error)?.message ?? String(error)}`.slice(0, 300);
    if (!crashed.signal.aborted) {
      problems.push(message);
      say(`  ${message}; ending the run to report`);
    }
    crashed.abort();
    return true;
  });
  const busy = options.starve > 0 ? startBusyLoops(options.starve) : undefined;
  if (busy) say(`  starving the CPUs: ${busy.pids.length} busy loop(s) (pids ${busy.pids.join(', ')}) until the run's end`);
  let stack: LocalStack | undefined;
  let producer: CapturingProducer | undefined;
  let outage: CreditOutage | undefined;
  let sampler: QueueSampler | undefined;
  try {
    stack = await startSoakStack(options, lanes, logFile, log, say);
    producer = capturingProducer(stack);
    sampler = startQueueSampler(stack, started);
    say(stackReadyLine(stack, started));
    outage = scheduleCreditOutage(stack, lanes, { minutes: options.creditOutageMinutes, minuteMs: options.minuteMs }, say);
    // One watch from the first submission to the end: progress, time limit, stall and crash all end it.
    let sentJobCount = 0;
    const submitter = producer;
    const run: WatchedRun = { sent: () => (run.submitting ? submitter.sent.length : sentJobCount), duplicates: 0, submitting: true };
    const activeOutage = outage;
    const watching = watchSoak(stack, options, run, log, sampler, () => !run.submitting && !activeOutage.active, started, say, crashed.signal).catch(
      (error: unknown): Exclude<SoakEnd, 'crashed'> => {
        problems.push(`watching the run failed: ${shortMessage(error)}`);
        return 'timeLimit';
      },
    );
    const watchEnded = new AbortController();
    void watching.finally(() => watchEnded.abort());
    const jobs = await submitSoakJobs(stack, lanes, options, producer, random, AbortSignal.any([watchEnded.signal, crashed.signal]), say);
    sentJobCount = jobs.submission.sent.length;
    let duplicates: InjectedDuplicates = { messages: 0, byJob: new Map() };
    if (jobs.complete && !watchEnded.signal.aborted) {
      try {
        duplicates = await sendDuplicates(producer, options.duplicates, chance, random);
        say(`  sent ${duplicates.messages} duplicate message(s)`);
      } catch (error) {
        problems.push(`duplicate deliveries could not all be sent: ${shortMessage(error)}`);
      }
      sampler.setInjectedDuplicates(duplicates.byJob);
      run.duplicates = duplicates.messages;
    } else {
      say(`  the submission was cut short: ${jobs.submission.sent.length} job(s) sent`);
    }
    run.submitting = false;
    const watched = await watching;
    const end: SoakEnd = crashed.signal.aborted ? 'crashed' : watched;
    sampler.sample();
    sampler.stop();
    if (busy) {
      await busy.stop();
      say(`  busy loops stopped; reconciling`);
    }
    const ended = await endRun(stack, outage, lanes, problems, say);
    const report = soakReport(options, stack, ended.final, jobs, log, {
      duplicateMessages: duplicates.messages,
      creditOutageMs: outage.totalMs,
      elapsedMs: Date.now() - started,
      end,
      queue: sampler.figures(),
      queueLeft: ended.queueLeft,
      reconciled: ended.reconciled,
      problems,
      busyLoops: busy?.pids.length ?? 0,
    });
    await stepWithin('stopping the stack', stack.stop(), END_STEP_LIMIT_MS.stackStop, problems); // flushes the log file
    try {
      const scan = await scanLog(logFile, logOffset, { sentinel: jobs.sentinel, secret: 'sk-local-' });
      Object.assign(report.sentinel, { leaks: scan.hits.sentinel ?? 0, secretLeaks: scan.hits.secret ?? 0, logLines: scan.lines });
    } catch (error) {
      problems.push(`the log file could not be scanned: ${shortMessage(error)}`);
    }
    report.lateLogLines = stack.telemetry.linesAfterClose;
    report.problems = [...problems];
    report.elapsedMs = Date.now() - started;
    say('');
    io.stdout.write(`${formatSoakReport(report)}\n`);
    say(`  consumer logs and EMF metrics: ${logFile}`);
    if (options.json) io.stdout.write(`${JSON.stringify(report)}\n`);
    return report;
  } finally {
    unregisterCrash();
    sampler?.stop();
    outage?.dispose();
    producer?.destroy();
    await busy?.stop();
    if (stack)
      await orTimeout(
        stack.stop().catch(() => undefined),
        END_STEP_LIMIT_MS.stackStop,
      );
  }
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
    wrapHandler: (_lane, handler) =>
      crashEndsInvocation(handler, (copies) => {
        log.crashCopies += copies;
      }),
    ...(options.admission ? {} : { admission: false as const }),
    onLanePause: (lane, state) => say(`  ${laneChangeLine(lane, state)}`),
    onPollerEvent: (_lane, event) => log.onPollerEvent(event),
  });
}

// ---------------------------------------------------------------------------------------------------------
// The submission

/** What the soak submitted: the submission, and the sentinel some of its documents carry. */
interface SoakJobs {
  submission: StackSubmission;
  sentinel: string;
  sentinelDocuments: number;
  /** False when the time limit (or a crash) came first: `submission` then holds what the producer had sent. */
  complete: boolean;
}

/**
 * Submits the soak's documents (a share carrying a new sentinel) through the capturing producer. When
 * `stop` aborts first (the run's watch ended: time limit, stall, crash), the producer is shut and the
 * submission is what it had sent by then.
 */
async function submitSoakJobs(
  stack: LocalStack,
  lanes: LaneSet,
  options: SoakOptions,
  producer: CapturingProducer,
  random: RandomSource,
  stop: AbortSignal,
  say: (line: string) => void,
): Promise<SoakJobs> {
  const sentinel = newSentinel();
  const { documents, sentinelDocuments } = soakDocuments(options.jobs, sentinel, options.sentinels, random);
  const submitStarted = Date.now();
  const submitting = submitToStack(stack, lanes, documents, {
    clientsFor: (region) => {
      const clients = producer.clientsFor(region);
      return { sqs: clients.sqs, s3: clients.s3 };
    },
    onProgress: (event) => {
      if (event.type === 'batch' && event.batch % 50 === 0) say(`  submitting: ${event.region} batch ${event.batch}`);
    },
  });
  const cut = new Promise<undefined>((resolve) => {
    if (stop.aborted) resolve(undefined);
    else stop.addEventListener('abort', () => resolve(undefined), { once: true });
  });
  const submission = await Promise.race([submitting, cut]);
  if (submission) {
    const { submission: result, sent } = submission;
    say(
      `  submitted ${sent.length} of ${documents.length} jobs in ${Date.now() - submission.submitStarted} ms (${sentinelDocuments} carry the sentinel)${result.failed ? `; ${result.failed} NOT sent` : ''}`,
    );
    return { submission, sentinel, sentinelDocuments, complete: true };
  }
  // Cut short: stop the producer, then count what it had sent (its own record, or the captured sends).
  producer.destroy();
  const settled = await orTimeout(
    submitting.catch(() => undefined),
    END_STEP_LIMIT_MS.submissionAfterLimit,
  );
  return { submission: settled ?? capturedSubmission(producer, documents.length, submitStarted), sentinel, sentinelDocuments, complete: false };
}

/** A submission rebuilt from the entries the capturing producer saw accepted (when the producer never returned). */
function capturedSubmission(producer: CapturingProducer, total: number, submitStarted: number): StackSubmission {
  const jobs = sentJobs(producer);
  const sent = jobs.map((j, index) => ({
    index,
    sourceId: j.jobId,
    jobId: j.jobId,
    region: j.region,
    idempotencyKey: j.idempotencyKey,
    status: 'sent' as const,
  }));
  return {
    submission: { total, sent: sent.length, failed: total - sent.length, rejected: 0, results: sent },
    sent,
    submitted: jobs.map((j) => ({ jobId: j.jobId, idempotencyKey: j.idempotencyKey, lane: j.region, createdAt: submitStarted })),
    submitStarted,
  };
}

// ---------------------------------------------------------------------------------------------------------
// The watch

/** What the watch reads of the run as it goes: jobs and duplicates sent so far, and whether the submission is still on. */
interface WatchedRun {
  sent(): number;
  duplicates: number;
  submitting: boolean;
}

/**
 * Waits until every queue is empty, nothing is in flight and no credit outage is on, or the time limit,
 * or a stall (no job settled and no model call for the stall limit, no lane paused), or a crash; progress every 5 s.
 */
async function watchSoak(
  stack: LocalStack,
  options: SoakOptions,
  run: WatchedRun,
  log: FaultLog,
  sampler: QueueSampler,
  mayEnd: () => boolean,
  started: number,
  say: (line: string) => void,
  signal?: AbortSignal,
): Promise<Exclude<SoakEnd, 'crashed'>> {
  let lastProgress = 0;
  const progress = (q: DrainSnapshot): void => {
    lastProgress = Date.now();
    const m = stack.telemetry.totals.total;
    const p = stack.provider.stats();
    const throttled = Object.values(p.rateLimited).reduce((a, b) => a + b, 0);
    const crashed = Object.values(log.crashes).reduce((a, b) => a + b, 0);
    const batchFailures = Object.values(log.wholeBatchFailures).reduce((a, b) => a + b, 0);
    const { peak, resentWhileQueued } = sampler.figures();
    const sent = run.sent();
    const bound = sent + run.duplicates;
    say(
      `  [${elapsedLabel(started)} s]${run.submitting ? ' (submitting)' : ''} committed ${m.Completed ?? 0}/${sent} · in queue ${q.waiting} (in flight ${q.inFlight}, delayed ${q.delayed}; peak ${peak}/${bound}${peak > bound && !run.submitting ? ' EXCEEDED' : ''}) · ` +
        `DLQ ${q.deadLettered} · model calls ${m.ModelCalls ?? 0} · 429s ${throttled} · 5xx ${p.faults.serverError} · timeouts ${p.faults.timeout} · bad output ${p.faults.garbageJson + p.faults.schemaInvalid} · ` +
        `deferred ${m.Deferred ?? 0} · failed ${m.Failed ?? 0} · review ${m.NeedsReview ?? 0} · duplicates ${m.DuplicateSuppressed ?? 0} · crashes ${crashed} · ` +
        `batch failures ${batchFailures}${resentWhileQueued ? ` · re-sent beside a copy ${resentWhileQueued}` : ''}${q.paused.length ? ` · PAUSED ${q.paused.join(', ')}` : ''}`,
    );
  };
  // Progress: a job settled (committed, review, rejected, dead-lettered, a duplicate suppressed) or a model call.
  let mark = -1;
  let markAt = Date.now();
  const stalled = (q: DrainSnapshot): boolean => {
    const m = stack.telemetry.totals.total;
    const now = (m.Completed ?? 0) + (m.NeedsReview ?? 0) + (m.Rejected ?? 0) + (m.DuplicateSuppressed ?? 0) + (m.ModelCalls ?? 0) + q.deadLettered;
    if (now !== mark || q.paused.length > 0) {
      mark = now;
      markAt = Date.now();
      return false;
    }
    return options.stallLimitSeconds > 0 && Date.now() - markAt > options.stallLimitSeconds * 1000;
  };
  const { end } = await watchUntilDrained(stack, {
    intervalMs: 1000,
    deadline: started + options.timeLimitSeconds * 1000,
    readTimeoutMs: 10_000,
    mayEnd,
    stalled,
    ...(signal ? { signal } : {}),
    onStall: (stalls, error) =>
      say(
        `  queue depths did not answer within 10 s${error ? ` (${shortMessage(error, 120)})` : ''} (${stalls} time(s)); poller stats ${JSON.stringify(Object.fromEntries(Object.values(stack.lanes).map((l) => [l.lane.name, l.poller?.stats])))}`,
      ),
    onCheck: (snapshot, end) => {
      if (Date.now() - lastProgress >= 5000 || end !== undefined) progress(snapshot);
      if (end === 'timeLimit') say(`  time limit of ${options.timeLimitSeconds} s reached; ${snapshot.waiting} message(s) still waiting`);
      if (end === 'stalled') {
        say(`  STALLED: no job settled and no model call for ${options.stallLimitSeconds} s; ${snapshot.waiting} message(s) still waiting`);
      }
    },
  });
  return end === 'aborted' ? 'timeLimit' : end;
}

// ---------------------------------------------------------------------------------------------------------
// The end: bounded steps, the final state, the report

/** How long each step of the run's end may take before the soak reports without it. */
const END_STEP_LIMIT_MS = { outage: 30_000, pollersAfterTimeout: 30_000, finalState: 120_000, stackStop: 60_000, submissionAfterLimit: 30_000 } as const;

/** Awaits a step of the run's end for at most `ms`; a failure or a timeout is recorded as a problem. Resolves its value or undefined. */
async function stepWithin<T>(what: string, step: Promise<T>, ms: number, problems: string[]): Promise<T | undefined> {
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
async function endRun(
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
interface SoakFigures {
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
function soakReport(options: SoakOptions, stack: LocalStack, final: FinalState, jobs: SoakJobs, log: FaultLog, figures: SoakFigures): SoakReport {
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
