/**
 * A batch's status, read-only: its header, how many items are in each manifest state, its provider
 * jobs, the items left unresolved (with their reason), and the batch's **outcome**: where every item
 * ended, following the items handed to the queue lane (`redriven`: an invalid output sent for its
 * repair, or an unresolved item redriven) to what the queue lane made of them, by their idempotency
 * key in the results table (committed) and their job's ledger entries (needs review, rejected).
 *
 * Every item is counted exactly once in `outcome`:
 * `committed + needsReview + rejected + unresolved + waiting = items`.
 * Nothing is written; no document text is read or returned (ids, states, reasons and counts only).
 */
import { RatelaneError } from '../../platform/errors.js';
import type { Ledger } from '../../store/ledger.js';
import type { BatchManifest } from '../../store/manifest.js';
import { ITEM_STATES, type BatchItem, type BatchState, type ItemState, type ProviderJobRef } from '../../store/manifest-model.js';
import type { ResultStore } from '../../store/results.js';

/** What {@link batchStatus} reads. */
export interface BatchStatusDeps {
  manifest: Pick<BatchManifest, 'header' | 'items'>;
  results: Pick<ResultStore, 'get'>;
  ledger: Pick<Ledger, 'entriesFor'>;
  /** The time `ageSeconds` is measured to (a `Date` or a clock); default: now. */
  now?: Date | (() => Date);
  /** Redriven items looked up at once (default 8). */
  concurrency?: number;
}

/** One provider job of the batch, as the status shows it. */
interface BatchStatusPart {
  partId: string;
  state: ProviderJobRef['state'];
  providerJobId?: string;
  /** Items the part carries. */
  items: number;
  /** For a part waiting after a submission throttle: when it may be submitted again (ISO 8601). */
  nextSubmitAt?: string;
}

/** An item left unresolved, with the machine-readable reason (`no_result`, `expired`, `cancelled`, ...). */
interface UnresolvedItem {
  itemId: string;
  sourceId: string;
  reason: string;
}

/**
 * Where the batch's items ended. `committed` counts items committed by the batch, found committed
 * (`duplicate`: commit-once suppressed it, the object exists) and redriven items whose result is
 * committed; `needsReview` / `rejected` the items settled so plus redriven items the queue lane put
 * there; `unresolved` the items in that state (a redrive candidate); `waiting` everything else (not yet
 * answered, being sent to the queue lane (`sending`), or redriven with no outcome yet — queued,
 * deferred, being worked on or dead-lettered).
 */
export interface BatchOutcome {
  committed: number;
  needsReview: number;
  rejected: number;
  unresolved: number;
  waiting: number;
}

/** What {@link batchStatus} returns. */
export interface BatchStatusReport {
  batchId: string;
  /** The region lane (`us`, `eu`). */
  lane: string;
  state: BatchState;
  createdAt: string;
  /** Whole seconds from `createdAt` to the `now` given (never negative). */
  ageSeconds: number;
  /** Items recorded in the manifest. */
  items: number;
  /** Items per manifest state (every state present). */
  counts: Record<ItemState, number>;
  /** In `partId` order. */
  providerJobs: BatchStatusPart[];
  /** Items in state `unresolved`, in item id order. */
  unresolved: UnresolvedItem[];
  outcome: BatchOutcome;
}

/** No batch with this id in the lane's manifest. */
export class BatchNotFoundError extends RatelaneError {
  override name = 'BatchNotFoundError';
  readonly kind = 'input' as const;
  readonly retryable = false;
  constructor(
    readonly batchId: string,
    readonly tableName?: string,
    options?: { cause?: unknown },
  ) {
    super(`no batch ${batchId}${tableName ? ` in table ${tableName}` : ''}`, options);
  }
}

/** What the queue lane made of a redriven item. */
type RedrivenOutcome = 'committed' | 'needs_review' | 'rejected' | 'waiting';

/**
 * What the queue lane made of one redriven item: `committed` when a result exists for its idempotency
 * key (whichever job committed it); else its job's latest ledger entry decides (`needs_review`,
 * `rejected`); else `waiting`.
 *
 * @throws {@link StoreUnavailableError} when a table cannot be read.
 */
async function redrivenOutcome(item: Pick<BatchItem, 'jobId' | 'idempotencyKey'>, deps: Pick<BatchStatusDeps, 'results' | 'ledger'>): Promise<RedrivenOutcome> {
  if (await deps.results.get(item.idempotencyKey)) return 'committed';
  const entries = await deps.ledger.entriesFor(item.jobId);
  const latest = entries.filter((e) => e.idempotencyKey === undefined || e.idempotencyKey === item.idempotencyKey).at(-1);
  if (latest?.kind === 'needs_review') return 'needs_review';
  if (latest?.kind === 'rejected') return 'rejected';
  return 'waiting';
}

/**
 * The status of `batchId`: header, counts, provider jobs, unresolved items and outcome (see the
 * module's description). Read-only.
 *
 * @throws {@link BatchNotFoundError} when the lane's manifest has no such batch.
 * @throws {@link StoreUnavailableError} when a table cannot be read.
 */
export async function batchStatus(batchId: string, deps: BatchStatusDeps): Promise<BatchStatusReport> {
  const header = await deps.manifest.header(batchId);
  if (!header) throw new BatchNotFoundError(batchId);
  const items = await deps.manifest.items(batchId);
  const now = typeof deps.now === 'function' ? deps.now() : (deps.now ?? new Date());
  const counts = Object.fromEntries(ITEM_STATES.map((s) => [s, 0])) as Record<ItemState, number>;
  const outcome: BatchOutcome = { committed: 0, needsReview: 0, rejected: 0, unresolved: 0, waiting: 0 };
  const unresolved: UnresolvedItem[] = [];
  const redriven: BatchItem[] = [];
  for (const item of items) {
    counts[item.state] = (counts[item.state] ?? 0) + 1;
    switch (item.state) {
      case 'committed':
      case 'duplicate':
        outcome.committed += 1;
        break;
      case 'needs_review':
        outcome.needsReview += 1;
        break;
      case 'rejected':
        outcome.rejected += 1;
        break;
      case 'unresolved':
        outcome.unresolved += 1;
        unresolved.push({ itemId: item.itemId, sourceId: item.sourceId, reason: item.reason ?? 'unknown' });
        break;
      case 'redriven':
        redriven.push(item);
        break;
      default:
        outcome.waiting += 1;
    }
  }
  const followed = await mapLimited(redriven, Math.max(1, deps.concurrency ?? 8), (item) => redrivenOutcome(item, deps));
  for (const state of followed) {
    if (state === 'committed') outcome.committed += 1;
    else if (state === 'needs_review') outcome.needsReview += 1;
    else if (state === 'rejected') outcome.rejected += 1;
    else outcome.waiting += 1;
  }
  const providerJobs = header.providerJobs.map(({ partId, state, providerJobId, items: range, nextSubmitAt }) => ({
    partId,
    state,
    ...(providerJobId ? { providerJobId } : {}),
    items: range.count,
    ...(nextSubmitAt ? { nextSubmitAt } : {}),
  }));
  const ageSeconds = Math.max(0, Math.floor((now.getTime() - Date.parse(header.createdAt)) / 1000));
  const { lane, state, createdAt } = header;
  return { batchId, lane, state, createdAt, ageSeconds, items: items.length, counts, providerJobs, unresolved, outcome };
}

/** `fn` over `values` with at most `limit` calls in flight; results in input order (the first rejection rejects). */
export async function mapLimited<T, R>(values: readonly T[], limit: number, fn: (value: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(values.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < values.length) {
      const i = next++;
      out[i] = await fn(values[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, values.length) }, worker));
  return out;
}
