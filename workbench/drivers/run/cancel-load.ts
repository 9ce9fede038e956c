/**
 * `npm run local -- --cancel N`: N of the run's queue jobs cancelled while the run goes, each in the lane
 * it was submitted to (`Cancellations.cancel`, as `ratelane cancel` does), then each checked for how it
 * ended.
 *
 * The moment: once a twentieth of the run's jobs committed (or the stack went quiet before that), counted in the
 * results tables (the consumers' `Completed` comes only once a batch's invocation ends); the submission may
 * still be sending the rest, and the consumers drain a local run in one burst, so a later moment would leave
 * only jobs about to commit. Only jobs sent and not committed then are picked, read from the lane queues
 * (fauxqs inspection: the job in each message body): in flight (received by a consumer) or still queued (ready or delayed); a job
 * with no message left, or with a result (its batch not yet acknowledged), is committed. The jobs are
 * cancelled furthest from their commit first: the queued (latest due first), then those in flight (latest
 * received first). A cancel that answers `committed` raced
 * its job's commit (the commit landed first): it is counted, and the next job in that order still in the
 * queues is cancelled instead, so N jobs end cancelled whenever N jobs were not committed at the moment,
 * unless the rest all commit before their cancel lands (a run that drains in one burst: every job left in
 * flight, about to commit).
 * At the end every cancelled job's status (with the lane's cancel markers), the result of its idempotency
 * key and its messages are looked up: it ended cancelled when its status is `cancelled` (its marker, no
 * result) and no message of it is left. A cancelled job's end is its own, beside committed, rejected…
 */
import { jobStatus } from '../../../lib/store/job-status.js';
import type { CancelOutcome, Cancellations } from '../../../lib/store/cancellation.js';
import { laneStores } from '../../../lib/store/lane-stores.js';
import { errorName } from '../../../lib/platform/errors.js';
import type { LocalLane, LocalStack } from '../../local-stack/stack.js';
import { inspectMessages } from '../observe.js';
import type { FinalState } from '../outcome.js';
import type { StackSubmission } from '../submit.js';
import { LOOKUPS_AT_ONCE, mapLimited, type MidRunLoad, momentAt } from './mid-run.js';

/** Who the run's cancels name. */
const CANCELLED_BY = 'ratelane local --cancel';
/** Tries per job: a cancel that failed (a table, or the job's claim and commit moving under it) is made again. */
const CANCEL_TRIES = 3;

/** Where a job not committed was when the cancels started. */
type JobPhase = 'inFlight' | 'queued';
const PHASES: readonly JobPhase[] = ['inFlight', 'queued'];

/** One queue job of the run, as the cancellation needs it. */
interface RunJob {
  jobId: string;
  idempotencyKey: string;
  /** The lane it was submitted to. */
  lane: string;
}

/**
 * A job not committed, with its phase when the cancels started and when it entered it (epoch ms): received
 * (in flight), or due (queued: sent, or its delay's end).
 */
type PhasedJob = RunJob & { phase: JobPhase; since: number };

/** A job cancelled: its phase then, and whether a consumer had claimed it by its cancel. */
type CancelledJob = PhasedJob & { received: boolean };

/** What the cancellation did, read when the drain ended. */
export interface CancellationRun {
  requested: number;
  /** Results committed when the cancels started, or null when they never ran. */
  atCommits: number | null;
  /** Jobs not committed when the cancels started (what they picked from), or null when they never ran. */
  uncommittedThen: number | null;
  /** The jobs cancelled. */
  jobs: CancelledJob[];
  /** Jobs whose cancel answered `committed` (their commit landed first): each replaced by another job. */
  racedCommit: PhasedJob[];
  /** Jobs not committed at the moment that were passed over: no message of them left by their turn (committed). */
  passedOver: number;
  /** Cancels that failed every try, or the cancellation not run at all. */
  errors: string[];
}

/** The `cancellation` block of the scorecard. */
export interface CancellationFigures {
  /** Jobs asked to be cancelled (`--cancel N`). */
  requested: number;
  /** Jobs cancelled (their marker written). */
  cancelled: number;
  /** Results committed when the cancels started (null: they never ran). */
  atCommits: number | null;
  /** Jobs not committed when the cancels started, which they picked from (null: they never ran). */
  uncommittedThen: number | null;
  /** The cancelled jobs by where they were when the cancels started. */
  cancelledWhile: Record<JobPhase, number>;
  /** Of them, jobs a consumer had claimed by their cancel (its answer's `received`). */
  receivedWhenCancelled: number;
  /** Cancels that answered `committed`: the job's commit landed first; another job was cancelled instead. */
  racedCommit: number;
  /** Jobs not committed at the moment passed over: no message of them left by their turn (committed meanwhile). */
  passedOver: number;
  /** Cancelled jobs that ended cancelled: status `cancelled`, no result, no message left. */
  endedCancelled: number;
  /** Cancelled jobs a consumer stopped (a `rejected` ledger entry with reason `cancelled`). */
  stoppedByConsumer: number;
  /** Cancelled jobs with a result at the end (by idempotency key or job id): must be 0. */
  committedAfterCancel: number;
  /** Cancelled jobs whose status at the end is not `cancelled`: must be 0. */
  notEndedCancelled: number;
  /** Cancelled jobs with a message left in a lane queue or DLQ: must be 0. */
  leftInQueues: number;
  /** Cancels that failed every try (or the cancellation never ran): must be 0. */
  errors: number;
  /** What does not hold (the run exits 1 when there is any). */
  problems: string[];
}

/** How each cancelled job ended, for the run's accounting. */
export interface CancelledEnds {
  /** Job ids of the cancelled jobs. */
  jobIds: Set<string>;
  cancelled: number;
  /** Committed despite the cancel (counted as such in {@link CancellationFigures.committedAfterCancel}). */
  committed: number;
  waiting: number;
  deadLettered: number;
  /** Found in no state: not cancelled, no result, no message. */
  lost: number;
}

/** A cancellation under way. */
export type CancelLoad = MidRunLoad<CancellationRun>;

/** Commits the cancels wait for: a twentieth of the run's jobs (at least one). */
function cancelThreshold(jobs: number): number {
  return Math.max(1, Math.ceil(jobs / 20));
}

/** The run's queue jobs, with their lanes, in document order. */
function runJobs({ sent }: StackSubmission): RunJob[] {
  return sent.map((r) => ({ jobId: r.jobId, idempotencyKey: r.idempotencyKey, lane: r.region }));
}

/**
 * Where each message of the lane queues is at this instant, by job id, read without receiving (fauxqs
 * inspection, no await in between): in flight (received by a consumer: since its first receive) or queued
 * (ready or delayed: since it is due). A job with a copy in flight is in flight (a deferred copy may sit
 * beside it, delayed).
 */
function queuePhases(stack: LocalStack, fauxqs: NonNullable<LocalStack['fauxqs']>): Map<string, PhasedJob> {
  const phases = new Map<string, PhasedJob>();
  for (const lane of Object.values(stack.lanes)) {
    for (const m of inspectMessages(fauxqs, lane.lane.resources.queueName)) {
      if (m.jobId === undefined || m.idempotencyKey === undefined || m.lane === undefined) continue;
      const phase = m.state === 'inFlight' ? 'inFlight' : 'queued';
      if (phase === 'inFlight' || !phases.has(m.jobId))
        phases.set(m.jobId, { jobId: m.jobId, idempotencyKey: m.idempotencyKey, lane: m.lane, phase, since: m.since });
    }
  }
  return phases;
}

/**
 * The jobs not committed at this instant, with where each is: from the lane queues ({@link queuePhases}; a
 * job with no message left is committed, in a run without faults), less the jobs whose result the results
 * tables hold, read right after: a job in flight may be committed already, its message not yet acknowledged
 * (a batch's records are acknowledged together, once the last one is done). Without inspection, from the
 * stores instead: committed (a result), in flight (claimed by a consumer: since its claim) or queued.
 */
async function uncommittedNow(stack: LocalStack, submission: Promise<StackSubmission>): Promise<PhasedJob[]> {
  if (stack.fauxqs) {
    // The jobs sent so far are in the queues (the submission may still be sending the rest).
    const phases = queuePhases(stack, stack.fauxqs);
    const results = await Promise.all(Object.values(stack.lanes).map((lane) => lane.results.scanAll()));
    const committed = new Set(results.flat().map((r) => r.idempotencyKey));
    return [...phases.values()].filter((job) => !committed.has(job.idempotencyKey));
  }
  const jobs = runJobs(await submission);
  const phased: (PhasedJob | undefined)[] = new Array(jobs.length);
  await mapLimited(
    jobs.map((job, i) => ({ job, i })),
    async ({ job, i }) => {
      const lane = stack.lanes[job.lane]!;
      if (await lane.results.get(job.idempotencyKey)) return;
      const claim = await lane.ledger.claimOf(job.jobId);
      phased[i] = { ...job, ...(claim ? { phase: 'inFlight', since: Date.parse(claim.at) } : { phase: 'queued', since: 0 }) };
    },
  );
  return phased.filter((j): j is PhasedJob => j !== undefined);
}

/**
 * The jobs furthest from their commit first: the queued ones (latest due first), then those in flight
 * (latest received first), then in document order. A cancel takes a few DynamoDB round trips; a job about
 * to commit may commit first.
 */
function furthestFromCommit(jobs: readonly PhasedJob[]): PhasedJob[] {
  return [...PHASES].reverse().flatMap((phase) => jobs.filter((j) => j.phase === phase).sort((a, b) => b.since - a.since));
}

/** Whether a job still has a message in the lane queues (fauxqs inspection, now); without inspection, always true. */
function stillQueuedOf(stack: LocalStack): (jobId: string) => boolean {
  const fauxqs = stack.fauxqs;
  return fauxqs ? (jobId) => queuePhases(stack, fauxqs).has(jobId) : () => true;
}

/** The lanes' cancel markers, opened once per lane. */
function cancellationsOf(stack: LocalStack): (lane: string) => Cancellations {
  const opened = new Map<string, Cancellations>();
  return (name) => {
    let cancellations = opened.get(name);
    if (!cancellations) {
      const lane: LocalLane = stack.lanes[name]!;
      cancellations = laneStores(lane.lane, lane.clients.dynamodb).cancellations;
      opened.set(name, cancellations);
    }
    return cancellations;
  };
}

/** Cancels one job, again when the cancel failed; its outcome, or the last error. */
async function cancelOnce(cancellations: Cancellations, jobId: string): Promise<CancelOutcome | Error> {
  let last: Error = new Error('not tried');
  for (let attempt = 0; attempt < CANCEL_TRIES; attempt++) {
    try {
      return await cancellations.cancel(jobId, CANCELLED_BY);
    } catch (error) {
      last = error instanceof Error ? error : new Error(String(error));
    }
  }
  return last;
}

/**
 * Cancels jobs of `order` (in that order) until `count` are cancelled or none is left: a job whose cancel
 * answers `committed` is set aside and the next one taken. At most {@link LOOKUPS_AT_ONCE} cancels are in
 * flight, and never more than the cancels still needed, so no more than `count` jobs are cancelled.
 */
async function cancelUntil(
  order: readonly PhasedJob[],
  count: number,
  cancellationsFor: (lane: string) => Cancellations,
  stillQueued: (jobId: string) => boolean,
): Promise<Pick<CancellationRun, 'jobs' | 'racedCommit' | 'passedOver' | 'errors'>> {
  const jobs: CancelledJob[] = [];
  const racedCommit: PhasedJob[] = [];
  const errors: string[] = [];
  let passedOver = 0;
  let next = 0;
  let pending = 0;
  const worker = async (): Promise<void> => {
    while (jobs.length + pending < count && next < order.length) {
      const job = order[next++] as PhasedJob;
      // No message of it left since the moment: committed and acknowledged meanwhile.
      if (!stillQueued(job.jobId)) {
        passedOver++;
        continue;
      }
      pending++;
      const outcome = await cancelOnce(cancellationsFor(job.lane), job.jobId);
      pending--;
      if (outcome instanceof Error) errors.push(`cancelling job ${job.jobId} failed: ${errorName(outcome)}: ${outcome.message}`);
      else if (outcome.status === 'committed') racedCommit.push(job);
      // `already_cancelled`: an earlier try wrote the marker before it failed (whether it was received then is not told).
      else jobs.push({ ...job, received: outcome.status === 'cancelled' && outcome.received });
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUPS_AT_ONCE, count) }, worker));
  return { jobs, racedCommit, passedOver, errors };
}

/**
 * Starts waiting for the moment to cancel `count` of the submitted jobs (see the module's description); the
 * cancels run in the background, `done` resolves with what they did.
 */
export function startCancelLoad(
  stack: LocalStack,
  submission: Promise<StackSubmission>,
  options: { count: number; jobs: number; deadline: number; say: (line: string) => void },
): CancelLoad {
  const threshold = cancelThreshold(options.jobs);
  // Results committed, counted in the results tables (a count that fails counts none): the consumers'
  // `Completed` is only counted once a batch's invocation ends, by when most of its records may have committed.
  const commits = async (): Promise<number> => {
    const counts = await Promise.all(Object.values(stack.lanes).map((lane) => lane.results.count().catch(() => 0)));
    return counts.reduce((a, b) => a + b, 0);
  };
  let ended = options.count === 0;
  let cancelledSoFar: number | undefined;
  const moment = momentAt(threshold, commits, options.deadline);
  const run = async (): Promise<CancellationRun> => {
    const none: CancellationRun = { requested: options.count, atCommits: null, uncommittedThen: null, jobs: [], racedCommit: [], passedOver: 0, errors: [] };
    if (options.count === 0) return none;
    const atCommits = await moment.reached();
    if (atCommits === null) {
      options.say(`  cancellation: the time limit passed before ${threshold} commits; nothing cancelled`);
      return { ...none, errors: ['the cancellation never ran: the time limit passed first'] };
    }
    const order = furthestFromCommit(await uncommittedNow(stack, submission));
    const first = order.slice(0, options.count);
    const tally = PHASES.map((p) => `${p === 'inFlight' ? 'in flight' : p} ${first.filter((j) => j.phase === p).length}`);
    options.say(
      `  cancelling ${Math.min(options.count, order.length)} of the ${order.length} jobs sent and not committed at ${atCommits}/${options.jobs} committed (${tally.join(', ')})…`,
    );
    const started = Date.now();
    const done = await cancelUntil(order, options.count, cancellationsOf(stack), stillQueuedOf(stack));
    cancelledSoFar = done.jobs.length;
    const raced =
      (done.racedCommit.length > 0 ? `; ${done.racedCommit.length} raced their commit (other jobs cancelled instead)` : '') +
      (done.passedOver > 0 ? `; ${done.passedOver} passed over (committed before their turn)` : '');
    options.say(`  cancelled ${done.jobs.length} jobs in ${Date.now() - started} ms${raced}${done.errors.length > 0 ? `; ${done.errors.length} FAILED` : ''}`);
    return { requested: options.count, atCommits, uncommittedThen: order.length, ...done };
  };
  const done = run().finally(() => {
    ended = true;
  });
  return {
    get ended() {
      return ended;
    },
    now: () => moment.force(),
    progress: () =>
      options.count === 0 ? '' : cancelledSoFar === undefined ? ` · cancel ${options.count} at ${threshold} commits` : ` · cancelled ${cancelledSoFar} jobs`,
    done,
  };
}

/**
 * Looks up how each cancelled job ended once the run drained (pollers stopped): its status with the lane's
 * cancel markers, the result of its idempotency key, its messages. `final` is the run's final state.
 */
export async function cancellationFigures(
  stack: LocalStack,
  run: CancellationRun,
  final: FinalState,
): Promise<{ figures: CancellationFigures; ends: CancelledEnds }> {
  const cancellationsFor = cancellationsOf(stack);
  const perJob: { job: CancelledJob; result: boolean; status: string }[] = [];
  await mapLimited(run.jobs, async (job) => {
    const lane = stack.lanes[job.lane]!;
    const [result, status] = await Promise.all([
      lane.results.get(job.idempotencyKey),
      jobStatus(job.jobId, { results: lane.results, ledger: lane.ledger, cancellations: cancellationsFor(job.lane) }),
    ]);
    perJob.push({ job, result: result !== undefined, status: status.state });
  });
  const jobIds = new Set(run.jobs.map((j) => j.jobId));
  const keys = new Set(run.jobs.map((j) => j.idempotencyKey));
  // A result of a cancelled job found by the scan, under its key or its job id.
  const scanned = new Set(final.results.flatMap((r) => (keys.has(r.idempotencyKey) || jobIds.has(r.jobId) ? [r.jobId, r.idempotencyKey] : [])));
  const committed = (j: CancelledJob): boolean => scanned.has(j.jobId) || scanned.has(j.idempotencyKey);
  const waiting = new Set(final.waiting);
  const deadLettered = new Set(final.deadLettered);
  const stopped = new Set(final.terminalLedger.filter((e) => e.kind === 'rejected' && e.reason === 'cancelled').map((e) => e.jobId));
  const ends: CancelledEnds = { jobIds, cancelled: 0, committed: 0, waiting: 0, deadLettered: 0, lost: 0 };
  for (const j of perJob) {
    if (waiting.has(j.job.jobId)) ends.waiting++;
    else if (deadLettered.has(j.job.jobId)) ends.deadLettered++;
    else if (j.result || committed(j.job)) ends.committed++;
    else if (j.status === 'cancelled') ends.cancelled++;
    else ends.lost++;
  }
  const figures: CancellationFigures = {
    requested: run.requested,
    cancelled: run.jobs.length,
    atCommits: run.atCommits,
    uncommittedThen: run.uncommittedThen,
    cancelledWhile: {
      inFlight: run.jobs.filter((j) => j.phase === 'inFlight').length,
      queued: run.jobs.filter((j) => j.phase === 'queued').length,
    },
    receivedWhenCancelled: run.jobs.filter((j) => j.received).length,
    racedCommit: run.racedCommit.length,
    passedOver: run.passedOver,
    endedCancelled: ends.cancelled,
    stoppedByConsumer: run.jobs.filter((j) => stopped.has(j.jobId)).length,
    committedAfterCancel: perJob.filter((j) => j.result || committed(j.job)).length,
    notEndedCancelled: perJob.filter((j) => j.status !== 'cancelled').length,
    leftInQueues: run.jobs.filter((j) => waiting.has(j.jobId) || deadLettered.has(j.jobId)).length,
    errors: run.errors.length,
    problems: [],
  };
  // A cancel answers `committed` only when a result of the job's idempotency key is committed.
  const resultKeys = new Set(final.results.map((r) => r.idempotencyKey));
  const racedWithoutResult = run.racedCommit.filter((j) => !resultKeys.has(j.idempotencyKey)).length;
  figures.problems = cancellationProblems(figures, run.errors, racedWithoutResult);
  return { figures, ends };
}

/** What does not hold in the cancellation's figures. */
function cancellationProblems(f: CancellationFigures, errors: readonly string[], racedWithoutResult: number): string[] {
  const problems = [...errors];
  // Fewer cancelled than asked is a problem only when as many jobs were not committed at the moment.
  if (f.cancelled < f.requested && f.uncommittedThen !== null && f.uncommittedThen >= f.requested) {
    problems.push(
      `cancellation: ${f.cancelled} of ${f.requested} jobs cancelled, though ${f.uncommittedThen} were not committed ` +
        `(the others committed before their cancel: ${f.racedCommit} raced it, ${f.passedOver} passed over)`,
    );
  }
  if (racedWithoutResult > 0) problems.push(`cancellation: ${racedWithoutResult} cancel(s) answered committed, but no result of the job is there`);
  if (f.committedAfterCancel > 0) problems.push(`cancellation: ${f.committedAfterCancel} cancelled job(s) committed`);
  if (f.notEndedCancelled > 0) problems.push(`cancellation: ${f.notEndedCancelled} cancelled job(s) not in state cancelled at the end`);
  if (f.leftInQueues > 0) problems.push(`cancellation: ${f.leftInQueues} cancelled job(s) with a message left in a lane queue or DLQ`);
  return problems;
}

/** The cancellation's lines of the human summary. */
export function formatCancellationFigures(f: CancellationFigures): string {
  const then = f.uncommittedThen === null ? '' : `, ${f.uncommittedThen} jobs not committed then`;
  const rows: [string, string][] = [
    [
      'jobs cancelled',
      `${f.cancelled} of ${f.requested}${f.atCommits === null ? '' : ` at ${f.atCommits} commits`}${then} (cancelled in flight ${f.cancelledWhile.inFlight}, queued ${f.cancelledWhile.queued}; received by their cancel ${f.receivedWhenCancelled})`,
    ],
    ['cancels that raced their commit', `${f.racedCommit}${f.racedCommit > 0 ? ' (committed first: other jobs cancelled instead)' : ''}`],
    ['passed over (committed by their turn)', String(f.passedOver)],
    ['jobs ended cancelled', `${f.endedCancelled} of ${f.cancelled} (stopped by a consumer ${f.stoppedByConsumer})`],
    ['committed after the cancel', String(f.committedAfterCancel)],
    ['not ended cancelled', String(f.notEndedCancelled)],
    ['left in the queues', String(f.leftInQueues)],
    ['cancel errors', String(f.errors)],
    ...f.problems.map((p): [string, string] => ['PROBLEM', p]),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return ['ratelane local run — cancellation', ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)].join('\n');
}
