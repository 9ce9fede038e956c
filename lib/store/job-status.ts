/**
 * One job's state, the same view for every lane (the live API's `GET /v1/extractions/{jobId}`, the queue
 * lane's tools): read from the lane's results table and ledger, never from a queue.
 *
 * - The ledger's claim item binds the job id to its idempotency key (the first consumer to receive the
 *   job writes it); results are keyed by idempotency key. No claim and no entry: `unknown` (still queued,
 *   never received, or a wrong id; a message rejected before its claim is recorded under its message id).
 * - A committed result always wins, whichever job of the idempotency key committed it (`duplicateOf`
 *   names that job when it is another one).
 * - Otherwise the job's latest ledger entry decides (entry-id order, which is time order): needs_review,
 *   rejected, dead_letter_pending (→ `dead_lettered`), deferred (→ `pending`). The latest, not the "most
 *   final": a job dead-lettered after deferrals is dead-lettered, and a dead-lettered job an operator
 *   redrives, then defers again, is pending again. `received` when the job is being worked on: a claim
 *   with no entry yet, a claim later than the latest entry (every delivery claims again before it records
 *   anything: a deferred copy come back), or a latest entry that is not an outcome (a validation failure
 *   before the repair, a transport failure).
 *
 * - Erased (`ratelane erase`, the live API's `DELETE`): the erasure removed the job's claim and entries and
 *   left its `#erased` marker (`lib/store/erasure.ts`). Read only when the stores include `erasure`; a job
 *   with a claim or entries is never `erased`. The marker names no tenant: to a reader it is `erased` only
 *   when the reader may read jobs of whoever erased it (the live API's `DELETE` records the owner's
 *   tenant), else `unknown`.
 *
 * - Cancelled (`ratelane cancel`): the job's `#cancelled` marker (`lib/store/cancellation.ts`), read when the
 *   stores include `cancellations`. Nothing commits after a cancel, so a committed result still wins (one
 *   committed before, or by a duplicate of the job). A job cancelled before any consumer received it has no
 *   claim: it is `cancelled` only to a reader who may read jobs without a tenant.
 *
 * Views carry reasons (machine-readable codes), times, counts and, once committed, the validated result;
 * never a ledger entry's `details` nor any document text.
 */
import type { CancelMarker, Cancellations } from './cancellation.js';
import type { ErasureLedger } from './erasure.js';
import { type JobClaimRecord, LEDGER_KINDS, type Ledger, type LedgerEntry, type LedgerKind } from './ledger.js';
import type { ResultStore, TokenUsage } from './results.js';

/** How many ledger entries of each kind the job has (every kind present, 0 when none). */
export type LedgerHistory = Record<LedgerKind, number>;

/** What every view has. */
interface ViewBase {
  jobId: string;
  history: LedgerHistory;
}

/** What every view of a job a consumer received has. */
interface ReceivedBase extends ViewBase {
  /** The job's idempotency key (a hash: no document text). */
  idempotencyKey: string;
  /** The lane that claimed it (or committed it). */
  region: string;
}

/** A result is committed for the job's idempotency key: final. */
interface CommittedView extends ReceivedBase {
  state: 'committed';
  /** The validated extraction. */
  result: Record<string, unknown>;
  /** The model that produced it. */
  model: string;
  usage: TokenUsage;
  committedAt: string;
  /** The job that committed it: this job, or another job with the same idempotency key. */
  committedBy: string;
  /** Set when `committedBy` is another job: this job is a duplicate of it and shares its result. */
  duplicateOf?: string;
}

/** The output failed validation after its repair: a person must look (final unless redriven). */
interface NeedsReviewView extends ReceivedBase {
  state: 'needs_review';
  /** Why (`validation_failed`, `result_unstorable`, ...). */
  reason: string;
  /** When the entry was recorded (ISO 8601). */
  at: string;
}

/** Rejected for good (deadline, input missing or altered, too large, ...). */
interface RejectedView extends ReceivedBase {
  state: 'rejected';
  reason: string;
  at: string;
}

/** The retry budget is spent: the job is (or is about to be) in the dead-letter queue. */
interface DeadLetteredView extends ReceivedBase {
  state: 'dead_lettered';
  /** The last failure's reason (`provider_5xx`, `timeout`, ...). */
  reason: string;
  at: string;
}

/** Re-sent for later (a rate limit, admission, a quota, a hop): it comes back by itself. */
interface PendingView extends ReceivedBase {
  state: 'pending';
  /** Why it was deferred (`rate_limited`, `not_yet_eligible`, ...). */
  reason: string;
  /** When it becomes eligible again (ISO 8601), when the deferral recorded it. */
  eligibleAt?: string;
  /** Deferrals the job carries after this one. */
  deferrals: number;
  at: string;
}

/** Claimed by a consumer, no outcome yet: being worked on (or about to be received again). */
interface ReceivedView extends ReceivedBase {
  state: 'received';
  /** The latest claim (a delivery's start), or the latest entry when that is not an outcome (ISO 8601). */
  at: string;
}

/** No consumer ever received a job with this id: still queued, or a wrong id. */
interface UnknownView extends ViewBase {
  state: 'unknown';
}

/** The job's source was erased: its result, claim and entries are removed; only its erased marker is left. */
interface ErasedView extends ViewBase {
  state: 'erased';
  /** When its records were removed (ISO 8601). */
  erasedAt: string;
  /** Who erased it (the live API's caller's tenant, an operator, or the lane stopping a job of an erased source). */
  erasedBy: string;
}

/** The job was cancelled: it makes no further call and is never committed. */
interface CancelledView extends ViewBase {
  state: 'cancelled';
  /** When it was cancelled (ISO 8601). */
  cancelledAt: string;
  /** Who cancelled it (an operator, or the live API's caller's tenant). */
  cancelledBy: string;
  /** Its idempotency key and lane, once a consumer had claimed it. */
  idempotencyKey?: string;
  region?: string;
}

/** One job's state; `state` tells which. */
export type JobStatusView =
  | CommittedView
  | NeedsReviewView
  | RejectedView
  | DeadLetteredView
  | PendingView
  | ReceivedView
  | UnknownView
  | ErasedView
  | CancelledView;

/** What {@link jobStatus} reads. */
export interface JobStatusStores {
  results: Pick<ResultStore, 'get'>;
  ledger: Pick<Ledger, 'claimOf' | 'entriesFor'>;
  /** The lane's erasure records: with them, a job whose records an erasure removed is `erased` (without: `unknown`). */
  erasure?: Pick<ErasureLedger, 'erasedJob'> | undefined;
  /** The lane's cancel markers: with them, a cancelled job is `cancelled` (without: what its ledger says). */
  cancellations?: Pick<Cancellations, 'marker'> | undefined;
}

/**
 * Who reads a job's state (the live API's caller): a job whose tenant they may not read is `unknown` to
 * them, exactly as a job never seen — the same body, and the same reads (its result is not read).
 */
export interface StatusReader {
  /** Whether the reader may read a job of `tenant` (`undefined`: a job without a tenant). */
  mayRead(tenant: string | undefined): boolean;
}

/** DynamoDB's longest partition key value (bytes): a longer id cannot have been stored. */
const MAX_KEY_BYTES = 2048;

/** Counts entries per kind. */
export function ledgerHistory(entries: readonly Pick<LedgerEntry, 'kind'>[]): LedgerHistory {
  const history = Object.fromEntries(LEDGER_KINDS.map((kind) => [kind, 0])) as LedgerHistory;
  for (const entry of entries) if (entry.kind in history) history[entry.kind]++;
  return history;
}

/** A job's records in the lane's ledger, as {@link jobStatus} reads them (none for an id no key could hold). */
export interface JobRecords {
  claim: JobClaimRecord | undefined;
  entries: LedgerEntry[];
  erased: { erasedAt: string; erasedBy: string } | undefined;
  cancelled: CancelMarker | undefined;
}

/**
 * Reads `jobId`'s claim, entries, erased marker and cancel marker at once (strongly consistent; the markers only
 * when the stores include their records), for {@link jobStatus} and for a reader that shows them too.
 *
 * @throws {@link StoreUnavailableError}
 */
export async function readJobRecords(jobId: string, stores: JobStatusStores): Promise<JobRecords> {
  if (jobId.length === 0 || Buffer.byteLength(jobId, 'utf8') > MAX_KEY_BYTES) return { claim: undefined, entries: [], erased: undefined, cancelled: undefined };
  // The ledger first, the result second (in jobStatus): a commit that lands in between is seen.
  // The markers are read beside them (not after), so a job never seen costs the same reads as any other.
  const [claim, entries, erased, cancelled] = await Promise.all([
    stores.ledger.claimOf(jobId),
    stores.ledger.entriesFor(jobId),
    stores.erasure ? stores.erasure.erasedJob(jobId) : undefined,
    stores.cancellations ? stores.cancellations.marker(jobId) : undefined,
  ]);
  return { claim, entries, erased, cancelled };
}

/**
 * The state of `jobId` in one lane: its claim and ledger entries (strongly consistent reads; its erased
 * marker beside them when the stores include `erasure`), then the result of its idempotency key. An id
 * DynamoDB could not hold as a key (empty, over 2 KB) is `unknown` without a read; so is a job `reader`
 * may not read (after the same reads as a job never seen). `read`: its records when the caller read them already
 * ({@link readJobRecords}).
 *
 * @throws {@link StoreUnavailableError} when a table cannot be read.
 */
export async function jobStatus(jobId: string, stores: JobStatusStores, reader?: StatusReader, read?: JobRecords): Promise<JobStatusView> {
  const empty = (): UnknownView => ({ jobId, state: 'unknown', history: ledgerHistory([]) });
  if (jobId.length === 0 || Buffer.byteLength(jobId, 'utf8') > MAX_KEY_BYTES) return empty();
  const { claim, entries, erased, cancelled } = read ?? (await readJobRecords(jobId, stores));
  const latest = entries.at(-1);
  const idempotencyKey = claim?.idempotencyKey ?? latest?.idempotencyKey;
  if (idempotencyKey === undefined) {
    if (erased && !(reader && !reader.mayRead(erased.erasedBy))) {
      return { jobId, state: 'erased', history: ledgerHistory([]), erasedAt: erased.erasedAt, erasedBy: erased.erasedBy };
    }
    if (cancelled && !(reader && !reader.mayRead(undefined))) {
      return { jobId, state: 'cancelled', history: ledgerHistory([]), cancelledAt: cancelled.cancelledAt, cancelledBy: cancelled.cancelledBy };
    }
    return empty();
  }
  if (reader && !reader.mayRead(claim?.tenant ?? entries.find((e) => e.tenant !== undefined)?.tenant)) return empty();
  const history = ledgerHistory(entries);
  const committed = await stores.results.get(idempotencyKey);
  if (committed) {
    return {
      jobId,
      state: 'committed',
      idempotencyKey,
      region: committed.region,
      history,
      result: committed.result,
      model: committed.model,
      usage: { inputTokens: committed.usage.inputTokens, outputTokens: committed.usage.outputTokens },
      committedAt: committed.committedAt,
      committedBy: committed.jobId,
      ...(committed.jobId !== jobId ? { duplicateOf: committed.jobId } : {}),
    };
  }
  const base = { jobId, idempotencyKey, region: claim?.region ?? latest?.region ?? '', history };
  if (cancelled) return { ...base, state: 'cancelled', cancelledAt: cancelled.cancelledAt, cancelledBy: cancelled.cancelledBy };
  // Every delivery claims the job again (rewriting the claim's time) before it records an outcome: a
  // claim later than the latest entry is a delivery at work (a deferred copy come back, a redelivery).
  if (!latest || (claim && claim.at > latest.at)) return { ...base, state: 'received', at: claim?.at ?? '' };
  const { reason, at } = latest;
  switch (latest.kind) {
    case 'needs_review':
      return { ...base, state: 'needs_review', reason, at };
    case 'rejected':
      return { ...base, state: 'rejected', reason, at };
    case 'dead_letter_pending':
      return { ...base, state: 'dead_lettered', reason, at };
    case 'deferred':
      return { ...base, state: 'pending', reason, deferrals: latest.deferrals, at, ...(latest.eligibleAt ? { eligibleAt: latest.eligibleAt } : {}) };
    default:
      // Not an outcome (validation_failed before the repair, transport_failure, or a commit line whose
      // result is not there): the job is being worked on.
      return { ...base, state: 'received', at };
  }
}
