/**
 * Reconciling a batch: poll each open provider job; when it has ended (finished, expired, cancelled,
 * failed), read its result lines and send each through the same validation and commit-once as the
 * other lanes. A valid output is committed (or found committed: a duplicate); an invalid one goes to
 * the queue lane with the same job contract, where the one repair happens (`redriven`); an error
 * line, or no line at all, leaves the item **unresolved** with its reason — never an empty object or
 * a success. Items move only along the manifest's transitions, so reconciling twice changes nothing.
 *
 * A job that ended early keeps what it answered: an **expired** job's answered items are committed and
 * the rest left unresolved with reason `expired`; a **cancelled** job's the same with reason
 * `cancelled`. A batch being cancelled (`cancelling`, see `cancel.ts`) has every job still running asked
 * to stop at each pass (asking again is safe: a cancel whose own call failed is retried this way) and
 * read when the provider reports it ended, its parts still waiting to be submitted cancelled instead
 * (their items unresolved, `cancelled_before_submit`), and moves to `cancelled` once every part has ended.
 * A batch ends only once its recorded parts carry all of its items: while a submission is still
 * recording parts, the ones recorded so far having ended does not end it.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LaneConfig } from '../../config/lanes.js';
import { JOB_CONTRACT_VERSION, type Job } from '../../contract/job.js';
import { getExtractionSchema } from '../../contract/schemas/registry.js';
import { validateOutput } from '../../extraction/validate.js';
import { resendDeferred } from '../queue/reschedule.js';
import { errorName } from '../../platform/errors.js';
import type { BatchManifest } from '../../store/manifest.js';
import { canMoveItem, itemIdFor, itemIndexOf, type BatchHeader, type BatchItem, type ProviderJobRef } from '../../store/manifest-model.js';
import type { Ledger } from '../../store/ledger.js';
import { resultRecordFor, type ResultStore } from '../../store/results.js';
import { BatchSubmitThrottledError } from './providers/errors.js';
import { BatchNotFoundError } from './status.js';
import type { BatchProvider, ProviderJobHandle, ProviderJobState, ProviderResultLine } from './providers/provider.js';

/** What reconciling reads and writes. */
export interface ReconcileDeps {
  lane: LaneConfig;
  manifest: BatchManifest;
  provider: BatchProvider;
  results: ResultStore;
  ledger: Ledger;
  /** The lane's queue: an output that fails validation goes there for its repair. */
  sqs: SQSClient;
  queueUrl: string;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  now: () => Date;
}

/** What one reconcile pass of a batch did. */
export interface ReconcileReport {
  batchId: string;
  /** Provider jobs that ended before or during this pass. */
  jobsEnded: number;
  jobsOpen: number;
  /** Items moved by this pass, by the state they moved to. */
  moved: Partial<Record<BatchItem['state'], number>>;
  /** Result lines matching no record sent (reported, never matched). */
  unmatchedLines: number;
  /** Open provider jobs of a batch being cancelled that this pass asked the provider to stop. */
  cancelRequested: number;
  /** The batch's state after the pass. */
  state: BatchHeader['state'];
}

const ENDED: ReadonlySet<ProviderJobState> = new Set(['finished', 'expired', 'cancelled', 'failed']);
const OPEN_PARTS: ReadonlySet<ProviderJobRef['state']> = new Set(['submitted', 'in_progress']);

/** The provider's handle of a submitted part, rebuilt from the manifest (the record ids from its item range). */
export function handleOf(header: BatchHeader, part: ProviderJobRef, model: string): ProviderJobHandle | undefined {
  const first = itemIndexOf(part.items.first);
  const last = itemIndexOf(part.items.last);
  if (!part.providerJobId || first === undefined || last === undefined) return undefined;
  const recordIds = Array.from({ length: last - first + 1 }, (_, i) => itemIdFor(first + i));
  return {
    provider: part.kind,
    batchId: header.batchId,
    index: Number(part.partId.replace(/\D/g, '')) || 0,
    model,
    jobId: part.providerJobId,
    inputRef: part.inputRef,
    ...(part.outputRef ? { outputRef: part.outputRef } : {}),
    recordIds,
  };
}

/** The job contract of a batch item (what the queue lane gets for a repair or a redrive). */
export function jobOfItem(item: BatchItem, header: BatchHeader, lane: LaneConfig): Job {
  return {
    contractVersion: JOB_CONTRACT_VERSION,
    jobId: item.jobId,
    idempotencyKey: item.idempotencyKey,
    region: lane.name,
    input: {
      bucket: lane.resources.bucketName,
      key: item.documentKey,
      sourceId: item.sourceId,
      contentSha256: item.contentSha256,
      bytes: item.bytes,
      estimatedTokens: item.estimatedTokens,
    },
    schemaVersion: header.schemaVersion,
    promptVersion: header.promptVersion,
    attempt: 0,
    deferrals: 0,
    eligibleAt: header.createdAt,
    createdAt: header.createdAt,
  };
}

/**
 * One reconcile pass over `batchId`: every open provider job polled, every ended one read; for a batch
 * being cancelled, every job still running asked to stop (see the module's description).
 *
 * @throws {@link BatchNotFoundError} when the lane's manifest has no such batch.
 */
export async function reconcileBatch(batchId: string, deps: ReconcileDeps): Promise<ReconcileReport> {
  const report: ReconcileReport = { batchId, jobsEnded: 0, jobsOpen: 0, moved: {}, unmatchedLines: 0, cancelRequested: 0, state: 'submitting' };
  const header = await deps.manifest.header(batchId);
  if (!header) throw new BatchNotFoundError(batchId, deps.manifest.tableName);
  const cancelling = header.state === 'cancelling';
  for (const part of header.providerJobs) {
    if (ENDED.has(part.state as ProviderJobState)) {
      report.jobsEnded += 1;
      continue;
    }
    if (cancelling && part.state === 'pending_submit') {
      // A cancel cut short before this part: it is never submitted.
      addMoves(report, await cancelPendingPart(header, part, deps));
      report.jobsEnded += 1;
      continue;
    }
    if (!OPEN_PARTS.has(part.state)) {
      report.jobsOpen += 1;
      continue;
    }
    const handle = handleOf(header, part, deps.lane.provider.model);
    if (!handle) continue;
    const status = await deps.provider.status(handle);
    if (!ENDED.has(status.state)) {
      if (status.state !== part.state)
        await deps.manifest.setProviderJob(batchId, { ...part, state: status.state === 'submitted' ? 'submitted' : 'in_progress' });
      // Still running while the batch is being cancelled: asked to stop (again); read once the provider reports it ended.
      if (cancelling && (await askToStop(handle, part, deps))) report.cancelRequested += 1;
      report.jobsOpen += 1;
      continue;
    }
    if (status.state === 'failed' && status.error instanceof BatchSubmitThrottledError) {
      if (cancelling) {
        // Refused before it ran while the batch is being cancelled: it is not submitted again.
        addMoves(report, await cancelPendingPart(header, part, deps));
        report.jobsEnded += 1;
        continue;
      }
      // Refused before it ran (an enqueued-token limit): nothing was answered; the part is submitted again at
      // the next pass (the reconciler's schedule paces it) or after the wait the provider stated.
      const waitMs = status.error.retryAfterMs ?? 0;
      await deps.manifest.setProviderJob(batchId, { ...part, state: 'pending_submit', nextSubmitAt: new Date(deps.now().getTime() + waitMs).toISOString() });
      report.jobsOpen += 1;
      continue;
    }
    const ended = { ...part, ...(status.outputRef ? { outputRef: status.outputRef } : {}), ...(status.errorRef ? { errorRef: status.errorRef } : {}) };
    await readPart(header, { ...handle, ...(ended.outputRef ? { outputRef: ended.outputRef } : {}) }, status.state, deps, report);
    await deps.manifest.setProviderJob(batchId, { ...ended, state: status.state, endedAt: deps.now().toISOString() });
    report.jobsEnded += 1;
  }
  report.state = (await finishIfEnded(batchId, deps.manifest)) ?? report.state;
  return report;
}

/**
 * Asks the provider to stop a running job of a batch being cancelled. A refusal or a failure is logged
 * (its error's name only), not thrown: the job is polled again and asked again at the next pass.
 *
 * @returns whether the provider took the request.
 */
async function askToStop(handle: ProviderJobHandle, part: ProviderJobRef, deps: ReconcileDeps): Promise<boolean> {
  try {
    await deps.provider.cancel(handle);
    return true;
  } catch (error) {
    deps.logger.warn('batch job cancel failed', { batchId: handle.batchId, partId: part.partId, error: errorName(error) ?? 'Error' });
    return false;
  }
}

function addMoves(report: ReconcileReport, moved: Partial<Record<BatchItem['state'], number>>): void {
  for (const [state, n] of Object.entries(moved) as [BatchItem['state'], number][]) report.moved[state] = (report.moved[state] ?? 0) + n;
}

/** Reason of the items of a part cancelled before it was submitted. */
const CANCELLED_BEFORE_SUBMIT = 'cancelled_before_submit';

/**
 * Cancels a part that was never run (`pending_submit`, or refused by a submission throttle): the part
 * becomes `cancelled` and its items not yet answered (`prepared`, `submitted`) become `unresolved` with
 * reason {@link CANCELLED_BEFORE_SUBMIT}. Items move only along the manifest's transitions, so a
 * second call moves nothing.
 *
 * @returns the items moved, by the state they moved to.
 * @throws {@link StoreUnavailableError}
 */
export async function cancelPendingPart(
  header: BatchHeader,
  part: ProviderJobRef,
  deps: { manifest: Pick<BatchManifest, 'items' | 'settleItem' | 'setProviderJob'>; now: () => Date },
): Promise<Partial<Record<BatchItem['state'], number>>> {
  const moved: Partial<Record<BatchItem['state'], number>> = {};
  const items = (await deps.manifest.items(header.batchId)).filter(
    (i) => i.itemId >= part.items.first && i.itemId <= part.items.last && (i.state === 'prepared' || i.state === 'submitted'),
  );
  for (const item of items) {
    const settled = await deps.manifest.settleItem(header.batchId, item.itemId, {
      from: ['prepared', 'submitted'],
      to: 'unresolved',
      reason: CANCELLED_BEFORE_SUBMIT,
    });
    if (settled.moved) moved.unresolved = (moved.unresolved ?? 0) + 1;
  }
  const { nextSubmitAt: _wait, ...rest } = part;
  await deps.manifest.setProviderJob(header.batchId, { ...rest, state: 'cancelled', endedAt: deps.now().toISOString() });
  return moved;
}

/** Reads an ended job's result lines into the manifest, the results table and the queue. */
async function readPart(header: BatchHeader, handle: ProviderJobHandle, ended: ProviderJobState, deps: ReconcileDeps, report: ReconcileReport): Promise<void> {
  // One Query for the batch's items instead of one read per result line.
  const items = new Map((await deps.manifest.items(header.batchId)).map((i) => [i.itemId, i]));
  for await (const line of deps.provider.readResults(handle)) {
    if (line.recordId === null) {
      report.unmatchedLines += 1;
      deps.logger.warn('batch result line matches no record', { batchId: header.batchId, code: line.code, line: line.line, source: line.source });
      continue;
    }
    const item = items.get(line.recordId);
    if (!item || !['submitted', 'unresolved'].includes(item.state)) continue;
    const to = await settleLine(header, item, line, ended, deps);
    const from = (['submitted', 'unresolved'] as const).filter((state) => canMoveItem(state, to.state));
    if (!from.includes(item.state as (typeof from)[number])) continue;
    const moved = await deps.manifest.settleItem(header.batchId, item.itemId, {
      from,
      to: to.state,
      ...(to.reason ? { reason: to.reason } : {}),
    });
    if (moved.moved) report.moved[to.state] = (report.moved[to.state] ?? 0) + 1;
  }
}

/** What one result line makes of its item: committed, duplicate, redriven for its repair, or unresolved. */
async function settleLine(
  header: BatchHeader,
  item: BatchItem,
  line: Exclude<ProviderResultLine, { recordId: null }>,
  ended: ProviderJobState,
  deps: ReconcileDeps,
): Promise<{ state: BatchItem['state']; reason?: string }> {
  if (!line.ok) return { state: 'unresolved', reason: unresolvedReason(line.code, ended) };
  const job = jobOfItem(item, header, deps.lane);
  const validation = validateOutput(line.content, getExtractionSchema(header.schemaVersion));
  if (!validation.ok) {
    // The repair is the queue lane's: the same job contract, the same idempotency key.
    await deps.ledger
      .record({
        jobId: job.jobId,
        idempotencyKey: job.idempotencyKey,
        region: job.region,
        kind: 'validation_failed',
        reason: validation.parseStatus,
        parseStatus: validation.parseStatus,
        failingFields: validation.failingFields,
        failingRules: validation.failingRules,
        attempt: 0,
        deferrals: 0,
        details: `batch ${header.batchId} item ${item.itemId}: repair goes to the queue lane`,
      })
      .catch((error: unknown) => deps.logger.warn('ledger write failed', { jobId: job.jobId, error: errorName(error) }));
    await resendDeferred({ sqs: deps.sqs, queueUrl: deps.queueUrl, job, delaySeconds: 0 });
    return { state: 'redriven', reason: `repair: ${validation.parseStatus}` };
  }
  const written = await deps.results.commitOnce(
    resultRecordFor(job, { result: validation.value, usage: line.usage, model: deps.lane.provider.model, modelCalls: 1 }, deps.now()),
  );
  return written.status === 'committed' ? { state: 'committed' } : { state: 'duplicate', reason: `committed by ${written.existing.jobId}` };
}

/**
 * Why an item of a job that ended `ended` is unresolved, from its result line's code: in an expired or
 * cancelled job a record the provider never ran (its `batch_expired` / `batch_cancelled` line, or no
 * line at all) is `expired` / `cancelled`; any other code (a provider error, a refusal) stays as it is.
 */
function unresolvedReason(code: string, ended: ProviderJobState): string {
  if (ended === 'expired' && (code === 'batch_expired' || code === 'no_result')) return 'expired';
  if (ended === 'cancelled' && (code === 'batch_cancelled' || code === 'no_result')) return 'cancelled';
  return code;
}

/**
 * Ends the batch when its recorded parts carry all of its items (their counts add up to the header's
 * `itemCount`) and none of them is open or waiting to be submitted: `done`, or `cancelled` for a batch
 * being cancelled. A batch whose parts are still being recorded (a submission under way, or cut short)
 * is left as it is. Returns its state (`undefined` when there is no such batch).
 *
 * @throws {@link StoreUnavailableError}
 */
export async function finishIfEnded(batchId: string, manifest: Pick<BatchManifest, 'header' | 'updateHeader'>): Promise<BatchHeader['state'] | undefined> {
  const header = await manifest.header(batchId);
  if (!header) return undefined;
  const open = header.providerJobs.some((p) => !ENDED.has(p.state as ProviderJobState));
  const recorded = header.providerJobs.reduce((n, p) => n + p.items.count, 0);
  if (open || recorded < header.itemCount || header.state === 'done' || header.state === 'cancelled') return header.state;
  const done = header.state === 'cancelling' ? 'cancelled' : 'done';
  const written = await manifest.updateHeader(batchId, header.version, { state: done });
  return written.ok ? written.header.state : (written.current?.state ?? header.state);
}
