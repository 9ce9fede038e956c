/**
 * Reading one ended provider job of a batch: every result line through the same validation and
 * commit-once as the other lanes, each item settled with a reason whatever its line holds.
 *
 * - A valid answer is committed once (`committed`); found committed by another job, the item is
 *   `duplicate` (found committed by its own job — a pass before, or one running beside — it is
 *   `committed`: an item is never a duplicate of itself).
 * - A valid answer DynamoDB cannot store (over its item size, a value it refuses) is `needs_review`
 *   (`result_unstorable`, with a ledger entry), as the queue lane does: no second model call.
 * - An invalid answer goes to the queue lane for its repair (`handover.ts`: claimed, sent once, `redriven`).
 * - An error line, an answer that is not text (`not_text`), a line the provider never wrote
 *   (`no_result`), a job that is not the one sent (`foreign_output`): `unresolved` with that reason.
 *   After too many unmatched lines the reader stops; the items still unanswered are `unresolved`
 *   (`output_unread`).
 *
 * One bad line never stops the lines after it: an item whose settling fails (a store or queue
 * unavailable) is recorded with its error's name, the reading goes on, and the part is reported
 * incomplete so the next pass reads it again (settled items are left as they are).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LaneConfig } from '../../config/lanes.js';
import { getExtractionSchema } from '../../contract/schemas/registry.js';
import { validateOutput } from '../../extraction/validate.js';
import { errorName } from '../../platform/errors.js';
import { StoreRecordInvalidError } from '../../store/errors.js';
import { commitGuards } from '../../store/cancellation.js';
import type { Ledger } from '../../store/ledger.js';
import type { BatchManifest } from '../../store/manifest.js';
import { canMoveItem, itemIdOfRecord, type BatchHeader, type BatchItem, type ItemState, type ProviderJobRef } from '../../store/manifest-model.js';
import { resultRecordFor, type ResultStore } from '../../store/results.js';
import { handOver, jobOfItem } from './handover.js';
import type { BatchProvider, ProviderJobHandle, ProviderJobState, ProviderResultLine } from './providers/provider.js';

/** What reading a part reads and writes. */
export interface ReadPartDeps {
  lane: LaneConfig;
  manifest: BatchManifest;
  provider: BatchProvider;
  results: ResultStore;
  ledger: Ledger;
  /** The lane's queue: an output that fails validation goes there for its repair. */
  sqs: SQSClient;
  queueUrl: string;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  now: () => Date;
}

/** An item a pass could not settle (it stays as it was, or `sending`; a later pass tries it again). */
export interface ItemFailure {
  itemId: string;
  /** The error's name (never its message: it may quote a provider's text). */
  errorName: string;
}

/** What reading one part did. */
export interface PartReading {
  /** Items moved, by the state they moved to. */
  moved: Partial<Record<ItemState, number>>;
  /** Result lines matching no record of the batch (reported, never matched). */
  unmatchedLines: number;
  /** Items that could not be settled this time. */
  failed: ItemFailure[];
  /** Whether every item of the part was settled or handed on: only then is the part recorded as ended. */
  complete: boolean;
}

/** Why the items of a part still unanswered are unresolved when the reader stopped before the end of its files. */
const OUTPUT_UNREAD = 'output_unread';
/** The reason of a valid output that cannot be stored (the queue lane's review reason). */
const RESULT_UNSTORABLE = 'result_unstorable';
/** The states a result line may still settle an item from. */
const OPEN_ITEM_STATES: ReadonlySet<ItemState> = new Set(['prepared', 'submitted', 'unresolved']);

/** What one result line makes of its item. */
type LineOutcome =
  | { state: 'committed' | 'duplicate' | 'needs_review' | 'unresolved' | 'rejected'; reason?: string }
  | { state: 'handed'; moved: boolean }
  | { state: 'send_failed'; errorName: string };

/**
 * Reads an ended job's result lines into the manifest, the results table, the ledger and the queue (see
 * the module's description). Reading failures (the provider's files) throw; an item's failure does not.
 *
 * @throws a `BatchClientError` when the job's files cannot be read.
 * @throws {@link StoreUnavailableError} when the batch's items cannot be read.
 */
export async function readPart(
  header: BatchHeader,
  part: ProviderJobRef,
  handle: ProviderJobHandle,
  ended: ProviderJobState,
  deps: ReadPartDeps,
): Promise<PartReading> {
  const reading: PartReading = { moved: {}, unmatchedLines: 0, failed: [], complete: true };
  // One Query for the batch's items instead of one read per result line.
  const items = new Map((await deps.manifest.items(header.batchId)).map((i) => [i.itemId, i]));
  const touched = new Set<string>();
  let stopped = false;
  for await (const line of deps.provider.readResults(handle)) {
    if (line.recordId === null) {
      reading.unmatchedLines += 1;
      if (line.code === 'too_many_unmatched') stopped = true;
      deps.logger.warn('batch result line matches no record', { batchId: header.batchId, code: line.code, line: line.line, source: line.source });
      continue;
    }
    const itemId = itemIdOfRecord(header, line.recordId);
    const item = itemId === undefined ? undefined : items.get(itemId);
    if (!item || !OPEN_ITEM_STATES.has(item.state)) continue;
    touched.add(item.itemId);
    await settleOne(header, item, line, ended, deps, reading);
  }
  // Items of the part no line settled: the reader stopped early (a part is never left with items waiting).
  for (const item of items.values()) {
    if (touched.has(item.itemId) || !inPart(item, part) || (item.state !== 'prepared' && item.state !== 'submitted')) continue;
    const reason = stopped ? OUTPUT_UNREAD : unresolvedReason('no_result', ended);
    await settleOne(header, item, { recordId: item.itemId, ok: false, code: reason, message: 'no line was read for this record' }, ended, deps, reading);
  }
  return reading;
}

function inPart(item: BatchItem, part: ProviderJobRef): boolean {
  return item.itemId >= part.items.first && item.itemId <= part.items.last;
}

/** Settles one item from its line; a failure is recorded on `reading` (and logged), never thrown. */
async function settleOne(
  header: BatchHeader,
  item: BatchItem,
  line: Exclude<ProviderResultLine, { recordId: null }>,
  ended: ProviderJobState,
  deps: ReadPartDeps,
  reading: PartReading,
): Promise<void> {
  try {
    const current = item.state === 'prepared' ? await submittedFirst(header, item, deps) : item;
    if (!current) return;
    const outcome = await outcomeOf(header, current, line, ended, deps);
    // The item stays `sending` with its claim released: the next pass sends it (`sendPending`), the part need not be read again.
    if (outcome.state === 'send_failed') return failed(header, item, outcome.errorName, deps, reading, false);
    if (outcome.state === 'handed') {
      if (outcome.moved) reading.moved.redriven = (reading.moved.redriven ?? 0) + 1;
      return;
    }
    const from = (['submitted', 'unresolved'] as const).filter((s) => canMoveItem(s, outcome.state));
    if (!from.includes(current.state as (typeof from)[number])) return;
    const moved = await deps.manifest.settleItem(header.batchId, current.itemId, {
      from,
      to: outcome.state,
      ...(outcome.reason ? { reason: outcome.reason } : {}),
    });
    if (!moved.moved) return;
    reading.moved[outcome.state] = (reading.moved[outcome.state] ?? 0) + 1;
    if (outcome.state === 'needs_review') await recordReview(header, current, outcome.reason ?? RESULT_UNSTORABLE, deps);
  } catch (error) {
    failed(header, item, errorName(error) ?? 'Error', deps, reading, true);
  }
}

/** Records an item this pass could not settle; with `readAgain` the part stays open, so the next pass reads it again. */
function failed(header: BatchHeader, item: BatchItem, name: string, deps: ReadPartDeps, reading: PartReading, readAgain: boolean): void {
  reading.failed.push({ itemId: item.itemId, errorName: name });
  if (readAgain) reading.complete = false;
  deps.logger.error('batch item could not be settled: the next pass tries it again', { batchId: header.batchId, itemId: item.itemId, error: name });
}

/**
 * An item still `prepared` in a part the provider ran (its submission was cut before it recorded the
 * item `submitted`): recorded `submitted` first. `undefined` when another writer moved it meanwhile.
 */
async function submittedFirst(header: BatchHeader, item: BatchItem, deps: ReadPartDeps): Promise<BatchItem | undefined> {
  const moved = await deps.manifest.settleItem(header.batchId, item.itemId, { from: ['prepared'], to: 'submitted' });
  return moved.moved ? moved.item : undefined;
}

/** What one result line makes of its item (see the module's description). */
async function outcomeOf(
  header: BatchHeader,
  item: BatchItem,
  line: Exclude<ProviderResultLine, { recordId: null }>,
  ended: ProviderJobState,
  deps: ReadPartDeps,
): Promise<LineOutcome> {
  if (!line.ok) return { state: 'unresolved', reason: unresolvedReason(line.code, ended) };
  const job = jobOfItem(item, header, deps.lane);
  const validation = validateOutput(line.content, getExtractionSchema(header.schemaVersion));
  if (!validation.ok) {
    // The repair is the queue lane's: the same job contract, the same idempotency key; sent once.
    const handed = await handOver(item, header, deps, {
      reason: `repair: ${validation.parseStatus}`,
      onFailure: 'release',
      claimed: () =>
        deps.ledger
          .record({
            jobId: job.jobId,
            idempotencyKey: job.idempotencyKey,
            ...(job.tenant !== undefined ? { tenant: job.tenant } : {}),
            region: job.region,
            kind: 'validation_failed',
            reason: validation.parseStatus,
            parseStatus: validation.parseStatus,
            failingFields: validation.failingFields,
            failingRules: validation.failingRules,
            attempt: 0,
            deferrals: 0,
            details: `batch ${header.batchId} item ${item.itemId}: repair goes to the queue lane`,
          })
          .then(() => undefined)
          .catch((error: unknown) => deps.logger.warn('ledger write failed', { jobId: job.jobId, error: errorName(error) })),
    });
    if (handed.outcome === 'send_failed') return { state: 'send_failed', errorName: handed.errorName };
    return { state: 'handed', moved: handed.outcome === 'sent' && handed.settled };
  }
  try {
    const written = await deps.results.commitOnce(
      resultRecordFor(job, { result: validation.value, usage: line.usage, model: deps.lane.provider.model, modelCalls: 1 }, deps.now()),
      commitGuards(deps.ledger.tableName, job, deps.lane.erasure.afterErasure),
    );
    // The item's source was erased, or its job cancelled, while the batch ran: its result is never committed.
    if (written.status === 'erased' || written.status === 'cancelled') return { state: 'rejected', reason: written.status };
    if (written.status === 'committed' || written.existing.jobId === item.jobId) return { state: 'committed' };
    return { state: 'duplicate', reason: `committed by ${written.existing.jobId}` };
  } catch (error) {
    if (error instanceof StoreRecordInvalidError) return { state: 'needs_review', reason: RESULT_UNSTORABLE };
    throw error;
  }
}

/** The ledger entry of an item settled `needs_review` (best effort: the item's state already says it). */
async function recordReview(header: BatchHeader, item: BatchItem, reason: string, deps: ReadPartDeps): Promise<void> {
  await deps.ledger
    .record({
      jobId: item.jobId,
      idempotencyKey: item.idempotencyKey,
      ...(item.tenant !== undefined ? { tenant: item.tenant } : {}),
      region: deps.lane.name,
      kind: 'needs_review',
      reason,
      schemaVersion: header.schemaVersion,
      promptVersion: header.promptVersion,
      attempt: 0,
      deferrals: 0,
      details: `batch ${header.batchId} item ${item.itemId}: the validated result cannot be stored`,
    })
    .catch((error: unknown) => deps.logger.warn('ledger write failed', { jobId: item.jobId, error: errorName(error) }));
}

/**
 * Why an item of a job that ended `ended` is unresolved, from its result line's code: in an expired or
 * cancelled job a record the provider never ran (its `batch_expired` / `batch_cancelled` line, or no
 * line at all) is `expired` / `cancelled`; any other code (a provider error, a refusal, `not_text`) stays as it is.
 */
function unresolvedReason(code: string, ended: ProviderJobState): string {
  if (ended === 'expired' && (code === 'batch_expired' || code === 'no_result')) return 'expired';
  if (ended === 'cancelled' && (code === 'batch_cancelled' || code === 'no_result')) return 'cancelled';
  return code;
}
