/**
 * One job as a review sees it: its state exactly as `jobStatus` decides it (the live API's view), read
 * together with the ledger entries that state was decided from, so the review entry's versions, reason
 * and the failing fields come from the same (strongly consistent) read.
 */
import { jobStatus, type JobStatusView } from '../store/job-status.js';
import type { LedgerEntry } from '../store/ledger.js';
import { StoreUnavailableError } from '../store/errors.js';
import { ReviewError } from './errors.js';
import type { ReviewLane } from './lane.js';

/** A job's state and the entries it was decided from (oldest first). */
export interface ReviewedJob {
  view: JobStatusView;
  entries: LedgerEntry[];
}

/**
 * Reads `jobId` in the lane: its claim, its ledger entries and its idempotency key's result.
 *
 * @throws {@link ReviewError} `store_unavailable` when a table cannot be read
 */
export async function readJob(lane: ReviewLane, jobId: string): Promise<ReviewedJob> {
  let entries: LedgerEntry[] = [];
  const ledger = {
    claimOf: (id: string) => lane.ledger.claimOf(id),
    entriesFor: async (id: string) => (entries = await lane.ledger.entriesFor(id)),
  };
  try {
    const view = await jobStatus(jobId, { results: lane.results, ledger });
    return { view, entries };
  } catch (error) {
    throw storeError(error, `job ${jobId}`);
  }
}

/** A store failure as a {@link ReviewError} (`store_unavailable`); anything else as it is. */
export function storeError(error: unknown, what: string): unknown {
  if (!(error instanceof StoreUnavailableError)) return error;
  return new ReviewError('store_unavailable', `cannot read or write ${what}: ${error.message}`, { cause: error });
}

/**
 * The job's review entry: its latest ledger entry when that is `needs_review` (as `jobStatus` decides
 * a job is in review), else `undefined`.
 */
export function reviewEntryOf(job: ReviewedJob): LedgerEntry | undefined {
  const latest = job.entries.at(-1);
  return job.view.state === 'needs_review' && latest?.kind === 'needs_review' ? latest : undefined;
}

/**
 * The `validation_failed` entry right before the review entry (the failed repair: which fields and
 * rules failed last), or `undefined` when the review has another cause (`result_unstorable`).
 */
export function lastValidationFailure(entries: readonly LedgerEntry[]): LedgerEntry | undefined {
  const before = entries.at(-2);
  return entries.at(-1)?.kind === 'needs_review' && before?.kind === 'validation_failed' ? before : undefined;
}
