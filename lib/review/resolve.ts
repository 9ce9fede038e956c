/**
 * `resolveReview`: a reviewer commits a corrected object for a job in `needs_review`. The object passes
 * exactly what the pipeline's answers pass (`validateOutput` with the job's schema: the zod schema, then
 * the domain rules), and is committed through the pipeline's own conditional write (`commitOnce`, keyed by
 * the job's idempotency key): two resolutions of one job at once commit once, the other is refused
 * `already_committed`. Only the winner appends a `committed` ledger entry naming the reviewer. Nothing is
 * written for a job not in review or an object that fails validation.
 */
import { getExtractionSchema, UnknownSchemaVersionError } from '../contract/schemas/registry.js';
import { validateOutput } from '../extraction/validate.js';
import { StoreRecordInvalidError } from '../store/errors.js';
import type { LedgerEntry } from '../store/ledger.js';
import type { ResultRecord } from '../store/results.js';
import { ReviewError, ReviewValidationError } from './errors.js';
import { readJob, reviewEntryOf, storeError, type ReviewedJob } from './job.js';
import type { ReviewLane } from './lane.js';
import type { Reviewer } from './reviewer.js';

/** The `model` of a result a reviewer committed (no model produced it). */
export const REVIEW_MODEL = 'human-review';
/** The reason of the `committed` ledger entry a resolution appends. */
export const REVIEW_RESOLVED_REASON = 'review_resolved';

/** What to resolve. */
export interface ResolveReviewRequest {
  jobId: string;
  /** The corrected object (a parsed JSON value). */
  corrected: unknown;
  reviewer: Reviewer;
}

/** A resolved review. */
export interface ReviewResolution {
  lane: string;
  jobId: string;
  idempotencyKey: string;
  schemaVersion: string;
  committedAt: string;
  reviewer: Reviewer;
  /** The `committed` ledger entry's id. */
  ledgerEntryId: string;
}

/** Why a job that is not in review cannot be resolved. @returns the error to throw */
function notInReview(lane: ReviewLane, jobId: string, job: ReviewedJob): ReviewError {
  const { view } = job;
  if (view.state === 'unknown') return new ReviewError('job_not_found', `lane ${lane.lane.name} has no job ${jobId}`, { state: 'unknown' });
  if (view.state === 'committed') {
    const by = view.duplicateOf ? ` (by job ${view.duplicateOf})` : view.model === REVIEW_MODEL ? ' (by a review)' : '';
    return new ReviewError('already_committed', `job ${jobId} is already resolved: its result was committed at ${view.committedAt}${by}`, {
      state: 'committed',
    });
  }
  return new ReviewError('not_in_review', `job ${jobId} is not in needs_review: it is ${view.state}`, { state: view.state });
}

/** The corrected object as JSON text for `validateOutput` (a value JSON cannot hold reads as not JSON). */
function asJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** The result record of a review: the job's versions and counters from its review entry, no model, no tokens. */
function reviewRecord(lane: ReviewLane, entry: LedgerEntry, schemaVersion: string, result: Record<string, unknown>, job: ReviewedJob): ResultRecord {
  return {
    idempotencyKey: entry.idempotencyKey ?? '',
    jobId: entry.jobId,
    region: lane.lane.name,
    schemaVersion,
    promptVersion: entry.promptVersion ?? '',
    result,
    usage: { inputTokens: 0, outputTokens: 0 },
    model: REVIEW_MODEL,
    attempt: entry.attempt,
    deferrals: entry.deferrals,
    modelCalls: 0,
    committedAt: lane.now().toISOString(),
    // The job's own createdAt is not in the ledger: the first time the lane recorded it stands in.
    jobCreatedAt: job.entries[0]?.at ?? entry.at,
  };
}

/**
 * Resolves the review of `jobId` in the lane with the corrected object (see the module's description).
 *
 * @throws {@link ReviewError} `job_not_found`, `not_in_review` (with the job's state), `already_committed`,
 *   `wrong_lane`, `unknown_schema`, `result_unstorable`, `store_unavailable`, or `ledger_not_recorded` (the
 *   result IS committed; the entry naming the reviewer is missing)
 * @throws {@link ReviewValidationError} (`invalid_object`) with the field paths and messages; nothing is written
 */
export async function resolveReview(lane: ReviewLane, request: ResolveReviewRequest): Promise<ReviewResolution> {
  const { jobId, reviewer } = request;
  const job = await readJob(lane, jobId);
  const entry = reviewEntryOf(job);
  if (!entry || entry.idempotencyKey === undefined) throw notInReview(lane, jobId, job);
  if (entry.region !== lane.lane.name) {
    throw new ReviewError('wrong_lane', `job ${jobId} went to review in lane ${entry.region}, not ${lane.lane.name}: resolve it there`);
  }
  const schemaVersion = entry.schemaVersion ?? '';
  let schema: ReturnType<typeof getExtractionSchema>;
  try {
    schema = getExtractionSchema(schemaVersion);
  } catch (error) {
    if (!(error instanceof UnknownSchemaVersionError)) throw error;
    throw new ReviewError('unknown_schema', `job ${jobId}: ${error.message}`, { cause: error });
  }
  const validation = validateOutput(asJson(request.corrected), schema);
  if (!validation.ok) {
    throw new ReviewValidationError(jobId, schemaVersion, validation.parseStatus, validation.problems, validation.failingFields, validation.failingRules);
  }

  const record = reviewRecord(lane, entry, schemaVersion, validation.value, job);
  let written: Awaited<ReturnType<typeof lane.results.commitOnce>>;
  try {
    written = await lane.results.commitOnce(record);
  } catch (error) {
    if (error instanceof StoreRecordInvalidError) {
      throw new ReviewError('result_unstorable', `the corrected object of job ${jobId} cannot be stored: ${error.message}; nothing was written`, {
        cause: error,
      });
    }
    throw storeError(error, `the results of lane ${lane.lane.name}`);
  }
  if (written.status === 'duplicate') {
    const by = written.existing.jobId !== jobId ? ` (by job ${written.existing.jobId})` : written.existing.model === REVIEW_MODEL ? ' (by another review)' : '';
    throw new ReviewError('already_committed', `job ${jobId} is already resolved: its result was committed at ${written.existing.committedAt}${by}`, {
      state: 'committed',
    });
  }

  let ledgered: LedgerEntry;
  try {
    ledgered = await lane.ledger.record({
      jobId,
      idempotencyKey: entry.idempotencyKey,
      ...(entry.tenant !== undefined ? { tenant: entry.tenant } : {}),
      region: lane.lane.name,
      kind: 'committed',
      reason: REVIEW_RESOLVED_REASON,
      schemaVersion,
      ...(entry.promptVersion !== undefined ? { promptVersion: entry.promptVersion } : {}),
      attempt: entry.attempt,
      deferrals: entry.deferrals,
      details: `reviewer (${reviewer.source}): ${reviewer.name}`,
    });
  } catch (error) {
    throw new ReviewError(
      'ledger_not_recorded',
      `job ${jobId}: the corrected result IS committed (at ${record.committedAt}), but the ledger entry naming reviewer ${reviewer.name} could not be written: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  // Out of the open-reviews index. Should this write fail, `review list` still leaves the job out (it
  // reads each job's state); the entry only costs the list a read until the ledger's retention ends.
  await lane.ledger.closeReview(jobId, entry.entryId).catch(() => undefined);
  return {
    lane: lane.lane.name,
    jobId,
    idempotencyKey: entry.idempotencyKey,
    schemaVersion,
    committedAt: record.committedAt,
    reviewer,
    ledgerEntryId: ledgered.entryId,
  };
}
