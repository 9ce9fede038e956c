/**
 * Admission before each model call, as the pipeline's admit step: whether the record's time still holds
 * a call, then a key that is not cooling and has budget — now, or booked on a slot near enough to wait
 * for in-process — or "come back at retryAt" (the job is deferred without a call).
 *
 * The first call's admission is taken beside the document read instead of after it: the take and the
 * read are a record's two round trips before its call, and neither needs the other. That early take is
 * made for the tokens the job declares plus its prompt's own (known per prompt version); the first call
 * uses it when the prompt built from the text the read returned needs no more than that. A job whose
 * declared size was short of its text (an untrusted body) has its early grant given back and takes
 * again for what it really needs; a record that ends before its call gives the grant back.
 */
import type { KeyAdmission, KeyDenial, KeyGrant, LaneCapacityState } from '../admission/keys/key-pool.js';
import { errorName, shortMessage } from '../platform/errors.js';
import type { Flow } from '../admission/model/bucket.js';
import { flowOf } from './flow.js';
import { estimateTokens, type Job } from '../contract/job.js';
import { getExtractionPrompt } from '../contract/schemas/registry.js';
import { bookingWindowMs, modelCallFits } from './budget.js';
import { count, log, runLogFields, type JobRun, type Next } from './context.js';
import type { ExtractionOutcome } from './outcome.js';
import { decideFor, outOfTime, resolveAction, settleFailure } from './settle.js';

/** What the admit step says: call with the grant (`go`), ask again (a booked key cooled during the wait), or the record's outcome. */
export type Admitted = Next<KeyGrant> | { again: true };

/**
 * Whether the record's time can still hold a model call and the settling after it (`calls`: the calls
 * made so far, for the detail); when it cannot, the early grant is given back and the job comes back at once.
 */
export async function roomForCall(run: JobRun, calls: number): Promise<Next<void>> {
  const { deps, delivery } = run;
  if (!delivery.stopWork?.aborted && modelCallFits(deps.lane, deps.now().getTime(), delivery.deadlineAt, delivery.expectedCallMs)) return { go: undefined };
  const left = delivery.deadlineAt === undefined ? 0 : Math.max(0, delivery.deadlineAt - deps.now().getTime());
  const callMs = delivery.expectedCallMs ?? deps.lane.provider.timeoutMs;
  await releaseEarlyAdmission(run);
  return { end: await outOfTime(run, `${left} ms left for work, a model call may take ${callMs} ms (after ${calls} call(s))`) };
}

/**
 * A key for a call whose prompt is `promptTokens` long (priced at no less than the job declares): the
 * early take when it covers the call, else a take now. A booked slot is waited for in-process; a key
 * this instance learned is cooling during that wait (another record's 429 on its owner) is given back
 * and admission asked again, since the call would only be refused.
 */
export async function admit(run: JobRun, promptTokens: number): Promise<Admitted> {
  const { job, deps } = run;
  let admission: KeyAdmission;
  try {
    const estimatedTokens = Math.max(job.input.estimatedTokens, promptTokens);
    admission =
      (await useEarlyAdmission(run, estimatedTokens)) ??
      (await deps.keys.acquire({
        estimatedTokens,
        bookWithinMs: bookingWindowMs(deps.lane, run.delivery, deps.now().getTime()),
        flow: runFlow(run),
      }));
  } catch (error) {
    return { end: await settleFailure(run, 'admission', error) };
  }
  // A wait for another call's first answer on an owner is a wait, like a booked slot's (not overhead).
  if (admission.waitedMs) run.model.waitMs = (run.model.waitMs ?? 0) + admission.waitedMs;
  if (admission.laneCapacity) await fitLane(run, admission.laneCapacity);
  if (!admission.admitted) return { end: await admissionDenied(run, admission) };
  const { key } = admission;
  if (admission.startAt && !(await waitForSlot(run, admission.startAt))) {
    await admission.settle(null);
    return { end: await outOfTime(run, `stopped while waiting for a booked slot of key ${key.id}`) };
  }
  if (admission.startAt && admission.coolingUntil?.()) {
    await admission.settle(null);
    log(deps, 'info', 'booked key cooled during the wait: admitting again', { ...runLogFields(run), keyId: key.id });
    return { again: true };
  }
  return { go: admission };
}

/**
 * Fits the lane to the capacity admission found: paused until the earliest reset when none of its
 * quota owners is left (this call may have spent the last of the day), else pulling in proportion to
 * those left — or, when its slots are booked more than a provider minute ahead (`booked_ahead`), to the share
 * of its records the quota can start — so it receives no records only to defer them. Once per change in
 * the consumer instance; a failure is logged, never the record's.
 */
export async function fitLane(run: JobRun, capacity: LaneCapacityState): Promise<void> {
  const { deps } = run;
  if (!deps.lanePause) return;
  const fields = { ...runLogFields(run), until: capacity.until.toISOString(), reason: capacity.reason, share: capacity.share };
  try {
    const done = await deps.lanePause.requestCapacity(capacity);
    if (done === 'paused') {
      count(deps, 'LanePaused');
      log(deps, 'warn', 'lane paused: every key is out', { ...fields, outcome: 'lane_paused' });
    } else if (done === 'limited') {
      count(deps, 'LaneLimited');
      const why = capacity.reason === 'booked_ahead' ? 'slots booked more than a provider minute ahead' : 'some quota owners are out';
      log(deps, 'warn', `lane limited: ${why}`, { ...fields, outcome: 'lane_limited' });
    }
  } catch (error) {
    log(deps, 'error', 'could not fit the lane to its keys', { ...fields, error: errorName(error), detail: shortMessage(error) });
  }
}

/** Waits in-process until a booked slot (timed into the run); false when the record's work was stopped first. */
async function waitForSlot(run: JobRun, startAt: Date): Promise<boolean> {
  const ms = startAt.getTime() - run.deps.now().getTime();
  if (ms <= 0) return true;
  const started = performance.now();
  try {
    await run.deps.sleep(ms, run.delivery.stopWork);
    return true;
  } catch {
    return false;
  } finally {
    run.model.waitMs = (run.model.waitMs ?? 0) + (performance.now() - started);
  }
}

/** No key could take the call: defer until the earliest is due, without calling the provider. */
async function admissionDenied(run: JobRun, denial: KeyDenial): Promise<ExtractionOutcome> {
  count(run.deps, 'AdmissionDenied');
  const action = decideFor(run, { kind: 'admission_denied', retryAt: denial.retryAt, mayWaitMs: run.delivery.returnWaitMs });
  return resolveAction(run, action, `admission denied: ${denial.detail}, retry at ${denial.retryAt.toISOString()}`, denial.laneOut);
}

/** Tokens of each prompt version's own text (the prompt built around an empty document), by `schema/prompt`. */
const promptOwnTokens = new Map<string, number>();

/**
 * The tokens the first call of `job` is expected to take before its text is read: what the job
 * declares for its document, plus its prompt's own. Never less than what the call is priced at once
 * the prompt is built from a document of the declared size (the estimate rounds each part up).
 */
export function declaredCallTokens(job: Pick<Job, 'schemaVersion' | 'promptVersion' | 'input'>): number {
  const id = `${job.schemaVersion}/${job.promptVersion}`;
  let own = promptOwnTokens.get(id);
  if (own === undefined) {
    const prompt = getExtractionPrompt(job.schemaVersion, job.promptVersion);
    own = prompt
      ? estimateTokens(
          prompt
            .buildMessages('')
            .map((m) => m.content)
            .join('\n'),
        )
      : 0;
    promptOwnTokens.set(id, own);
  }
  return job.input.estimatedTokens + own;
}

/** The run's flow, worked out once. */
function runFlow(run: JobRun): Flow {
  run.flow ??= flowOf(run.job, run.deps.lane.fairness);
  return run.flow;
}

/** Starts the first call's take for the run (its answer is kept on the run until {@link useEarlyAdmission}). */
export function takeEarly(run: JobRun): void {
  const estimatedTokens = declaredCallTokens(run.job);
  const answer = run.deps.keys.acquire({
    estimatedTokens,
    bookWithinMs: bookingWindowMs(run.deps.lane, run.delivery, run.deps.now().getTime()),
    flow: runFlow(run),
  });
  answer.catch(() => undefined);
  run.early = { estimatedTokens, answer };
}

/**
 * The early take's answer for a call priced at `estimatedTokens`, or `undefined` when there is none or
 * it was made for fewer tokens (its grant is given back then, and the caller takes again). Throws what
 * the take threw.
 */
async function useEarlyAdmission(run: JobRun, estimatedTokens: number): Promise<KeyAdmission | undefined> {
  const early = run.early;
  if (!early) return undefined;
  run.early = undefined;
  if (estimatedTokens <= early.estimatedTokens) return early.answer;
  await giveBack(early.answer);
  return undefined;
}

/** Gives the early take's grant back when the run ends before its first call (nothing to do without one). */
export async function releaseEarlyAdmission(run: JobRun): Promise<void> {
  const early = run.early;
  if (!early) return;
  run.early = undefined;
  await giveBack(early.answer);
}

/** A grant that no call used is settled as "no answer": its owner's first call, if it was that, is released. */
async function giveBack(answer: Promise<KeyAdmission>): Promise<void> {
  const admission = await answer.catch(() => undefined);
  if (admission?.admitted) await admission.settle(null);
}
