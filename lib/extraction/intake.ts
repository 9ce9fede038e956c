/**
 * Intake: from a message body to a job whose document is read and checked, or to an outcome without
 * any model call. Parse the contract, check the registry, gate (region, deadline, eligibility), check
 * for an earlier commit on a redelivery, read the document, and repeat the producer's input checks
 * (a job someone else put on the queue gets no model call for an empty or oversize document).
 */
import { estimateTokens, InvalidJobError, parseJob, type Job } from '../contract/job.js';
import { isKnownPromptVersion } from '../contract/schemas/registry.js';
import { gateBeforeCall } from '../policy/index.js';
import { readDocument } from '../store/documents.js';
import { count, deliveryLogFields, log, newJobRun, type Delivery, type ExtractionDeps, type JobRun, type ModelTime } from './context.js';
import type { ExtractionOutcome, RejectedOutcome } from './outcome.js';
import { rejectRun, settleFailure, suppressDuplicate } from './settle.js';

/** Intake's result: a job ready for extraction with its text, or an outcome already reached. */
export type IntakeResult = { type: 'ready'; run: JobRun; text: string } | { type: 'settled'; outcome: ExtractionOutcome };

/**
 * Takes one message body through intake. Never calls the model.
 *
 * @param model where the run accumulates its model time (the caller may time the record)
 */
export async function intake(body: string, delivery: Delivery, deps: ExtractionDeps, model?: ModelTime): Promise<IntakeResult> {
  let job: Job;
  try {
    job = parseJob(body);
  } catch (error) {
    if (!(error instanceof InvalidJobError)) throw error;
    return { type: 'settled', outcome: await rejectBody(error, delivery, deps) };
  }
  delivery.onJob?.(job);
  const run = newJobRun(deps, delivery, job, model);
  const settled = (outcome: ExtractionOutcome): IntakeResult => ({ type: 'settled', outcome });
  if (!isKnownPromptVersion(job.schemaVersion, job.promptVersion)) {
    return settled(
      await rejectRun(run, { type: 'reject', reason: 'unknown_version', detail: `schema ${job.schemaVersion} / prompt ${job.promptVersion} not registered` }),
    );
  }
  const gate = gateBeforeCall(job, deps.lane.name, deps.now(), delivery.receiveCount);
  if (gate.type === 'reject') return settled(await rejectRun(run, gate));
  if (gate.type === 'defer') return settled({ type: 'deferred', job, action: gate });

  // A redelivered message may have been committed by a receive that crashed before its ack: one read
  // (beside the document read) spares a model call. First deliveries skip it; the conditional write
  // still catches any duplicate.
  const committedBefore = delivery.receiveCount > 1 ? deps.results.get(job.idempotencyKey) : undefined;
  const reading = readDocument(deps.s3, { bucket: job.input.bucket, key: job.input.key, expectedSha256: job.input.contentSha256 });
  reading.catch(() => undefined);
  const existing = await committedBefore;
  if (existing) return settled(suppressDuplicate(run, existing.jobId));

  let text: string;
  try {
    text = await reading;
  } catch (error) {
    return settled(await settleFailure(run, 'document_read', error));
  }
  const problem = await inputProblem(run, text);
  return problem ? settled(problem) : { type: 'ready', run, text };
}

/** The producer's input checks, again: an empty document or one over the lane's input budget. */
async function inputProblem(run: JobRun, text: string): Promise<RejectedOutcome | undefined> {
  const { job, deps } = run;
  if (text.trim().length === 0) {
    return rejectRun(run, { type: 'reject', reason: 'invalid_body', detail: `input document is empty (${job.input.bytes} bytes)` }, 'empty_document');
  }
  const tokens = estimateTokens(text);
  const budget = deps.lane.provider.limits.tokensPerMinute;
  if (tokens > budget) {
    return rejectRun(
      run,
      { type: 'reject', reason: 'invalid_body', detail: `input is ~${tokens} tokens, over the lane's input budget of ${budget}` },
      'too_large',
    );
  }
  return undefined;
}

/** A body that is no job: rejected under the message's id, with the contract's complaints. */
async function rejectBody(error: InvalidJobError, delivery: Delivery, deps: ExtractionDeps): Promise<RejectedOutcome> {
  const reason = /contractVersion/.test(error.issues.join(' ')) ? 'unknown_version' : 'invalid_body';
  await deps.ledger.record({
    jobId: `msg:${delivery.messageId}`,
    region: deps.lane.name,
    kind: 'rejected',
    reason,
    attempt: 0,
    deferrals: 0,
    receiveCount: delivery.receiveCount,
    details: error.issues.slice(0, 10).join('; '),
  });
  count(deps, 'Rejected');
  log(deps, 'warn', 'record rejected', { lane: deps.lane.name, ...deliveryLogFields(delivery), outcome: 'rejected', reason });
  return { type: 'rejected', reason };
}
