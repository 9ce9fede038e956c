/**
 * Submitting a batch: every document checked exactly as the producer checks it (same rejections;
 * nothing of a rejected document is sent), its text stored in the lane's bucket, the manifest written
 * (a header with the batch's record prefix, and an item per document with its item id, job id,
 * idempotency key, hash and versions), then the provider's input built from it — each record under the
 * batch's own record id (prefix and item id, within the provider's record id limit) — and split by the
 * provider's limits into jobs. A submission
 * throttle (an enqueued-token limit, too many jobs) is a scheduling signal: that part waits in the
 * manifest as `pending_submit` with when to try again (`submitPending`), nothing lost or sent twice.
 *
 * The header moves from `submitting` to `submitted` last, and only while it is still `submitting`: a
 * cancel (`cancel.ts`) or a reconcile pass that ended the batch meanwhile stays in force. When a cancel
 * landed during the submission, the parts not sent yet are not sent (cancelled, their items unresolved
 * `cancelled_before_submit`), and the parts sent after its pass are asked to stop by one more.
 */
import { randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { endpointProblem } from '../../config/endpoints.js';
import { EndpointNotApprovedError } from '../../config/errors.js';
import type { LaneConfig } from '../../config/lanes.js';
import { getExtractionPrompt, getExtractionSchema } from '../../contract/schemas/registry.js';
import { prepareDocument, type Prepared, type RejectedItem } from '../../intake/checks.js';
import type { DocumentInput } from '../../intake/producer.js';
import type { Job } from '../../contract/job.js';
import { errorName } from '../../platform/errors.js';
import { putDocument, readDocument } from '../../store/documents.js';
import type { Cancellations } from '../../store/cancellation.js';
import type { BatchManifest } from '../../store/manifest.js';
import {
  itemIdFor,
  itemIdOfRecord,
  recordIdOf,
  recordPrefixFor,
  type BatchHeader,
  type BatchItem,
  type BatchState,
  type HeaderChange,
  type NewBatchItem,
  type ProviderJobRef,
} from '../../store/manifest-model.js';
import { cancelBatch } from './cancel.js';
import { BatchSubmitThrottledError } from './providers/errors.js';
import { cancelPendingPart } from './reconcile.js';
import { BatchNotFoundError } from './status.js';
import type { BatchProvider, BatchRequest, ProviderInput } from './providers/provider.js';

/** What submitting reads and writes. */
export interface SubmitBatchDeps {
  lane: LaneConfig;
  s3: S3Client;
  manifest: BatchManifest;
  provider: BatchProvider;
  now: () => Date;
  /** New ids (default random UUIDs). */
  newId?: () => string;
  /**
   * The lane's job cancel markers: a part submitted again after a throttle leaves out the items whose jobs were
   * cancelled meanwhile (settled `rejected`, reason `cancelled`). Absent: not read (their commit still checks).
   */
  cancellations?: Pick<Cancellations, 'marker'> | undefined;
  /** Told of each step (no document text); `cancelled` when a cancel landed during the submission. */
  onProgress?: (event: { type: 'checked' | 'stored' | 'part' | 'cancelled'; detail: string }) => void;
}

/** What a submission did. */
export interface SubmitBatchReport {
  batchId: string | null;
  /**
   * The header's state when the submission ended: `submitted`; `cancelling` / `cancelled` when a cancel
   * landed during it (left in force); `done` when a reconcile pass already ended it; null without a batch.
   */
  state: BatchState | null;
  items: number;
  rejected: RejectedItem[];
  /** Provider jobs created, and parts waiting after a submission throttle. */
  parts: { partId: string; state: ProviderJobRef['state']; providerJobId?: string | undefined; items: number; nextSubmitAt?: string | undefined }[];
}

/** Checks, stores and submits `documents` (each in this lane) as one batch. */
export async function submitBatch(documents: readonly Omit<DocumentInput, 'region'>[], deps: SubmitBatchDeps): Promise<SubmitBatchReport> {
  const { lane } = deps;
  refuseUnapprovedEndpoint(lane, deps.provider);
  const newId = deps.newId ?? randomUUID;
  const prepared: Prepared[] = [];
  const rejected: RejectedItem[] = [];
  for (const [index, doc] of documents.entries()) {
    const checked = await prepareDocument({ ...doc, region: lane.name }, index, { lanes: { [lane.name]: lane }, newJobId: newId }, deps.now());
    if (!('job' in checked)) rejected.push(checked);
    else if (prepared.length > 0 && !sameVersions(prepared[0]!.job, checked.job)) rejected.push(mixedVersions(checked, prepared[0]!.job));
    else prepared.push(checked);
  }
  deps.onProgress?.({ type: 'checked', detail: `${prepared.length} accepted, ${rejected.length} rejected` });
  if (prepared.length === 0) return { batchId: null, state: null, items: 0, rejected, parts: [] };
  const first = prepared[0]!.job;
  const batchId = `b-${newId()}`;
  for (const p of prepared) await putDocument(deps.s3, { bucket: lane.resources.bucketName, text: p.text, contentSha256: p.job.input.contentSha256 });
  deps.onProgress?.({ type: 'stored', detail: `${prepared.length} documents in ${lane.resources.bucketName}` });
  const items: NewBatchItem[] = prepared.map((p, i) => ({
    itemId: itemIdFor(i),
    sourceId: p.job.input.sourceId,
    jobId: p.job.jobId,
    ...(p.job.tenant !== undefined ? { tenant: p.job.tenant } : {}),
    idempotencyKey: p.job.idempotencyKey,
    contentSha256: p.job.input.contentSha256,
    documentKey: p.job.input.key,
    bytes: p.job.input.bytes,
    estimatedTokens: p.job.input.estimatedTokens,
  }));
  const recordPrefix = recordPrefixFor(batchId, deps.provider.limits.maxRecordIdLength);
  const header = await deps.manifest.createBatch(
    { batchId, lane: lane.name, schemaVersion: first.schemaVersion, promptVersion: first.promptVersion, ...(recordPrefix ? { recordPrefix } : {}) },
    items,
  );
  const requests = prepared.map((p, i) => requestFor(recordIdOf(header, itemIdFor(i)), p.text, first.schemaVersion, first.promptVersion, lane.provider.model));
  const parts = await submitParts(header, deps.provider.prepare(requests, { batchId }), deps);
  const after = await moveHeader(batchId, deps, (h) => h.state === 'submitting', { state: 'submitted' });
  const state = CANCELLED.has(after.state) ? await keepCancelInForce(batchId, after.state, deps) : after.state;
  return { batchId, state, items: items.length, rejected, parts };
}

function sameVersions(a: Pick<Job, 'schemaVersion' | 'promptVersion'>, b: Pick<Job, 'schemaVersion' | 'promptVersion'>): boolean {
  return a.schemaVersion === b.schemaVersion && a.promptVersion === b.promptVersion;
}

/** The rejection of a document whose versions are not the batch's (a batch is one schema and prompt version). */
function mixedVersions(doc: Prepared, batch: Pick<Job, 'schemaVersion' | 'promptVersion'>): RejectedItem {
  return {
    index: doc.index,
    sourceId: doc.job.input.sourceId,
    reason: 'mixed_versions',
    detail: `${doc.job.schemaVersion} / ${doc.job.promptVersion} differs from the batch's ${batch.schemaVersion} / ${batch.promptVersion}: submit it as a batch of its own`,
  };
}

/** Header writes retried when another writer (a reconcile pass recording a part) moved its version first. */
const HEADER_ATTEMPTS = 5;
const CANCELLED: ReadonlySet<BatchState> = new Set(['cancelling', 'cancelled']);
const ENDED_PARTS: ReadonlySet<ProviderJobRef['state']> = new Set(['finished', 'expired', 'cancelled', 'failed']);

/**
 * Applies `change` to the header only while `when` holds of it: a conditional write on the version read,
 * read again and retried when another writer moved the version first. A header `when` does not hold of
 * (e.g. no longer `submitting`: cancelled meanwhile, or ended by a reconcile pass) is left as it is.
 *
 * @returns the header after the call (unchanged when every attempt lost to another writer: a batch left
 *   `submitting` so is still reconciled, and ended by `finishIfEnded` all the same).
 * @throws {@link BatchNotFoundError} when the header is gone.
 */
async function moveHeader(
  batchId: string,
  deps: Pick<SubmitBatchDeps, 'manifest'>,
  when: (header: BatchHeader) => boolean,
  change: HeaderChange,
): Promise<BatchHeader> {
  let header = await deps.manifest.header(batchId);
  for (let attempt = 1; header; attempt++) {
    if (!when(header)) return header;
    const written = await deps.manifest.updateHeader(batchId, header.version, change);
    if (written.ok) return written.header;
    if (attempt >= HEADER_ATTEMPTS && written.current) return written.current;
    header = written.current;
  }
  throw new BatchNotFoundError(batchId, deps.manifest.tableName);
}

/**
 * A cancel landed while the batch was being submitted. Parts recorded after its pass are open at the
 * provider, and no reconcile pass asks a job to stop, so one more cancel pass does (parts it asked
 * already are asked again, which is safe). A cancel whose pass found no part open moved the header
 * straight to `cancelled`, which no reconciler reads again: with a part open it goes back to
 * `cancelling`, so the part's answers are read and the batch then ends `cancelled`. A failure is told,
 * not thrown: the submission itself stands, and cancelling again finishes it.
 *
 * @returns the header's state after the pass (`state`, the one it was found in, when the pass failed).
 */
async function keepCancelInForce(batchId: string, state: BatchState, deps: SubmitBatchDeps): Promise<BatchState> {
  try {
    const open = (h: BatchHeader) => h.providerJobs.some((p) => !ENDED_PARTS.has(p.state));
    await moveHeader(batchId, deps, (h) => h.state === 'cancelled' && open(h), { state: 'cancelling', reason: 'cancel requested during submission' });
    const cancel = await cancelBatch(batchId, deps);
    const failed = cancel.failed.length > 0 ? `, ${cancel.failed.length} refused (cancel it again)` : '';
    deps.onProgress?.({
      type: 'cancelled',
      detail: `cancelled during its submission: ${cancel.state}, stop asked of ${cancel.cancelRequested.length} part(s)${failed}`,
    });
    return cancel.state;
  } catch (error) {
    deps.onProgress?.({ type: 'cancelled', detail: `cancelled during its submission; stopping its parts failed (${errorName(error)}): cancel it again` });
    return state;
  }
}

/** The provider request of one item: the registry's prompt and schema, as the other lanes send them. */
function requestFor(recordId: string, text: string, schemaVersion: string, promptVersion: string, model: string): BatchRequest {
  const schema = getExtractionSchema(schemaVersion);
  const prompt = getExtractionPrompt(schemaVersion, promptVersion);
  if (!prompt) throw new Error(`prompt ${promptVersion} of ${schemaVersion} is not registered`);
  return { recordId, messages: prompt.buildMessages(text), jsonSchemaName: schema.jsonSchemaName, jsonSchema: schema.jsonSchema, model };
}

/** Submits each prepared part; a throttled part waits as `pending_submit`. */
async function submitParts(header: BatchHeader, inputs: ProviderInput[], deps: SubmitBatchDeps): Promise<SubmitBatchReport['parts']> {
  const parts: SubmitBatchReport['parts'] = [];
  for (const input of inputs) {
    const itemIds = itemIdsOf(header, input);
    const base: ProviderJobRef = {
      partId: `p${String(input.index).padStart(3, '0')}`,
      kind: deps.provider.provider,
      inputRef: '',
      state: 'pending_submit',
      items: { first: itemIds[0]!, last: itemIds.at(-1)!, count: itemIds.length },
    };
    // A cancel landed meanwhile: this part is not sent, its items are unresolved (cancelled_before_submit).
    const current = await deps.manifest.header(header.batchId);
    const ref = current && CANCELLED.has(current.state) ? await unsent(current, base, deps) : await submitOne(header, base, input, deps);
    parts.push({ partId: ref.partId, state: ref.state, providerJobId: ref.providerJobId, items: input.recordIds.length, nextSubmitAt: ref.nextSubmitAt });
    deps.onProgress?.({
      type: 'part',
      detail: `${ref.partId}: ${ref.state}${ref.providerJobId ? ` ${ref.providerJobId}` : ''} (${input.recordIds.length} items)`,
    });
  }
  return parts;
}

/** A part not sent because the batch is being cancelled: recorded `cancelled`, its items unresolved. */
async function unsent(header: BatchHeader, base: ProviderJobRef, deps: SubmitBatchDeps): Promise<ProviderJobRef> {
  await cancelPendingPart(header, base, deps);
  return { ...base, state: 'cancelled' };
}

/** The item ids of a provider input's records (built from the batch's items: each is the batch's prefix and an item id). */
function itemIdsOf(header: Pick<BatchHeader, 'recordPrefix'>, input: ProviderInput): string[] {
  return input.recordIds.map((recordId) => itemIdOfRecord(header, recordId) ?? recordId);
}

async function submitOne(header: BatchHeader, base: ProviderJobRef, input: ProviderInput, deps: SubmitBatchDeps): Promise<ProviderJobRef> {
  const { batchId } = header;
  try {
    const handle = await deps.provider.submit(input);
    const ref: ProviderJobRef = {
      ...base,
      providerJobId: handle.jobId,
      inputRef: handle.inputRef,
      ...(handle.outputRef ? { outputRef: handle.outputRef } : {}),
      state: 'submitted',
      submittedAt: deps.now().toISOString(),
    };
    await deps.manifest.setProviderJob(batchId, ref);
    for (const itemId of itemIdsOf(header, input)) {
      await deps.manifest.settleItem(batchId, itemId, { from: ['prepared'], to: 'submitted', providerJobId: handle.jobId });
    }
    return ref;
  } catch (error) {
    if (!(error instanceof BatchSubmitThrottledError)) throw error;
    // Not sent: the part waits in the manifest until the provider's stated wait (or a minute) has passed.
    const waitMs = error.retryAfterMs ?? 60_000;
    const ref: ProviderJobRef = { ...base, state: 'pending_submit', nextSubmitAt: new Date(deps.now().getTime() + waitMs).toISOString() };
    await deps.manifest.setProviderJob(batchId, ref);
    return ref;
  }
}

/**
 * Submits the parts of `batchId` that wait after a throttle and are due: their requests are rebuilt
 * from the manifest's items and the stored documents (the text was checked at submission).
 */
export async function submitPending(batchId: string, deps: SubmitBatchDeps): Promise<SubmitBatchReport['parts']> {
  const header = await deps.manifest.header(batchId);
  if (!header) return [];
  const now = deps.now().getTime();
  const due = header.providerJobs.filter((p) => p.state === 'pending_submit' && (!p.nextSubmitAt || Date.parse(p.nextSubmitAt) <= now));
  if (due.length === 0) return [];
  refuseUnapprovedEndpoint(deps.lane, deps.provider);
  const items = new Map((await deps.manifest.items(batchId)).map((i) => [i.itemId, i]));
  const parts: SubmitBatchReport['parts'] = [];
  for (const part of due) {
    const partItems = await withoutCancelled(
      batchId,
      [...items.values()].filter((i) => i.itemId >= part.items.first && i.itemId <= part.items.last && (i.state === 'prepared' || i.state === 'submitted')),
      deps,
    );
    if (partItems.length === 0) {
      // Nothing of it is left to send (its items' sources erased, their jobs cancelled): it ends unsent, as a cancelled part does.
      await cancelPendingPart(header, part, deps);
      parts.push({ partId: part.partId, state: 'cancelled', items: 0 });
      continue;
    }
    const requests = await Promise.all(
      partItems.map(async (item) =>
        requestFor(recordIdOf(header, item.itemId), await textOf(item, deps), header.schemaVersion, header.promptVersion, deps.lane.provider.model),
      ),
    );
    const [input] = deps.provider.prepare(requests, { batchId });
    if (!input) continue;
    const ref = await submitOne(header, part, { ...input, index: Number(part.partId.slice(1)) }, deps).catch((error: unknown) => {
      throw new Error(`resubmitting ${part.partId} of ${batchId} failed: ${errorName(error)}`, { cause: error });
    });
    parts.push({ partId: ref.partId, state: ref.state, providerJobId: ref.providerJobId, items: partItems.length, nextSubmitAt: ref.nextSubmitAt });
  }
  return parts;
}

/** `items` but those whose jobs are cancelled, each of which is settled `rejected` (reason `cancelled`) instead. */
async function withoutCancelled(batchId: string, items: BatchItem[], deps: SubmitBatchDeps): Promise<BatchItem[]> {
  const cancellations = deps.cancellations;
  if (!cancellations) return items;
  const markers = await Promise.all(items.map((item) => cancellations.marker(item.jobId)));
  const kept: BatchItem[] = [];
  for (const [i, item] of items.entries()) {
    if (!markers[i]) kept.push(item);
    else await deps.manifest.settleItem(batchId, item.itemId, { from: ['prepared', 'submitted'], to: 'rejected', reason: 'cancelled' });
  }
  return kept;
}

/**
 * Refuses a batch client whose host is not approved for the lane's geography (`config/endpoints.ts`):
 * nothing of the batch is stored or sent.
 *
 * @throws {EndpointNotApprovedError}
 */
export function refuseUnapprovedEndpoint(lane: LaneConfig, provider: Pick<BatchProvider, 'host'>): void {
  if (provider.host === undefined) return;
  const problem = endpointProblem(lane, provider.host);
  if (problem) throw new EndpointNotApprovedError(`batch not sent: ${problem}`, provider.host);
}

function textOf(item: BatchItem, deps: SubmitBatchDeps): Promise<string> {
  return readDocument(deps.s3, { bucket: deps.lane.resources.bucketName, key: item.documentKey, expectedSha256: item.contentSha256 });
}
