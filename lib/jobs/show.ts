/**
 * One job's whole story in its lane (`ratelane jobs show`): its state as every reader sees it
 * (`lib/store/job-status.ts`), what its latest delivery carried (its claim: tenant, sender, source, created,
 * eligible, deadline, attempt, deferrals, receive count, versions), every ledger line, where its result is,
 * its cancel or erasure, and a timeline of all of it in time order. Read from the lane's own tables; ids,
 * reasons, times and counts only, never document text or model output.
 */
import type { Cancellations, CancelMarker } from '../store/cancellation.js';
import type { ErasureLedger } from '../store/erasure.js';
import { jobStatus, type JobStatusView, readJobRecords } from '../store/job-status.js';
import type { JobClaimRecord, Ledger, LedgerEntry } from '../store/ledger.js';
import type { ResultStore } from '../store/results.js';

/** What {@link showJob} reads: the lane's stores. */
export interface JobStores {
  results: Pick<ResultStore, 'get' | 'tableName'>;
  ledger: Pick<Ledger, 'claimOf' | 'entriesFor'>;
  erasure: Pick<ErasureLedger, 'erasedJob'>;
  cancellations: Pick<Cancellations, 'marker'>;
}

/** One ledger line as shown (the stored entry without its TTL). */
type JobLedgerLine = Omit<LedgerEntry, 'expiresAt'>;

/** One moment of a job's timeline. */
interface TimelineEvent {
  at: string;
  /** `created`, `received`, a ledger kind, `committed`, `cancelled`, `erased`. */
  event: string;
  /** What happened, in a few words (reasons, who, counts). */
  detail: string;
}

/** A job's whole story (see the module's description). */
export interface JobRecord {
  jobId: string;
  status: JobStatusView;
  /** The job's claim (absent: no consumer has received it, or its source was erased). */
  claim: JobClaimRecord | undefined;
  /** Every ledger line, oldest first. */
  entries: JobLedgerLine[];
  /** Where its committed result is: the lane's results table, under its idempotency key. */
  result: { table: string; key: string; committedAt: string; committedBy: string } | undefined;
  cancelled: CancelMarker | undefined;
  erased: { erasedAt: string; erasedBy: string } | undefined;
  timeline: TimelineEvent[];
}

/**
 * Reads `jobId`'s story in one lane (strongly consistent reads).
 *
 * @throws {@link StoreUnavailableError} when a table cannot be read
 */
export async function showJob(jobId: string, stores: JobStores): Promise<JobRecord> {
  const read = await readJobRecords(jobId, stores);
  const status = await jobStatus(jobId, stores, undefined, read);
  const { claim, entries: stored, cancelled, erased } = read;
  const entries = stored.map(({ expiresAt: _ttl, ...line }) => line);
  const committed = status.state === 'committed' ? status : undefined;
  const result = committed && {
    table: stores.results.tableName,
    key: committed.idempotencyKey,
    committedAt: committed.committedAt,
    committedBy: committed.committedBy,
  };
  return { jobId, status, claim, entries, result, cancelled, erased, timeline: timelineOf(claim, entries, result, cancelled, erased) };
}

function timelineOf(
  claim: JobClaimRecord | undefined,
  entries: readonly JobLedgerLine[],
  result: JobRecord['result'],
  cancelled: CancelMarker | undefined,
  erased: JobRecord['erased'],
): TimelineEvent[] {
  const events: TimelineEvent[] = [];
  const facts = claim?.facts;
  if (facts)
    events.push({
      at: facts.createdAt,
      event: 'created',
      detail: `${facts.schemaVersion} / ${facts.promptVersion}${facts.deadline ? `, deadline ${facts.deadline}` : ''}`,
    });
  for (const e of entries) {
    const wait = e.eligibleAt ? `, eligible again at ${e.eligibleAt}` : '';
    const receive = e.receiveCount !== undefined ? `, receive ${e.receiveCount}` : '';
    events.push({ at: e.at, event: e.kind, detail: `${e.reason} (attempt ${e.attempt}, deferrals ${e.deferrals}${receive}${wait})` });
  }
  if (claim) {
    const receive = facts ? ` (receive ${facts.receiveCount}, attempt ${facts.attempt}, deferrals ${facts.deferrals})` : '';
    events.push({ at: claim.at, event: 'received', detail: `latest delivery${receive}` });
  }
  if (result) events.push({ at: result.committedAt, event: 'committed', detail: `by ${result.committedBy}` });
  if (cancelled) events.push({ at: cancelled.cancelledAt, event: 'cancelled', detail: `by ${cancelled.cancelledBy}` });
  if (erased) events.push({ at: erased.erasedAt, event: 'erased', detail: `by ${erased.erasedBy}` });
  return events.sort((a, b) => a.at.localeCompare(b.at));
}
