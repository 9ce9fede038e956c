/**
 * The extraction core as one pipeline, read top to bottom: **intake** (parse the contract, verify what
 * the job claims, check its versions and the gate, read its document) → **claim** the job's idempotency
 * key (one call per key at a time) → **admit** (a key for the call; a cancelled job stops here)
 * → **call** the model → **validate** the answer → **commit** it once, or record it invalid and repair
 * once. Each step takes the run and says what happens next: go on (`go`), or the record's outcome
 * (`end`). The steps live beside this file (`intake.ts`, `verify.ts`, `claim.ts`, `admit.ts`, `call.ts`,
 * `validate.ts`, `commit.ts`); how a decision becomes an outcome is `settle.ts`.
 *
 * The core never imports a lane. The queue lane runs {@link extractRecord} for each SQS record; the live
 * lane runs {@link intake} once and {@link extract} again for each retry that fits its deadline. A
 * deferral or a real failure comes back for the lane to carry out (after `laneMayCarryOut`).
 */
import { estimateTokens } from '../contract/job.js';
import { admit, releaseEarlyAdmission, roomForCall, takeEarly } from './admit.js';
import { callModel } from './call.js';
import { claimKey, endKeyClaim, startKeyClaim } from './claim.js';
import { commit, extractionOf } from './commit.js';
import { newJobRun, type Delivery, type ExtractionDeps, type JobRun, type ModelTime } from './context.js';
import { admissible, parseBody, readText, startReading } from './intake.js';
import type { ExtractionOutcome } from './outcome.js';
import { settleFailure, settleInvalidAnswer } from './settle.js';
import { validateOutput } from './validate.js';
import { falseClaimOf, rejectUnverified } from './verify.js';
import { settleErased, startErasureCheck } from './erased.js';
import { cancelledBeforeCall, settleCancelled, startCancelCheck } from './cancelled.js';

/**
 * Intake's result: a job ready for extraction with its text, or an outcome already reached (with the
 * job's run once its body parsed and its claims held: a lane carrying the outcome out under the job id
 * claims the id first, `laneMayCarryOut`).
 */
export type IntakeResult = { type: 'ready'; run: JobRun; text: string } | { type: 'settled'; outcome: ExtractionOutcome; run?: JobRun };

/** What the core made of one message body: the outcome, and the job's run once its body parsed and its claims held. */
export interface RecordOutcome {
  outcome: ExtractionOutcome;
  run?: JobRun | undefined;
}

/**
 * One message body through the whole core: intake, then extraction and the commit. Terminal outcomes
 * come back settled; a deferral or a real failure is the driving lane's to carry out.
 *
 * @param model where the record's model time accumulates (for timing it)
 */
export async function extractRecord(body: string, delivery: Delivery, deps: ExtractionDeps, model?: ModelTime): Promise<RecordOutcome> {
  const intook = await intake(body, delivery, deps, model);
  if (intook.type === 'settled') return intook;
  return { outcome: await extract(intook.run, intook.text), run: intook.run };
}

/** From a message body to a job whose document is read and checked, or to an outcome. Never calls the model. */
export async function intake(body: string, delivery: Delivery, deps: ExtractionDeps, model?: ModelTime): Promise<IntakeResult> {
  // The contract, with the lane's counter limits: a body that is no job is rejected under its message id.
  const parsed = await parseBody(body, delivery, deps);
  if ('end' in parsed) return { type: 'settled', outcome: parsed.end };
  const job = parsed.go;
  // What the job claims that can be recomputed or checked (its idempotency key, its document's place, a
  // tenant its sender may state): a false claim is rejected under the message id too.
  const falseClaim = falseClaimOf(job, delivery, deps);
  if (falseClaim) return { type: 'settled', outcome: await rejectUnverified(delivery, deps, falseClaim.reason, falseClaim.detail, job) };
  delivery.onJob?.(job);
  const run = newJobRun(deps, delivery, job, model);
  const settled = (outcome: ExtractionOutcome): IntakeResult => ({ type: 'settled', outcome, run });
  // Registered versions, then the gate: region, horizon, deadline, eligibility.
  const checked = await admissible(run);
  if ('end' in checked) return settled(checked.end);
  // The document is read while the first call's admission is taken; a redelivery (it may have been
  // committed already) takes after its duplicate check instead.
  // The job's idempotency key is claimed beside the read too (one call per key at a time: `claim.ts`).
  // The source's tombstone and the job's cancel marker are read beside the document (one request): an
  // erased source's job, or a cancelled job, makes no call.
  const guards = run.deps.cancellations.atReceive(job);
  guards.catch(() => undefined);
  const erasing = startErasureCheck(run, guards);
  const cancelling = startCancelCheck(run, guards);
  const reading = startReading(run);
  startKeyClaim(run);
  if (delivery.receiveCount === 1) takeEarly(run);
  const text = await stoppedAtReceive(run, erasing, cancelling)
    .then((stopped) => stopped ?? readText(run, reading))
    .catch(async (error: unknown) => {
      await Promise.all([releaseEarlyAdmission(run), endKeyClaim(run, undefined)]);
      throw error;
    });
  if ('end' in text) {
    await Promise.all([releaseEarlyAdmission(run), endKeyClaim(run, text.end)]);
    return settled(text.end);
  }
  return { type: 'ready', run, text: text.go };
}

/**
 * The erased outcome when the run's source is erased, else the cancelled one when the job is cancelled
 * (either read failing fails the record like a document read).
 */
async function stoppedAtReceive(run: JobRun, erasing: Promise<boolean>, cancelling: Promise<boolean>): Promise<{ end: ExtractionOutcome } | undefined> {
  let stops: [boolean, boolean];
  try {
    stops = await Promise.all([erasing, cancelling]);
  } catch (error) {
    return { end: await settleFailure(run, 'document_read', error) };
  }
  if (stops[0]) return { end: await settleErased(run, 'receive') };
  return stops[1] ? { end: await settleCancelled(run, 'receive') } : undefined;
}

/**
 * Extracts the run's job from `text` and commits the valid result once: admission, the model call,
 * validation and at most the lane's repairs. Returns the outcome; throws only for what the failure
 * table does not know (the lane then retries the record).
 */
export async function extract(run: JobRun, text: string): Promise<ExtractionOutcome> {
  // One model call per idempotency key at a time: another holder's work is waited for, not repeated.
  const claimed = await claimKey(run);
  if ('end' in claimed) {
    await releaseEarlyAdmission(run);
    return claimed.end;
  }
  let outcome: ExtractionOutcome | undefined;
  try {
    outcome = await extractHeld(run, text);
    return outcome;
  } finally {
    await endKeyClaim(run, outcome);
  }
}

/** Admission, the model call, validation and the repairs, while the run holds its job's key. */
async function extractHeld(run: JobRun, text: string): Promise<ExtractionOutcome> {
  const { schema, prompt, maxRepairAttempts } = extractionOf(run);
  let messages = prompt.buildMessages(text);
  let modelCalls = 0;
  let repairsUsed = 0;
  for (;;) {
    // No call that cannot end, and its record be settled, within the record's time.
    const room = await roomForCall(run, modelCalls);
    if ('end' in room) return room.end;
    // A key that is not cooling and has budget (now, or on a slot near enough to wait for), or "come back at retryAt".
    const admitted = await admit(run, estimateTokens(messages.map((m) => m.content).join('\n')));
    if ('again' in admitted) continue;
    if ('end' in admitted) return admitted.end;
    const grant = admitted.go;
    const cancelled = await cancelledBeforeCall(run, grant);
    if (cancelled) return cancelled;
    modelCalls += 1;
    const answered = await callModel(run, grant, { messages, jsonSchemaName: schema.jsonSchemaName, jsonSchema: schema.jsonSchema, apiKey: grant.key.secret });
    if ('end' in answered) return answered.end;
    const response = answered.go;
    // The tokens admission took are reconciled with what the call used while the answer is validated and committed.
    // (The provider's minute is admission's window.)
    const stated = response.statedLimits;
    const providerLimits = stated && { requestsPerWindow: stated.requestsPerMinute, tokensPerWindow: stated.tokensPerMinute };
    const settling = grant.settle({ ...response.usage, ...(providerLimits ? { providerLimits } : {}) });
    run.usage.inputTokens += response.usage.inputTokens;
    run.usage.outputTokens += response.usage.outputTokens;
    const validation = validateOutput(response.content, schema);
    if (validation.ok) {
      const [, committed] = await Promise.all([settling, commit(run, { result: validation.value, model: response.model, modelCalls })]);
      return committed;
    }
    await settling;
    // An invalid answer is ledgered; the policy repairs it (within the budget) or sends it to review.
    const repair = await settleInvalidAnswer(run, validation, { model: response.model, outputChars: response.content.length, repairsUsed, maxRepairAttempts });
    if ('end' in repair) return repair.end;
    repairsUsed += 1;
    messages = prompt.buildRepairMessages(text, response.content, validation.problems);
  }
}
