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
 * within `submitted + injected duplicate messages` (soak-queue.ts). `starve` runs busy loops beside the
 * soak. The reconciliation is printed however the run ends — drained, at the time limit, when the
 * consumers stall, or after an uncaught error — with what is still waiting; only `drained` passes.
 */
import type { CommandIo } from '../../../lib/cli/command.js';
import type { LaneSet } from '../../../lib/config/lanes.js';
import { seededRandom } from '../../../lib/platform/random.js';
import { startLocalStack, type LocalStack } from '../../local-stack/stack.js';
import { localRunLanes, type LocalLaneSettings } from '../lanes.js';
import { shortMessage } from '../../../lib/platform/errors.js';
import { onCrash, startBusyLoops } from '../../local-stack/services/processes.js';
import { lineWriter, orTimeout, stackReadyLine } from '../observe.js';
import { crashEndsInvocation, withDepFaults } from './faults.js';
import {
  capturingProducer,
  fileSize,
  scanLog,
  scheduleCreditOutage,
  sendDuplicates,
  type CapturingProducer,
  type CreditOutage,
  type InjectedDuplicates,
} from './inputs.js';
import { startQueueSampler, type QueueSampler } from './queue.js';
import { formatSoakReport, type SoakEnd, type SoakReport } from './report.js';
import { startLogFile } from '../../local-stack/lambda/telemetry.js';
import { END_STEP_LIMIT_MS, endRun, soakReport, stepWithin } from './end.js';
import { faultLog, type FaultLog } from './fault-log.js';
import { submitSoakJobs } from './submit.js';
import { watchSoak, type WatchedRun } from './watch.js';

export { withDepFaults, withOverrides, neverSettles, sqsUnavailableError, type CrashPoint, type DepFaults, type OutagePoint } from './faults.js';
export { operatorResume, newSentinel, soakDocuments } from './inputs.js';
export {
  formatSoakReport,
  reconcile,
  soakExitCode,
  soakFailures,
  STATE_PRECEDENCE,
  type QueueLeft,
  type SoakEnd,
  type SoakReport,
  type SoakState,
} from './report.js';
export { startQueueSampler, type QueueMultiplication, type QueueSample, type QueueSampler } from './queue.js';

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
export const SOAK_LOG_FILE = '.cache/soak/consumer.log';

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
    onLanePause: (lane, state) => say(state.paused ? `  lane ${lane} PAUSED until ${state.until?.toISOString()} (${state.reason})` : `  lane ${lane} resumed`),
    onPollerEvent: (_lane, event) => log.onPollerEvent(event),
  });
}
