/**
 * Extraction: admission, the model call, validation, one bounded repair, and the commit once. A
 * throttle is recorded where every consumer sees it (the key's cooldown in the shared rate state) and
 * handed back as a deferral; the lane decides how the job waits.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { KeyDenial, KeyGrant, ProviderKey } from '../admission/keys.js';
import { currentAbortSignal } from '../platform/abort-scope.js';
import { CONSUMER_REPAIR_ATTEMPTS } from '../config/lanes.js';
import { estimateTokens } from '../contract/job.js';
import { getExtractionPrompt, getExtractionSchema } from '../contract/schemas/registry.js';
import type { DeferAction } from '../policy/index.js';
import type { ExtractionResponse } from '../providers/model.js';
import { errorName } from '../platform/errors.js';
import { COOLDOWN_METRICS } from '../platform/telemetry.js';
import { resultRecordFor, type CommitOutcome } from '../store/results.js';
import { bookingWindowMs, modelCallFits } from './budget.js';
import { count, ledgerBase, log, runLogFields, type JobRun } from './context.js';
import { InternalError } from './errors.js';
import { failureVerdict, isThrottle } from './failures.js';
import type { ExtractionOutcome, LaneOut } from './outcome.js';
import { decideFor, outOfTime, resolveAction, settleFailure, suppressDuplicate } from './settle.js';
import { validateOutput } from './validate.js';
import { releaseEarlyAdmission, useEarlyAdmission } from './early-admission.js';
import { claimed, startClaim } from './verify.js';

/**
 * Extracts the run's job from `text` and commits the valid result once. Returns the outcome; throws
 * only for what the failure table does not know (the lane then retries the record).
 */
export async function extract(run: JobRun, text: string): Promise<ExtractionOutcome> {
  const { job, deps } = run;
  const schema = getExtractionSchema(job.schemaVersion);
  const prompt = getExtractionPrompt(job.schemaVersion, job.promptVersion);
  if (!prompt) throw new InternalError(`prompt ${job.promptVersion} vanished from the registry`);
  const maxRepairAttempts = deps.maxRepairAttempts ?? CONSUMER_REPAIR_ATTEMPTS;
  let messages = prompt.buildMessages(text);
  let modelCalls = 0;
  let repairsUsed = 0;
  for (;;) {
    // No call that cannot end, and its record be settled, within the record's time: come back at once instead.
    if (run.delivery.stopWork?.aborted || !modelCallFits(deps.lane, deps.now().getTime(), run.delivery.deadlineAt, run.delivery.expectedCallMs)) {
      const left = run.delivery.deadlineAt === undefined ? 0 : Math.max(0, run.delivery.deadlineAt - deps.now().getTime());
      const callMs = run.delivery.expectedCallMs ?? deps.lane.provider.timeoutMs;
      await releaseEarlyAdmission(run);
      return outOfTime(run, `${left} ms left for work, a model call may take ${callMs} ms (after ${modelCalls} call(s))`);
    }
    // Admission before the call: a key that is not cooling and has budget (now, or booked on a slot
    // near enough to wait for in-process), or "come back at retryAt".
    let admission: KeyGrant | KeyDenial;
    try {
      const promptTokens = estimateTokens(messages.map((m) => m.content).join('\n'));
      const estimatedTokens = Math.max(job.input.estimatedTokens, promptTokens);
      admission =
        (await useEarlyAdmission(run, estimatedTokens)) ??
        (await deps.keys.acquire({ estimatedTokens, bookWithinMs: bookingWindowMs(deps.lane, run.delivery, deps.now().getTime()) }));
    } catch (error) {
      return settleFailure(run, 'admission', error);
    }
    // A wait for another call's first answer on an owner is a wait, like a booked slot's (not overhead).
    if (admission.waitedMs) run.model.waitMs = (run.model.waitMs ?? 0) + admission.waitedMs;
    if (!admission.admitted) return admissionDenied(run, admission);
    const { key } = admission;
    if (admission.startAt && !(await waitForSlot(run, admission.startAt))) {
      await admission.settle(null);
      return outOfTime(run, `stopped while waiting for a booked slot of key ${key.id}`);
    }
    // A cooldown this instance learned during the wait (another record's 429 on the same owner): the
    // call would only be refused. Admission is asked again; it no longer offers that key.
    if (admission.startAt && admission.coolingUntil?.()) {
      await admission.settle(null);
      log(deps, 'info', 'booked key cooled during the wait: admitting again', { ...runLogFields(run), keyId: key.id });
      continue;
    }
    let response: ExtractionResponse;
    try {
      modelCalls += 1;
      const calling = callModel(run, key, { messages, jsonSchemaName: schema.jsonSchemaName, jsonSchema: schema.jsonSchema, apiKey: key.secret });
      // The job id is claimed while the call runs: its write costs the record no time of its own.
      startClaim(run);
      response = await calling;
    } catch (error) {
      // The failure's cooldown is recorded first, then the key's first call (if this was it) is released.
      const failed = await modelFailed(run, error, key);
      await admission.settle(null);
      return failed;
    }
    // Reconcile the tokens admission took with what the call really used (never throws), while the
    // output is validated and committed.
    const settling = admission.settle(response.usage);
    run.usage.inputTokens += response.usage.inputTokens;
    run.usage.outputTokens += response.usage.outputTokens;
    const validation = validateOutput(response.content, schema);
    if (validation.ok) {
      const [, committed] = await Promise.all([settling, commit(run, { result: validation.value, model: response.model, modelCalls })]);
      return committed;
    }
    count(deps, 'ValidationFailed');
    await settling;
    const reused = await claimed(run);
    if (reused) return reused;
    await deps.ledger.record({
      ...ledgerBase(run),
      kind: 'validation_failed',
      reason: validation.parseStatus,
      parseStatus: validation.parseStatus,
      failingFields: validation.failingFields,
      failingRules: validation.failingRules,
      details: `model ${response.model}, repair ${repairsUsed} of ${maxRepairAttempts}, output ${response.content.length} chars`,
    });
    const action = decideFor(run, { kind: 'validation_failed', repairAttemptsUsed: repairsUsed, maxRepairAttempts });
    if (action.type !== 'repair') return resolveAction(run, action, validation.parseStatus);
    repairsUsed += 1;
    messages = prompt.buildRepairMessages(text, response.content, validation.problems);
    log(deps, 'info', 'repairing output', { ...runLogFields(run), parseStatus: validation.parseStatus, outcome: 'repair' });
  }
}

/** Waits in-process until a booked slot (timed into the run); false when the record's work was stopped first. */
async function waitForSlot(run: JobRun, startAt: Date): Promise<boolean> {
  const ms = startAt.getTime() - run.deps.now().getTime();
  if (ms <= 0) return true;
  const started = performance.now();
  try {
    await sleep(ms, undefined, run.delivery.stopWork ? { signal: run.delivery.stopWork } : undefined);
    return true;
  } catch {
    return false;
  } finally {
    run.model.waitMs = (run.model.waitMs ?? 0) + (performance.now() - started);
  }
}

/** One model call, timed into the run; aborted with the record's scope (`lib/platform/abort-scope.ts`). */
async function callModel(
  run: JobRun,
  key: ProviderKey,
  request: Omit<Parameters<JobRun['deps']['model']['extract']>[0], 'signal'>,
): Promise<ExtractionResponse> {
  count(run.deps, 'ModelCalls');
  const started = performance.now();
  const signals = [currentAbortSignal(), run.delivery.stopWork].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  let answered = false;
  try {
    const response = await run.deps.model.extract(signal ? { ...request, signal } : request);
    answered = true;
    return response;
  } finally {
    const ms = performance.now() - started;
    run.model.ms += ms;
    run.model.calls += 1;
    try {
      run.delivery.onModelCall?.({ keyId: key.id, quotaOwner: key.quotaOwner, ms, answered });
    } catch {
      // A timing listener must not change what happens to the record.
    }
  }
}

/** The model call failed: the failure table says what it means; a throttle also cools the key. */
async function modelFailed(run: JobRun, error: unknown, key: ProviderKey): Promise<ExtractionOutcome> {
  if (run.delivery.stopWork?.aborted) return outOfTime(run, `model call with key ${key.id} cut off by the record's time`, { cutOff: true });
  const verdict = failureVerdict('model_call', error, { keyId: key.id });
  // Only a provider's verdict or a transport failure goes on below; the rest is the table's as for any step.
  if (verdict.type !== 'decide') return settleFailure(run, 'model_call', error, { keyId: key.id });
  let outcome = verdict.outcome;
  if (isThrottle(outcome)) {
    count(run.deps, 'RateLimited');
    const kind = outcome.classification.kind;
    const scope = kind === 'rate_limit' || kind === 'auth' ? 'key' : 'quota_owner';
    const keysLeft = await run.deps.keys.keysLeftAfter(key, { scope, reason: kind }).catch(() => undefined);
    if (keysLeft !== undefined) outcome = { ...outcome, keysLeft };
  }
  const action = decideFor(run, outcome);
  if (action.type === 'defer' && action.ignoredHintMs !== undefined) {
    count(run.deps, 'StatedWaitIgnored');
    log(run.deps, 'warn', "provider's stated wait not believed: over the lane's ceiling", {
      ...runLogFields(run),
      keyId: key.id,
      reason: action.reason,
      detail: `stated ${Math.round(action.ignoredHintMs / 1000)} s; waiting ${action.waitSeconds} s (${action.basis}) instead`,
    });
  }
  const laneOut = action.type === 'defer' ? await recordThrottle(run, action, key) : undefined;
  return resolveAction(run, action, verdict.detail, laneOut);
}

/**
 * What a throttle's deferral asks beyond the wait: record the key's (or quota owner's) cooldown in
 * the shared rate state, so no consumer spends a call to learn it again, and find out whether any key
 * is left. Failing to record never stops the deferral (admission learns the limit again, at worst).
 * Returns when every key is out, until when.
 */
async function recordThrottle(run: JobRun, action: DeferAction, key: ProviderKey): Promise<LaneOut | undefined> {
  const { deps } = run;
  const fields = { ...runLogFields(run), keyId: key.id };
  if (action.cooldown) {
    try {
      await deps.keys.cool(key, action.cooldown);
      count(deps, 'KeyCooldown');
      count(deps, COOLDOWN_METRICS[action.cooldown.reason]);
      log(deps, 'info', 'key cooling', { ...fields, cooldown: action.cooldown });
    } catch (error) {
      log(deps, 'warn', 'could not record a key cooldown', { ...fields, cooldown: action.cooldown, error: errorName(error) });
    }
  }
  if (action.pauseLane) {
    // Resume at the earliest reset of any key, not only this one's.
    const out = await deps.keys.laneOut?.().catch(() => null);
    const until = Math.min(Date.parse(action.pauseLane.until), out ? out.until.getTime() : Infinity);
    return { until: new Date(until), reason: action.pauseLane.reason };
  }
  if (action.cooldown && action.cooldown.reason !== 'rate_limit') {
    // Two consumers can exhaust the last two keys at the same moment, each still seeing the other's
    // key as usable. Each re-reads after recording its own cooldown, so at least one sees every key out.
    return (await deps.keys.laneOut?.().catch(() => null)) ?? undefined;
  }
  return undefined;
}

/** No key could take the call: defer until the earliest is due, without calling the provider. */
async function admissionDenied(run: JobRun, denial: KeyDenial): Promise<ExtractionOutcome> {
  count(run.deps, 'AdmissionDenied');
  const action = decideFor(run, { kind: 'admission_denied', retryAt: denial.retryAt, mayWaitMs: run.delivery.returnWaitMs });
  return resolveAction(run, action, `admission denied: ${denial.detail}, retry at ${denial.retryAt.toISOString()}`, denial.laneOut);
}

/** Commits the valid output once (conditional write on the idempotency key). */
async function commit(run: JobRun, output: { result: Record<string, unknown>; model: string; modelCalls: number }): Promise<ExtractionOutcome> {
  const { job, deps, delivery } = run;
  const usage = { ...run.usage };
  // A job whose id is another's commits nothing (a failure to claim fails the record: SQS brings it back).
  const reused = await claimed(run);
  if (reused) return reused;
  let written: CommitOutcome;
  const started = performance.now();
  try {
    written = await deps.results.commitOnce(resultRecordFor(job, { ...output, usage }, deps.now()));
    delivery.onCommitted?.(performance.now() - started);
  } catch (error) {
    // Not acknowledged: the lane retries it like any real failure.
    return settleFailure(run, 'commit', error);
  }
  if (written.status === 'duplicate') return suppressDuplicate(run, written.existing.jobId);
  count(deps, 'Completed');
  count(deps, 'AttemptsPerCompletion', job.attempt + delivery.receiveCount + job.deferrals);
  const createdAt = Date.parse(job.createdAt);
  if (Number.isFinite(createdAt)) deps.metrics.addMetric('JobAgeAtCompletionMs', MetricUnit.Milliseconds, Math.max(0, deps.now().getTime() - createdAt));
  log(deps, 'info', 'committed', {
    ...runLogFields(run),
    attempt: job.attempt,
    deferrals: job.deferrals,
    outcome: 'committed',
    modelCalls: output.modelCalls,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
  });
  return { type: 'committed', modelCalls: output.modelCalls, usage, result: output.result, model: output.model };
}
