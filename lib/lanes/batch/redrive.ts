/**
 * Redriving a batch: every item left `unresolved` (no line, an error line, an answer that is not text,
 * an expired or cancelled job) is handed to the lane's queue as the same job the batch was for — its job
 * id and idempotency key unchanged, its document already in the lane's bucket (`jobOfItem`) — where the
 * queue lane extracts, validates and commits it once.
 *
 * Each item is **claimed, then sent, then settled** (`handover.ts`): a conditional write moves it
 * `unresolved` → `sending` first, so of two redrives (or a redrive and a reconcile pass) running at once
 * only one sends it; once sent it is `redriven` (reason `redrive`). A send that fails puts the item back
 * `unresolved` with its reason, and a later redrive sends it. An item left `sending` (a send that failed
 * during a reconcile pass, a redrive that died after its claim) is sent too once its claim is released or
 * has lapsed. A redrive run twice sends nothing the second time. Items of a part still open (waiting to
 * be submitted, submitted, running) are not touched: their job may still answer them. Reports and logs
 * carry ids and error names only, never document text.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LaneConfig } from '../../config/lanes.js';
import type { BatchManifest } from '../../store/manifest.js';
import type { BatchHeader, BatchItem, ProviderJobRef } from '../../store/manifest-model.js';
import { claimLapsed, handOver } from './handover.js';
import { BatchNotFoundError, mapLimited } from './status.js';

/** What redriving reads and writes. */
export interface RedriveBatchDeps {
  lane: LaneConfig;
  manifest: Pick<BatchManifest, 'header' | 'items' | 'claimSend' | 'settleItem' | 'releaseClaim'>;
  /** The lane's SQS client and queue: the queue lane's consumer takes the jobs from there. */
  sqs: SQSClient;
  queueUrl: string;
  now: () => Date;
  logger?: Pick<Logger, 'info' | 'warn'>;
  /** Items sent at once (default 8). */
  concurrency?: number;
}

/** What {@link redriveBatch} did. */
export interface RedriveBatchReport {
  batchId: string;
  /** Items sent to the queue by this call. */
  redriven: number;
  /** Their item ids, in item id order. */
  itemIds: string[];
  /** Items that could not be sent (they are unresolved again, or left to send; a later redrive tries them again). */
  failed: { itemId: string; errorName: string }[];
}

/** Reason an item redriven by an operator carries. */
const REDRIVE_REASON = 'redrive';

const OPEN_PARTS: ReadonlySet<ProviderJobRef['state']> = new Set(['pending_submit', 'submitted', 'in_progress']);

/** Whether `item` belongs to a part that has not ended (by the part's item range). */
function inOpenPart(item: BatchItem, header: BatchHeader): boolean {
  return header.providerJobs.some((p) => OPEN_PARTS.has(p.state) && item.itemId >= p.items.first && item.itemId <= p.items.last);
}

/**
 * Sends every unresolved item of `batchId` whose part has ended to the lane's queue, each claimed first
 * and settled `redriven` once sent, and the items left to send (see the module's description).
 *
 * @throws {@link BatchNotFoundError} when the lane's manifest has no such batch.
 * @throws {@link StoreUnavailableError} when the manifest cannot be read or an item cannot be claimed
 *   or settled (an item sent and not settled stays `sending` and is sent again once its claim lapses).
 */
export async function redriveBatch(batchId: string, deps: RedriveBatchDeps): Promise<RedriveBatchReport> {
  const header = await deps.manifest.header(batchId);
  if (!header) throw new BatchNotFoundError(batchId);
  const now = deps.now();
  const candidates = (await deps.manifest.items(batchId)).filter((i) => (i.state === 'unresolved' && !inOpenPart(i, header)) || claimLapsed(i, now));
  const outcomes = await mapLimited(candidates, Math.max(1, deps.concurrency ?? 8), async (item) => {
    const handed = await handOver(item, header, deps, {
      ...(item.state === 'unresolved' ? { reason: REDRIVE_REASON } : {}),
      onFailure: 'unresolved',
    });
    return { itemId: item.itemId, handed };
  });
  const report: RedriveBatchReport = { batchId, redriven: 0, itemIds: [], failed: [] };
  for (const { itemId, handed } of outcomes) {
    if (handed.outcome === 'send_failed') report.failed.push({ itemId, errorName: handed.errorName });
    else if (handed.outcome === 'sent') report.itemIds.push(itemId);
  }
  report.redriven = report.itemIds.length;
  const skipped = outcomes.length - report.redriven - report.failed.length;
  deps.logger?.info('batch redriven', {
    batchId,
    lane: deps.lane.name,
    redriven: report.redriven,
    failed: report.failed.length,
    ...(skipped > 0 ? { settledElsewhere: skipped } : {}),
    at: now.toISOString(),
  });
  return report;
}
