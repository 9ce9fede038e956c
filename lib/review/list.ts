/**
 * `listReviews`: the lane's jobs in `needs_review`, from its ledger. The ledger has no index by kind
 * (yet): the list walks the table with a filtered `Scan` in pages, bounded by `limit` jobs and
 * `maxScannedItems` items read, and hands back a cursor to go on. Each job found with a `needs_review`
 * entry is then read as `jobStatus` reads it, so a job since committed (a redrive, a resolved review) or
 * back at work is left out. What it shows: ids, tenant, versions, reason, detail, times, the failing
 * fields and rules, the idempotency key — never document text.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type LedgerEntry, scanLedgerEntriesOfKind } from '../store/ledger.js';
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
  /** The most ledger items one list reads (default 20 000). */
  maxScannedItems?: number;
  /** Items one `Scan` page reads (default 1000). */
  pageSize?: number;
}

/** What {@link listReviews} found. */
export interface ReviewList {
  lane: string;
  region: string;
  /** The jobs in `needs_review`, oldest review first. */
  reviews: ReviewItem[];
  /** Jobs with a `needs_review` entry that were looked at (some may since be committed or at work). */
  candidates: number;
  /** Ledger items read. */
  scannedItems: number;
  /** Set when the ledger was not read to its end: pass it as `cursor` to go on. */
  nextCursor?: string;
}

/** Jobs a list looks at by default. */
export const DEFAULT_REVIEW_LIMIT = 100;
/** The most jobs one list looks at. */
export const MAX_REVIEW_LIMIT = 1000;
const DEFAULT_MAX_SCANNED = 20_000;
const DEFAULT_PAGE_SIZE = 1000;
/** Jobs read at once. */
const READ_CONCURRENCY = 8;

/** A ledger key as a cursor: base64url of `{"jobId","entryId"}`. */
function cursorOf(key: Record<string, AttributeValue>): string {
  return Buffer.from(JSON.stringify({ jobId: key.jobId?.S, entryId: key.entryId?.S }), 'utf8').toString('base64url');
}

/** The ledger key of a cursor. @throws {@link ReviewError} `bad_cursor` */
function keyOf(cursor: string): Record<string, AttributeValue> {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { jobId?: unknown; entryId?: unknown };
    if (typeof parsed.jobId === 'string' && parsed.jobId !== '' && typeof parsed.entryId === 'string' && parsed.entryId !== '') {
      return { jobId: { S: parsed.jobId }, entryId: { S: parsed.entryId } };
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

/**
 * The job ids with a `needs_review` entry, in scan order, at most `limit`, from `startKey` on; and the
 * key to go on from when the table was not read to its end. A page that holds more jobs than fit is cut
 * after the last entry of the last job that fits: the cursor resumes right there.
 */
async function candidatesFrom(
  lane: ReviewLane,
  startKey: Record<string, AttributeValue> | undefined,
  bounds: { limit: number; maxScanned: number; pageSize: number },
): Promise<{ jobIds: string[]; scanned: number; nextKey: Record<string, AttributeValue> | undefined }> {
  const jobIds: string[] = [];
  const seen = new Set<string>();
  let scanned = 0;
  let key = startKey;
  do {
    const page = await scanLedgerEntriesOfKind(lane.dynamodb, lane.lane.resources.ledgerTable, 'needs_review', {
      startKey: key,
      limit: Math.max(1, Math.min(bounds.pageSize, bounds.maxScanned - scanned)),
    });
    scanned += page.scanned;
    let last: LedgerEntry | undefined;
    for (const entry of page.entries) {
      if (!seen.has(entry.jobId)) {
        if (jobIds.length === bounds.limit) return { jobIds, scanned, nextKey: last ? { jobId: { S: last.jobId }, entryId: { S: last.entryId } } : key };
        seen.add(entry.jobId);
        jobIds.push(entry.jobId);
      }
      last = entry;
    }
    key = page.nextKey;
  } while (key && jobIds.length < bounds.limit && scanned < bounds.maxScanned);
  return { jobIds, scanned, nextKey: key };
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
 * The lane's jobs in `needs_review` (see the module's description): at most `limit` jobs looked at,
 * at most `maxScannedItems` ledger items read; `nextCursor` goes on from there.
 *
 * @throws {@link ReviewError} `bad_limit`, `bad_cursor`, `store_unavailable`
 */
export async function listReviews(lane: ReviewLane, options: ListReviewsOptions = {}): Promise<ReviewList> {
  const limit = checkedLimit(options.limit);
  const startKey = options.cursor !== undefined ? keyOf(options.cursor) : undefined;
  const bounds = { limit, maxScanned: options.maxScannedItems ?? DEFAULT_MAX_SCANNED, pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE };
  let found: Awaited<ReturnType<typeof candidatesFrom>>;
  try {
    found = await candidatesFrom(lane, startKey, bounds);
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
    scannedItems: found.scanned,
    ...(found.nextKey ? { nextCursor: cursorOf(found.nextKey) } : {}),
  };
}
