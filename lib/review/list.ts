/**
 * `listReviews`: the lane's jobs in `needs_review`, from its ledger's open-reviews index (`needsReview`:
 * a `needs_review` entry is in it until its review is resolved), oldest first, in pages of at most `limit`
 * jobs, with a cursor to go on. Each job found is then read as `jobStatus` reads it, so a job since
 * committed (a redrive) or back at work is left out. What it shows: ids, tenant, versions, reason, detail, times, the failing
 * fields and rules, the idempotency key — never document text.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type LedgerEntry, openReviewEntries } from '../store/ledger.js';
import { ReviewError } from './errors.js';
import { lastValidationFailure, readJob, reviewEntryOf, storeError } from './job.js';
import type { ReviewLane } from './lane.js';

/** One job waiting for a reviewer. */
export interface ReviewItem {
  jobId: string;
  /** Who the job belongs to, when it has a tenant. */
  tenant?: string;
  schemaVersion: string | undefined;
  promptVersion: string | undefined;
  /** Why it is in review (`validation_failed`, `result_unstorable`, ...). */
  reason: string;
  /** The review entry's short diagnostic (never document text). */
  detail: string | undefined;
  /** When the job went to review (ISO 8601). */
  at: string;
  /**
   * The source's hash: the job's idempotency key, SHA-256 over its tenant, source id, content hash and
   * versions (the result is committed under it).
   */
  idempotencyKey: string;
  /** The job's real failures and deferrals when it went to review. */
  attempt: number;
  deferrals: number;
  /** How the last answer failed, when a failed validation sent the job to review. */
  parseStatus?: string;
  /** The fields and rules the last answer failed (empty when the review has another cause). */
  failingFields: string[];
  failingRules: string[];
}

/** Options of {@link listReviews}. */
export interface ListReviewsOptions {
  /** The most jobs to look at (default {@link DEFAULT_REVIEW_LIMIT}, at most {@link MAX_REVIEW_LIMIT}). */
  limit?: number;
  /** Where an earlier list stopped (its `nextCursor`). */
  cursor?: string | undefined;
}

/** What {@link listReviews} found. */
export interface ReviewList {
  lane: string;
  region: string;
  /** The jobs in `needs_review`, oldest review first. */
  reviews: ReviewItem[];
  /** Jobs with an open review entry that were looked at (some may since be committed or at work). */
  candidates: number;
  /** Set when the index was not read to its end: pass it as `cursor` to go on. */
  nextCursor?: string;
}

/** Jobs a list looks at by default. */
export const DEFAULT_REVIEW_LIMIT = 100;
/** The most jobs one list looks at. */
export const MAX_REVIEW_LIMIT = 1000;
/** Jobs read at once. */
const READ_CONCURRENCY = 8;

/** An index key as a cursor: base64url of `{"jobId","entryId","reviewLane"}`. */
function cursorOf(key: Record<string, AttributeValue>): string {
  return Buffer.from(JSON.stringify({ jobId: key.jobId?.S, entryId: key.entryId?.S, reviewLane: key.reviewLane?.S }), 'utf8').toString('base64url');
}

/** The ledger key of a cursor. @throws {@link ReviewError} `bad_cursor` */
function keyOf(cursor: string): Record<string, AttributeValue> {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { jobId?: unknown; entryId?: unknown; reviewLane?: unknown };
    const { jobId, entryId, reviewLane } = parsed;
    if ([jobId, entryId, reviewLane].every((v) => typeof v === 'string' && v !== '')) {
      return { jobId: { S: jobId as string }, entryId: { S: entryId as string }, reviewLane: { S: reviewLane as string } };
    }
  } catch {
    // reported below
  }
  throw new ReviewError('bad_cursor', 'the cursor is not one a review list returned');
}

/** Whole and in range. @throws {@link ReviewError} `bad_limit` */
function checkedLimit(limit: number | undefined): number {
  const value = limit ?? DEFAULT_REVIEW_LIMIT;
  if (!Number.isInteger(value) || value < 1 || value > MAX_REVIEW_LIMIT) {
    throw new ReviewError('bad_limit', `the limit must be an integer in 1..${MAX_REVIEW_LIMIT}, got ${value}`);
  }
  return value;
}

/** Index items one page reads. */
const PAGE_SIZE = 200;

/**
 * The job ids with an open review entry, oldest first, at most `limit`, from `startKey` on; and the key
 * to go on from when the index was not read to its end (right after the last entry of the last job taken).
 */
async function candidatesFrom(
  lane: ReviewLane,
  startKey: Record<string, AttributeValue> | undefined,
  limit: number,
): Promise<{ jobIds: string[]; nextKey: Record<string, AttributeValue> | undefined }> {
  const jobIds: string[] = [];
  const seen = new Set<string>();
  const keyOfEntry = (e: LedgerEntry) => ({ jobId: { S: e.jobId }, entryId: { S: e.entryId }, reviewLane: { S: lane.lane.name } });
  let key = startKey;
  do {
    const page = await openReviewEntries(lane.dynamodb, lane.lane.resources.ledgerTable, lane.lane.name, { startKey: key, limit: PAGE_SIZE });
    let last: LedgerEntry | undefined;
    for (const entry of page.entries) {
      if (!seen.has(entry.jobId)) {
        if (jobIds.length === limit) return { jobIds, nextKey: last ? keyOfEntry(last) : key };
        seen.add(entry.jobId);
        jobIds.push(entry.jobId);
      }
      last = entry;
    }
    key = page.nextKey;
  } while (key && jobIds.length < limit);
  return { jobIds, nextKey: key };
}

/** The review item of a job in review, or `undefined` when it is no longer in review. */
async function itemOf(lane: ReviewLane, jobId: string): Promise<ReviewItem | undefined> {
  const job = await readJob(lane, jobId);
  const entry = reviewEntryOf(job);
  if (!entry || job.view.state !== 'needs_review') return undefined;
  const failure = lastValidationFailure(job.entries);
  return {
    jobId,
    ...(entry.tenant !== undefined ? { tenant: entry.tenant } : {}),
    schemaVersion: entry.schemaVersion,
    promptVersion: entry.promptVersion,
    reason: entry.reason,
    detail: entry.details,
    at: entry.at,
    idempotencyKey: job.view.idempotencyKey,
    attempt: entry.attempt,
    deferrals: entry.deferrals,
    ...(failure?.parseStatus !== undefined ? { parseStatus: failure.parseStatus } : {}),
    failingFields: failure?.failingFields ?? [],
    failingRules: failure?.failingRules ?? [],
  };
}

/**
 * The lane's jobs in `needs_review` (see the module's description): at most `limit` jobs looked at;
 * `nextCursor` goes on from there.
 *
 * @throws {@link ReviewError} `bad_limit`, `bad_cursor`, `store_unavailable`
 */
export async function listReviews(lane: ReviewLane, options: ListReviewsOptions = {}): Promise<ReviewList> {
  const limit = checkedLimit(options.limit);
  const startKey = options.cursor !== undefined ? keyOf(options.cursor) : undefined;
  let found: Awaited<ReturnType<typeof candidatesFrom>>;
  try {
    found = await candidatesFrom(lane, startKey, limit);
  } catch (error) {
    throw storeError(error, `the ledger of lane ${lane.lane.name}`);
  }
  const reviews: ReviewItem[] = [];
  for (let i = 0; i < found.jobIds.length; i += READ_CONCURRENCY) {
    const items = await Promise.all(found.jobIds.slice(i, i + READ_CONCURRENCY).map((jobId) => itemOf(lane, jobId)));
    for (const item of items) if (item) reviews.push(item);
  }
  reviews.sort((a, b) => a.at.localeCompare(b.at) || a.jobId.localeCompare(b.jobId));
  return {
    lane: lane.lane.name,
    region: lane.lane.region,
    reviews,
    candidates: found.jobIds.length,
    ...(found.nextKey ? { nextCursor: cursorOf(found.nextKey) } : {}),
  };
}
