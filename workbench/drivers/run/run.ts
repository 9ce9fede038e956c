/**
 * `npm run local`: start the local stack, submit the sample corpus across both lanes (English
 * invoices to `us`, German to `eu`) to the queue lane and, with `--batch-jobs`, to the batch lane, run
 * until every job is in a terminal state or a time limit, show progress, print the scorecard, stop
 * everything. With `--batch-redrive` the batch lane's unresolved items are redriven to the queue lane
 * once every batch is done, before the drain ends. With `--erase N` / `--cancel N`, sources are erased /
 * jobs cancelled mid-run, and their jobs' ends are their own (erased, cancelled), beside the queue lane's.
 */
import { dirname, join } from 'node:path';
import type { CommandIo } from '../../../lib/cli/command.js';
import type { LaneSet } from '../../../lib/config/lanes.js';
import { CURRENT_RELEASE, getRelease } from '../../../lib/contract/releases.js';
import { releaseLine, releaseStamp, type ReleaseStamp } from '../release.js';
import { laneChangeLine } from '../../local-stack/pause.js';
import { startLocalStack, type LocalStack } from '../../local-stack/stack.js';
import { corpusDocuments, localRunLanes, quotaBoundMinimumMs, writeLanesFile, type LocalLaneSettings } from '../lanes.js';
import { elapsedLabel, lineWriter, stackReadyLine, stopPollers, watchUntilDrained, type DrainSnapshot } from '../observe.js';
import { collectFinalState, scorecardOf } from '../outcome.js';
import { formatScorecard, type Scorecard } from '../scorecard.js';
import { submitToStack, type StackSubmission } from '../submit.js';
import { startLogFile } from '../../local-stack/lambda/telemetry.js';
import { LIVE_ROUTES } from '../../../lib/platform/resources.js';
import { formatLiveFigures, liveFigures, runLiveLoad, unfinishedPending, type LiveCall, type LiveFigures, type LiveLoadOptions } from './live-load.js';
import {
  batchReconcileIntervalMs,
  batchRedriveInputs,
  batchScorecardInputs,
  collectBatchFinal,
  fakeBatchOptions,
  startBatchLoad,
  type BatchLoad,
  type BatchLoadOptions,
} from './batch-load.js';
import {
  batchRedriveRows,
  computeBatchFigures,
  computeBatchRedriveFigures,
  formatBatchFigures,
  noBatchFigures,
  noBatchRedriveFigures,
  type BatchFigures,
  type BatchRedriveFigures,
} from './batch-scorecard.js';
import { erasureFigures, formatErasureFigures, startEraseLoad, type EraseLoad, type ErasedEnds, type ErasureFigures } from './erase-load.js';
import {
  cancellationFigures,
  formatCancellationFigures,
  startCancelLoad,
  type CancelLoad,
  type CancellationFigures,
  type CancelledEnds,
} from './cancel-load.js';

/** Options of one local run (the CLI flags). */
export interface LocalRunOptions extends LocalLaneSettings {
  /** Queue jobs to submit (`'corpus'`: the corpus once; 0: none, e.g. a batch-only run). */
  jobs: number | 'corpus';
  /** How long a provider "day" lasts here (default 1440 minutes). */
  dayMs: number;
  /** Admission (shared key pool, buckets, lane pause) on (default) or off. */
  admission: boolean;
  faults: { serverError: number; timeout: number; garbageJson: number; schemaInvalid: number };
  seed: number;
  timeLimitSeconds: number;
  json: boolean;
  logFile: string | undefined;
  /** Live requests fired while the backfill runs (absent: none), their rate and deadline. */
  live?: LiveLoadOptions | undefined;
  /** Documents sent through the batch lane while the queue lane runs (absent or 0 jobs: none). */
  batch?: BatchLoadOptions | undefined;
  /** Sources of the queue jobs to erase mid-run (`--erase N`; absent: none, and no `erasure` block). */
  erase?: number | undefined;
  /** Queue jobs to cancel mid-run (`--cancel N`; absent: none, and no `cancellation` block). */
  cancel?: number | undefined;
  /**
   * Reads the stack once the scorecard is printed, before everything stops (tests: what the stores hold,
   * beside what the scorecard says).
   */
  beforeStop?: ((stack: LocalStack) => Promise<void>) | undefined;
  /** After the scorecard, keep the stack up (its consumers stopped) and print its endpoints, until Ctrl-C (`--keep`). */
  keep?: boolean | undefined;
  /** With `keep`: stop when this resolves instead of at Ctrl-C (tests). */
  keepUntil?: Promise<void> | undefined;
}

/**
 * A local run's scorecard: the queue lane's, the live requests' and the batch lane's, with its redrive's
 * (`lost` counts queue jobs, batch items and redriven items found nowhere; the redrive's problems are
 * part of `batchProblems`).
 */
export type LocalRunScorecard = Scorecard &
  LiveFigures &
  BatchFigures &
  BatchRedriveFigures & { release: ReleaseStamp; erasure?: ErasureFigures; cancellation?: CancellationFigures };

/** Where consumer logs and EMF metrics go by default. */
const LOCAL_RUN_LOG_FILE = '.cache/local-run/consumer.log';

/** Runs the local pipeline end to end and returns the scorecard (printed to `io`; `--json` adds one JSON line). */
export async function runLocal(options: LocalRunOptions, io: CommandIo): Promise<LocalRunScorecard> {
  const say = lineWriter(io.stderr);
  const started = Date.now();
  const lanes = localRunLanes(options);
  const logFile = options.logFile ?? LOCAL_RUN_LOG_FILE;
  startLogFile(logFile);
  const stack = await startRunStack(options, lanes, logFile, say);
  try {
    say(stackReadyLine(stack, started));
    const liveOptions = options.live ?? { requests: 0, rps: 1, deadlineMs: 0 };
    const liveLoad = startLive(stack, liveOptions, say);
    const deadline = started + options.timeLimitSeconds * 1000;
    const batchLoad =
      options.batch && options.batch.jobs > 0
        ? startBatchLoad(stack, options.batch, { intervalMs: batchReconcileIntervalMs(options.minuteMs), deadline, say })
        : undefined;
    const documents = options.jobs === 0 ? [] : corpusDocuments(options.jobs === 'corpus' ? 0 : options.jobs);
    const submitting = documents.length > 0 ? submitToStack(stack, lanes, documents) : Promise.resolve(noSubmission());
    // Cancelled mid-run, once a tenth of the jobs committed (or the stack went quiet first): jobs sent and not
    // committed then, picked from the queues while the submission may still be sending the rest.
    const cancelLoad: CancelLoad | undefined =
      options.cancel === undefined ? undefined : startCancelLoad(stack, submitting, { count: options.cancel, jobs: documents.length, deadline, say });
    const submission = await submitting;
    say(documents.length > 0 ? submittedLine(lanes, submission, documents.length) : '  no queue jobs (--jobs 0)');
    // Erased mid-run: once a third of the jobs committed (or the stack went quiet first).
    const eraseLoad: EraseLoad | undefined =
      options.erase === undefined ? undefined : startEraseLoad(stack, submission, documents, { sources: options.erase, deadline, say });
    // The live requests end first: their hand-overs are part of what must drain.
    const calls = await liveLoad;
    // The batch lane's redrives go through the queue lane: the drain waits for the batch load to end.
    const watched = await watchUntilDrained(stack, {
      intervalMs: 1000,
      deadline,
      mayEnd: () => (batchLoad?.ended ?? true) && (eraseLoad?.ended ?? true) && (cancelLoad?.ended ?? true),
      onCheck: (snapshot, end) => {
        if (snapshot.waiting === 0 && !snapshot.busy) {
          eraseLoad?.now();
          cancelLoad?.now();
        }
        say(
          progressLine(stack, submission, snapshot, started) +
            (batchLoad ? batchProgress(batchLoad) : '') +
            (eraseLoad?.progress() ?? '') +
            (cancelLoad?.progress() ?? ''),
        );
        if (end === 'timeLimit') say(`  time limit of ${options.timeLimitSeconds} s reached; ${snapshot.waiting} job(s) still waiting`);
      },
    });
    const batchRun = batchLoad ? await batchLoad.done : undefined;
    const eraseRun = eraseLoad ? await eraseLoad.done : undefined;
    const cancelRun = cancelLoad ? await cancelLoad.done : undefined;
    const timedOut = watched.timedOut || (batchRun?.timedOut ?? false);
    await stopPollers(stack);
    const unfinished = timedOut ? calls.filter((c) => c.status === 'pending').length : (await unfinishedPending(stack, calls)).length;
    const live = liveFigures(calls, unfinished, liveOptions.requests > 0 ? liveOptions.deadlineMs : null);
    const final = await collectFinalState(stack);
    const erasure = eraseRun ? await erasureFigures(stack, eraseRun, final, stack.telemetry.totals.total) : undefined;
    const cancellation = cancelRun ? await cancellationFigures(stack, cancelRun, final) : undefined;
    // A job of an erased source, or a cancelled job, has its own end (erased, cancelled): the queue lane's
    // figures are the other jobs'.
    const aside = [erasure?.ends, cancellation?.ends].filter((ends): ends is ErasedEnds | CancelledEnds => ends !== undefined);
    const kept = { ...submission, submitted: submission.submitted.filter((j) => !aside.some((ends) => ends.jobIds.has(j.jobId))) };
    const queueCard = withJobsAside(
      scorecardOf(stack, final, kept, {
        metrics: stack.telemetry.totals.total,
        elapsedMs: Date.now() - started,
        timedOut,
        quotaBoundMinimumMs: quotaBoundMinimumMs(lanes, submission.submitted, options.minuteMs),
      }),
      submission.submitted.length,
      aside,
    );
    // With a redrive, the batch figures are the ones read before it; the redrive's are read now.
    const batchInputs = batchRun ? (batchRun.redrive?.before ?? (await batchScorecardInputs(stack, batchRun, final))) : undefined;
    const batch = batchInputs ? computeBatchFigures(batchInputs) : noBatchFigures();
    const redrive =
      batchRun && options.batch?.redrive
        ? computeBatchRedriveFigures(batchRedriveInputs(batchRun.redrive?.sent ?? null, await collectBatchFinal(stack, batchRun), final), batch.batchUnresolved)
        : { figures: noBatchRedriveFigures(), problems: [] };
    const card: LocalRunScorecard = {
      release: releaseStamp(getRelease(CURRENT_RELEASE)),
      ...queueCard,
      lost: queueCard.lost + batch.batchLost + (redrive.figures.batchRedriveLost ?? 0),
      ...live,
      ...batch,
      batchProblems: [...batch.batchProblems, ...redrive.problems],
      ...redrive.figures,
      ...(erasure ? { erasure: erasure.figures } : {}),
      ...(cancellation ? { cancellation: cancellation.figures } : {}),
    };
    say('');
    io.stdout.write(`  ${releaseLine(card)}\n${formatScorecard(card)}\n`);
    if (live.liveRequests > 0) io.stdout.write(`${formatLiveFigures(live)}\n`);
    if (batchInputs) io.stdout.write(`${formatBatchFigures(batch, batchInputs.batches, batchRedriveRows(redrive.figures, batch.batchUnresolved))}\n`);
    if (erasure) io.stdout.write(`${formatErasureFigures(erasure.figures)}\n`);
    if (cancellation) io.stdout.write(`${formatCancellationFigures(cancellation.figures)}\n`);
    say(`  consumer logs and EMF metrics: ${logFile}`);
    if (options.json) io.stdout.write(`${JSON.stringify(card)}\n`);
    await options.beforeStop?.(stack);
    if (options.keep) {
      const endpoints = JSON.stringify(stack.endpoints);
      say(`  the stack stays up for ratelane's commands (its consumers are stopped); Ctrl-C stops it. Its endpoints:`);
      say(`    --endpoints '${endpoints}'`);
      say(`  e.g. npx tsx bin/ratelane.ts jobs list --lane us --state waiting --endpoints '${endpoints}'`);
      // A consumer of its own needs the run's lanes (scaled timeouts, local resource names) as a config file.
      const lanesFile = join(dirname(logFile), 'lanes.json');
      writeLanesFile(lanesFile, lanes);
      say(
        `  a consumer of its own: RATELANE_CONFIG=${lanesFile} npm run consume -- --lane us --endpoints '${endpoints}' --provider-url ${stack.provider.baseUrl} --minute-ms ${options.minuteMs}`,
      );
      // The stack's services keep the process alive; Ctrl-C's handler stops them and exits.
      await (options.keepUntil ?? new Promise<void>(() => undefined));
    }
    return card;
  } finally {
    await stack.stop();
  }
}

/** Starts the stack of a local run: its services, the fake provider at the run's limits and faults, the consumers. */
async function startRunStack(options: LocalRunOptions, lanes: LaneSet, logFile: string, say: (line: string) => void): Promise<LocalStack> {
  say(`ratelane local: starting DynamoDB Local, fauxqs and the fake provider (a provider minute lasts ${options.minuteMs} ms)…`);
  return startLocalStack({
    lanes,
    logFile,
    provider: {
      limits: { requestsPerMinute: options.providerRpm, tokensPerMinute: options.providerTpm, requestsPerDay: options.providerDaily },
      minuteMs: options.minuteMs,
      dayMs: options.dayMs,
      faults: options.faults,
      seed: options.seed,
      ...(options.batch && options.batch.jobs > 0 ? { batch: fakeBatchOptions(options.batch, options.minuteMs) } : {}),
    },
    ...(options.admission ? {} : { admission: false as const }),
    live: true,
    onLanePause: (lane, state) => say(`  ${laneChangeLine(lane, state)}`),
  });
}

/** Starts the live load (when asked) and says where the live APIs listen; resolves with every answer. */
async function startLive(stack: LocalStack, live: LiveLoadOptions, say: (line: string) => void): Promise<LiveCall[]> {
  for (const lane of Object.values(stack.lanes)) if (lane.live) say(`  live API of lane ${lane.lane.name}: ${lane.live.url}${LIVE_ROUTES.extractions}`);
  if (live.requests === 0) return [];
  say(`  firing ${live.requests} live requests at ${live.rps}/s, deadline ${live.deadlineMs} ms each`);
  const tally = new Map<string, number>();
  return runLiveLoad(stack, live, (call, done) => {
    tally.set(call.status, (tally.get(call.status) ?? 0) + 1);
    if (done % 10 === 0 || done === live.requests) {
      say(`  live: ${done}/${live.requests} answered (${[...tally].map(([s, n]) => `${s} ${n}`).join(', ')})`);
    }
  });
}

/**
 * The queue lane's scorecard with the jobs set aside (of erased sources, cancelled) back in: `submitted`
 * counts every job, and one of them still waiting, dead-lettered or found nowhere counts there (the others
 * ended erased or cancelled; a cancelled job committed anyway is counted by the cancellation's figures).
 */
function withJobsAside(card: Scorecard, submitted: number, aside: readonly Pick<ErasedEnds | CancelledEnds, 'waiting' | 'deadLettered' | 'lost'>[]): Scorecard {
  if (aside.length === 0) return card;
  const sum = (field: 'waiting' | 'deadLettered' | 'lost'): number => aside.reduce((n, ends) => n + ends[field], 0);
  return { ...card, submitted, waiting: card.waiting + sum('waiting'), deadLettered: card.deadLettered + sum('deadLettered'), lost: card.lost + sum('lost') };
}

/** The submission of a run without queue jobs. */
function noSubmission(): StackSubmission {
  return { submission: { total: 0, sent: 0, failed: 0, rejected: 0, results: [] }, sent: [], submitted: [], submitStarted: Date.now() };
}

/** The batch lane's part of a progress line: items settled, unresolved, handed to the queue lane, batches done. */
function batchProgress(load: BatchLoad): string {
  const p = load.progress();
  if (p.phase === 'submitting') return ' · batch submitting';
  const settled = p.items - p.counts.prepared - p.counts.submitted;
  return (
    ` · batch ${settled}/${p.items} settled (committed ${p.counts.committed + p.counts.duplicate}, unresolved ${p.counts.unresolved}, ` +
    `redriven ${p.counts.redriven}${p.redrivenWaiting ? `, ${p.redrivenWaiting} waiting` : ''}), ${p.batchesDone}/${p.batches} done`
  );
}

/** `submitted N of M jobs (us …, eu …) in … ms`. */
function submittedLine(lanes: LaneSet, { submission, sent, submitStarted }: StackSubmission, documents: number): string {
  const perLane = Object.keys(lanes)
    .map((name) => `${name} ${sent.filter((r) => r.region === name).length}`)
    .join(', ');
  return `  submitted ${sent.length} of ${documents} jobs (${perLane}) in ${Date.now() - submitStarted} ms${submission.failed ? `; ${submission.failed} NOT sent` : ''}`;
}

/** One progress line: commits, queues, calls, 429s, admission, outcomes, paused lanes. */
function progressLine(stack: LocalStack, { sent }: StackSubmission, q: DrainSnapshot, started: number): string {
  const m = stack.telemetry.totals.total;
  const rateLimited = Object.values(stack.provider.stats().rateLimited).reduce((a, b) => a + b, 0);
  return (
    `  [${elapsedLabel(started)} s] committed ${m.Completed ?? 0}/${sent.length} · in queue ${q.waiting} (delayed ${q.delayed}, in flight ${q.inFlight}) · ` +
    `model calls ${m.ModelCalls ?? 0} · 429s ${rateLimited} · admission denied ${m.AdmissionDenied ?? 0} · deferred ${m.Deferred ?? 0} · ` +
    `rejected ${m.Rejected ?? 0} · review ${m.NeedsReview ?? 0} · DLQ ${q.deadLettered}${q.paused.length > 0 ? ` · PAUSED ${q.paused.join(', ')}` : ''}`
  );
}
