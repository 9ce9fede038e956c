/**
 * One sweep of a lane's batches (what the lane's scheduled reconciler runs, every
 * `lane.batch.reconcileEveryMinutes`): every batch of the lane that is not done or cancelled gets one
 * pass (`batchPass`: parts waiting after a submission throttle submitted when due, open provider jobs
 * polled, ended ones read), oldest first. A batch whose pass fails is reported with its error's name
 * and the sweep goes on with the next one; so is a batch whose pass could not settle some items (the
 * pass went on with its other items; the next sweep tries them again). The report also carries what
 * the lane's gauges need: the items left `unresolved` across the batches that are not cancelled (a
 * finished batch keeps them until a person hands them on, or its retention ends) and the age of the
 * oldest batch still open. Every batch (done ones too) with items of erased sources marked has their
 * records removed from the provider's files once the jobs holding them have ended (`erased-records.ts`).
 * Logs and reports carry ids, states, counts and error names only, never document text.
 */
import { errorName } from '../../platform/errors.js';
import type { BatchHeader, BatchState, ItemState } from '../../store/manifest-model.js';
import { eraseProviderRecords } from './erased-records.js';
import { batchPass } from './index.js';
import type { ReconcileDeps } from './reconcile.js';
import type { SubmitBatchDeps } from './submit.js';

/** Batch states the reconciler has nothing more to do for. */
const FINAL_BATCH_STATES: ReadonlySet<BatchState> = new Set(['done', 'cancelled']);

/** Time kept back at the end of an invocation: no batch pass starts with less left (ms). */
const DEFAULT_SWEEP_RESERVE_MS = 15_000;

/** What a sweep reads and writes: what submitting and reconciling need, and its bounds. */
export type SweepDeps = SubmitBatchDeps &
  ReconcileDeps & {
    /** The most batch passes one sweep runs (oldest batches first); the rest wait for the next sweep. Default: all. */
    maxBatches?: number;
    /** Time left (ms) in the invocation running the sweep; without it the sweep has no time limit. */
    timeLeftMs?: () => number;
    /** No batch pass starts with less than this left (ms). Default {@link DEFAULT_SWEEP_RESERVE_MS}. */
    reserveMs?: number;
    /** Whether the unresolved items of finished (done) batches are counted too (one `Query` each). Default true. */
    countFinished?: boolean;
  };

/** What a sweep did for one batch. */
interface SweptBatch {
  batchId: string;
  /**
   * `reconciled`: its pass ran; `failed`: its pass (or its count) threw; `skipped`: left for the next
   * sweep (`maxBatches` reached or no time left); `final`: done or cancelled before the sweep, no pass.
   */
  outcome: 'reconciled' | 'failed' | 'skipped' | 'final';
  /** The batch's state after its pass (as listed when it had none, or its pass failed). */
  state: BatchState;
  /** Whole seconds since the batch was created. */
  ageSeconds: number;
  /** Items its pass moved, by the state they moved to. */
  moved: Partial<Record<ItemState, number>>;
  /** Its provider jobs still open after the pass, and ended. */
  jobsOpen: number;
  jobsEnded: number;
  /** Its items in state `unresolved` after the pass; undefined when not counted (skipped, cancelled, failed, or a finished batch with `countFinished` off). */
  unresolved: number | undefined;
  /** Items its pass could not settle or send (tried again by the next sweep). */
  failedItems: number;
  /**
   * Its items of erased sources: their records `erased` from the provider's files by this sweep, or
   * `waiting` for the jobs holding them to end; undefined when none is marked.
   */
  erasedRecords?: 'erased' | 'waiting';
  /** The name of the error its pass threw (no message: it may quote a provider's text). */
  error?: string;
}

/** What one sweep of a lane did. */
export interface SweepReport {
  lane: string;
  /** Every batch of the lane, oldest first. */
  batches: SweptBatch[];
  /** Items moved by this sweep, by the state they moved to, and in all. */
  moved: Partial<Record<ItemState, number>>;
  settled: number;
  /** Batches whose pass or count failed, or whose pass could not settle some items. */
  errors: number;
  /** Batches left for the next sweep. */
  skipped: number;
  /** Batches whose erased items' records this sweep removed from the provider's files, and batches still waiting to. */
  erasedRecords: number;
  erasedRecordsWaiting: number;
  /** Batches not done or cancelled after the sweep. */
  open: number;
  /** Items in state `unresolved` across the batches counted (see {@link SweptBatch.unresolved}). */
  unresolvedItems: number;
  /** Age of the oldest batch not done or cancelled after the sweep (s); 0 when none is. */
  oldestOpenAgeSeconds: number;
}

/** Sweeps the lane's batches once: a pass for each one not done or cancelled; one failing batch does not stop the others. */
export async function sweepBatches(deps: SweepDeps): Promise<SweepReport> {
  const headers = await deps.manifest.listBatches(deps.lane.name);
  const now = deps.now().getTime();
  const reserveMs = deps.reserveMs ?? DEFAULT_SWEEP_RESERVE_MS;
  const maxBatches = deps.maxBatches ?? Number.POSITIVE_INFINITY;
  const report: SweepReport = {
    lane: deps.lane.name,
    batches: [],
    moved: {},
    settled: 0,
    errors: 0,
    skipped: 0,
    erasedRecords: 0,
    erasedRecordsWaiting: 0,
    open: 0,
    unresolvedItems: 0,
    oldestOpenAgeSeconds: 0,
  };
  let passes = 0;
  for (const header of headers) {
    const swept = sweptOf(header, now);
    if (FINAL_BATCH_STATES.has(header.state)) {
      if (header.state === 'done' && deps.countFinished !== false) await countUnresolved(swept, deps);
    } else if (passes >= maxBatches || (deps.timeLeftMs !== undefined && deps.timeLeftMs() < reserveMs)) {
      swept.outcome = 'skipped';
    } else {
      passes += 1;
      await passOne(swept, deps);
    }
    const timeLeft = deps.timeLeftMs === undefined || deps.timeLeftMs() >= reserveMs;
    if (header.erasedItems?.length && timeLeft && swept.outcome !== 'skipped' && swept.outcome !== 'failed') await eraseRecords(swept, deps);
    add(report, swept);
  }
  return report;
}

function sweptOf(header: BatchHeader, now: number): SweptBatch {
  const ageSeconds = Math.max(0, Math.floor((now - Date.parse(header.createdAt)) / 1000));
  return {
    batchId: header.batchId,
    outcome: 'final',
    state: header.state,
    ageSeconds,
    moved: {},
    jobsOpen: 0,
    jobsEnded: 0,
    unresolved: undefined,
    failedItems: 0,
  };
}

/** Runs one batch's pass and counts its unresolved items; a failure is recorded on `swept`, never thrown. */
async function passOne(swept: SweptBatch, deps: SweepDeps): Promise<void> {
  try {
    const pass = await batchPass(swept.batchId, deps);
    Object.assign(swept, {
      outcome: 'reconciled',
      state: pass.state,
      moved: pass.moved,
      jobsOpen: pass.jobsOpen,
      jobsEnded: pass.jobsEnded,
      failedItems: pass.failed.length,
    });
    if (pass.failed.length > 0) {
      const errors = [...new Set(pass.failed.map((f) => f.errorName))];
      deps.logger.error('batch items could not be settled', { lane: deps.lane.name, batchId: swept.batchId, items: pass.failed.length, errors });
    }
  } catch (error) {
    fail(swept, 'batch pass failed', error, deps);
    return;
  }
  if (swept.state !== 'cancelled') await countUnresolved(swept, deps);
}

/** Removes the batch's erased records from the provider's files (its header read again: the pass may have ended parts); a failure is recorded on `swept`. */
async function eraseRecords(swept: SweptBatch, deps: SweepDeps): Promise<void> {
  try {
    const header = await deps.manifest.header(swept.batchId);
    const pass = header && (await eraseProviderRecords(header, deps));
    if (!pass) return;
    swept.erasedRecords = pass.state;
    if (pass.state === 'erased') {
      const { batchId: _, state: __, ...done } = pass;
      deps.logger.info("erased sources' records removed from the provider's files", { lane: deps.lane.name, batchId: swept.batchId, ...done });
    }
  } catch (error) {
    fail(swept, "removing erased sources' records from the provider's files failed", error, deps);
  }
}

async function countUnresolved(swept: SweptBatch, deps: SweepDeps): Promise<void> {
  try {
    swept.unresolved = (await deps.manifest.counts(swept.batchId)).unresolved;
  } catch (error) {
    fail(swept, 'counting the batch items failed', error, deps);
  }
}

function fail(swept: SweptBatch, message: string, error: unknown, deps: SweepDeps): void {
  swept.outcome = 'failed';
  swept.error = errorName(error) ?? 'Error';
  deps.logger.error(message, { lane: deps.lane.name, batchId: swept.batchId, state: swept.state, error: swept.error });
}

function add(report: SweepReport, swept: SweptBatch): void {
  report.batches.push(swept);
  for (const [state, n] of Object.entries(swept.moved) as Array<[ItemState, number]>) {
    report.moved[state] = (report.moved[state] ?? 0) + n;
    report.settled += n;
  }
  if (swept.outcome === 'failed' || swept.failedItems > 0) report.errors += 1;
  if (swept.outcome === 'skipped') report.skipped += 1;
  if (swept.erasedRecords === 'erased') report.erasedRecords += 1;
  if (swept.erasedRecords === 'waiting') report.erasedRecordsWaiting += 1;
  if (!FINAL_BATCH_STATES.has(swept.state)) {
    report.open += 1;
    report.oldestOpenAgeSeconds = Math.max(report.oldestOpenAgeSeconds, swept.ageSeconds);
  }
  report.unresolvedItems += swept.unresolved ?? 0;
}
