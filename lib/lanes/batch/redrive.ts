/**
 * Redriving a batch: every item left `unresolved` (no line, an error line, an expired or cancelled
 * job) is handed to the lane's queue as the same job the batch was for — its job id and idempotency
 * key unchanged, its document already in the lane's bucket ({@link jobOfItem}) — where the queue lane
 * extracts, validates and commits it once.
 *
 * Each item is **sent first, then settled** `unresolved` → `redriven` (reason `redrive`): a crash
 * between the two leaves the item unresolved and a second redrive sends it again, which at worst is a
 * duplicate message that commit-once suppresses; settling first could lose the item. A redrive run
 * twice sends nothing the second time (no item is unresolved any more). Items of a part still open
 * (waiting to be submitted, submitted, running) are not touched: their job may still answer them.
 * Reports and logs carry ids and error names only, never document text.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LaneConfig } from '../../config/lanes.js';
import { resendDeferred } from '../queue/reschedule.js';
import { errorName } from '../../platform/errors.js';
import type { BatchManifest } from '../../store/manifest.js';
import type { BatchHeader, BatchItem, ProviderJobRef } from '../../store/manifest-model.js';
import { jobOfItem } from './reconcile.js';
import { BatchNotFoundError, mapLimited } from './status.js';

/** What redriving reads and writes. */
export interface RedriveBatchDeps {
  lane: LaneConfig;
  manifest: Pick<BatchManifest, 'header' | 'items' | 'settleItem'>;
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
  /** Items sent to the queue and settled `redriven` by this call. */
  redriven: number;
  /** Their item ids, in item id order. */
  itemIds: string[];
  /** Items that could not be sent (they stay unresolved; a later redrive tries them again). */
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
 * Sends every unresolved item of `batchId` whose part has ended to the lane's queue, then settles it
 * `redriven` (see the module's description).
 *
 * @throws {@link BatchNotFoundError} when the lane's manifest has no such batch.
 * @throws {@link StoreUnavailableError} when the manifest cannot be read or an item cannot be settled
 *   (the items sent before it are settled; the one sent is sent again by the next redrive).
 */
export async function redriveBatch(batchId: string, deps: RedriveBatchDeps): Promise<RedriveBatchReport> {
  const header = await deps.manifest.header(batchId);
  if (!header) throw new BatchNotFoundError(batchId);
  const candidates = (await deps.manifest.items(batchId)).filter((i) => i.state === 'unresolved' && !inOpenPart(i, header));
  const outcomes = await mapLimited(candidates, Math.max(1, deps.concurrency ?? 8), async (item) => {
    try {
      await resendDeferred({ sqs: deps.sqs, queueUrl: deps.queueUrl, job: jobOfItem(item, header, deps.lane), delaySeconds: 0 });
    } catch (error) {
      return { itemId: item.itemId, sent: false as const, errorName: errorName(error) ?? 'Error' };
    }
    // Sent: only now is it settled (a late output or another redrive may have moved it first: then it is not counted).
    const settled = await deps.manifest.settleItem(batchId, item.itemId, { from: ['unresolved'], to: 'redriven', reason: REDRIVE_REASON });
    return { itemId: item.itemId, sent: true as const, moved: settled.moved };
  });
  const report: RedriveBatchReport = { batchId, redriven: 0, itemIds: [], failed: [] };
  for (const outcome of outcomes) {
    if (!outcome.sent) report.failed.push({ itemId: outcome.itemId, errorName: outcome.errorName });
    else if (outcome.moved) report.itemIds.push(outcome.itemId);
  }
  report.redriven = report.itemIds.length;
  const skipped = outcomes.length - report.redriven - report.failed.length;
  deps.logger?.info('batch redriven', {
    batchId,
    lane: deps.lane.name,
    redriven: report.redriven,
    failed: report.failed.length,
    ...(skipped > 0 ? { settledElsewhere: skipped } : {}),
    at: deps.now().toISOString(),
  });
  return report;
}
