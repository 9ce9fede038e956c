/**
 * `npm run local -- --erase N`: N sources of the run's queue jobs erased while the run goes, each in the
 * lane its job was submitted to (`eraseSource`, as `ratelane erase` does), then the lanes checked for what
 * is left of them.
 *
 * The moment is taken from progress: once the submission is done and a third of the jobs committed (or
 * the stack went quiet before that). Each job's phase is read then from the lane queues (fauxqs
 * inspection): committed (its message acknowledged), in flight (received by a consumer) or still queued
 * (ready or delayed). The sources are picked round robin over those phases, in document order, each with
 * the other sources of the run whose document is the same text: documents are content-addressed, so
 * erasing one source's document takes it from every job with that text (they are erased together).
 * At the end every erased source's idempotency keys, documents (`documents/<sha256>` in the lane's
 * bucket), ledger items (every item of its jobs' partitions but the `#erased` marker, and claims found by
 * source) and job statuses are looked up: what is still there is a leftover. A job of an erased source
 * ends `erased` (its marker, no result, no message left), its own end state beside committed, rejected…
 */
import { QueryCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { sha256Hex } from '../../../lib/contract/job.js';
import { type EraseDeps, eraseSource, ErasureError, type ErasureReceipt, laneEraseDeps } from '../../../lib/erasure/erase.js';
import type { DocumentInput } from '../../../lib/intake/producer.js';
import { errorName } from '../../../lib/platform/errors.js';
import { documentKeyFor } from '../../../lib/store/documents.js';
import type { ErasureLedger } from '../../../lib/store/erasure.js';
import { jobStatus } from '../../../lib/store/job-status.js';
import { LEDGER_TABLE } from '../../../lib/store/tables.js';
import type { LocalLane, LocalStack } from '../../local-stack/stack.js';
import { inspectMessages } from '../observe.js';
import type { FinalState } from '../outcome.js';
import type { StackSubmission } from '../submit.js';
import { mapLimited, type MidRunLoad, momentAt } from './mid-run.js';

/** Who the run's erasures name. */
const ERASED_BY = 'ratelane local --erase';
/** Tries per source: an erasure that stopped is run again (it finishes what it started). */
const ERASE_TRIES = 3;
/** The sort key of a job's erased marker (lib/store/erasure.ts). */
const ERASED_MARKER = '#erased';

/** Where a job was when its source was erased. */
type JobPhase = 'committed' | 'inFlight' | 'queued';
const PHASES: readonly JobPhase[] = ['committed', 'inFlight', 'queued'];

/** One queue job of the run, as the erasure needs it. */
interface RunJob {
  jobId: string;
  idempotencyKey: string;
  sourceId: string;
  /** The lane it was submitted to. */
  lane: string;
  contentSha256: string;
}

/** A job with its phase when the erasure started. */
type PhasedJob = RunJob & { phase: JobPhase };

/** What the erasure did, read when the drain ended. */
export interface ErasureRun {
  requested: number;
  /** Commits (the consumers' `Completed`) when the erasure started, or null when it never ran. */
  atCommits: number | null;
  /** The erased sources' jobs, each with its phase when erased. */
  jobs: PhasedJob[];
  receipts: ErasureReceipt[];
  /** Erased sources whose document a job of the run not erased shares. */
  sharedWithKept: number;
  /** Erasures that failed every try. */
  errors: string[];
}

/** The `erasure` block of the scorecard. */
export interface ErasureFigures {
  /** Sources asked to be erased (`--erase N`). */
  requested: number;
  /** Sources erased (a receipt each). */
  erased: number;
  /** Commits when the erasure started (null: it never ran). */
  atCommits: number | null;
  /** The erased sources' jobs by where they were when erased. */
  erasedWhile: Record<JobPhase, number>;
  /** Jobs of the erased sources in the run. */
  jobs: number;
  /** Of them, jobs that ended erased: their marker, no result, no message left. */
  erasedJobs: number;
  /** Committed results the erasures removed. */
  resultsRemoved: number;
  /** Times a consumer stopped a job of an erased source (the `Erased` metric). */
  stoppedByConsumer: number;
  /** Results present at the end for an erased source's idempotency keys: must be 0. */
  committedAfterErase: number;
  /** Documents of erased sources still in their lane's bucket: must be 0. */
  leftoverDocuments: number;
  /** Results of erased sources (by idempotency key or job id) in the results tables at the end: must be 0. */
  leftoverResults: number;
  /** Ledger items of the erased sources' jobs other than their `#erased` marker, and claims found by source: must be 0. */
  leftoverLedgerItems: number;
  /** Jobs of erased sources whose status is anything but `unknown`: must be 0. */
  leftoverStatuses: number;
  /** Erased sources whose document another (kept) job of the run shares: its text is gone for that job too. */
  documentsSharedWithKeptJobs: number;
  /** What does not hold (the run exits 1 when there is any). */
  problems: string[];
}

/** How each job of an erased source ended, for the run's accounting. */
export interface ErasedEnds {
  /** Job ids of the erased sources. */
  jobIds: Set<string>;
  erased: number;
  waiting: number;
  deadLettered: number;
  /** Found in no state: no marker, no result, no message. */
  lost: number;
}

/** An erasure under way. */
export type EraseLoad = MidRunLoad<ErasureRun>;

/** Commits the erasure waits for: a third of the run's jobs (at least one). */
function eraseThreshold(jobs: number): number {
  return Math.max(1, Math.ceil(jobs / 3));
}

/** The run's queue jobs, with their lanes and content hashes. */
function runJobs({ sent }: StackSubmission, documents: readonly DocumentInput[]): RunJob[] {
  return sent.map((r) => ({
    jobId: r.jobId,
    idempotencyKey: r.idempotencyKey,
    sourceId: r.sourceId,
    lane: r.region,
    contentSha256: sha256Hex(documents[r.index]?.text ?? ''),
  }));
}

/**
 * Where each job is at this instant, read from the lane queues without receiving (fauxqs inspection, no
 * await in between): queued (its message ready or delayed), in flight (received by a consumer) or
 * committed (its message acknowledged: in a run without faults, committed). Without inspection, from the
 * stores instead: committed (a result), in flight (claimed by a consumer) or queued.
 */
async function phasesNow(stack: LocalStack, jobs: readonly RunJob[]): Promise<PhasedJob[]> {
  if (stack.fauxqs) {
    const inQueue = new Map<string, JobPhase>();
    for (const lane of Object.values(stack.lanes)) {
      for (const m of inspectMessages(stack.fauxqs, lane.lane.resources.queueName))
        if (m.jobId) inQueue.set(m.jobId, m.state === 'inFlight' ? 'inFlight' : 'queued');
    }
    return jobs.map((job) => ({ ...job, phase: inQueue.get(job.jobId) ?? 'committed' }));
  }
  return mapLimited(jobs, async (job) => {
    const lane = stack.lanes[job.lane]!;
    const phase: JobPhase = (await lane.results.get(job.idempotencyKey)) ? 'committed' : (await lane.ledger.claimOf(job.jobId)) ? 'inFlight' : 'queued';
    return { ...job, phase };
  });
}

/** The jobs in round-robin order over the phases (committed, in flight, queued), each phase in document order. */
function roundRobin(jobs: readonly PhasedJob[]): PhasedJob[] {
  const byPhase = PHASES.map((phase) => jobs.filter((j) => j.phase === phase));
  const order: PhasedJob[] = [];
  for (let round = 0; byPhase.some((list) => list.length > round); round++) {
    for (const list of byPhase) {
      const job = list[round];
      if (job) order.push(job);
    }
  }
  return order;
}

/**
 * Picks `count` jobs spread over the phases: in round-robin order, each with every job of the run that
 * shares its document (they are erased together, so no job kept loses its document), as long as the
 * whole group fits; then, only when groups do not fit, single jobs whose document a kept job shares.
 */
function pickSpread(jobs: readonly PhasedJob[], count: number): PhasedJob[] {
  const documentOf = (j: RunJob): string => `${j.lane}/${j.contentSha256}`;
  const groups = new Map<string, PhasedJob[]>();
  for (const j of jobs) groups.set(documentOf(j), [...(groups.get(documentOf(j)) ?? []), j]);
  const order = roundRobin(jobs);
  const picked = new Map<string, PhasedJob>();
  for (const job of order) {
    if (picked.size >= count) break;
    const group = (groups.get(documentOf(job)) ?? [job]).filter((j) => !picked.has(j.jobId));
    if (group.length > 0 && picked.size + group.length <= count) for (const j of group) picked.set(j.jobId, j);
  }
  for (const job of order) {
    if (picked.size >= count) break;
    picked.set(job.jobId, job);
  }
  return [...picked.values()];
}

/** The lane's erasure access (its own ledger table, results, bucket) on the local stack. */
function eraseDepsOf(lane: LocalLane): EraseDeps {
  return { ...laneEraseDeps(lane.lane, lane.clients, { local: true }), results: lane.results };
}

function erasureLedgerOf(lane: LocalLane): ErasureLedger {
  return laneEraseDeps(lane.lane, lane.clients, { local: true }).erasure;
}

/** Erases one source, again when it stopped; its receipt, or the last error. */
async function eraseOnce(lane: LocalLane, sourceId: string): Promise<ErasureReceipt | Error> {
  let last: Error = new Error('not tried');
  for (let attempt = 0; attempt < ERASE_TRIES; attempt++) {
    try {
      return await eraseSource(eraseDepsOf(lane), { sourceId, by: ERASED_BY });
    } catch (error) {
      if (!(error instanceof ErasureError)) return error instanceof Error ? error : new Error(String(error));
      last = error;
    }
  }
  return last;
}

/**
 * Starts waiting for the moment to erase `sources` sources of the submitted jobs (see the module's
 * description); the erasure itself runs in the background, `done` resolves with what it did.
 */
export function startEraseLoad(
  stack: LocalStack,
  submission: StackSubmission,
  documents: readonly DocumentInput[],
  options: { sources: number; deadline: number; say: (line: string) => void },
): EraseLoad {
  const jobs = runJobs(submission, documents);
  const threshold = eraseThreshold(jobs.length);
  const commits = (): number => stack.telemetry.totals.total.Completed ?? 0;
  let ended = options.sources === 0;
  let erasedSoFar: number | undefined;
  const moment = momentAt(threshold, commits, options.deadline);
  const run = async (): Promise<ErasureRun> => {
    const none: ErasureRun = { requested: options.sources, atCommits: null, jobs: [], receipts: [], sharedWithKept: 0, errors: [] };
    if (options.sources === 0) return none;
    if ((await moment.reached()) === null) {
      options.say(`  erasure: the time limit passed before ${threshold} commits; nothing erased`);
      return { ...none, errors: ['the erasure never ran: the time limit passed first'] };
    }
    const atCommits = commits();
    const picked = pickSpread(await phasesNow(stack, jobs), options.sources);
    const tally = PHASES.map((p) => `${p === 'inFlight' ? 'in flight' : p} ${picked.filter((j) => j.phase === p).length}`);
    options.say(`  erasing ${picked.length} sources at ${atCommits}/${jobs.length} committed (their jobs then: ${tally.join(', ')})…`);
    const started = Date.now();
    const outcomes = await Promise.all(picked.map((job) => eraseOnce(stack.lanes[job.lane]!, job.sourceId)));
    const receipts = outcomes.filter((o): o is ErasureReceipt => !(o instanceof Error));
    const errors = outcomes.flatMap((o, i) => (o instanceof Error ? [`erasing source ${picked[i]?.sourceId} failed: ${errorName(o)}: ${o.message}`] : []));
    erasedSoFar = receipts.length;
    options.say(`  erased ${receipts.length} sources in ${Date.now() - started} ms${errors.length > 0 ? `; ${errors.length} FAILED` : ''}`);
    const chosen = new Set(picked.map((j) => j.jobId));
    const kept = new Set(jobs.filter((j) => !chosen.has(j.jobId)).map((j) => `${j.lane}/${j.contentSha256}`));
    const sharedWithKept = picked.filter((j) => kept.has(`${j.lane}/${j.contentSha256}`)).length;
    return { requested: options.sources, atCommits, jobs: picked, receipts, sharedWithKept, errors };
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
      options.sources === 0 ? '' : erasedSoFar === undefined ? ` · erase ${options.sources} at ${threshold} commits` : ` · erased ${erasedSoFar} sources`,
    done,
  };
}

/** Items of `jobId`'s ledger partition other than its erased marker. */
async function ledgerLeftovers(lane: LocalLane, jobId: string): Promise<number> {
  let count = 0;
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await lane.clients.dynamodb.send(
      new QueryCommand({
        TableName: lane.lane.resources.ledgerTable,
        KeyConditionExpression: '#pk = :jobId',
        ExpressionAttributeNames: { '#pk': LEDGER_TABLE.partitionKey },
        ExpressionAttributeValues: { ':jobId': { S: jobId } },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    count += (page.Items ?? []).filter((item) => item[LEDGER_TABLE.sortKey as string]?.S !== ERASED_MARKER).length;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return count;
}

/** Whether the lane's bucket holds the document. */
async function documentThere(lane: LocalLane, contentSha256: string): Promise<boolean> {
  try {
    await lane.clients.s3.send(new HeadObjectCommand({ Bucket: lane.lane.resources.bucketName, Key: documentKeyFor(contentSha256) }));
    return true;
  } catch (error) {
    const name = errorName(error);
    if (name === 'NotFound' || name === 'NoSuchKey') return false;
    throw error;
  }
}

/**
 * Looks up what is left of the erased sources once the run drained (pollers stopped), and how each of
 * their jobs ended. `final` is the run's final state; `metrics` the consumers' totals.
 */
export async function erasureFigures(
  stack: LocalStack,
  run: ErasureRun,
  final: FinalState,
  metrics: Record<string, number>,
): Promise<{ figures: ErasureFigures; ends: ErasedEnds }> {
  const laneOf = (name: string): LocalLane => stack.lanes[name]!;
  const erasedSources = new Set(run.receipts.map((r) => `${r.lane}/${r.sourceId}`));
  const jobs = run.jobs.filter((j) => erasedSources.has(`${j.lane}/${j.sourceId}`));
  const jobIds = new Set(jobs.map((j) => j.jobId));
  const keys = new Set(jobs.map((j) => j.idempotencyKey));
  // Claims of the erased sources found by source (beyond the run's own jobs, whose partitions are read below): must be none.
  const claimed = (
    await mapLimited(run.receipts, async (r) => (await erasureLedgerOf(laneOf(r.lane)).jobsOf(r.sourceId)).filter((j) => !jobIds.has(j.jobId)).length)
  ).reduce((a, b) => a + b, 0);
  const perJob = await mapLimited(jobs, async (job) => {
    const lane = laneOf(job.lane);
    const [result, marker, ledgerItems, status] = await Promise.all([
      lane.results.get(job.idempotencyKey),
      erasureLedgerOf(lane).erasedJob(job.jobId),
      ledgerLeftovers(lane, job.jobId),
      jobStatus(job.jobId, { results: lane.results, ledger: lane.ledger }),
    ]);
    return { job, result: result !== undefined, marker: marker !== undefined, ledgerItems, status: status.state };
  });
  const documents = new Map<string, { lane: string; sha: string }>();
  for (const job of jobs) documents.set(`${job.lane}/${job.contentSha256}`, { lane: job.lane, sha: job.contentSha256 });
  for (const r of run.receipts) for (const sha of r.tombstone.contentSha256s) documents.set(`${r.lane}/${sha}`, { lane: r.lane, sha });
  const leftoverDocuments = (await mapLimited([...documents.values()], (d) => documentThere(laneOf(d.lane), d.sha))).filter(Boolean).length;
  const waiting = new Set(final.waiting);
  const deadLettered = new Set(final.deadLettered);
  const ends: ErasedEnds = { jobIds, erased: 0, waiting: 0, deadLettered: 0, lost: 0 };
  for (const j of perJob) {
    if (waiting.has(j.job.jobId)) ends.waiting++;
    else if (deadLettered.has(j.job.jobId)) ends.deadLettered++;
    else if (j.marker && !j.result) ends.erased++;
    else if (!j.result) ends.lost++;
  }
  const figures: ErasureFigures = {
    requested: run.requested,
    erased: run.receipts.length,
    atCommits: run.atCommits,
    erasedWhile: {
      committed: jobs.filter((j) => j.phase === 'committed').length,
      inFlight: jobs.filter((j) => j.phase === 'inFlight').length,
      queued: jobs.filter((j) => j.phase === 'queued').length,
    },
    jobs: jobs.length,
    erasedJobs: ends.erased,
    resultsRemoved: run.receipts.reduce((n, r) => n + r.jobs.filter((j) => j.resultRemoved).length, 0),
    stoppedByConsumer: metrics.Erased ?? 0,
    committedAfterErase: perJob.filter((j) => j.result).length,
    leftoverDocuments,
    leftoverResults: final.results.filter((r) => keys.has(r.idempotencyKey) || jobIds.has(r.jobId)).length,
    leftoverLedgerItems: perJob.reduce((n, j) => n + j.ledgerItems, 0) + claimed,
    leftoverStatuses: perJob.filter((j) => j.status !== 'unknown').length,
    documentsSharedWithKeptJobs: run.sharedWithKept,
    problems: [],
  };
  figures.problems = erasureProblems(figures, run.errors, ends);
  return { figures, ends };
}

/** What does not hold in the erasure's figures. */
function erasureProblems(f: ErasureFigures, errors: readonly string[], ends: ErasedEnds): string[] {
  const problems = [...errors];
  if (f.erased < f.requested) problems.push(`erasure: ${f.erased} of ${f.requested} sources erased`);
  if (f.committedAfterErase > 0) problems.push(`erasure: ${f.committedAfterErase} result(s) of erased sources present at the end`);
  for (const [name, value] of [
    ['documents', f.leftoverDocuments],
    ['results', f.leftoverResults],
    ['ledger items', f.leftoverLedgerItems],
    ['job statuses', f.leftoverStatuses],
  ] as const) {
    if (value > 0) problems.push(`erasure: ${value} ${name} of erased sources left`);
  }
  if (ends.waiting + ends.deadLettered > 0)
    problems.push(`erasure: ${ends.waiting} job(s) of erased sources still waiting, ${ends.deadLettered} dead-lettered`);
  return problems;
}

/** The erasure's lines of the human summary. */
export function formatErasureFigures(f: ErasureFigures): string {
  const rows: [string, string][] = [
    [
      'sources erased',
      `${f.erased} of ${f.requested}${f.atCommits === null ? '' : ` at ${f.atCommits} commits`} (their jobs then: committed ${f.erasedWhile.committed}, in flight ${f.erasedWhile.inFlight}, queued ${f.erasedWhile.queued})`,
    ],
    ['jobs ended erased', `${f.erasedJobs} of ${f.jobs} (results removed ${f.resultsRemoved}, stopped by a consumer ${f.stoppedByConsumer})`],
    ['committed after the erasure', String(f.committedAfterErase)],
    ['leftover documents', String(f.leftoverDocuments)],
    ['leftover results', String(f.leftoverResults)],
    ['leftover ledger items', String(f.leftoverLedgerItems)],
    ['leftover job statuses', String(f.leftoverStatuses)],
    ...(f.documentsSharedWithKeptJobs > 0 ? [['documents shared with kept jobs', String(f.documentsSharedWithKeptJobs)] as [string, string]] : []),
    ...f.problems.map((p): [string, string] => ['PROBLEM', p]),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return ['ratelane local run — erasure', ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)].join('\n');
}
