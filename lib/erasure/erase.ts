/**
 * Erasing a source in one lane (`ratelane erase`, `RatelaneClient.erase`): its tombstone is laid first —
 * from then on no job of the source is called for or committed in the lane (checked at receive and in
 * the commit's own transaction: lib/extraction/erased.ts) — then what the lane holds of it is removed:
 * every claimed job's result, ledger entries and status (a marker `erased` left per job), and the source's
 * documents. A job still queued is stopped when it is received (its document removed then). Idempotent: an
 * erasure run again removes what appeared since and adds to the tombstone's count. It touches the lane's
 * own tables and bucket only; in a lane that holds nothing of the source it finds nothing and says so.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { LaneConfig } from '../config/lanes.js';
import { errorName, RatelaneError } from '../platform/errors.js';
import { realSleep } from '../platform/sleep.js';
import { deleteDocument, DocumentStoreError } from '../store/documents.js';
import type { ErasureLedger, SourceJob, Tombstone } from '../store/erasure.js';
import { laneStores } from '../store/lane-stores.js';
import type { BatchManifest } from '../store/manifest.js';
import { recordIdOf } from '../store/manifest-model.js';
import { BATCH_PREFIX, batchApiOf } from '../config/names.js';
import { type BatchFilesErased, eraseBatchFileLines } from '../lanes/batch/providers/bedrock-files.js';
import type { ResultStore } from '../store/results.js';

/** What an erasure reads and writes: the lane's ledger (erasure records), results and bucket. */
export interface EraseDeps {
  lane: LaneConfig;
  erasure: ErasureLedger;
  results: ResultStore;
  s3: S3Client;
  now: () => Date;
  /**
   * The lane's batch manifest, when the erasure is to reach the source's batch items (their jobs'
   * results and ledger entries; an operator's erasure). Absent: the queue and live lanes' jobs only.
   */
  manifest?: Pick<BatchManifest, 'itemsOfSource' | 'header' | 'settleItem' | 'markErased'> | undefined;
  /** Waits between the two passes (default: the real sleep). */
  sleep?: (ms: number) => Promise<void>;
  /**
   * How long the second pass waits for the ledger's source index (default 1 s: DynamoDB's global secondary
   * indexes are eventually consistent). 0 against DynamoDB Local, whose indexes are updated with the write.
   */
  indexSettleMs?: number;
}

/**
 * The erasure dependencies of `lane` on its own tables and bucket (its batch manifest too, when the lane
 * takes batches). `local`: the clients point at the local stack (DynamoDB Local updates its indexes with the write: no second pass to wait for).
 */
export function laneEraseDeps(
  lane: LaneConfig,
  clients: { dynamodb: DynamoDBClient; s3: S3Client },
  options: { now?: (() => Date) | undefined; local?: boolean | undefined } = {},
): EraseDeps {
  const now = options.now ?? (() => new Date());
  const { manifest, erasure, results } = laneStores(lane, clients.dynamodb, { now });
  return {
    lane,
    ...(lane.batch.enabled ? { manifest } : {}),
    erasure,
    results,
    s3: clients.s3,
    now,
    ...(options.local ? { indexSettleMs: 0 } : {}),
  };
}

/** One job of the source, as the erasure left it. */
export interface ErasedJob {
  jobId: string;
  idempotencyKey: string;
  /** Whether a committed result was removed. */
  resultRemoved: boolean;
  /** Ledger items removed (the claim and every entry; its `erased` marker is left). */
  ledgerItemsRemoved: number;
}

/** A batch item of the source, as the erasure left it (the manifest keeps its ids and hashes until its retention). */
export interface ErasedBatchItem {
  batchId: string;
  itemId: string;
  jobId: string;
  /** Whether a committed result was removed. */
  resultRemoved: boolean;
  /** Ledger items of its job removed. */
  ledgerItemsRemoved: number;
}

/** The receipt of one erasure: what it removed, and the tombstone it left. No document text. */
export interface ErasureReceipt {
  lane: string;
  region: string;
  sourceId: string;
  /** Who ran this erasure, and when (ISO 8601). */
  by: string;
  at: string;
  /** Whether the lane held anything of the source (a job it claimed, or a document an earlier erasure or stopped job recorded). */
  found: boolean;
  jobs: ErasedJob[];
  /**
   * The source's batch items (when the erasure read the manifest: `null` when it did not). One not yet
   * answered is settled `rejected` (reason `erased`): never sent again nor handed on; a batch still at
   * the provider commits none of them (its commit checks the tombstone).
   */
  batchItems: ErasedBatchItem[] | null;
  /**
   * The batches whose provider may still keep the source's records (OpenAI's input, output and error
   * files; a Bedrock job's output written after this erasure): the lane's reconciler removes them once the
   * jobs holding them have ended (`lib/lanes/batch/erased-records.ts`); `null` when the manifest was not read.
   */
  batchRecordsPending: string[] | null;
  /**
   * The batch files in the lane's bucket rewritten without the source's records (a Bedrock lane's input and
   * output JSONL under `batch/<batchId>/`); `null` when the erasure did not read the manifest or the lane's
   * batches are not Bedrock's (OpenAI holds its batch files itself: see `batchRecordsPending`).
   */
  batchFiles: BatchFilesErased[] | null;
  /** The document keys removed from the lane's bucket (`documents/<sha256>`). */
  documents: string[];
  /** The tombstone as it stands after this erasure: first erased when and by whom, how many erasures. */
  tombstone: Tombstone;
  /** What the lane does with a new job of the source (`erasure.afterErasure`). */
  afterErasure: LaneConfig['erasure']['afterErasure'];
}

/** Raised when an erasure cannot go on; what it removed so far stays removed, and running it again finishes it (callers say so). */
export class ErasureError extends RatelaneError {
  override name = 'ErasureError';
  readonly kind = 'unavailable' as const;
  readonly retryable = true;
}

/** How long the second pass waits for the ledger's source index to settle (ms). */
const INDEX_SETTLE_MS = 1_000;

/** Erases the jobs of the source the index shows now that `jobs` does not hold yet; returns them. */
async function eraseClaimed(deps: EraseDeps, sourceId: string, by: string, jobs: ErasedJob[]): Promise<SourceJob[]> {
  const done = new Set(jobs.map((j) => j.jobId));
  const found = (await deps.erasure.jobsOf(sourceId)).filter((j) => !done.has(j.jobId));
  // Their documents' hashes go on the tombstone before their claims go: an erasure cut off after this
  // still finds the documents when it runs again.
  await deps.erasure.recordHashes(
    sourceId,
    found.map((j) => j.contentSha256),
  );
  for (const job of found) {
    const resultRemoved = await deps.results.delete(job.idempotencyKey);
    const ledgerItemsRemoved = await deps.erasure.eraseJob(job.jobId, sourceId, by);
    jobs.push({ jobId: job.jobId, idempotencyKey: job.idempotencyKey, resultRemoved, ledgerItemsRemoved });
  }
  return found;
}

/** Removes the results and ledger entries of the source's batch items' jobs (those not already among `jobs`). */
async function eraseBatchItems(
  deps: EraseDeps,
  sourceId: string,
  by: string,
  jobs: readonly ErasedJob[],
): Promise<Array<ErasedBatchItem & { contentSha256: string }>> {
  const manifest = deps.manifest as NonNullable<EraseDeps['manifest']>;
  const items = await manifest.itemsOfSource(sourceId);
  await deps.erasure.recordHashes(
    sourceId,
    items.map((i) => i.contentSha256),
  );
  const done = new Map(jobs.map((j) => [j.jobId, j]));
  const erased: Array<ErasedBatchItem & { contentSha256: string }> = [];
  for (const item of items) {
    // Not answered yet: never sent again (its document goes below) nor handed on; one being handed on is stopped at its receive.
    await manifest.settleItem(item.batchId, item.itemId, { from: ['prepared', 'submitted', 'unresolved'], to: 'rejected', reason: 'erased' });
    const job = done.get(item.jobId);
    const resultRemoved = job ? job.resultRemoved : await deps.results.delete(item.idempotencyKey);
    const ledgerItemsRemoved = job ? 0 : await deps.erasure.eraseJob(item.jobId, sourceId, by);
    erased.push({ batchId: item.batchId, itemId: item.itemId, jobId: item.jobId, resultRemoved, ledgerItemsRemoved, contentSha256: item.contentSha256 });
  }
  for (const [batchId, itemIds] of itemIdsByBatch(items)) await manifest.markErased(batchId, itemIds);
  return erased;
}

function itemIdsByBatch(items: ReadonlyArray<{ batchId: string; itemId: string }>): Map<string, string[]> {
  const byBatch = new Map<string, string[]>();
  for (const item of items) byBatch.set(item.batchId, [...(byBatch.get(item.batchId) ?? []), item.itemId]);
  return byBatch;
}

/** Rewrites the Bedrock batch files of the items' batches without their records. */
async function eraseBedrockLines(deps: EraseDeps, items: readonly ErasedBatchItem[]): Promise<BatchFilesErased[]> {
  const erased: BatchFilesErased[] = [];
  for (const [batchId, itemIds] of itemIdsByBatch(items)) {
    const header = await (deps.manifest as NonNullable<EraseDeps['manifest']>).header(batchId);
    const recordIds = new Set(itemIds.map((itemId) => recordIdOf(header ?? {}, itemId)));
    try {
      const location = { bucket: deps.lane.resources.bucketName, batchId, prefix: `${BATCH_PREFIX}${batchId}/` };
      erased.push(await eraseBatchFileLines(deps.s3, location, recordIds));
    } catch (error) {
      throw new ErasureError(
        `erasing a source in lane ${deps.lane.name} stopped: the files of batch ${batchId} could not be rewritten (${errorName(error) ?? 'Error'})`,
        {
          cause: error,
        },
      );
    }
  }
  return erased;
}

/** A source id as a job carries one: 1–512 characters (`lib/contract/job.ts`). */
const MAX_SOURCE_ID = 512;

/**
 * Erases `sourceId` in the lane (see the module's description) and returns the receipt.
 *
 * @throws {@link ErasureError} (a store or the bucket failed: run it again), or a `TypeError` for a source id
 *   no job could carry (empty, or over 512 characters)
 */
export async function eraseSource(deps: EraseDeps, request: { sourceId: string; by: string }): Promise<ErasureReceipt> {
  const { sourceId, by } = request;
  if (sourceId.length === 0 || sourceId.length > MAX_SOURCE_ID) throw new TypeError(`a source id is 1-${MAX_SOURCE_ID} characters, as a job carries it`);
  const at = deps.now().toISOString();
  try {
    // The tombstone first: a job that commits after this point cannot, one that committed before is found below.
    const laid = await deps.erasure.layTombstone(sourceId, by, []);
    const jobs: ErasedJob[] = [];
    const claimed = await eraseClaimed(deps, sourceId, by, jobs);
    // The source index is eventually consistent: a job claimed just before the tombstone may show only
    // a moment later. A second pass after the index settles finds it (and anything still missed is
    // stopped at its commit or next receive, and found by running the erasure again).
    const settleMs = deps.indexSettleMs ?? INDEX_SETTLE_MS;
    if (settleMs > 0) await (deps.sleep ?? realSleep)(settleMs);
    claimed.push(...(await eraseClaimed(deps, sourceId, by, jobs)));
    const batchItems = deps.manifest ? await eraseBatchItems(deps, sourceId, by, jobs) : null;
    const batchFiles = batchItems && batchApiOf(deps.lane.provider) === 'bedrock' ? await eraseBedrockLines(deps, batchItems) : null;
    const hashes = [...new Set([...laid.contentSha256s, ...claimed.map((j) => j.contentSha256), ...(batchItems ?? []).map((i) => i.contentSha256)])].sort();
    const documents: string[] = [];
    for (const contentSha256 of hashes) documents.push(await deleteDocument(deps.s3, { bucket: deps.lane.resources.bucketName, contentSha256 }));
    await deps.erasure.recordHashes(sourceId, hashes);
    const tombstone = (await deps.erasure.tombstone(sourceId)) ?? laid;
    return {
      lane: deps.lane.name,
      region: deps.lane.region,
      sourceId,
      by,
      at,
      found: jobs.length > 0 || hashes.length > 0 || (batchItems?.length ?? 0) > 0,
      jobs,
      batchItems: batchItems?.map(({ contentSha256: _, ...item }) => item) ?? null,
      batchRecordsPending: batchItems ? [...new Set(batchItems.map((i) => i.batchId))].sort() : null,
      batchFiles,
      documents,
      tombstone,
      afterErasure: deps.lane.erasure.afterErasure,
    };
  } catch (error) {
    if (error instanceof RatelaneError && (error.kind === 'unavailable' || error instanceof DocumentStoreError)) {
      throw new ErasureError(`erasing a source in lane ${deps.lane.name} stopped: ${error.message}`, { cause: error });
    }
    throw error;
  }
}
