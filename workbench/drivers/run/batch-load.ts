/**
 * The batch lane during a local run (`--batch-jobs N`): N corpus documents, split by lane as the queue
 * jobs are (English invoices to `us`, German to `eu`), submitted as one batch per lane through the
 * fake provider's OpenAI Batch API, then reconciled by `batchPass` on an interval (the local stand-in
 * for the lane's EventBridge Scheduler schedule) until every batch is done, while the queue lane's
 * consumers run: an output handed to the queue lane for its repair (`redriven`) finishes there. At the
 * end the driver waits, bounded by the run's time limit, until no redriven item is still waiting.
 * With `redrive` (`--batch-redrive`) it then reads the batch figures' inputs (what the scorecard's batch
 * figures describe: the batch before the redrive), redrives each batch's unresolved items to the queue
 * lane (`redriveBatch`) while its consumers still run, and waits the same way for their outcome.
 */
import { createOpenAiBatchProvider } from '../../../lib/lanes/batch/providers/openai.js';
import { batchPass } from '../../../lib/lanes/batch/index.js';
import type { ReconcileDeps } from '../../../lib/lanes/batch/reconcile.js';
import { batchFileExpirySeconds } from '../../../lib/lanes/batch/reconciler-deps.js';
import { redriveBatch } from '../../../lib/lanes/batch/redrive.js';
import { batchStatus, type BatchStatusReport } from '../../../lib/lanes/batch/status.js';
import { submitBatch, type SubmitBatchDeps } from '../../../lib/lanes/batch/submit.js';
import { createLaneTelemetry } from '../../../lib/extraction/deps.js';
import type { DocumentInput } from '../../../lib/intake/producer.js';
import { errorName, shortMessage } from '../../../lib/platform/errors.js';
import { BatchManifest } from '../../../lib/store/manifest.js';
import { ITEM_STATES, itemIdInRecordId, manifestTableName, type BatchItem, type ItemState } from '../../../lib/store/manifest-model.js';
import type { FakeProviderBatchOptions } from '../../fake-provider/index.js';
import { redirectPowertoolsConsole } from '../../local-stack/lambda/telemetry.js';
import { localLaneKeys, type LocalLane, type LocalStack } from '../../local-stack/stack.js';
import { corpusDocuments } from '../lanes.js';
import { collectFinalState, type FinalState } from '../outcome.js';
import type { BatchRedriveInputs, BatchRedriveSent, BatchScorecardInputs, BatchSubmitted } from './batch-scorecard.js';

/** The batch load of a run (the `--batch-*` flags). */
export interface BatchLoadOptions {
  /** Documents submitted through the batch lane (0: none). */
  jobs: number;
  /** Share (0..1) of request lines the fake provider drops: no output line, no error line. */
  dropRate: number;
  /** Share (0..1) of request lines the fake provider answers with an error line. */
  errorRate: number;
  /** Share (0..1) of request lines the fake provider answers with output that fails the schema (repaired by the queue lane). */
  invalidRate: number;
  /** Provider minutes the fake takes to answer a batch's lines (its `completionMs`). */
  minutes: number;
  /** Once every batch is done, redrive its unresolved items to the queue lane and wait for their outcome (`--batch-redrive`). */
  redrive?: boolean | undefined;
  /** The documents to send instead of the corpus repeated up to `jobs` (the evaluation sends its own). */
  documents?: readonly DocumentInput[] | undefined;
}

/** The documents of the batch load: the corpus repeated up to `jobs`, with source ids of their own (no duplicate of a queue job). */
function batchDocuments(jobs: number): DocumentInput[] {
  if (jobs <= 0) return [];
  return corpusDocuments(jobs).map((doc) => ({ ...doc, sourceId: `batch:${doc.sourceId}` }));
}

/**
 * A lane's documents split by schema and prompt version, in first-seen order: a batch holds one of each,
 * so a mixed load (the evaluation's invoices and receipts) becomes one batch per version.
 */
function versionGroups(documents: readonly DocumentInput[]): Omit<DocumentInput, 'region'>[][] {
  const groups = new Map<string, Omit<DocumentInput, 'region'>[]>();
  for (const { region: _region, ...doc } of documents) {
    const key = `${doc.schemaVersion ?? ''}\n${doc.promptVersion ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), doc]);
  }
  return [...groups.values()];
}

/**
 * The fake Batch API's pace for a run whose provider minute lasts `minuteMs`: validating and
 * finalizing a sixth of a minute each (10 scaled seconds), the lines answered over `minutes` minutes.
 */
export function fakeBatchOptions(options: BatchLoadOptions, minuteMs: number): FakeProviderBatchOptions {
  const sixth = Math.max(50, Math.round(minuteMs / 6));
  return {
    validationMs: sixth,
    completionMs: Math.max(100, Math.round(options.minutes * minuteMs)),
    finalizingMs: sixth,
    dropRate: options.dropRate,
    errorRate: options.errorRate,
    invalidRate: options.invalidRate,
  };
}

/**
 * How often the local loop reconciles: a sixth of a provider minute (10 scaled seconds). The lane's
 * schedule in AWS runs every `reconcileEveryMinutes`; locally it runs faster so a run ends in seconds.
 */
export function batchReconcileIntervalMs(minuteMs: number): number {
  return Math.max(250, Math.round(minuteMs / 6));
}

/** One lane's batch as the run remembers it. */
export interface LaneBatch extends BatchSubmitted {
  /** The batch's state at the last pass. */
  state: string;
  /** Reconcile passes that threw (the next pass tries again). */
  passErrors: number;
}

/** How far the batch load is, for the progress line. */
interface BatchProgress {
  phase: 'submitting' | 'reconciling' | 'redrive' | 'ended';
  items: number;
  /** Items per manifest state, summed over the batches. */
  counts: Record<ItemState, number>;
  batchesDone: number;
  batches: number;
  /** Redriven items the queue lane has not finished yet (known in the `redrive` phase). */
  redrivenWaiting: number | null;
}

/** What the batch load did. */
interface BatchLoadResult {
  batches: LaneBatch[];
  /** True when a batch was not done, or a redriven item still waiting, at the time limit. */
  timedOut: boolean;
  passes: number;
  /** The redrive step, when it ran (`redrive` asked and every batch done). */
  redrive?: BatchRedriveRun | undefined;
}

/** What the redrive step of the load did. */
interface BatchRedriveRun {
  /** The batch figures' inputs read once every batch was done, before the redrive. */
  before: BatchScorecardInputs;
  /** What the redrive sent, per lane's batch. */
  sent: BatchRedriveSent[];
}

/** A running batch load. */
export interface BatchLoad {
  progress(): BatchProgress;
  /** Whether the load has ended (the run's drain may end then). */
  readonly ended: boolean;
  done: Promise<BatchLoadResult>;
}

/** Where a lane's batch is read and written. */
interface LaneDeps {
  lane: LocalLane;
  deps: SubmitBatchDeps & ReconcileDeps;
  manifest: BatchManifest;
}

function laneDeps(stack: LocalStack, local: LocalLane): LaneDeps {
  const { lane } = local;
  const key = localLaneKeys(lane)[0];
  if (!key) throw new Error(`lane ${lane.name} has no provider key for its batches`);
  const manifest = new BatchManifest({ dynamodb: local.clients.dynamodb, tableName: manifestTableName(lane) });
  const { logger } = createLaneTelemetry(lane, { serviceName: `ratelane-batch-${lane.name}` });
  redirectPowertoolsConsole(logger, stack.telemetry.console());
  const provider = createOpenAiBatchProvider({
    apiKey: key.secret,
    baseUrl: stack.provider.baseUrl,
    timeoutMs: Math.max(10_000, lane.provider.timeoutMs),
    fileExpirySeconds: batchFileExpirySeconds(lane),
  });
  const now = () => new Date();
  const deps = {
    lane,
    s3: local.clients.s3,
    manifest,
    provider,
    now,
    results: local.results,
    ledger: local.ledger,
    sqs: local.clients.sqs,
    queueUrl: local.queueUrl,
    logger,
  };
  return { lane: local, deps, manifest };
}

/** Whether a batch has ended: every provider job ended and read (`done`), or cancelled. */
const finished = (batch: LaneBatch): boolean => batch.state === 'done' || batch.state === 'cancelled';

const emptyCounts = (): Record<ItemState, number> => Object.fromEntries(ITEM_STATES.map((s) => [s, 0])) as Record<ItemState, number>;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Why a call failed, in one short line (never document text: the errors of the batch lane carry ids and codes). */
function why(error: unknown): string {
  return `${errorName(error) ?? 'Error'}: ${shortMessage(error)}`;
}

/**
 * Starts the batch load on a running stack: submits one batch per lane with documents, reconciles
 * every `intervalMs` until each is done, then waits until no redriven item is waiting; everything
 * bounded by `deadline` (epoch ms). `say` gets the submission and the ends (no document text).
 */
export function startBatchLoad(
  stack: LocalStack,
  options: BatchLoadOptions,
  run: { intervalMs: number; deadline: number; say: (line: string) => void },
): BatchLoad {
  const progress: BatchProgress = { phase: 'submitting', items: 0, counts: emptyCounts(), batchesDone: 0, batches: 0, redrivenWaiting: null };
  let ended = false;
  const done = (async (): Promise<BatchLoadResult> => {
    try {
      return await drive(stack, options, run, progress);
    } finally {
      progress.phase = 'ended';
      ended = true;
    }
  })();
  // Awaited by the run after its drain; a failure meanwhile must not count as unhandled.
  done.catch(() => undefined);
  return {
    progress: () => ({ ...progress, counts: { ...progress.counts } }),
    get ended() {
      return ended;
    },
    done,
  };
}

async function drive(
  stack: LocalStack,
  options: BatchLoadOptions,
  run: { intervalMs: number; deadline: number; say: (line: string) => void },
  progress: BatchProgress,
): Promise<BatchLoadResult> {
  const documents = options.documents ?? batchDocuments(options.jobs);
  const lanes = Object.values(stack.lanes).filter((l) => documents.some((d) => d.region === l.lane.name));
  const submitStarted = Date.now();
  const submitted = await Promise.all(
    lanes
      .flatMap((local) => versionGroups(documents.filter((d) => d.region === local.lane.name)).map((own) => ({ local, own })))
      .map(async ({ local, own }) => {
        const lane = laneDeps(stack, local);
        const batch: LaneBatch = {
          lane: local.lane.name,
          batchId: null,
          documents: own.length,
          items: 0,
          rejectedAtSubmit: 0,
          state: 'submitting',
          passErrors: 0,
        };
        try {
          const report = await submitBatch(own, lane.deps);
          Object.assign(batch, { batchId: report.batchId, items: report.items, rejectedAtSubmit: report.rejected.length, state: 'submitted' });
        } catch (error) {
          batch.submitError = why(error);
          run.say(`  batch lane ${batch.lane}: submission FAILED (${batch.submitError})`);
        }
        return { batch, lane };
      }),
  );
  const batches = submitted.map((s) => s.batch);
  progress.items = batches.reduce((n, b) => n + b.items, 0);
  progress.batches = batches.filter((b) => b.batchId).length;
  run.say(
    `  batch: submitted ${progress.items} of ${documents.length} documents as ${progress.batches} batch(es) (${batches
      .map((b) => `${b.lane} ${b.items}${b.batchId ? ` in ${b.batchId}` : ''}`)
      .join(', ')}) in ${Date.now() - submitStarted} ms; reconciling every ${run.intervalMs} ms`,
  );
  progress.phase = 'reconciling';
  const open = submitted.filter((s) => s.batch.batchId !== null);
  let passes = 0;
  while (open.some((s) => !finished(s.batch)) && Date.now() <= run.deadline) {
    passes += 1;
    await Promise.all(open.filter((s) => !finished(s.batch)).map((s) => passOnce(s.batch, s.lane, run.say)));
    await refreshCounts(open, progress);
    if (open.every((s) => finished(s.batch))) break;
    await sleep(run.intervalMs);
  }
  const reconciled = open.every((s) => finished(s.batch));
  if (!reconciled) run.say(`  batch: time limit reached with ${open.filter((s) => !finished(s.batch)).length} batch(es) not done`);
  progress.phase = 'redrive';
  const repairsSettled = reconciled && (await waitForRedriven(open, progress, run, 'for a repair'));
  if (!(options.redrive && reconciled)) return { batches, timedOut: !reconciled || !repairsSettled, passes };
  const redrive = await redriveUnresolved(stack, batches, open, run.say);
  const redriveSettled = await waitForRedriven(open, progress, run, 'by the redrive or for a repair');
  return { batches, timedOut: !repairsSettled || !redriveSettled, passes, redrive };
}

/**
 * The redrive step: reads the batch figures' inputs (the batch before the redrive), then redrives each
 * lane's batch (`redriveBatch`: its unresolved items to the lane's queue, same job id and key).
 */
async function redriveUnresolved(
  stack: LocalStack,
  batches: readonly LaneBatch[],
  open: readonly { batch: LaneBatch; lane: LaneDeps }[],
  say: (line: string) => void,
): Promise<BatchRedriveRun> {
  const before = await batchScorecardInputs(stack, { batches }, await collectFinalState(stack));
  const sent = await Promise.all(
    open.map(({ batch, lane }): Promise<BatchRedriveSent> => {
      const at = { lane: batch.lane, batchId: batch.batchId! };
      return redriveBatch(at.batchId, lane.deps).then(
        (report) => ({ ...at, itemIds: report.itemIds, failed: report.failed.length }),
        (error: unknown) => ({ ...at, itemIds: [], failed: 0, error: why(error) }),
      );
    }),
  );
  const described = sent.map((s) => `${s.lane} ${s.itemIds.length}${s.failed ? `, ${s.failed} NOT sent` : ''}${s.error ? ` (FAILED: ${s.error})` : ''}`);
  say(`  batch: redrove ${sent.reduce((n, s) => n + s.itemIds.length, 0)} unresolved item(s) to the queue lane (${described.join('; ')})`);
  return { before, sent };
}

/** One `batchPass` over a lane's batch; a failure is counted and said once, and the next pass tries again. */
async function passOnce(batch: LaneBatch, lane: LaneDeps, say: (line: string) => void): Promise<void> {
  try {
    const report = await batchPass(batch.batchId!, lane.deps);
    batch.state = report.state;
    if (finished(batch)) say(`  batch ${batch.batchId} (lane ${batch.lane}) reconciled to the end (${report.state})`);
  } catch (error) {
    batch.passErrors += 1;
    if (batch.passErrors === 1) say(`  batch ${batch.batchId}: a reconcile pass failed (${why(error)}); the next pass tries again`);
  }
}

async function refreshCounts(open: readonly { batch: LaneBatch; lane: LaneDeps }[], progress: BatchProgress): Promise<void> {
  const counts = emptyCounts();
  for (const { batch, lane } of open) {
    const own = await lane.manifest.counts(batch.batchId!).catch(() => undefined);
    if (!own) return;
    for (const state of ITEM_STATES) counts[state] += own[state];
  }
  progress.counts = counts;
  progress.batchesDone = open.filter((s) => finished(s.batch)).length;
}

/** Waits until every redriven item has an outcome in the queue lane (or the deadline); true when none is waiting. */
async function waitForRedriven(
  open: readonly { batch: LaneBatch; lane: LaneDeps }[],
  progress: BatchProgress,
  run: { intervalMs: number; deadline: number; say: (line: string) => void },
  handedFor: string,
): Promise<boolean> {
  let said = false;
  for (;;) {
    const statuses = await Promise.all(open.map(({ batch, lane }) => batchStatus(batch.batchId!, lane.deps).catch(() => undefined)));
    const read = statuses.every((s) => s !== undefined);
    const redriven = statuses.reduce((n, s) => n + (s?.counts.redriven ?? 0), 0);
    const waiting = read ? statuses.reduce((n, s) => n + (s as BatchStatusReport).outcome.waiting, 0) : null;
    progress.redrivenWaiting = waiting;
    if (waiting === 0) return true;
    if (!said && redriven > 0) {
      run.say(`  batch: ${redriven} item(s) handed to the queue lane ${handedFor}; waiting for their outcome`);
      said = true;
    }
    if (Date.now() > run.deadline) {
      run.say(`  batch: time limit reached with ${waiting ?? 'an unknown number of'} item(s) still waiting for an outcome`);
      return false;
    }
    await sleep(run.intervalMs);
  }
}

/** The state of a lane's batch at the end: the status report (outcome) and every item, read from the stores. */
export interface BatchFinal {
  batch: LaneBatch;
  status: BatchStatusReport | undefined;
  items: Pick<BatchItem, 'itemId' | 'state' | 'jobId' | 'idempotencyKey' | 'reason'>[];
  /** Why the batch could not be read, if so. */
  readError?: string | undefined;
}

/** Reads every batch of the load at the end (after the pollers stopped), or before the redrive. */
export async function collectBatchFinal(stack: LocalStack, result: { batches: readonly LaneBatch[] }): Promise<BatchFinal[]> {
  return Promise.all(
    result.batches.map(async (batch): Promise<BatchFinal> => {
      const local = stack.lanes[batch.lane];
      if (!batch.batchId || !local) return { batch, status: undefined, items: [] };
      const manifest = new BatchManifest({ dynamodb: local.clients.dynamodb, tableName: manifestTableName(local.lane) });
      try {
        const [status, items] = await Promise.all([
          batchStatus(batch.batchId, { manifest, results: local.results, ledger: local.ledger }),
          manifest.items(batch.batchId),
        ]);
        return {
          batch,
          status,
          items: items.map(({ itemId, state, jobId, idempotencyKey, reason }) => ({ itemId, state, jobId, idempotencyKey, ...(reason ? { reason } : {}) })),
        };
      } catch (error) {
        return { batch, status: undefined, items: [], readError: why(error) };
      }
    }),
  );
}

/** The batch figures' inputs at the end of a run: every batch read from the stores, where every job ended, the provider's own counts. */
export async function batchScorecardInputs(stack: LocalStack, result: { batches: readonly LaneBatch[] }, final: FinalState): Promise<BatchScorecardInputs> {
  const read = await collectBatchFinal(stack, result);
  const { droppedCustomIds, erroredCustomIds, invalidCustomIds } = stack.provider.stats().batches;
  // The provider's record ids carry each batch's prefix; the figures compare item ids.
  const itemIds = (recordIds: readonly string[]) => recordIds.map((id) => itemIdInRecordId(id) ?? id);
  return {
    batches: read.map(({ batch, status, items, readError }) => ({
      lane: batch.lane,
      batchId: batch.batchId,
      documents: batch.documents,
      items: batch.items,
      rejectedAtSubmit: batch.rejectedAtSubmit,
      submitError: batch.submitError,
      readError,
      outcome: status?.outcome,
      unresolved: (status?.unresolved ?? []).map(({ itemId, reason }) => ({ itemId, reason })),
      manifestItems: items,
    })),
    providerDropped: itemIds(droppedCustomIds),
    providerErrored: itemIds(erroredCustomIds),
    providerInvalid: itemIds(invalidCustomIds),
    committedKeys: new Set(final.results.map((r) => r.idempotencyKey)),
    terminalJobIds: new Set(final.terminalLedger.map((e) => e.jobId)),
    needsReviewJobIds: new Set(final.terminalLedger.filter((e) => e.kind === 'needs_review').map((e) => e.jobId)),
    queuedJobIds: new Set([...final.waiting, ...final.deadLettered]),
  };
}

/**
 * The redrive figures' inputs from what the run read at its end (after the pollers stopped): what the
 * redrive sent (null: it did not run), every batch read again, where every job ended. Pure.
 */
export function batchRedriveInputs(
  sent: readonly BatchRedriveSent[] | null,
  read: readonly Pick<BatchFinal, 'batch' | 'status' | 'items' | 'readError'>[],
  final: Pick<FinalState, 'results' | 'terminalLedger' | 'waiting' | 'deadLettered'>,
): BatchRedriveInputs {
  const ledger = (kind: 'needs_review' | 'rejected') => new Set(final.terminalLedger.filter((e) => e.kind === kind).map((e) => e.jobId));
  return {
    sent,
    after: read.map(({ batch, status, items, readError }) => ({
      lane: batch.lane,
      batchId: batch.batchId,
      unresolved: status?.outcome.unresolved,
      items,
      readError,
    })),
    results: final.results,
    needsReviewJobIds: ledger('needs_review'),
    rejectedJobIds: ledger('rejected'),
    queuedJobIds: new Set([...final.waiting, ...final.deadLettered]),
  };
}
