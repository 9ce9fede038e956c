/**
 * The batch lane's part of the local run's scorecard. Every figure is counted from the stores, never
 * derived from the others: the outcome per batch (`batchStatus`: manifest, results table, ledger), the
 * items the submissions recorded, and each item looked up where it can end (results table, ledger,
 * queues), so `batchLost` counts items found in no known state, item by item. The identity
 * committed + unresolved + needs review + rejected + waiting = items is then checked, not assumed, the
 * unresolved items are compared with the lines the fake provider itself dropped or errored, and the items
 * handed to the queue lane for their repair with the lines it answered with output that fails the schema.
 *
 * The redrive's part (`--batch-redrive`): after every batch is done and the batch figures are read, the
 * run redrives each lane's unresolved items to the queue lane (`redriveBatch`) and waits for their
 * outcome. Its figures follow every item the redrive sent, item by item, to where it ended:
 * **committed** only when its idempotency key has exactly one result in the results table, under the
 * item's own job id (commit-once: the queue lane committed it, once); else sent to review, rejected,
 * still waiting (in a queue or DLQ), or found nowhere. The batch figures themselves (`batchUnresolved`,
 * `batchUnresolvedIds`, …) describe the batch before the redrive.
 */
import type { BatchOutcome } from '../../../lib/lanes/batch/status.js';
import type { ItemState } from '../../../lib/store/manifest-model.js';

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
  /** The item ids in the fake provider's `custom_id`s of dropped and errored lines (every batch of the run; an id repeats once per batch). */
  providerDropped: readonly string[];
  providerErrored: readonly string[];
  /** The item ids in the fake provider's `custom_id`s of lines answered with output that fails the schema (an id repeats once per batch). */
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
    case 'sending':
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

// ---------------------------------------------------------------------------------------------------------
// The redrive

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
interface BatchAfterRedrive {
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

/** The redrive figures and what does not hold, one line each (the run exits 1 on any). */
export interface BatchRedriveOutcome {
  figures: BatchRedriveFigures;
  problems: string[];
}

/** Where a redriven item ended. */
type RedrivenEnd = 'committed' | 'needs_review' | 'rejected' | 'other_result' | 'waiting' | 'lost';

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
