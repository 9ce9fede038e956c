/**
 * `ratelane local` (`npm run local`): the whole pipeline on local stand-ins, then a scorecard. Exit 0
 * when no job or batch item was lost, the batch lane's reconciliation holds, an erasure or cancellation
 * asked for held, and the run ended in time, else 1.
 */
import { runLocal, type LocalRunOptions } from './run.js';
import type { LiveFigures } from './live-load.js';
import type { Scorecard } from '../scorecard.js';
import type { BatchFigures } from './batch-scorecard.js';
import { defaultLiveSettings, MAX_LIVE_DEADLINE_MS, MIN_LIVE_DEADLINE_MS } from '../../../lib/config/live.js';
import { UsageError, type Command, type CommandIo } from '../../../lib/cli/command.js';
import { booleanFlag, jsonFlag, numberFlag, parseFlags, ROUND_DOWN, stringFlag, type FlagValues } from '../../../lib/cli/flags.js';
import type { BatchLoadOptions } from './batch-load.js';
import type { ErasureFigures } from './erase-load.js';
import type { CancellationFigures } from './cancel-load.js';
import { corpusDocuments } from '../lanes.js';
import { commandLine, markdownTable, printedBlock, startMeasuredRun, type DocsTarget } from '../docs-page.js';

/** Usage text of `ratelane local`. */
export const LOCAL_USAGE = `Usage: npm run local -- [options]

Starts DynamoDB Local, fauxqs and a fake model provider on loopback, submits the sample corpus
across the us and eu lanes, runs the consumers until every job is in a terminal state, and prints
a scorecard. Everything started is stopped at the end, on Ctrl-C and on a crash.

  --jobs N              queue jobs to submit (default: the corpus once, 64; 0: none, with --batch-jobs);
                        documents repeat with new source ids
  --keys K              provider keys per lane, each with its own limits (default 1)
  --provider-rpm N      requests per minute per key (default 600)
  --provider-tpm N      tokens per minute per key (default 1000000)
  --provider-daily N    requests per day per key (default 100000)
  --minute-ms MS        length of a provider "minute" locally (default 6000); the lanes' timeouts and
                        backoff caps scale with it, a day lasts 1440 of these minutes
  --day-ms MS           length of a provider "day" locally (default 1440 minutes), for daily-quota runs
  --no-admission        call without admission (round robin, no shared key pool, no lane pause)
  --fault-5xx R         share of calls answered 500/503 (0..1, default 0)
  --fault-timeout R     share of calls that never answer
  --fault-garbage R     share of answers that are not JSON
  --fault-invalid R     share of answers that break the schema
  --live-requests N     live requests fired at the lanes' live APIs while the backfill runs (default 0)
  --live-rps R          live requests started per second, across lanes (default 1)
  --live-deadline-ms MS the deadline each live request states (default the lane's, ${defaultLiveSettings().defaultDeadlineMs})
  --live-reserve S      share of each key's limits kept for live requests (0..0.9; default 0.2 with live
                        requests, else 0: the queue lane then has the whole quota)
  --batch-jobs N        documents sent through the batch lane (default 0), one batch per lane, reconciled
                        every minute-ms/6 (the local stand-in for the lane's schedule) while the queue
                        lane runs; invalid outputs go to the queue lane for their repair
  --batch-drop R        share of batch lines the fake provider drops: no output, no error (0..1, default 0)
  --batch-error R       share of batch lines answered with an error line (0..1, default 0)
  --batch-invalid R     share of batch lines answered with output that fails the schema (0..1, default 0):
                        the queue lane repairs them; --batch-drop + --batch-error + --batch-invalid ≤ 1
  --batch-minutes M     provider minutes the fake takes to answer a batch's lines (default 1; validating
                        and finalizing take minute-ms/6 each)
  --batch-redrive       once every batch is done (and its figures read), redrive its unresolved items to
                        the queue lane (as ratelane batch redrive does) and wait for their outcome; the
                        scorecard adds batchRedriven, batchRedriveCommitted, batchRedriveNeedsReview,
                        batchRedriveWaiting and batchUnresolvedAfterRedrive
  --erase N             erase N sources of the queue jobs mid-run (0..the jobs): once a third of the jobs
                        committed, sources of committed, in-flight and still-queued jobs are erased in
                        the lane each was submitted to (as ratelane erase does); their jobs end erased.
                        The scorecard adds erasure: erased, committedAfterErase, leftoverDocuments,
                        leftoverResults, leftoverLedgerItems, leftoverStatuses (exit 1 unless all but
                        erased are 0)
  --cancel N            cancel N of the queue jobs mid-run (0..the jobs; not with --erase): once a twentieth of
                        the jobs committed, jobs not committed yet (still queued, then in flight) are cancelled
                        in the lane each was submitted to (as ratelane cancel does); one whose commit landed
                        first is replaced by another. The scorecard adds cancellation: cancelled,
                        racedCommit, committedAfterCancel, notEndedCancelled, leftInQueues, errors (exit 1
                        when fewer than N were cancelled though N were not committed, or any of the last
                        four is not 0)
  --seed N              seed of the fake provider's faults and latencies (default 42)
  --time-limit S        stop waiting after S seconds (default 600)
  --log-file PATH       where consumer logs and EMF metrics go (default .cache/local-run/consumer.log)
  --json                print the scorecard as one JSON object on the last line of stdout
  --keep                after the scorecard, keep the stack up (its consumers stopped) and print its
                        --endpoints, for ratelane's commands against it (jobs, cancel, redrive, review,
                        erase); Ctrl-C stops it
  --write-docs          after the run, write it (with the date, the machine and this command line) into
                        docs/benchmarks/local-run.md: the scorecard as printed into section
                        measured:local-run; with --no-admission, a table of its 429s, re-sends, calls,
                        commits and losses into section measured:local-run-no-admission
`;

/** A share of calls, 0..1 (default 0). */
const share = () => numberFlag({ min: 0, max: 1, fallback: 0 });

/** The flags of `ratelane local`. */
const LOCAL_FLAGS = {
  jobs: numberFlag({ min: 0, max: 100_000, ...ROUND_DOWN }),
  keys: numberFlag({ min: 1, max: 20, fallback: 1, ...ROUND_DOWN }),
  'provider-rpm': numberFlag({ min: 1, max: 1_000_000, fallback: 600, ...ROUND_DOWN }),
  'provider-tpm': numberFlag({ min: 100, max: 100_000_000, fallback: 1_000_000, ...ROUND_DOWN }),
  'provider-daily': numberFlag({ min: 1, max: 100_000_000, fallback: 100_000, ...ROUND_DOWN }),
  'minute-ms': numberFlag({ min: 1_000, max: 60_000, fallback: 6_000, ...ROUND_DOWN }),
  'day-ms': numberFlag({ min: 1_000, max: 86_400_000 }),
  'no-admission': booleanFlag(),
  'fault-5xx': share(),
  'fault-timeout': share(),
  'fault-garbage': share(),
  'fault-invalid': share(),
  'live-requests': numberFlag({ min: 0, max: 100_000, fallback: 0, ...ROUND_DOWN }),
  'live-rps': numberFlag({ min: 0.01, max: 1_000, fallback: 1 }),
  'live-deadline-ms': numberFlag({ min: MIN_LIVE_DEADLINE_MS, max: MAX_LIVE_DEADLINE_MS, fallback: defaultLiveSettings().defaultDeadlineMs, ...ROUND_DOWN }),
  'live-reserve': numberFlag({ min: 0, max: 0.9 }),
  'batch-jobs': numberFlag({ min: 0, max: 100_000, fallback: 0, ...ROUND_DOWN }),
  'batch-drop': numberFlag({ min: 0, max: 1 }),
  'batch-error': numberFlag({ min: 0, max: 1 }),
  'batch-invalid': numberFlag({ min: 0, max: 1 }),
  'batch-minutes': numberFlag({ min: 0.05, max: 1440 }),
  'batch-redrive': booleanFlag(),
  erase: numberFlag({ min: 0, max: 100_000, integer: true }),
  cancel: numberFlag({ min: 0, max: 100_000, integer: true }),
  seed: numberFlag({ min: 0, max: 2 ** 31, fallback: 42, ...ROUND_DOWN }),
  'time-limit': numberFlag({ min: 5, max: 24 * 3600, fallback: 600 }),
  'log-file': stringFlag(),
  json: jsonFlag(),
  'write-docs': booleanFlag(),
  keep: booleanFlag(),
};

/** The options of `ratelane local`: the run's, and with `--write-docs` where its scorecard goes. */
type LocalCommandOptions = LocalRunOptions & { writeDocs?: DocsTarget };

/** Parses the flags of `ratelane local` (pure). @throws {UsageError} */
function parseLocalArgs(argv: readonly string[]): LocalCommandOptions {
  const v = parseFlags(argv, LOCAL_FLAGS);
  const minuteMs = v['minute-ms'];
  const batch = batchOptions(v);
  if (v.jobs === 0 && batch.jobs === 0) throw new UsageError('--jobs 0 submits no queue jobs: give --batch-jobs N as well, or more --jobs');
  if (v.erase !== undefined && v.jobs !== undefined && v.erase > v.jobs)
    throw new UsageError(`--erase ${v.erase} is more sources than the ${v.jobs} jobs of --jobs`);
  if (v.cancel !== undefined && v.jobs !== undefined && v.cancel > v.jobs)
    throw new UsageError(`--cancel ${v.cancel} is more jobs than the ${v.jobs} jobs of --jobs`);
  // Each sets its jobs aside with its own end (erased, cancelled): one of them per run.
  if (v.erase !== undefined && v.cancel !== undefined) throw new UsageError('--cancel and --erase cannot be given together: run them one at a time');
  return {
    jobs: v.jobs ?? 'corpus',
    keys: v.keys,
    providerRpm: v['provider-rpm'],
    providerTpm: v['provider-tpm'],
    providerDaily: v['provider-daily'],
    minuteMs,
    dayMs: Math.floor(v['day-ms'] ?? minuteMs * 1440),
    admission: !v['no-admission'],
    faults: { serverError: v['fault-5xx'], timeout: v['fault-timeout'], garbageJson: v['fault-garbage'], schemaInvalid: v['fault-invalid'] },
    seed: v.seed,
    timeLimitSeconds: v['time-limit'],
    json: v.json,
    logFile: v['log-file'],
    live: { requests: v['live-requests'], rps: v['live-rps'], deadlineMs: v['live-deadline-ms'] },
    liveReserveShare: v['live-reserve'] ?? (v['live-requests'] > 0 ? defaultLiveSettings().reserveShare : 0),
    batch,
    ...(v.erase !== undefined ? { erase: v.erase } : {}),
    ...(v.cancel !== undefined ? { cancel: v.cancel } : {}),
    ...(v.keep ? { keep: true } : {}),
    ...(v['write-docs']
      ? {
          writeDocs: { section: { page: 'local-run.md', id: v['no-admission'] ? 'local-run-no-admission' : 'local-run' }, command: commandLine('local', argv) },
        }
      : {}),
  };
}

/** The batch load from the `--batch-*` flags. @throws {UsageError} for rates over 1 together, or batch settings without batch jobs */
function batchOptions(
  v: Pick<FlagValues<typeof LOCAL_FLAGS>, 'batch-jobs' | 'batch-drop' | 'batch-error' | 'batch-invalid' | 'batch-minutes' | 'batch-redrive'>,
): BatchLoadOptions {
  const given = [
    ...(['batch-drop', 'batch-error', 'batch-invalid', 'batch-minutes'] as const).filter((name) => v[name] !== undefined),
    ...(v['batch-redrive'] ? ['batch-redrive'] : []),
  ];
  if (v['batch-jobs'] === 0 && given.length > 0) throw new UsageError(`--${given[0]} needs --batch-jobs N (N > 0): no batch is sent without it`);
  const dropRate = v['batch-drop'] ?? 0;
  const errorRate = v['batch-error'] ?? 0;
  const invalidRate = v['batch-invalid'] ?? 0;
  if (dropRate + errorRate + invalidRate > 1 + 1e-9) {
    throw new UsageError(`--batch-drop, --batch-error and --batch-invalid together must not exceed 1, got ${dropRate} + ${errorRate} + ${invalidRate}`);
  }
  return { jobs: v['batch-jobs'], dropRate, errorRate, invalidRate, minutes: v['batch-minutes'] ?? 1, ...(v['batch-redrive'] ? { redrive: true } : {}) };
}

/** `ratelane local`. */
export const localCommand: Command<LocalCommandOptions> = {
  name: 'local',
  usage: LOCAL_USAGE,
  helpTo: 'stderr',
  parse: parseLocalArgs,
  async run(options, io) {
    // Without --jobs the run submits the corpus once: --erase and --cancel are checked against its size here (parse reads no files).
    if (options.erase !== undefined && options.jobs === 'corpus' && options.erase > corpusDocuments(0).length) {
      throw new UsageError(`--erase ${options.erase} is more sources than the ${corpusDocuments(0).length} jobs of the corpus (give --jobs N)`);
    }
    if (options.cancel !== undefined && options.jobs === 'corpus' && options.cancel > corpusDocuments(0).length) {
      throw new UsageError(`--cancel ${options.cancel} is more jobs than the ${corpusDocuments(0).length} jobs of the corpus (give --jobs N)`);
    }
    const docs = options.writeDocs && startMeasuredRun(options.writeDocs, io);
    const card = await runLocal(options, docs ? docs.io : io);
    const code = localRunExitCode(card, io);
    docs?.finish(code, options.admission ? printedBlock(docs.printed(), options) : withoutAdmissionTable(card));
    return code;
  },
};

/** What a run without admission shows on docs/benchmarks/local-run.md: what its 429s cost, and that nothing was lost. */
function withoutAdmissionTable(card: Scorecard): string {
  const header = ['429s seen', 'deferrals (re-sent for later)', 'model calls per completion', 'committed', 'dead-lettered', 'lost'];
  const calls = card.modelCallsPerCompletion === null ? '-' : card.modelCallsPerCompletion.toFixed(2);
  return markdownTable(
    header,
    [[String(card.throttled429), String(card.deferrals), calls, `${card.committed} of ${card.submitted}`, String(card.deadLettered), String(card.lost)]],
    [],
  );
}

/**
 * A local run fails (exit 1) when a job or batch item was lost, the run timed out, every job it
 * submitted ended in a DLQ (a run that only dead-letters — e.g. keys the provider refuses — is no
 * success), a live answer was late, or the batch lane's reconciliation does not hold (its items do not
 * add up, its unresolved items are not the ones the provider dropped or errored, or one has an object,
 * or the items sent to the queue lane for a repair are not the lines the provider made invalid; with
 * `--batch-redrive`, the redrive did not send exactly the unresolved items, a redriven item is neither
 * committed nor in review at the end, or a batch item's idempotency key has more than one result), or,
 * with `--erase`, an erasure did not hold (a source not erased, a result committed after it, anything
 * of an erased source left, a job of one not ended), or, with `--cancel`, the cancellation did not hold
 * (fewer jobs cancelled than asked though as many were not committed, a cancelled job committed, not
 * `cancelled` at the end or with a message left, a cancel that failed).
 */
export function localRunExitCode(
  card: Pick<Scorecard, 'lost' | 'timedOut' | 'submitted' | 'deadLettered'> &
    Partial<Pick<LiveFigures, 'liveOverDeadline' | 'livePendingUnfinished'>> &
    Partial<Pick<BatchFigures, 'batchProblems'>> & { erasure?: Pick<ErasureFigures, 'problems'>; cancellation?: Pick<CancellationFigures, 'problems'> },
  io: Pick<CommandIo, 'stderr'>,
): number {
  if (card.submitted > 0 && card.deadLettered === card.submitted) {
    io.stderr.write(`ratelane local: every one of the ${card.submitted} jobs was dead-lettered: see the consumer log for why\n`);
    return 1;
  }
  if ((card.liveOverDeadline ?? 0) > 0 || (card.livePendingUnfinished ?? 0) > 0) {
    io.stderr.write(
      `ratelane local: ${card.liveOverDeadline ?? 0} live answer(s) came after their deadline, ${card.livePendingUnfinished ?? 0} handed-over job(s) did not finish\n`,
    );
    return 1;
  }
  if ((card.batchProblems?.length ?? 0) > 0) {
    for (const problem of card.batchProblems ?? []) io.stderr.write(`ratelane local: ${problem}\n`);
    return 1;
  }
  if ((card.erasure?.problems.length ?? 0) > 0) {
    for (const problem of card.erasure?.problems ?? []) io.stderr.write(`ratelane local: ${problem}\n`);
    return 1;
  }
  if ((card.cancellation?.problems.length ?? 0) > 0) {
    for (const problem of card.cancellation?.problems ?? []) io.stderr.write(`ratelane local: ${problem}\n`);
    return 1;
  }
  return card.lost === 0 && !card.timedOut ? 0 : 1;
}
