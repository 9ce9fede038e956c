/**
 * The pipeline's call step: one model call with the admitted key, timed into the run and aborted with
 * the record's scope. The job id is claimed while the call runs (its write then costs the record no
 * time of its own). A failed call goes through the failure table; a throttle also records the key's
 * (or its quota owner's) cooldown where every consumer sees it and hands the job back as a deferral:
 * the lane decides how it waits.
 */
import { RATE_CUT_AFTER_WINDOWS, RATE_CUT_RECOVERY_PER_WINDOW } from '../admission/bucket/token-bucket.js';
import type { KeyGrant, ProviderKey } from '../admission/keys/key-pool.js';
import type { DeferAction } from '../policy/index.js';
import { currentAbortSignal } from '../platform/abort-scope.js';
import { errorName } from '../platform/errors.js';
import { COOLDOWN_METRICS } from '../platform/telemetry.js';
import type { ExtractionRequest, ExtractionResponse } from '../providers/model.js';
import type { StatedLimits } from '../providers/stated-limits.js';
import { count, log, runLogFields, type JobRun, type Next } from './context.js';
import { failureVerdict, isThrottle } from './failures.js';
import type { ExtractionOutcome, LaneOut } from './outcome.js';
import { decideFor, outOfTime, resolveAction, settleFailure } from './settle.js';
import { startClaim } from './verify.js';
import { fitLane } from './admit.js';

/**
 * Calls the model with the grant's key: the answer, or the record's outcome once the failure is
 * recorded and the grant given back (its owner's first call, if it was that, is released).
 */
export async function callModel(run: JobRun, grant: KeyGrant, request: Omit<ExtractionRequest, 'signal'>): Promise<Next<ExtractionResponse>> {
  try {
    const calling = timedCall(run, grant.key, request);
    startClaim(run);
    const response = await calling;
    noteStatedLimits(run, grant.key, response.statedLimits);
    return { go: response };
  } catch (error) {
    const failed = await modelFailed(run, error, grant.key);
    await grant.settle(null);
    return { end: failed };
  }
}

/** One model call, timed into the run; aborted with the record's scope (`lib/platform/abort-scope.ts`). */
async function timedCall(run: JobRun, key: ProviderKey, request: Omit<ExtractionRequest, 'signal'>): Promise<ExtractionResponse> {
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

/** The figures each consumer instance (its deps) last logged as the provider's lower limits. */
const loggedLimits = new WeakMap<object, string>();

/**
 * An answer whose stated per-minute limits (`stated-limits.ts`) are below the lane's config: counted on
 * every such answer (the lane's `provider-limits-below-config` alarm), logged when the figures change.
 * Admission keeps to them by itself (the settlement records them); the config is what sizes the mapping.
 */
function noteStatedLimits(run: JobRun, key: ProviderKey, stated: StatedLimits | undefined): void {
  if (stated === undefined) return;
  const configured = run.deps.lane.provider.limits;
  const below = (told: number | undefined, limit: number) => told !== undefined && told < limit;
  if (!below(stated.requestsPerMinute, configured.requestsPerMinute) && !below(stated.tokensPerMinute, configured.tokensPerMinute)) return;
  count(run.deps, 'ProviderLimitsBelowConfig');
  const figures = `${stated.requestsPerMinute ?? '-'} ${stated.tokensPerMinute ?? '-'}`;
  if (loggedLimits.get(run.deps) === figures) return;
  loggedLimits.set(run.deps, figures);
  log(run.deps, 'warn', 'the provider states lower limits than the lane config: admission keeps to them; set provider.limits to them', {
    ...runLogFields(run),
    keyId: key.id,
    detail: `quota owner ${key.quotaOwner}: stated ${stated.requestsPerMinute ?? '-'} requests and ${stated.tokensPerMinute ?? '-'} tokens a minute; configured ${configured.requestsPerMinute} and ${configured.tokensPerMinute}`,
  });
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
      const cooled = await deps.keys.cool(key, action.cooldown);
      count(deps, 'KeyCooldown');
      count(deps, COOLDOWN_METRICS[action.cooldown.reason]);
      log(deps, 'info', 'key cooling', { ...fields, cooldown: action.cooldown });
      if (cooled?.rateCut !== undefined) {
        count(deps, 'RateCut');
        log(deps, 'warn', `the provider refused again within ${RATE_CUT_AFTER_WINDOWS} provider minutes: the quota owner's rates cut`, {
          ...fields,
          detail: `quota owner ${key.quotaOwner}: ${Math.round(cooled.rateCut * 100)} % of provider.limits, recovering ${Math.round(RATE_CUT_RECOVERY_PER_WINDOW * 100)} % a minute; the provider allows less than the config, or another client shares the quota`,
        });
      }
    } catch (error) {
      log(deps, 'warn', 'could not record a key cooldown', { ...fields, cooldown: action.cooldown, error: errorName(error) });
    }
  }
  if (action.pauseLane) {
    // Resume at the earliest reset of any key, not only this one's.
    const capacity = await deps.keys.laneCapacity?.().catch(() => null);
    const until = Math.min(Date.parse(action.pauseLane.until), capacity?.share === 0 ? capacity.until.getTime() : Infinity);
    return { until: new Date(until), reason: action.pauseLane.reason };
  }
  if (action.cooldown && action.cooldown.reason !== 'rate_limit') {
    // Two consumers can exhaust the last two keys at the same moment, each still seeing the other's
    // key as usable. Each re-reads after recording its own cooldown, so at least one sees every key out;
    // with some keys left, the lane pulls only what they can start.
    const capacity = await deps.keys.laneCapacity?.().catch(() => null);
    if (capacity?.share === 0 && capacity.reason !== 'booked_ahead') return { until: capacity.until, reason: capacity.reason };
    if (capacity) await fitLane(run, capacity);
  }
  return undefined;
}
