/**
 * Shared inputs of the policy tests (`policy*.test.ts`): a fixed clock, the lane's default backoff,
 * a job builder and narrowing helpers for the actions `decide` returns.
 */
import assert from 'node:assert/strict';
import type {
  Action,
  BackoffSettings,
  DeferAction,
  FailAction,
  gateBeforeCall,
  JobDecisionInput,
  JobOutcome,
  JobScheduling,
  ProviderErrorClassification,
  RejectAction,
} from '../../../lib/policy/index.js';

export const NOW = Date.parse('2026-01-01T00:00:00.000Z');
export const SECOND = 1000;
export const HOUR = 3600 * SECOND;
export const iso = (ms: number) => new Date(ms).toISOString();
/** The lane defaults (lib/config/lanes.ts). */
export const BACKOFF: BackoffSettings = { throttleBaseSeconds: 2, throttleCapSeconds: 300, failureBaseSeconds: 5, failureCapSeconds: 900 };
export const half = () => 0.5;

/** A job of lane `eu`, eligible a minute ago. */
export function job(overrides: Partial<JobScheduling> = {}): JobScheduling {
  return { attempt: 0, deferrals: 0, eligibleAt: iso(NOW - 60 * SECOND), region: 'eu', ...overrides };
}

/** A decision input for one outcome: first receive, maxReceiveCount 5, the default backoff, random 0.5. */
export function input(outcome: JobOutcome, overrides: Partial<Omit<JobDecisionInput, 'outcome'>> = {}): JobDecisionInput {
  return {
    job: job(),
    lane: 'eu',
    approximateReceiveCount: 1,
    maxReceiveCount: 5,
    now: NOW,
    backoff: BACKOFF,
    random: half,
    ...overrides,
    outcome,
  };
}

/** A provider error outcome (no stated wait unless given), with `keysLeft` when given. */
export function providerError(classification: Partial<ProviderErrorClassification> & Pick<ProviderErrorClassification, 'kind'>, keysLeft?: number): JobOutcome {
  return { kind: 'provider_error', classification: { retryAfterMs: null, resetAt: null, ...classification }, keysLeft };
}

/** Narrows to a deferral (asserts it is one). */
export function asDefer(action: Action | ReturnType<typeof gateBeforeCall>): DeferAction {
  assert.equal(action.type, 'defer', `expected defer, got ${JSON.stringify(action)}`);
  return action as DeferAction;
}
/** Narrows to a failure (asserts it is one). */
export function asFail(action: Action): FailAction {
  assert.equal(action.type, 'fail', `expected fail, got ${JSON.stringify(action)}`);
  return action as FailAction;
}
/** Narrows to a rejection (asserts it is one). */
export function asReject(action: Action | ReturnType<typeof gateBeforeCall>): RejectAction {
  assert.equal(action.type, 'reject', `expected reject, got ${JSON.stringify(action)}`);
  return action as RejectAction;
}
