/**
 * Intake: from a message body to a job whose document is read and checked, or to an outcome without
 * any model call. Parse the contract (with the lane's counter limits), verify what the job claims
 * (`verify.ts`), check the registry, gate (region, horizon, deadline, eligibility), check for an earlier
 * commit on a redelivery, read the document (while the first call's admission is taken), and repeat
 * the producer's input checks (a job someone else put on the queue gets no model call for a document
 * that is not text, empty or oversize).
 */
import { estimateTokens, InvalidJobError, parseJob, type Job } from '../contract/job.js';
import { isKnownPromptVersion } from '../contract/schemas/registry.js';
import { textOf } from '../contract/text.js';
import { gateBeforeCall } from '../policy/index.js';
import { readDocumentBytes } from '../store/documents.js';
import { newJobRun, type Delivery, type ExtractionDeps, type JobRun, type ModelTime } from './context.js';
import type { ExtractionOutcome } from './outcome.js';
import { outOfTime, rejectRun, settleFailure, suppressDuplicate } from './settle.js';
import { releaseEarlyAdmission, takeEarly } from './early-admission.js';
import { falseClaimOf, rejectUnverified } from './verify.js';

/**
 * Intake's result: a job ready for extraction with its text, or an outcome already reached (with the
 * job's run once its body parsed and its claims held: a lane carrying the outcome out under the job id
 * claims the id first, `laneMayCarryOut`).
 */
export type IntakeResult = { type: 'ready'; run: JobRun; text: string } | { type: 'settled'; outcome: ExtractionOutcome; run?: JobRun };

/**
 * Takes one message body through intake. Never calls the model.
 *
 * @param model where the run accumulates its model time (the caller may time the record)
 */
export async function intake(body: string, delivery: Delivery, deps: ExtractionDeps, model?: ModelTime): Promise<IntakeResult> {
  let job: Job;
  try {
    job = parseJob(body, { maxAttempt: deps.lane.queue.maxReceiveCount, maxDeferrals: deps.lane.bounds.maxDeferrals });
  } catch (error) {
    if (!(error instanceof InvalidJobError)) throw error;
    const reason = /contractVersion/.test(error.issues.join(' ')) ? 'unknown_version' : 'invalid_body';
    return { type: 'settled', outcome: await rejectUnverified(delivery, deps, reason, error.issues.slice(0, 10).join('; ')) };
  }
  const run = newJobRun(deps, delivery, job, model);
  const falseClaim = falseClaimOf(job, deps);
  if (falseClaim) return { type: 'settled', outcome: await rejectUnverified(delivery, deps, falseClaim.reason, falseClaim.detail, job) };
  delivery.onJob?.(job);
  const result = await checked(run);
  return result.type === 'settled' ? { ...result, run } : result;
}

/** The checks of a job whose claims hold: the registry, the gate, then the document (`readChecked`). */
async function checked(run: JobRun): Promise<IntakeResult> {
  const { job, delivery, deps } = run;
  const settled = (outcome: ExtractionOutcome): IntakeResult => ({ type: 'settled', outcome });
  if (!isKnownPromptVersion(job.schemaVersion, job.promptVersion)) {
    return settled(
      await rejectRun(run, { type: 'reject', reason: 'unknown_version', detail: `schema ${job.schemaVersion} / prompt ${job.promptVersion} not registered` }),
    );
  }
  const gate = gateBeforeCall(job, deps.lane.name, deps.now(), delivery.receiveCount, deps.lane.bounds.horizonSeconds * 1000);
  if (gate.type === 'reject') return settled(await rejectRun(run, gate));
  if (gate.type === 'defer') return settled({ type: 'deferred', job, action: gate });
  // The document (now known to be the lane's own) is read while the first call's admission is taken
  // (`early-admission.ts`); the job id is claimed beside the model call (`verify.ts`).
  const reading = readDocumentBytes(deps.s3, { bucket: job.input.bucket, key: job.input.key, expectedSha256: job.input.contentSha256 });
  reading.catch(() => undefined);
  // A redelivery (it may have been committed already) takes after the duplicate check instead.
  if (delivery.receiveCount === 1) takeEarly(run);
  const read = await readChecked(run, reading).catch(async (error: unknown) => {
    await releaseEarlyAdmission(run);
    throw error;
  });
  if (read.type === 'settled') await releaseEarlyAdmission(run);
  return read;
}

/**
 * After the gate: the duplicate check of a redelivery, the document read (already running) and the
 * producer's input checks.
 */
async function readChecked(run: JobRun, reading: Promise<Uint8Array>): Promise<IntakeResult> {
  const { job, delivery, deps } = run;
  const settled = (outcome: ExtractionOutcome): IntakeResult => ({ type: 'settled', outcome });
  // A redelivered message may have been committed by a receive that crashed before its ack: one read
  // (beside the document read, already running) spares a model call. First deliveries skip it; the conditional write
  // still catches any duplicate.
  const committedBefore = delivery.receiveCount > 1 ? deps.results.get(job.idempotencyKey) : undefined;
  const checked = await cutOffInTime(run, 'duplicate check', async () => committedBefore);
  if (!checked.done) return settled(checked.outcome);
  if (checked.value) return settled(suppressDuplicate(run, checked.value.jobId));

  let bytes: Uint8Array;
  try {
    bytes = await reading;
  } catch (error) {
    return settled(await settleFailure(run, 'document_read', error));
  }
  return inputChecked(run, bytes);
}

/**
 * The producer's input checks, again: bytes that are not UTF-8 text or binary (`not_text`), no visible
 * character (`empty_document`), or more than the lane's input budget (`too_large`).
 */
async function inputChecked(run: JobRun, bytes: Uint8Array): Promise<IntakeResult> {
  const { deps } = run;
  const verdict = textOf(bytes);
  if (!verdict.ok) {
    return { type: 'settled', outcome: await rejectRun(run, { type: 'reject', reason: 'invalid_body', detail: `input ${verdict.detail}` }, verdict.problem) };
  }
  const tokens = estimateTokens(verdict.text);
  const budget = deps.lane.provider.limits.tokensPerMinute;
  if (tokens > budget) {
    return {
      type: 'settled',
      outcome: await rejectRun(
        run,
        { type: 'reject', reason: 'invalid_body', detail: `input is ~${tokens} tokens, over the lane's input budget of ${budget}` },
        'too_large',
      ),
    };
  }
  return { type: 'ready', run, text: verdict.text };
}

/**
 * Runs an intake step; when it fails because the record's time was up (its work was stopped), the job
 * is sent back as out of time (a cut-off: it waits the lane's cut-off wait) instead of failing the
 * record: a slow table or machine then costs a re-send, not a receive of the retry budget. Any other
 * failure is thrown on as before.
 */
async function cutOffInTime<T>(
  run: JobRun,
  step: string,
  work: () => Promise<T>,
): Promise<{ done: true; value: T } | { done: false; outcome: ExtractionOutcome }> {
  try {
    return { done: true, value: await work() };
  } catch (error) {
    if (!run.delivery.stopWork?.aborted) throw error;
    return { done: false, outcome: await outOfTime(run, `${step} cut off by the record's time`, { cutOff: true }) };
  }
}
