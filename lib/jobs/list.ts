/**
 * A lane's jobs in one state (`ratelane jobs list`): `waiting` (deferred, to come back by themselves),
 * `needs_review`, `dead_lettered` or `cancelled`, optionally one tenant's, oldest first within what is read.
 *
 * Where the candidates come from: the ledger's open-reviews index for `needs_review` (a `Query`); for the
 * others a paginated, filtered `Scan` of the lane's ledger table for the entries that put a job in that
 * state (`deferred`, `dead_letter_pending`) or its cancel marker. A scan reads the whole table to find them,
 * so it is an operator's tool (DynamoDB bills every item read, matched or not): `--limit` stops it once
 * enough jobs are found, and the cursor goes on from there. Each candidate's state is then read as the live
 * API reads it, so a job that has moved on since (a deferred job since committed, a dead-lettered job
 * redriven) is left out, and each job is listed once.
 */
import { type AttributeValue, type DynamoDBClient, ScanCommand, type ScanCommandInput } from '@aws-sdk/client-dynamodb';
import { StoreUnavailableError } from '../store/errors.js';
import { jobStatus, type JobStatusStores, type JobStatusView } from '../store/job-status.js';
import { openReviewEntries } from '../store/ledger.js';
import { LEDGER_REVIEW_INDEX, LEDGER_TABLE } from '../store/tables.js';

/** The states a list is of (`waiting`: the status view's `pending`). */
export const LIST_STATES = ['waiting', 'needs_review', 'dead_lettered', 'cancelled'] as const;
/** One of {@link LIST_STATES}. */
export type ListState = (typeof LIST_STATES)[number];

/** The status view's state of each listed state. */
const VIEW_STATE: Record<ListState, JobStatusView['state']> = {
  waiting: 'pending',
  needs_review: 'needs_review',
  dead_lettered: 'dead_lettered',
  cancelled: 'cancelled',
};

/** One listed job. */
interface ListedJob {
  jobId: string;
  tenant?: string;
  /** Why it is in that state (the entry's reason; who cancelled it). */
  reason: string;
  /** Since when (ISO 8601). */
  at: string;
  /** A waiting job: when it becomes eligible again. */
  eligibleAt?: string;
}

/** What {@link listJobs} answers. */
export interface JobList {
  lane: string;
  state: ListState;
  tenant?: string;
  jobs: ListedJob[];
  /** Where the next page starts (`--cursor`), when the table has more to read. */
  nextCursor?: string;
  /** Ledger items read to find them. */
  read: number;
}

/** Where a list reads: the lane's ledger table and the stores a state read needs. */
export interface ListSource {
  lane: string;
  dynamodb: DynamoDBClient;
  ledgerTable: string;
  /** The lane's stores a state read needs (with its erasure records and cancel markers). */
  stores: JobStatusStores;
}

/** A list request. */
export interface ListRequest {
  state: ListState;
  tenant?: string | undefined;
  /** The most jobs to list (1-1000). */
  limit: number;
  cursor?: string | undefined;
}

/** Items a scan page reads at most (DynamoDB also stops a page at 1 MB). */
const SCAN_PAGE_ITEMS = 500;

const encodeCursor = (key: Record<string, AttributeValue>): string => Buffer.from(JSON.stringify(key)).toString('base64url');

/** The key a cursor names. @throws {TypeError} for a cursor this command did not write */
function decodeCursor(cursor: string): Record<string, AttributeValue> {
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (typeof key === 'object' && key !== null && !Array.isArray(key)) return key as Record<string, AttributeValue>;
  } catch {
    // reported below
  }
  throw new TypeError('the cursor is not one `ratelane jobs list` printed');
}

/** The scan filter that finds a state's candidates. */
function candidateFilter(
  state: Exclude<ListState, 'needs_review'>,
): Pick<ScanCommandInput, 'FilterExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> {
  if (state === 'cancelled') {
    return {
      FilterExpression: '#sk = :marker',
      ExpressionAttributeNames: { '#sk': LEDGER_TABLE.sortKey as string },
      ExpressionAttributeValues: { ':marker': { S: '#cancelled' } },
    };
  }
  return {
    FilterExpression: '#kind = :kind',
    ExpressionAttributeNames: { '#kind': 'kind' },
    ExpressionAttributeValues: { ':kind': { S: state === 'waiting' ? 'deferred' : 'dead_letter_pending' } },
  };
}

/** A candidate: its job, and the key a page may start after it (the item's table key, and its index key for the reviews index). */
interface Candidate {
  jobId: string;
  key: Record<string, AttributeValue>;
}

/** One page of candidates, and where the next one starts. */
async function candidates(
  source: ListSource,
  state: ListState,
  startKey: Record<string, AttributeValue> | undefined,
): Promise<{ found: Candidate[]; nextKey: Record<string, AttributeValue> | undefined; read: number }> {
  const pk = LEDGER_TABLE.partitionKey;
  const sk = LEDGER_TABLE.sortKey as string;
  if (state === 'needs_review') {
    const page = await openReviewEntries(source.dynamodb, source.ledgerTable, source.lane, { startKey, limit: SCAN_PAGE_ITEMS });
    const found = page.entries.map((e) => ({
      jobId: e.jobId,
      key: { [pk]: { S: e.jobId }, [sk]: { S: e.entryId }, [LEDGER_REVIEW_INDEX.partitionKey]: { S: source.lane } },
    }));
    return { found, nextKey: page.nextKey, read: page.entries.length };
  }
  try {
    const out = await source.dynamodb.send(
      new ScanCommand({ TableName: source.ledgerTable, ConsistentRead: true, Limit: SCAN_PAGE_ITEMS, ExclusiveStartKey: startKey, ...candidateFilter(state) }),
    );
    const found = (out.Items ?? []).flatMap((item) => {
      const jobId = item[pk]?.S;
      const entryId = item[sk]?.S;
      return jobId !== undefined && entryId !== undefined ? [{ jobId, key: { [pk]: { S: jobId }, [sk]: { S: entryId } } }] : [];
    });
    return { found, nextKey: out.LastEvaluatedKey, read: out.ScannedCount ?? 0 };
  } catch (error) {
    throw new StoreUnavailableError('Scan', source.ledgerTable, { cause: error });
  }
}

/** The listed form of a job whose view is in the asked state. */
function listed(view: JobStatusView, tenant: string | undefined): ListedJob {
  const base = { jobId: view.jobId, ...(tenant !== undefined ? { tenant } : {}) };
  switch (view.state) {
    case 'cancelled':
      return { ...base, reason: `cancelled by ${view.cancelledBy}`, at: view.cancelledAt };
    case 'pending':
      return { ...base, reason: view.reason, at: view.at, ...(view.eligibleAt ? { eligibleAt: view.eligibleAt } : {}) };
    case 'needs_review':
    case 'dead_lettered':
      return { ...base, reason: view.reason, at: view.at };
    default:
      return { ...base, reason: view.state, at: '' };
  }
}

/**
 * Lists the lane's jobs in `request.state` (see the module's description).
 *
 * @throws {@link StoreUnavailableError} when a table cannot be read; a `TypeError` for a bad cursor
 */
export async function listJobs(source: ListSource, request: ListRequest): Promise<JobList> {
  const seen = new Set<string>();
  const jobs: ListedJob[] = [];
  let startKey = request.cursor === undefined ? undefined : decodeCursor(request.cursor);
  let read = 0;
  do {
    const pageStart = startKey;
    const page = await candidates(source, request.state, startKey);
    read += page.read;
    startKey = page.nextKey;
    for (const [i, candidate] of page.found.entries()) {
      if (jobs.length === request.limit) {
        // Full: the next page starts after the last candidate looked at.
        startKey = i > 0 ? page.found[i - 1]?.key : pageStart;
        break;
      }
      if (seen.has(candidate.jobId)) continue;
      seen.add(candidate.jobId);
      const [view, claim] = await Promise.all([jobStatus(candidate.jobId, source.stores), source.stores.ledger.claimOf(candidate.jobId)]);
      if (view.state !== VIEW_STATE[request.state]) continue;
      if (request.tenant !== undefined && claim?.tenant !== request.tenant) continue;
      jobs.push(listed(view, claim?.tenant));
    }
  } while (startKey && jobs.length < request.limit);
  return {
    lane: source.lane,
    state: request.state,
    ...(request.tenant !== undefined ? { tenant: request.tenant } : {}),
    jobs,
    ...(startKey ? { nextCursor: encodeCursor(startKey) } : {}),
    read,
  };
}
