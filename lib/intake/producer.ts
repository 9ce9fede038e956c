import { RatelaneError } from '../platform/errors.js';
import { realSleep } from '../platform/sleep.js';
import { findLane, prepareDocument, type Prepared, type RejectedItem } from './checks.js';
import type { DocumentInput, ItemError, SubmitDeps, SubmitItemResult, SubmitRequest, SubmitResult } from './model.js';
import { DEFAULT_SEND_RETRY, sendLane, type SendContext } from './send.js';

export type { RejectedItem } from './checks.js';
export type { DocumentInput, SubmitDeps, SubmitItemResult, SubmitProgress, SubmitRequest, SubmitResult } from './model.js';
export { planBatches } from './send.js';

/**
 * Raised when a submission is empty, or (with `deps.atomic`) when at least one document is invalid;
 * nothing was stored or sent.
 */
export class SubmissionRejectedError extends RatelaneError {
  override name = 'SubmissionRejectedError';
  readonly kind = 'input' as const;
  readonly retryable = false;

  constructor(
    readonly items: readonly RejectedItem[],
    readonly total: number,
    options?: { cause?: unknown },
  ) {
    const shown = items
      .slice(0, 5)
      .map((i) => `#${i.index}${i.sourceId ? ` (${i.sourceId})` : ''} ${i.reason}: ${i.detail}`)
      .join('; ');
    super(`rejected ${items.length} of ${total} document(s), nothing was sent: ${shown}${items.length > 5 ? '; …' : ''}`, options);
  }
}

/**
 * Validates, stores and enqueues documents. See the module comment for the two phases.
 *
 * @throws {SubmissionRejectedError} when no documents are given, or with `deps.atomic` when any document is invalid (then nothing was sent)
 * @returns every document as `sent`, `failed` or `rejected`, in input order
 */
export async function submitDocuments(request: SubmitRequest, deps: SubmitDeps): Promise<SubmitResult> {
  const documents: readonly unknown[] = Array.isArray(request?.documents) ? request.documents : [];
  if (documents.length === 0) {
    throw new SubmissionRejectedError([{ index: 0, reason: 'bad_input', detail: 'no documents given' }], 0);
  }
  const now = deps.now();
  const { prepared, rejected } = await validateAll(documents, deps, now);
  if (rejected.length > 0 && deps.atomic) throw new SubmissionRejectedError(rejected, documents.length);

  const results: SubmitItemResult[] = new Array(documents.length);
  for (const item of rejected) results[item.index] = rejectedResult(item, documents[item.index], deps);

  const byLane = new Map<string, Prepared[]>();
  for (const p of prepared) byLane.set(p.lane.name, [...(byLane.get(p.lane.name) ?? []), p]);
  deps.onProgress?.({
    type: 'validated',
    total: prepared.length,
    rejected: rejected.length,
    lanes: Object.fromEntries([...byLane].map(([n, ps]) => [n, ps.length])),
  });

  const record = (p: Prepared, outcome: { status: 'sent'; messageId?: string } | { status: 'failed'; error: ItemError }): void => {
    results[p.index] = {
      index: p.index,
      sourceId: p.job.input.sourceId,
      jobId: p.job.jobId,
      region: p.job.region,
      idempotencyKey: p.job.idempotencyKey,
      ...outcome,
    };
  };
  const ctx: SendContext = {
    deps,
    retry: { ...DEFAULT_SEND_RETRY, ...deps.retry },
    sleep: deps.sleep ?? realSleep,
    random: deps.random ?? Math.random,
    record,
  };
  for (const items of byLane.values()) {
    await sendLane(items, ctx);
  }
  const sent = results.filter((r) => r.status === 'sent').length;
  const failed = results.filter((r) => r.status === 'failed').length;
  return { total: results.length, sent, failed, rejected: rejected.length, results };
}

/** The result entry of a document rejected at intake: what is known of it, and why. */
function rejectedResult(item: RejectedItem, raw: unknown, deps: SubmitDeps): SubmitItemResult {
  const doc = typeof raw === 'object' && raw !== null ? (raw as Partial<Record<keyof DocumentInput, unknown>>) : {};
  const givenRegion = typeof doc.region === 'string' ? doc.region : '';
  const lane = givenRegion ? findLane(deps.lanes, givenRegion) : undefined;
  return {
    index: item.index,
    sourceId: item.sourceId ?? '',
    jobId: typeof doc.jobId === 'string' ? doc.jobId : '',
    region: lane?.name ?? givenRegion,
    idempotencyKey: '',
    status: 'rejected',
    error: { code: item.reason, message: item.detail, stage: 'validation' },
  };
}

// ---------------------------------------------------------------------------------------------
// Phase 1: validation

/** Validates every document; returns the valid ones and the rejected ones (sorted by index). */
async function validateAll(documents: readonly unknown[], deps: SubmitDeps, now: Date): Promise<{ prepared: Prepared[]; rejected: RejectedItem[] }> {
  const rejected: RejectedItem[] = [];
  const prepared: Prepared[] = [];
  for (const [index, doc] of documents.entries()) {
    const outcome = await prepareDocument(doc, index, deps, now);
    if ('reason' in outcome) rejected.push(outcome);
    else prepared.push(outcome);
  }
  const seenJobIds = new Map<string, number>();
  const unique: Prepared[] = [];
  for (const p of prepared) {
    const first = seenJobIds.get(p.job.jobId);
    if (first !== undefined) {
      rejected.push({ index: p.index, sourceId: p.job.input.sourceId, reason: 'bad_input', detail: `jobId ${p.job.jobId} repeats document #${first}'s` });
    } else {
      seenJobIds.set(p.job.jobId, p.index);
      unique.push(p);
    }
  }
  return { prepared: unique, rejected: rejected.sort((a, b) => a.index - b.index) };
}
