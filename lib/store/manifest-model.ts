/**
 * The batch manifest's model: the states of a batch, a provider job and an item, the one table of
 * item moves ({@link ITEM_TRANSITIONS}), the item ids ({@link itemIdFor}) and the record ids sent to the
 * provider ({@link recordIdOf}: the item id behind the batch's own prefix), the stored shapes and the
 * manifest's errors. Pure: no AWS client; `manifest.ts` stores it and re-exports it.
 */
import { createHash } from 'node:crypto';
import { TENANT_PATTERN } from '../contract/job.js';
import { RatelaneError } from '../platform/errors.js';
import { StoreRecordInvalidError } from './errors.js';

/** A batch's states: created while `submitting`, `done` when every item is settled. */
const BATCH_STATES = ['submitting', 'submitted', 'reconciling', 'done', 'cancelling', 'cancelled'] as const;
/** One of {@link BATCH_STATES}. */
export type BatchState = (typeof BATCH_STATES)[number];
/** States of one provider job (an OpenAI batch or a Bedrock model invocation job). */
export const PROVIDER_JOB_STATES = ['pending_submit', 'submitted', 'in_progress', 'finished', 'expired', 'cancelled', 'failed'] as const;
/** One of {@link PROVIDER_JOB_STATES}. */
export type ProviderJobState = (typeof PROVIDER_JOB_STATES)[number];
/**
 * States of one item; all but `prepared`, `submitted`, `unresolved` and `sending` are final. `sending`: the
 * item is being handed to the queue lane (a repair or a redrive); one reconciler or redrive claimed it
 * (its claim ends at `claimUntil`) and its message is not yet known to be sent.
 */
export const ITEM_STATES = ['prepared', 'submitted', 'committed', 'duplicate', 'needs_review', 'rejected', 'unresolved', 'sending', 'redriven'] as const;
/** One of {@link ITEM_STATES}. */
export type ItemState = (typeof ITEM_STATES)[number];

/**
 * The one definition of the item moves (from → allowed to). No state moves to itself, so a settle
 * repeated by a second reconcile is refused by the condition. `unresolved` (missing from the output)
 * may still settle from a late output or be handed on. An item reaches the queue lane only through
 * `sending` (claimed first, then sent, then `redriven`): two reconcilers or redrives never both send it;
 * a redrive whose send failed puts it back `unresolved`. A lapsed claim is taken again in `sending`
 * (`BatchManifest.claimSend`), not by a move.
 */
export const ITEM_TRANSITIONS: Readonly<Record<ItemState, readonly ItemState[]>> = Object.freeze({
  prepared: ['submitted', 'rejected', 'unresolved', 'redriven'],
  submitted: ['committed', 'duplicate', 'needs_review', 'rejected', 'unresolved', 'sending'],
  unresolved: ['committed', 'duplicate', 'needs_review', 'rejected', 'sending'],
  sending: ['redriven', 'unresolved'],
  committed: [],
  duplicate: [],
  needs_review: [],
  rejected: [],
  redriven: [],
});

/** Provider job moves (from → allowed to); a state may be written again (progress, refs), never left backwards. */
export const PROVIDER_JOB_TRANSITIONS: Readonly<Record<ProviderJobState, readonly ProviderJobState[]>> = Object.freeze({
  pending_submit: ['pending_submit', 'submitted', 'failed', 'cancelled'],
  // Back to waiting only when the provider refused the job as a throttle before running it (an enqueued-token limit).
  submitted: ['submitted', 'pending_submit', 'in_progress', 'finished', 'expired', 'cancelled', 'failed'],
  in_progress: ['in_progress', 'finished', 'expired', 'cancelled', 'failed'],
  finished: ['finished'],
  expired: ['expired'],
  cancelled: ['cancelled'],
  failed: ['failed'],
});

/** Whether {@link ITEM_TRANSITIONS} lets an item move from `from` to `to`. */
export function canMoveItem(from: ItemState, to: ItemState): boolean {
  return ITEM_TRANSITIONS[from]?.includes(to) ?? false;
}

/** Sort key of a batch's header item (`#` sorts before every item id). */
export const HEADER_ITEM_ID = '#header';
/** An item id: `r` and a 10-digit index, 11 alphanumeric characters (fits Bedrock's `recordId`, "11 character alphanumeric string"). */
export const ITEM_ID_PATTERN = /^r\d{10}$/;
/** A batch's record prefix: empty (manifests written before prefixes, or no room), else ends with `.`. */
const RECORD_PREFIX_PATTERN = /^(?:[A-Za-z0-9-]{1,116}\.)?$/;
/** The largest index {@link itemIdFor} accepts. */
export const MAX_ITEM_INDEX = 9_999_999_999;
/** Characters of an item id. */
const ITEM_ID_LENGTH = 11;
/** Items per `BatchWriteItem` call (DynamoDB's limit). */
export const BATCH_WRITE_CHUNK = 25;
/** Default retention of a batch's items (TTL from its `createdAt`). */
export const DEFAULT_MANIFEST_RETENTION_DAYS = 90;
/** Longest `reason` kept (a short machine-readable reason, never document text). */
const MAX_REASON_LENGTH = 200;

/** The stable record id of the item at `index` (0-based): `itemIdFor(42)` is `r0000000042`. */
export function itemIdFor(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index > MAX_ITEM_INDEX)
    throw new RangeError(`item index must be an integer in 0..${MAX_ITEM_INDEX}, got ${index}`);
  return `r${String(index).padStart(10, '0')}`;
}

/** The index an item id stands for, or `undefined` when it is not one (an unknown `custom_id` in an output file). */
export function itemIndexOf(itemId: string): number | undefined {
  return ITEM_ID_PATTERN.test(itemId) ? Number(itemId.slice(1)) : undefined;
}

/**
 * The record prefix of a new batch: what makes its record ids its own, so an output line of another
 * batch never names one of its items. The batch id and a `.` when the record id (prefix and the
 * 11-character item id) fits `maxRecordIdLength` and the id is letters, digits and `-` (`b-<uuid>`:
 * 50 characters in all); else `h`, hex digits of the batch id's SHA-256 and `.` (at least 8 digits);
 * else none (Bedrock's 11 characters leave no room: its output is told apart by the job's own folder).
 */
export function recordPrefixFor(batchId: string, maxRecordIdLength: number): string {
  const room = maxRecordIdLength - ITEM_ID_LENGTH;
  if (/^[A-Za-z0-9-]+$/.test(batchId) && batchId.length + 1 <= Math.min(room, 117)) return `${batchId}.`;
  const digits = Math.min(24, room - 2);
  return digits >= 8 ? `h${createHash('sha256').update(batchId).digest('hex').slice(0, digits)}.` : '';
}

/** The record id an item of the batch is sent under: its prefix (none for a batch written before prefixes) and its item id. */
export function recordIdOf(header: Pick<BatchHeader, 'recordPrefix'>, itemId: string): string {
  return `${header.recordPrefix ?? ''}${itemId}`;
}

/** The item id a record id of the batch names, or `undefined` when it is not one of the batch's record ids. */
export function itemIdOfRecord(header: Pick<BatchHeader, 'recordPrefix'>, recordId: string): string | undefined {
  const prefix = header.recordPrefix ?? '';
  if (!recordId.startsWith(prefix)) return undefined;
  const itemId = recordId.slice(prefix.length);
  return ITEM_ID_PATTERN.test(itemId) ? itemId : undefined;
}

/**
 * The item id at the end of a record id of any batch (`b-….r0000000042` or `r0000000042`), or
 * `undefined`: for tools that compare a provider's record ids with item ids across batches.
 */
export function itemIdInRecordId(recordId: string): string | undefined {
  const itemId = recordId.slice(-ITEM_ID_LENGTH);
  const prefix = recordId.slice(0, -ITEM_ID_LENGTH);
  return ITEM_ID_PATTERN.test(itemId) && RECORD_PREFIX_PATTERN.test(prefix) ? itemId : undefined;
}

/** The lane's manifest table name until the lane config has one: `-results` becomes `-batch-manifest`. */
export function manifestTableName(lane: { name: string; resources: { resultsTable: string } }): string {
  const results = lane.resources.resultsTable;
  return results.endsWith('-results') ? `${results.slice(0, -'-results'.length)}-batch-manifest` : `${results}-batch-manifest`;
}

/** One provider job of a batch, keyed in the header by `partId` (stable before the provider assigns an id). */
export interface ProviderJobRef {
  /** Client-side id of this part of the batch (`p000`), unique in the batch. */
  partId: string;
  /** The provider's id (OpenAI batch id, Bedrock job ARN), once submitted. */
  providerJobId?: string;
  kind: 'openai' | 'bedrock';
  /** The input file id (OpenAI) or S3 URI (Bedrock). */
  inputRef: string;
  state: ProviderJobState;
  /** The items it carries: first and last item id and how many. */
  items: { first: string; last: string; count: number };
  outputRef?: string;
  errorRef?: string;
  submittedAt?: string;
  endedAt?: string;
  /** When a throttled submission may be tried again (ISO 8601). */
  nextSubmitAt?: string;
}

/** A batch's header item. */
export interface BatchHeader {
  batchId: string;
  /** The region lane (`us`, `eu`). */
  lane: string;
  createdAt: string;
  updatedAt: string;
  state: BatchState;
  schemaVersion: string;
  promptVersion: string;
  itemCount: number;
  /**
   * What the batch's record ids start with ({@link recordPrefixFor}); absent in manifests written before
   * record prefixes, whose record ids are the item ids.
   */
  recordPrefix?: string;
  /** In `partId` order. */
  providerJobs: ProviderJobRef[];
  reason?: string;
  /**
   * Items whose sources were erased while the provider may still keep their records (its files): the
   * reconciler removes those records there once the items' provider jobs have ended, then takes the ids
   * off ({@link BatchManifest.markErased}). Absent: none waiting.
   */
  erasedItems?: string[];
  /** When the reconciler last removed erased records from the provider's files (ISO 8601). */
  providerRecordsErasedAt?: string;
  /** Optimistic concurrency: every header write adds one, but the erasure marks (commutative set updates). */
  version: number;
  /** TTL, epoch seconds. */
  expiresAt: number;
}

/** One document of a batch. */
export interface BatchItem {
  batchId: string;
  /** The record id sent to the provider ({@link itemIdFor}). */
  itemId: string;
  sourceId: string;
  jobId: string;
  /** Who the job belongs to, when its producer stated one (`Job.tenant`: part of its idempotency key). */
  tenant?: string;
  idempotencyKey: string;
  contentSha256: string;
  /** S3 key of the document in the lane's bucket. */
  documentKey: string;
  bytes: number;
  estimatedTokens: number;
  providerJobId?: string;
  state: ItemState;
  reason?: string;
  /** While `sending`: when its claim lapses (ISO 8601); a lapsed or released claim may be taken again. */
  claimUntil?: string;
  updatedAt: string;
  version: number;
  expiresAt: number;
}

/** What {@link BatchManifest.createBatch} takes for the header; it starts `submitting`, version 1. */
export type NewBatch = Pick<BatchHeader, 'batchId' | 'lane' | 'schemaVersion' | 'promptVersion'> & {
  createdAt?: string;
  providerJobs?: ProviderJobRef[];
  recordPrefix?: string;
};
/** What {@link BatchManifest.createBatch} takes per item; it starts `prepared`, version 1. */
export type NewBatchItem = Pick<
  BatchItem,
  'itemId' | 'sourceId' | 'jobId' | 'tenant' | 'idempotencyKey' | 'contentSha256' | 'documentKey' | 'bytes' | 'estimatedTokens'
>;
/** The header fields {@link BatchManifest.updateHeader} may change. */
export interface HeaderChange {
  state?: BatchState;
  reason?: string;
}
/** A conditional header write: done (the header as it is now), or refused (the header as it was, if any). */
export type HeaderWrite = { ok: true; header: BatchHeader } | { ok: false; current: BatchHeader | undefined };
/** A move asked of {@link BatchManifest.settleItem}. */
export interface ItemMove {
  /** The states the item may be in; each must reach `to` in {@link ITEM_TRANSITIONS}. */
  from: readonly ItemState[];
  /** Any state but `sending` (an item is claimed with {@link BatchManifest.claimSend}). */
  to: ItemState;
  /** Set with the move; without it an earlier reason is removed. */
  reason?: string;
  /** Set with the move (when the item is `submitted`). */
  providerJobId?: string;
  /** Only if the item is still at this version (the one a claim wrote): the claim is still this caller's. */
  version?: number;
}
/** A claim asked of {@link BatchManifest.claimSend}. */
export interface SendClaim {
  /** The states it may be claimed from: `submitted`, `unresolved`, or `sending` whose claim has lapsed or was released. */
  from: readonly ('submitted' | 'unresolved' | 'sending')[];
  /** Set with the claim; without it the item keeps its reason. */
  reason?: string;
  /** How long the claim holds (ms): after it, another reconciler or redrive may take the item again. */
  leaseMs: number;
}
/** What {@link BatchManifest.settleItem} did. */
export type ItemSettlement = { moved: true; item: BatchItem } | { moved: false; current: BatchItem | undefined };

/** The batch id is taken: a batch is created once. */
export class BatchExistsError extends RatelaneError {
  override name = 'BatchExistsError';
  readonly kind = 'conflict' as const;
  readonly retryable = false;
  constructor(
    readonly batchId: string,
    readonly tableName: string,
    options?: { cause?: unknown },
  ) {
    super(`batch ${batchId} already exists in table ${tableName}`, options);
  }
}

/** A move {@link ITEM_TRANSITIONS} does not allow was asked for: a bug in the caller, nothing was written. */
export class ItemTransitionError extends RatelaneError {
  override name = 'ItemTransitionError';
  readonly kind = 'internal' as const;
  readonly retryable = false;
}

/** A batch id, part id or job id: what the lane's job ids allow. */
export const MANIFEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
const HEX64 = /^[a-f0-9]{64}$/;

/** `reason` cut to {@link MAX_REASON_LENGTH}. */
export function reasonOf(reason: string | undefined): string | undefined {
  return reason === undefined ? undefined : reason.slice(0, MAX_REASON_LENGTH);
}

/** A provider job ref with only its known fields (anything else a caller's object carries is dropped). */
export function providerJobRefOf(ref: ProviderJobRef): ProviderJobRef {
  const { partId, providerJobId, kind, inputRef, state, items, outputRef, errorRef, submittedAt, endedAt, nextSubmitAt } = ref;
  const range = { first: items.first, last: items.last, count: items.count };
  const known = { partId, providerJobId, kind, inputRef, state, items: range, outputRef, errorRef, submittedAt, endedAt, nextSubmitAt };
  return Object.fromEntries(Object.entries(known).filter(([, value]) => value !== undefined)) as unknown as ProviderJobRef;
}

/**
 * The records {@link BatchManifest.createBatch} writes: the header (`submitting`, version 1) and the
 * items (`prepared`, version 1), built field by field, so nothing but the listed fields (no text) is stored.
 *
 * @throws {@link StoreRecordInvalidError} for an invalid batch id, `createdAt`, lane, part or item, a
 *   repeated part or item id, or no items.
 */
export function prepareBatch(
  batch: NewBatch,
  items: readonly NewBatchItem[],
  at: { now: Date; retentionSeconds: number; tableName: string },
): { header: BatchHeader; items: BatchItem[] } {
  const check = (ok: boolean, message: string): void => {
    if (!ok) throw new StoreRecordInvalidError(`batch ${batch.batchId}: ${message}`, at.tableName);
  };
  const updatedAt = at.now.toISOString();
  const createdAt = batch.createdAt ?? updatedAt;
  const createdMs = Date.parse(createdAt);
  check(MANIFEST_ID_PATTERN.test(batch.batchId) && !Number.isNaN(createdMs), 'invalid batch id or createdAt');
  check(items.length > 0 && batch.lane.length > 0, 'no items or no lane');
  const expiresAt = Math.floor(createdMs / 1000) + at.retentionSeconds;
  const parts = new Set<string>();
  const providerJobs = (batch.providerJobs ?? []).map((ref) => {
    check(MANIFEST_ID_PATTERN.test(ref.partId) && !parts.has(ref.partId), `provider job part ${ref.partId} is invalid or repeated`);
    parts.add(ref.partId);
    return providerJobRefOf(ref);
  });
  const seen = new Set<string>();
  const records = items.map(({ itemId, sourceId, jobId, tenant, idempotencyKey, contentSha256, documentKey, bytes, estimatedTokens }) => {
    const ids =
      ITEM_ID_PATTERN.test(itemId) &&
      !seen.has(itemId) &&
      sourceId.length > 0 &&
      MANIFEST_ID_PATTERN.test(jobId) &&
      (tenant === undefined || TENANT_PATTERN.test(tenant)) &&
      documentKey.length > 0;
    const sizes = Number.isInteger(bytes) && bytes >= 0 && Number.isInteger(estimatedTokens) && estimatedTokens >= 0;
    check(ids && sizes && HEX64.test(idempotencyKey) && HEX64.test(contentSha256), `item ${itemId} is invalid or repeated`);
    seen.add(itemId);
    const fields = { sourceId, jobId, ...(tenant !== undefined ? { tenant } : {}), idempotencyKey, contentSha256, documentKey, bytes, estimatedTokens };
    return { batchId: batch.batchId, itemId, ...fields, state: 'prepared', updatedAt, version: 1, expiresAt } satisfies BatchItem;
  });
  check(RECORD_PREFIX_PATTERN.test(batch.recordPrefix ?? ''), 'invalid record prefix');
  const { batchId, lane, schemaVersion, promptVersion } = batch;
  const fields = {
    batchId,
    lane,
    createdAt,
    updatedAt,
    state: 'submitting' as const,
    schemaVersion,
    promptVersion,
    itemCount: items.length,
    ...(batch.recordPrefix ? { recordPrefix: batch.recordPrefix } : {}),
  };
  return { header: { ...fields, providerJobs: providerJobs.sort((a, b) => (a.partId < b.partId ? -1 : 1)), version: 1, expiresAt }, items: records };
}
