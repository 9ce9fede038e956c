/**
 * Handing a batch item to the queue lane — an invalid answer for its repair, an unresolved item
 * redriven — as the same job ({@link jobOfItem}: its job id and idempotency key unchanged), sent once
 * however many reconcilers or redrives run at once:
 *
 * 1. the item is **claimed** first: a conditional write moves it to `sending` from the state it was read
 *    in (`BatchManifest.claimSend`); of callers claiming it at once, one wins and the others leave it;
 * 2. its job is **sent** to the lane's queue;
 * 3. it is **settled** `redriven`, at the version its claim wrote.
 *
 * A send that fails gives the item back: a repair's claim is released (the item stays `sending`, and the
 * next reconcile pass sends it: {@link sendPending}), a redrive's item goes back `unresolved` with its
 * reason (the next redrive sends it). A claim whose holder died lapses after {@link SEND_LEASE_MS} and is
 * taken again; the one way to two messages is a holder that sent and died before it settled, and
 * commit-once keeps a second result out. Logs and errors carry ids and error names only.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LaneConfig } from '../../config/lanes.js';
import { JOB_CONTRACT_VERSION, type Job } from '../../contract/job.js';
import { errorName } from '../../platform/errors.js';
import type { BatchManifest } from '../../store/manifest.js';
import type { BatchHeader, BatchItem } from '../../store/manifest-model.js';
import { resendDeferred } from '../queue/reschedule.js';

/**
 * How long a claim to send an item holds (ms): Lambda's longest timeout, so a claim outlives any
 * reconciler invocation that holds it; after it, a claim whose holder died is taken again.
 */
const SEND_LEASE_MS = 15 * 60_000;

/** What handing an item over reads and writes. */
export interface HandoverDeps {
  lane: LaneConfig;
  manifest: Pick<BatchManifest, 'claimSend' | 'settleItem' | 'releaseClaim'>;
  /** The lane's queue: the queue lane's consumer takes the jobs from there. */
  sqs: SQSClient;
  queueUrl: string;
}

/** How to hand an item over. */
export interface HandoverOptions {
  /** The item's reason while it is sent and once `redriven` (`repair: …`, `redrive`); without it the item keeps its own. */
  reason?: string;
  /** When the send fails: `release` the claim (the next reconcile pass sends it), or put the item back `unresolved`. */
  onFailure: 'release' | 'unresolved';
  /** Runs once the claim is this caller's, before the send (a ledger entry); its failure is its own to handle. */
  claimed?: () => Promise<void>;
}

/** What {@link handOver} did: sent (and settled `redriven` unless another took a lapsed claim meanwhile), left to another, or not sent. */
export type Handover = { outcome: 'sent'; settled: boolean } | { outcome: 'taken' } | { outcome: 'send_failed'; errorName: string };

/** The job contract of a batch item (what the queue lane gets for a repair or a redrive). */
export function jobOfItem(item: BatchItem, header: BatchHeader, lane: LaneConfig): Job {
  return {
    contractVersion: JOB_CONTRACT_VERSION,
    jobId: item.jobId,
    ...(item.tenant !== undefined ? { tenant: item.tenant } : {}),
    idempotencyKey: item.idempotencyKey,
    region: lane.name,
    input: {
      bucket: lane.resources.bucketName,
      key: item.documentKey,
      sourceId: item.sourceId,
      contentSha256: item.contentSha256,
      bytes: item.bytes,
      estimatedTokens: item.estimatedTokens,
    },
    schemaVersion: header.schemaVersion,
    promptVersion: header.promptVersion,
    attempt: 0,
    deferrals: 0,
    eligibleAt: header.createdAt,
    createdAt: header.createdAt,
  };
}

/**
 * Claims `item` (from the state it was read in: `submitted`, `unresolved`, or `sending` whose claim
 * lapsed or was released), sends its job, and settles it `redriven` (see the module's description).
 *
 * @throws {@link StoreUnavailableError} when the claim or the settle cannot be written (after a send:
 *   the item stays `sending` and is sent again once its claim lapses).
 */
export async function handOver(item: BatchItem, header: BatchHeader, deps: HandoverDeps, options: HandoverOptions): Promise<Handover> {
  if (item.state !== 'submitted' && item.state !== 'unresolved' && item.state !== 'sending') return { outcome: 'taken' };
  const claim = await deps.manifest.claimSend(header.batchId, item.itemId, {
    from: [item.state],
    leaseMs: SEND_LEASE_MS,
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
  });
  if (!claim.moved) return { outcome: 'taken' };
  const { version, reason } = claim.item;
  await options.claimed?.();
  try {
    await resendDeferred({ sqs: deps.sqs, queueUrl: deps.queueUrl, job: jobOfItem(claim.item, header, deps.lane), delaySeconds: 0 });
  } catch (error) {
    await giveBack(item, header.batchId, version, options.onFailure, deps).catch(() => undefined);
    return { outcome: 'send_failed', errorName: errorName(error) ?? 'Error' };
  }
  const settled = await deps.manifest.settleItem(header.batchId, item.itemId, {
    from: ['sending'],
    to: 'redriven',
    version,
    ...(reason !== undefined ? { reason } : {}),
  });
  return { outcome: 'sent', settled: settled.moved };
}

/** After a failed send: the claim released (still `sending`), or the item back `unresolved` with the reason it had (a claim that lapsed meanwhile is left). */
async function giveBack(item: BatchItem, batchId: string, version: number, how: HandoverOptions['onFailure'], deps: HandoverDeps): Promise<void> {
  if (how === 'release' || item.state !== 'unresolved') {
    await deps.manifest.releaseClaim(batchId, item.itemId, version);
    return;
  }
  await deps.manifest.settleItem(batchId, item.itemId, {
    from: ['sending'],
    to: 'unresolved',
    version,
    ...(item.reason !== undefined ? { reason: item.reason } : {}),
  });
}

/** Whether an item in `sending` may be claimed again at `now`: its claim was released or has lapsed. */
export function claimLapsed(item: Pick<BatchItem, 'state' | 'claimUntil'>, now: Date): boolean {
  return item.state === 'sending' && (item.claimUntil === undefined || Date.parse(item.claimUntil) <= now.getTime());
}

/** What {@link sendPending} did. */
export interface PendingSends {
  /** Items sent (and settled) by this call. */
  sent: string[];
  /** Items whose send failed again (their claim released). */
  failed: { itemId: string; errorName: string }[];
}

/**
 * Sends every item of the batch left `sending` with a released or lapsed claim (a send that failed, a
 * holder that died), each claimed again first, so one caller sends it. `items` is the batch as read.
 *
 * @throws {@link StoreUnavailableError} when a claim or a settle cannot be written.
 */
export async function sendPending(header: BatchHeader, items: readonly BatchItem[], deps: HandoverDeps, now: Date): Promise<PendingSends> {
  const out: PendingSends = { sent: [], failed: [] };
  for (const item of items) {
    if (!claimLapsed(item, now)) continue;
    const done = await handOver(item, header, deps, { onFailure: 'release' });
    if (done.outcome === 'sent') out.sent.push(item.itemId);
    else if (done.outcome === 'send_failed') out.failed.push({ itemId: item.itemId, errorName: done.errorName });
  }
  return out;
}
