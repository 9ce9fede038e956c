/**
 * The redrive's part of the local run's scorecard (`--batch-redrive`): after every batch is done and
 * the batch figures are read, the run redrives each lane's unresolved items to the queue lane
 * (`redriveBatch`) and waits for their outcome. These figures follow every item the redrive sent, item
 * by item, to where it ended: **committed** only when its idempotency key has exactly one result in the
 * results table, under the item's own job id (commit-once: the queue lane committed it, once); else
 * sent to review, rejected, still waiting (in a queue or DLQ), or found nowhere. The batch figures
 * themselves (`batchUnresolved`, `batchUnresolvedIds`, …) describe the batch before the redrive.
 */
import type { BatchFinal } from './batch-load.js';
import type { FinalState } from '../outcome.js';

/** What the redrive sent for one lane's batch. */
export interface BatchRedriveSent {
  lane: string;
  batchId: string;
  /** Items sent to the queue and settled `redriven` by the redrive. */
  itemIds: string[];
  /** Items that could not be sent (they stay unresolved). */
  failed: number;
  /** Why the redrive of the batch failed as a whole (error name and message), if it did. */
  error?: string | undefined;
}

/** One lane's batch read at the end of the run, after the redrive. */
export interface BatchAfterRedrive {
  lane: string;
  batchId: string | null;
  /** Items in state `unresolved` now (absent when the batch could not be read). */
  unresolved: number | undefined;
  /** Every item of the batch in the manifest. */
  items: readonly { itemId: string; jobId: string; idempotencyKey: string }[];
  readError?: string | undefined;
}

/** What the redrive figures are computed from. */
export interface BatchRedriveInputs {
  /** What the redrive sent, per lane's batch; null when it did not run (a batch was not done by the time limit). */
  sent: readonly BatchRedriveSent[] | null;
  /** Every lane's batch at the end. */
  after: readonly BatchAfterRedrive[];
  /** Every result in the results tables at the end. */
  results: readonly { jobId: string; idempotencyKey: string }[];
  /** Job ids whose terminal ledger entry is needs review. */
  needsReviewJobIds: ReadonlySet<string>;
  /** Job ids with a rejected ledger entry. */
  rejectedJobIds: ReadonlySet<string>;
  /** Job ids of messages still in a lane queue or DLQ. */
  queuedJobIds: ReadonlySet<string>;
}

/** The redrive figures of the scorecard: all null when the run did not redrive. */
export interface BatchRedriveFigures {
  /** Items the redrive sent to the queue lane (settled `redriven`). */
  batchRedriven: number | null;
  /** Of those, the ones the queue lane committed: exactly one result for the item's key, under its own job id. */
  batchRedriveCommitted: number | null;
  /** Of those, the ones the queue lane sent to review (no result). */
  batchRedriveNeedsReview: number | null;
  /** Of those, the ones with no outcome at the end (no result, no terminal ledger entry). */
  batchRedriveWaiting: number | null;
  /** Of those, the ones found nowhere at the end: no result, no terminal ledger entry, in no queue or DLQ (part of the run's `lost`). */
  batchRedriveLost: number | null;
  /** Items still unresolved after the redrive (0 at a good end). */
  batchUnresolvedAfterRedrive: number | null;
}

/**
 * The redrive figures' inputs from what the run read at its end (after the pollers stopped): what the
 * redrive sent (null: it did not run), every batch read again, where every job ended. Pure.
 */
export function batchRedriveInputs(
  sent: readonly BatchRedriveSent[] | null,
  read: readonly Pick<BatchFinal, 'batch' | 'status' | 'items' | 'readError'>[],
  final: Pick<FinalState, 'results' | 'terminalLedger' | 'waiting' | 'deadLettered'>,
): BatchRedriveInputs {
  const ledger = (kind: 'needs_review' | 'rejected') => new Set(final.terminalLedger.filter((e) => e.kind === kind).map((e) => e.jobId));
  return {
    sent,
    after: read.map(({ batch, status, items, readError }) => ({
      lane: batch.lane,
      batchId: batch.batchId,
      unresolved: status?.outcome.unresolved,
      items,
      readError,
    })),
    results: final.results,
    needsReviewJobIds: ledger('needs_review'),
    rejectedJobIds: ledger('rejected'),
    queuedJobIds: new Set([...final.waiting, ...final.deadLettered]),
  };
}

/** The redrive figures and what does not hold, one line each (the run exits 1 on any). */
export interface BatchRedriveOutcome {
  figures: BatchRedriveFigures;
  problems: string[];
}

/** Where a redriven item ended. */
type RedrivenEnd = 'committed' | 'needs_review' | 'rejected' | 'other_result' | 'waiting' | 'lost';

/** At most `max` ids, then how many more. */
function idList(ids: readonly string[], max = 8): string {
  if (ids.length === 0) return '';
  const shown = ids.slice(0, max).join(' ');
  return ids.length > max ? ` (${shown} … +${ids.length - max} more)` : ` (${shown})`;
}

/** The figures of a run that did not redrive. */
export function noBatchRedriveFigures(): BatchRedriveFigures {
  return {
    batchRedriven: null,
    batchRedriveCommitted: null,
    batchRedriveNeedsReview: null,
    batchRedriveWaiting: null,
    batchRedriveLost: null,
    batchUnresolvedAfterRedrive: null,
  };
}

/** Computes the redrive figures; `unresolvedBefore` is the scorecard's `batchUnresolved` (read before the redrive). Pure. */
export function computeBatchRedriveFigures(inputs: BatchRedriveInputs, unresolvedBefore: number): BatchRedriveOutcome {
  const resultsByKey = new Map<string, string[]>();
  for (const r of inputs.results) resultsByKey.set(r.idempotencyKey, [...(resultsByKey.get(r.idempotencyKey) ?? []), r.jobId]);
  const items = new Map(inputs.after.flatMap((b) => b.items.map((i) => [`${b.batchId}/${i.itemId}`, i] as const)));
  const endOf = (batchId: string, itemId: string): RedrivenEnd => {
    const item = items.get(`${batchId}/${itemId}`);
    if (!item) return 'lost';
    const jobs = resultsByKey.get(item.idempotencyKey) ?? [];
    if (jobs.length === 1 && jobs[0] === item.jobId) return 'committed';
    if (jobs.length > 0) return 'other_result';
    if (inputs.needsReviewJobIds.has(item.jobId)) return 'needs_review';
    if (inputs.rejectedJobIds.has(item.jobId)) return 'rejected';
    return inputs.queuedJobIds.has(item.jobId) ? 'waiting' : 'lost';
  };
  const ends = (inputs.sent ?? []).flatMap((s) => s.itemIds.map((itemId) => ({ itemId, end: endOf(s.batchId, itemId) })));
  const count = (end: RedrivenEnd): number => ends.filter((e) => e.end === end).length;
  const unreadable = inputs.after.filter((b) => b.batchId !== null && b.unresolved === undefined);
  const after = inputs.after.reduce((n, b) => n + (b.unresolved ?? 0), 0);
  const doubled = [
    ...new Set(inputs.after.flatMap((b) => b.items.filter((i) => (resultsByKey.get(i.idempotencyKey)?.length ?? 0) > 1).map((i) => i.idempotencyKey))),
  ];
  const figures: BatchRedriveFigures = {
    batchRedriven: ends.length,
    batchRedriveCommitted: count('committed'),
    batchRedriveNeedsReview: count('needs_review'),
    batchRedriveWaiting: count('waiting'),
    batchRedriveLost: count('lost'),
    batchUnresolvedAfterRedrive: after,
  };

  const problems: string[] = [];
  if (inputs.sent === null) problems.push('batch redrive: did not run (a batch was not done by the time limit)');
  for (const s of inputs.sent ?? []) if (s.error) problems.push(`batch redrive of ${s.batchId} (lane ${s.lane}) failed (${s.error})`);
  for (const b of unreadable) problems.push(`batch ${b.batchId} (lane ${b.lane}) could not be read after the redrive (${b.readError ?? 'unknown'})`);
  if (inputs.sent !== null && ends.length !== unresolvedBefore) {
    const failed = inputs.sent.reduce((n, s) => n + s.failed, 0);
    problems.push(
      `batch redrive: sent ${ends.length} item(s), not the ${unresolvedBefore} unresolved before it${failed ? ` (${failed} could not be sent)` : ''}`,
    );
  }
  const unfinished = ends.filter((e) => e.end !== 'committed' && e.end !== 'needs_review');
  if (unfinished.length > 0) {
    const where = (['waiting', 'rejected', 'other_result', 'lost'] as const)
      .map((end) => [end === 'other_result' ? 'a result under another job' : end === 'lost' ? 'found nowhere' : end, count(end)] as const)
      .filter(([, n]) => n > 0)
      .map(([label, n]) => `${label} ${n}`)
      .join(', ');
    problems.push(
      `batch redrive: ${unfinished.length} redriven item(s) neither committed nor in review at the end (${where})${idList(unfinished.map((e) => e.itemId))}`,
    );
  }
  if (doubled.length > 0) problems.push(`batch: ${doubled.length} idempotency key(s) of batch items have more than one result${idList(doubled)}`);
  if (after > 0) problems.push(`batch redrive: ${after} item(s) still unresolved after the redrive`);
  return { figures, problems };
}

/** The redrive's rows of the printed batch section (none when the run did not redrive); `unresolvedBefore` is `batchUnresolved`. */
export function batchRedriveRows(f: BatchRedriveFigures, unresolvedBefore: number): [string, string][] {
  if (f.batchRedriven === null) return [];
  return [
    ['batch redriven', `${f.batchRedriven} of the ${unresolvedBefore} unresolved item(s), through the queue lane`],
    [
      'redriven committed / review',
      `${f.batchRedriveCommitted} / ${f.batchRedriveNeedsReview}${f.batchRedriveWaiting ? `; ${f.batchRedriveWaiting} still waiting` : ''}` +
        `${f.batchRedriveLost ? `; ${f.batchRedriveLost} LOST` : ''}`,
    ],
    ['unresolved after redrive', String(f.batchUnresolvedAfterRedrive)],
  ];
}
