/**
 * The batch lane's part of the local run's scorecard. Every figure is counted from the stores, never
 * derived from the others: the outcome per batch (`batchStatus`: manifest, results table, ledger), the
 * items the submissions recorded, and each item looked up where it can end (results table, ledger,
 * queues), so `batchLost` counts items found in no known state, item by item. The identity
 * committed + unresolved + needs review + rejected + waiting = items is then checked, not assumed, the
 * unresolved items are compared with the lines the fake provider itself dropped or errored, and the items
 * handed to the queue lane for their repair with the lines it answered with output that fails the schema.
 */
import type { BatchOutcome } from '../../../lib/lanes/batch/status.js';
import type { ItemState } from '../../../lib/store/manifest.js';

/** What one lane's batch submission of a run recorded. */
export interface BatchSubmitted {
  lane: string;
  /** Null when nothing was accepted or the submission failed. */
  batchId: string | null;
  /** Documents given to the lane's batch. */
  documents: number;
  /** Items the submission recorded (`submitBatch`'s report). */
  items: number;
  /** Documents refused at intake (never items). */
  rejectedAtSubmit: number;
  /** Why the submission failed (error name and message, no document text). */
  submitError?: string | undefined;
}

/** One lane's batch at the end of a run, as read from the stores. */
export interface BatchScorecardBatch extends BatchSubmitted {
  readError?: string | undefined;
  /** `batchStatus`'s outcome (absent when the batch could not be read). */
  outcome: BatchOutcome | undefined;
  /** Items in state `unresolved`, with their reason. */
  unresolved: { itemId: string; reason: string }[];
  /** Every item of the batch in the manifest (`reason` as the manifest has it: `repair: …` for an output sent for its repair). */
  manifestItems: { itemId: string; state: ItemState; jobId: string; idempotencyKey: string; reason?: string | undefined }[];
}

/** What the batch figures are computed from. */
export interface BatchScorecardInputs {
  batches: BatchScorecardBatch[];
  /** The fake provider's `custom_id`s of dropped and errored lines (every batch of the run; an id repeats once per batch). */
  providerDropped: readonly string[];
  providerErrored: readonly string[];
  /** The fake provider's `custom_id`s of lines answered with output that fails the schema (an id repeats once per batch). */
  providerInvalid: readonly string[];
  /** Idempotency keys with a committed result. */
  committedKeys: ReadonlySet<string>;
  /** Job ids with a terminal ledger entry (rejected, needs review). */
  terminalJobIds: ReadonlySet<string>;
  /** Job ids whose terminal ledger entry is needs review. */
  needsReviewJobIds: ReadonlySet<string>;
  /** Job ids of messages still in a lane queue or DLQ. */
  queuedJobIds: ReadonlySet<string>;
}

/** The batch figures of the scorecard (zeros and empty lists without a batch load). */
export interface BatchFigures {
  /** Items the batch submissions recorded. */
  batchItems: number;
  batchCommitted: number;
  batchUnresolved: number;
  batchNeedsReview: number;
  batchRejected: number;
  /** Items with no outcome yet (not answered, or redriven and not finished by the queue lane); 0 at a good end. */
  batchWaiting: number;
  /** Item ids (the provider's `custom_id`) of the unresolved items, sorted; an id repeats once per batch. */
  batchUnresolvedIds: string[];
  /** `custom_id`s the fake provider dropped (no line at all), sorted. */
  batchDropped: string[];
  /** `custom_id`s the fake provider answered with an error line, sorted. */
  batchErrored: string[];
  /** Whether the unresolved ids are exactly the dropped and errored ones (as multisets). */
  batchUnresolvedMatchesProvider: boolean;
  /** `custom_id`s the fake provider answered with output that fails the schema, sorted. */
  batchInvalid: string[];
  /** Items handed to the queue lane for their repair (an output that failed validation): their ids, sorted. */
  batchRepairIds: string[];
  /** Of those, the ones the queue lane committed (their object is in the results table). */
  batchRepaired: number;
  /** Of those, the ones the queue lane sent to review. */
  batchRepairNeedsReview: number;
  /** Whether the items sent for a repair are exactly the lines the provider made invalid (as multisets). */
  batchRepairMatchesProvider: boolean;
  /** Unresolved items that nevertheless have a committed object (must be 0). */
  batchUnresolvedCommitted: number;
  /** Documents that did not become items (refused at intake, or their submission failed). */
  batchNotSubmitted: number;
  /** Items found in no known state (part of the run's `lost`). */
  batchLost: number;
  /** Why the batch lane's reconciliation fails, one line each (empty: it holds). */
  batchProblems: string[];
}

const sorted = (ids: Iterable<string>): string[] => [...ids].sort();

/** The reason reconciling gives an item whose output failed validation and went to the queue lane for its repair (`repair: <parse status>`). */
const REPAIR_REASON = /^repair:/;

/** Whether two lists hold the same ids the same number of times. */
function sameMultiset(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const x = sorted(a);
  const y = sorted(b);
  return x.every((id, i) => id === y[i]);
}

/** Whether an item is in a state the run knows: committed with its object, settled, unresolved, redriven and accounted for, or still waiting. */
function found(item: BatchScorecardBatch['manifestItems'][number], inputs: BatchScorecardInputs): boolean {
  switch (item.state) {
    case 'committed':
    case 'duplicate':
      return inputs.committedKeys.has(item.idempotencyKey);
    case 'redriven':
      return inputs.committedKeys.has(item.idempotencyKey) || inputs.terminalJobIds.has(item.jobId) || inputs.queuedJobIds.has(item.jobId);
    case 'needs_review':
    case 'rejected':
    case 'unresolved':
    case 'prepared':
    case 'submitted':
      return true;
    default:
      return false;
  }
}

/** Computes the batch figures; pure. */
export function computeBatchFigures(inputs: BatchScorecardInputs): BatchFigures {
  const sum = (pick: (o: BatchOutcome) => number): number => inputs.batches.reduce((n, b) => n + (b.outcome ? pick(b.outcome) : 0), 0);
  const items = inputs.batches.reduce((n, b) => n + b.items, 0);
  const committed = sum((o) => o.committed);
  const unresolved = sum((o) => o.unresolved);
  const needsReview = sum((o) => o.needsReview);
  const rejected = sum((o) => o.rejected);
  const waiting = sum((o) => o.waiting);
  const unresolvedIds = sorted(inputs.batches.flatMap((b) => b.unresolved.map((u) => u.itemId)));
  const providerIds = [...inputs.providerDropped, ...inputs.providerErrored];
  const matches = sameMultiset(unresolvedIds, providerIds);
  const all = inputs.batches.flatMap((b) => b.manifestItems);
  const unresolvedCommitted = all.filter((i) => i.state === 'unresolved' && inputs.committedKeys.has(i.idempotencyKey)).length;
  const repairs = all.filter((i) => i.state === 'redriven' && REPAIR_REASON.test(i.reason ?? ''));
  const repairIds = sorted(repairs.map((i) => i.itemId));
  const repairMatches = sameMultiset(repairIds, inputs.providerInvalid);
  const missing = inputs.batches.reduce((n, b) => n + Math.max(0, b.items - b.manifestItems.length), 0);
  const lost = missing + all.filter((i) => !found(i, inputs)).length;
  const notSubmitted = inputs.batches.reduce((n, b) => n + (b.batchId === null || b.submitError ? b.documents : b.rejectedAtSubmit), 0);

  const problems: string[] = [];
  for (const b of inputs.batches) {
    if (b.submitError) problems.push(`batch lane ${b.lane}: the submission failed (${b.submitError})`);
    if (b.readError) problems.push(`batch ${b.batchId} (lane ${b.lane}) could not be read at the end (${b.readError})`);
  }
  const accounted = committed + unresolved + needsReview + rejected + waiting;
  if (accounted !== items) {
    problems.push(
      `batch: committed ${committed} + unresolved ${unresolved} + needs review ${needsReview} + rejected ${rejected} + waiting ${waiting} = ${accounted}, not the ${items} items submitted`,
    );
  }
  if (waiting > 0) problems.push(`batch: ${waiting} item(s) still waiting at the end`);
  if (!matches) {
    const only = (a: readonly string[], b: readonly string[]) => a.filter((id) => !b.includes(id));
    problems.push(
      `batch: the unresolved items (${unresolvedIds.length}) are not the lines the provider dropped or errored (${providerIds.length}); ` +
        `only unresolved: ${only(unresolvedIds, providerIds).join(' ') || '-'}; only dropped/errored: ${only(providerIds, unresolvedIds).join(' ') || '-'}`,
    );
  }
  if (!repairMatches) {
    problems.push(
      `batch: the items sent to the queue lane for a repair (${repairIds.length}) are not the lines the provider answered with invalid output (${inputs.providerInvalid.length})`,
    );
  }
  if (unresolvedCommitted > 0) problems.push(`batch: ${unresolvedCommitted} unresolved item(s) have a committed object`);
  if (lost > 0) problems.push(`batch: ${lost} item(s) found in no known state (LOST)`);
  return {
    batchItems: items,
    batchCommitted: committed,
    batchUnresolved: unresolved,
    batchNeedsReview: needsReview,
    batchRejected: rejected,
    batchWaiting: waiting,
    batchUnresolvedIds: unresolvedIds,
    batchDropped: sorted(inputs.providerDropped),
    batchErrored: sorted(inputs.providerErrored),
    batchUnresolvedMatchesProvider: matches,
    batchInvalid: sorted(inputs.providerInvalid),
    batchRepairIds: repairIds,
    batchRepaired: repairs.filter((i) => inputs.committedKeys.has(i.idempotencyKey)).length,
    batchRepairNeedsReview: repairs.filter((i) => !inputs.committedKeys.has(i.idempotencyKey) && inputs.needsReviewJobIds.has(i.jobId)).length,
    batchRepairMatchesProvider: repairMatches,
    batchUnresolvedCommitted: unresolvedCommitted,
    batchNotSubmitted: notSubmitted,
    batchLost: lost,
    batchProblems: problems,
  };
}

/** The figures of a run without a batch load. */
export function noBatchFigures(): BatchFigures {
  return computeBatchFigures({
    batches: [],
    providerDropped: [],
    providerErrored: [],
    providerInvalid: [],
    committedKeys: new Set(),
    terminalJobIds: new Set(),
    needsReviewJobIds: new Set(),
    queuedJobIds: new Set(),
  });
}

/** At most `max` ids, then how many more. */
function idList(ids: readonly string[], max = 8): string {
  if (ids.length === 0) return '';
  const shown = ids.slice(0, max).join(' ');
  return ids.length > max ? ` (${shown} … +${ids.length - max} more)` : ` (${shown})`;
}

/**
 * The batch section of the printed scorecard; `extra` rows (the redrive's, `batchRedriveRows`) come
 * after the figures of the batch itself, before `batch LOST`.
 */
export function formatBatchFigures(
  f: BatchFigures,
  batches: readonly Pick<BatchScorecardBatch, 'lane' | 'items'>[] = [],
  extra: readonly [string, string][] = [],
): string {
  const perLane = batches.map((b) => `${b.lane} ${b.items}`).join(', ');
  const identity = f.batchCommitted + f.batchUnresolved + f.batchNeedsReview + f.batchRejected + f.batchWaiting === f.batchItems;
  const rows: [string, string][] = [
    ['batch items', `${f.batchItems}${perLane ? ` (${perLane})` : ''}${f.batchNotSubmitted ? `; ${f.batchNotSubmitted} document(s) NOT submitted` : ''}`],
    ['batch committed', String(f.batchCommitted)],
    [
      'batch unresolved',
      `${f.batchUnresolved}${idList(f.batchUnresolvedIds)} — ${f.batchUnresolvedMatchesProvider ? 'exactly' : 'NOT'} the lines the provider dropped or errored`,
    ],
    ['provider dropped / errored', `${f.batchDropped.length} / ${f.batchErrored.length}${idList([...f.batchDropped, ...f.batchErrored])}`],
    [
      'provider invalid / repaired',
      `${f.batchInvalid.length} / ${f.batchRepaired}${idList(f.batchInvalid)}${f.batchRepairNeedsReview ? `, ${f.batchRepairNeedsReview} to review` : ''} — ` +
        `${f.batchRepairMatchesProvider ? 'exactly' : 'NOT'} the items sent to the queue lane for a repair`,
    ],
    ['batch needs review / rejected', `${f.batchNeedsReview} / ${f.batchRejected}`],
    ...(f.batchWaiting > 0 ? [['batch still waiting', String(f.batchWaiting)] as [string, string]] : []),
    [
      'batch accounted for',
      `${f.batchCommitted + f.batchUnresolved + f.batchNeedsReview + f.batchRejected + f.batchWaiting} of ${f.batchItems}${identity ? '' : ' — MISMATCH'}`,
    ],
    ['unresolved with an object', String(f.batchUnresolvedCommitted)],
    ...extra,
    ['batch LOST', String(f.batchLost)],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join('\n');
}
