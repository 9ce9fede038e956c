/**
 * Cancelling a batch: the header moves to `cancelling` first (so no pass submits a waiting part again),
 * then every provider job still open is asked to stop (`provider.cancel`), and every part still waiting
 * to be submitted (`pending_submit`) is cancelled at once, its items unresolved with reason
 * `cancelled_before_submit`. What the stopped jobs answered is not lost: reconciling reads a cancelled
 * job's partial results when the provider reports it ended (the answered items committed, the rest
 * unresolved with reason `cancelled`) and moves the header to `cancelled` once every part has ended.
 *
 * Cancelling again is safe: a job already stopping or ended is asked again or left, a cancelled part
 * moves nothing, and a batch already `done` or `cancelled` is left as it is. Reports carry ids, states
 * and error names only, never document text.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { LaneConfig } from '../../config/lanes.js';
import { errorName, RatelaneError } from '../../platform/errors.js';
import type { BatchManifest } from '../../store/manifest.js';
import type { BatchHeader, BatchState } from '../../store/manifest-model.js';
import type { BatchProvider } from './providers/provider.js';
import { cancelPendingPart, finishIfEnded, handleOf } from './reconcile.js';
import { BatchNotFoundError } from './status.js';

/** What cancelling reads and writes. */
export interface CancelBatchDeps {
  lane: Pick<LaneConfig, 'name' | 'provider'>;
  manifest: Pick<BatchManifest, 'header' | 'items' | 'counts' | 'updateHeader' | 'setProviderJob' | 'settleItem'>;
  provider: Pick<BatchProvider, 'cancel'>;
  now: () => Date;
  logger?: Pick<Logger, 'info' | 'warn'>;
}

/** What {@link cancelBatch} did. */
export interface CancelBatchReport {
  batchId: string;
  /** The header's state after the call: `cancelling` while jobs stop, `cancelled` when none was open, or the final state it already had. */
  state: BatchState;
  /** False when the batch was already `done` or `cancelled`: nothing was asked or written. */
  changed: boolean;
  /** Open provider jobs the provider was asked to stop. */
  cancelRequested: { partId: string; providerJobId: string }[];
  /** Parts that were waiting to be submitted, cancelled with their items (unresolved, `cancelled_before_submit`). */
  cancelledBeforeSubmit: { partId: string; items: number }[];
  /** Cancel requests the provider refused or that failed (the job may still run; cancelling again retries). */
  failed: { partId: string; errorName: string }[];
}

const FINAL: ReadonlySet<BatchState> = new Set(['done', 'cancelled']);
const OPEN = new Set(['submitted', 'in_progress']);
/** Header writes retried when another writer (a reconcile pass) moved its version first. */
const HEADER_ATTEMPTS = 5;

/**
 * Cancels `batchId` (see the module's description).
 *
 * @throws {@link BatchNotFoundError} when the lane's manifest has no such batch.
 * @throws {@link StoreUnavailableError} when the manifest cannot be read or written.
 */
export async function cancelBatch(batchId: string, deps: CancelBatchDeps): Promise<CancelBatchReport> {
  const report: CancelBatchReport = { batchId, state: 'cancelling', changed: false, cancelRequested: [], cancelledBeforeSubmit: [], failed: [] };
  const header = await markCancelling(batchId, deps);
  if (FINAL.has(header.state)) return { ...report, state: header.state };
  report.changed = true;
  for (const part of header.providerJobs) {
    if (part.state === 'pending_submit') {
      const moved = await cancelPendingPart(header, part, deps);
      report.cancelledBeforeSubmit.push({ partId: part.partId, items: moved.unresolved ?? 0 });
      continue;
    }
    if (!OPEN.has(part.state)) continue;
    const handle = handleOf(header, part, deps.lane.provider.model);
    if (!handle) continue;
    try {
      await deps.provider.cancel(handle);
      report.cancelRequested.push({ partId: part.partId, providerJobId: handle.jobId });
    } catch (error) {
      const name = errorName(error) ?? 'Error';
      report.failed.push({ partId: part.partId, errorName: name });
      deps.logger?.warn('batch job cancel failed', { batchId, partId: part.partId, error: name });
    }
  }
  report.state = (await finishIfEnded(batchId, deps.manifest)) ?? report.state;
  deps.logger?.info('batch cancel requested', {
    batchId,
    lane: deps.lane.name,
    state: report.state,
    cancelRequested: report.cancelRequested.length,
    cancelledBeforeSubmit: report.cancelledBeforeSubmit.length,
    failed: report.failed.length,
  });
  return report;
}

/** Moves the header to `cancelling` (conditional on its version, retried when a pass wrote first); a final header is returned as it is. */
async function markCancelling(batchId: string, deps: CancelBatchDeps): Promise<BatchHeader> {
  let header = await deps.manifest.header(batchId);
  for (let attempt = 1; ; attempt++) {
    if (!header) throw new BatchNotFoundError(batchId);
    if (FINAL.has(header.state) || header.state === 'cancelling') return header;
    const written = await deps.manifest.updateHeader(batchId, header.version, { state: 'cancelling', reason: 'cancel requested' });
    if (written.ok) return written.header;
    if (attempt >= HEADER_ATTEMPTS) throw new BatchCancelConflictError(batchId, attempt);
    header = written.current;
  }
}

/** The header kept changing under the cancel (another writer won every conditional write): try again. */
class BatchCancelConflictError extends RatelaneError {
  override name = 'BatchCancelConflictError';
  readonly kind = 'conflict' as const;
  readonly retryable = true;
  constructor(
    readonly batchId: string,
    attempts: number,
    options?: { cause?: unknown },
  ) {
    super(`batch ${batchId}: the header changed under ${attempts} cancel attempts; try again`, options);
  }
}
