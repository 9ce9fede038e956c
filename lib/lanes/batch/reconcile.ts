/**
 * Reconciling a batch: poll each open provider job; when it has ended (finished, expired, cancelled,
 * failed), read its result lines (`read-part.ts`) and send each through the same validation and
 * commit-once as the other lanes. A valid output is committed (or found committed: a duplicate); one
 * that cannot be stored needs review (`result_unstorable`); an invalid one goes to the queue lane with
 * the same job contract, where the one repair happens (`redriven`, sent once: `handover.ts`); an error
 * line, an answer that is not text, or no line at all, leaves the item **unresolved** with its reason —
 * never an empty object or a success. Items move only along the manifest's transitions, so
 * reconciling twice, or four times at once, changes nothing more.
 *
 * One item that cannot be settled (a store or the queue unavailable) does not stop the pass: it is
 * reported (`failed`) with its error's name, the other lines are read, and its part is read again by the
 * next pass. Items left `sending` (a repair or redrive whose send failed, a claim whose holder died) are
 * sent by the pass, each claimed again first. A batch ends only when no item is left to send.
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
import type { BatchManifest } from '../../store/manifest.js';
import { itemIdFor, itemIndexOf, recordIdOf, type BatchHeader, type BatchItem, type ProviderJobRef } from '../../store/manifest-model.js';
import { errorName } from '../../platform/errors.js';
import { sendPending } from './handover.js';
import { BatchSubmitThrottledError } from './providers/errors.js';
import { readPart, type ItemFailure, type ReadPartDeps } from './read-part.js';
import { BatchNotFoundError } from './status.js';
import type { ProviderJobHandle, ProviderJobState } from './providers/provider.js';

/** What reconciling reads and writes. */
export type ReconcileDeps = ReadPartDeps;

/** What one reconcile pass of a batch did. */
export interface ReconcileReport {
  batchId: string;
  /** Provider jobs that ended before or during this pass. */
  jobsEnded: number;
  jobsOpen: number;
  /** Items moved by this pass, by the state they moved to. */
  moved: Partial<Record<BatchItem['state'], number>>;
  /** Result lines matching no record of the batch sent (reported, never matched). */
  unmatchedLines: number;
  /** Open provider jobs of a batch being cancelled that this pass asked the provider to stop. */
  cancelRequested: number;
  /** Items this pass could not settle or send, with their error's name: a later pass tries them again. */
  failed: ItemFailure[];
  /** The batch's state after the pass. */
  state: BatchHeader['state'];
}

/** The provider job states a part no longer runs in. */
export const ENDED: ReadonlySet<ProviderJobState> = new Set(['finished', 'expired', 'cancelled', 'failed']);
const OPEN_PARTS: ReadonlySet<ProviderJobRef['state']> = new Set(['submitted', 'in_progress']);

/**
 * The provider's handle of a submitted part, rebuilt from the manifest: the record ids from its item
 * range and the batch's record prefix (none in a manifest written before prefixes).
 */
export function handleOf(header: BatchHeader, part: ProviderJobRef, model: string): ProviderJobHandle | undefined {
  const first = itemIndexOf(part.items.first);
  const last = itemIndexOf(part.items.last);
  if (!part.providerJobId || first === undefined || last === undefined) return undefined;
  const recordIds = Array.from({ length: last - first + 1 }, (_, i) => recordIdOf(header, itemIdFor(first + i)));
  return {
    provider: part.kind,
    batchId: header.batchId,
    index: Number(part.partId.replace(/\D/g, '')) || 0,
    model,
    jobId: part.providerJobId,
    inputRef: part.inputRef,
    ...(part.outputRef ? { outputRef: part.outputRef } : {}),
    recordIds,
    ...(header.recordPrefix ? { recordPrefix: header.recordPrefix } : {}),
  };
}

/**
 * One reconcile pass over `batchId`: every open provider job polled, every ended one read; for a batch
 * being cancelled, every job still running asked to stop; the items left to send sent (see the module's
 * description).
 *
 * @throws {@link BatchNotFoundError} when the lane's manifest has no such batch.
 */
export async function reconcileBatch(batchId: string, deps: ReconcileDeps): Promise<ReconcileReport> {
  const report: ReconcileReport = {
    batchId,
    jobsEnded: 0,
    jobsOpen: 0,
    moved: {},
    unmatchedLines: 0,
    cancelRequested: 0,
    failed: [],
    state: 'submitting',
  };
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
    const reading = await readPart(header, part, { ...handle, ...(ended.outputRef ? { outputRef: ended.outputRef } : {}) }, status.state, deps);
    addMoves(report, reading.moved);
    report.unmatchedLines += reading.unmatchedLines;
    report.failed.push(...reading.failed);
    if (!reading.complete) {
      // An item could not be settled: the part stays as it is, and the next pass reads it again.
      report.jobsOpen += 1;
      continue;
    }
    await deps.manifest.setProviderJob(batchId, { ...ended, state: status.state, endedAt: deps.now().toISOString() });
    report.jobsEnded += 1;
  }
  if (report.jobsEnded > 0) await sendLeftovers(header, deps, report);
  report.state = (await finishIfEnded(batchId, deps.manifest)) ?? report.state;
  return report;
}

/**
 * Sends the batch's items left `sending` with a released or lapsed claim (but those this pass failed to
 * send); each one sent counts as moved to `redriven`. A failure is reported, not thrown.
 */
async function sendLeftovers(header: BatchHeader, deps: ReconcileDeps, report: ReconcileReport): Promise<void> {
  if ((await deps.manifest.counts(header.batchId)).sending === 0) return;
  // An item whose send failed in this pass waits for the next one.
  const failedNow = new Set(report.failed.map((f) => f.itemId));
  try {
    const items = (await deps.manifest.items(header.batchId)).filter((i) => !failedNow.has(i.itemId));
    const sent = await sendPending(header, items, deps, deps.now());
    if (sent.sent.length > 0) addMoves(report, { redriven: sent.sent.length });
    report.failed.push(...sent.failed);
  } catch (error) {
    report.failed.push({ itemId: '*', errorName: errorName(error) ?? 'Error' });
    deps.logger.error('batch items left to send could not be sent: the next pass tries them again', {
      batchId: header.batchId,
      error: errorName(error) ?? 'Error',
    });
  }
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

/**
 * Ends the batch when its recorded parts carry all of its items (their counts add up to the header's
 * `itemCount`), none of them is open or waiting to be submitted, and no item is left to send to the
 * queue lane (`sending`): `done`, or `cancelled` for a batch being cancelled. A batch whose parts are
 * still being recorded (a submission under way, or cut short) is left as it is. Returns its state
 * (`undefined` when there is no such batch).
 *
 * @throws {@link StoreUnavailableError}
 */
export async function finishIfEnded(
  batchId: string,
  manifest: Pick<BatchManifest, 'header' | 'updateHeader' | 'counts'>,
): Promise<BatchHeader['state'] | undefined> {
  const header = await manifest.header(batchId);
  if (!header) return undefined;
  const open = header.providerJobs.some((p) => !ENDED.has(p.state as ProviderJobState));
  const recorded = header.providerJobs.reduce((n, p) => n + p.items.count, 0);
  if (open || recorded < header.itemCount || header.state === 'done' || header.state === 'cancelled') return header.state;
  if ((await manifest.counts(batchId)).sending > 0) return header.state;
  const done = header.state === 'cancelling' ? 'cancelled' : 'done';
  const written = await manifest.updateHeader(batchId, header.version, { state: done });
  return written.ok ? written.header.state : (written.current?.state ?? header.state);
}
