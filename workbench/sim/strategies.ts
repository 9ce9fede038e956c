/**
 * The three strategies the simulator compares. All three run the same consumer flow and the same
 * pure policy (`gateBeforeCall`, `decide` from lib/policy); they differ only in what the consumer
 * tells the policy about a provider error and whether admission runs before the call:
 *
 * - (a) `naive`: the usual default. Every failure, a 429 included, is reported to the policy as a
 *   real failure (`not_rate_limit`), so it goes back through the visibility timeout with the lane's
 *   failure backoff (capped full jitter) and is dead-lettered by the redrive policy after
 *   `maxReceiveCount` (5) receives. No admission, keys round robin.
 * - (b) `reschedule`: 429s are classified (`rate_limit` with the provider's retry hint,
 *   `quota_exhausted` with its reset time) and the policy defers them with a re-send and
 *   `DelaySeconds` (hopping on `eligibleAt` past 900 s). No admission, no shared cooldowns, no lane
 *   pause: every consumer learns a limit by spending a call on it. Keys round robin.
 * - (c) `admission`: (b) plus admission control: the shared key pool with per-key cooldowns and a
 *   token bucket per quota owner (lib/admission). A call is only made when a key is free and its
 *   bucket has budget; otherwise the job is deferred until the earliest key is due without spending a
 *   call; 429s cool the key (or its quota owner) for every consumer, and when every key is out the
 *   lane pauses until the earliest reset.
 */
import type { JobOutcome } from '../../lib/policy/index.js';
import { CALL_QUOTA, CALL_RATE_LIMIT, type CallResult } from './provider-model.js';

/** The strategies' names. */
export type StrategyId = 'naive' | 'reschedule' | 'admission';

/** One strategy: how the consumer reports a 429 and whether admission runs. */
export interface Strategy {
  id: StrategyId;
  /** Short label for tables: `(a) naive`. */
  label: string;
  description: string;
  /** Report every provider error as a real failure (the naive default). */
  throttleIsFailure: boolean;
  /** Run admission (key pool, buckets, cooldowns, lane pause) before each call. */
  admission: boolean;
}

/** The strategies (see the file's comment). */
export const STRATEGIES: Readonly<Record<StrategyId, Strategy>> = Object.freeze({
  naive: {
    id: 'naive',
    label: '(a) naive',
    description: 'every failure incl. 429 -> visibility-timeout backoff, DLQ after 5 receives',
    throttleIsFailure: true,
    admission: false,
  },
  reschedule: {
    id: 'reschedule',
    label: '(b) reschedule',
    description: '429 -> deferral with DelaySeconds (policy defer path), no admission',
    throttleIsFailure: false,
    admission: false,
  },
  admission: {
    id: 'admission',
    label: '(c) admission',
    description: '(b) + key pool, token buckets, shared cooldowns, lane pause',
    throttleIsFailure: false,
    admission: true,
  },
});

/** Every strategy, in the order the tables show them. */
export const STRATEGY_IDS: readonly StrategyId[] = ['naive', 'reschedule', 'admission'];

const REAL_FAILURE: JobOutcome = { kind: 'provider_error', classification: { kind: 'not_rate_limit', retryAfterMs: null, resetAt: null } };

/**
 * What the consumer tells the policy about a provider error under `strategy` (`retryAfterMs` and
 * `resetAt` are the provider's hints for a 429; `keysLeft` comes from admission, when it runs).
 */
export function outcomeForError(strategy: Strategy, result: CallResult, hints: { retryAfterMs: number; resetAt: number }, keysLeft?: number): JobOutcome {
  if (strategy.throttleIsFailure) return REAL_FAILURE;
  if (result === CALL_RATE_LIMIT) {
    return {
      kind: 'provider_error',
      classification: { kind: 'rate_limit', retryAfterMs: hints.retryAfterMs, resetAt: null },
      ...(keysLeft === undefined ? {} : { keysLeft }),
    };
  }
  if (result === CALL_QUOTA) {
    return {
      kind: 'provider_error',
      classification: { kind: 'quota_exhausted', retryAfterMs: null, resetAt: new Date(hints.resetAt) },
      ...(keysLeft === undefined ? {} : { keysLeft }),
    };
  }
  return REAL_FAILURE;
}
