/**
 * The provider keys a consumer may use. Secrets come from Secrets Manager in AWS and from env or a
 * file locally (`key-ring.ts`). A {@link KeyPool} hands out a key for each model call: the shared
 * pool (`SharedKeyPool`, `drivers/shared-key-pool.ts`) admits a call only when a key is not cooling
 * and has budget; {@link roundRobinKeys} admits every call (no shared state).
 */
import { RatelaneError } from '../../platform/errors.js';
import type { Cooldown, LaneLimitReason, LaneOutReason } from '../../policy/index.js';
import type { Flow, ProviderLimits } from '../model/bucket.js';
import type { CoolOutcome } from '../model/cooldowns.js';

/** One usable key: its id (logged), the quota owner it shares limits with, and its secret (never logged). */
export interface ProviderKey {
  id: string;
  quotaOwner: string;
  secret: string;
}

/** What a model call is about to spend. */
export interface KeyRequest {
  /** Estimated input tokens (the job's `input.estimatedTokens`, plus prompt overhead). */
  estimatedTokens: number;
  /**
   * How long the caller can wait in-process for a slot (ms; absent or 0: not at all). A pool with
   * token buckets may then book the call on a slot that close instead of denying it: the grant's
   * {@link KeyGrant.startAt} says when to call.
   */
  bookWithinMs?: number | undefined;
  /**
   * The flow the call belongs to (its tenant and priority class, with their weight): a pool with token
   * buckets shares a binding quota between flows by weight (`bucket/flows.ts`). Absent: one flow.
   */
  flow?: Flow | undefined;
}

/** Token usage a call reported, and the owner's limits its answer stated. */
export interface KeyUsage {
  inputTokens: number;
  outputTokens: number;
  /** The quota owner's per-window limits the provider stated on the answer (absent: none stated). */
  providerLimits?: ProviderLimits | undefined;
}

/** The call may go ahead with `key`. */
export interface KeyGrant {
  admitted: true;
  key: ProviderKey;
  /** When the call may start (absent: now): a booked slot within the request's `bookWithinMs`. */
  startAt?: Date | undefined;
  /** Time this acquire waited in-process for another call's first answer on an owner (ms; `bucket/first-calls.ts`). */
  waitedMs?: number | undefined;
  /** Set while some quota owners are out for a long reset (share 0: this call spent the last of the lane's day). */
  laneCapacity?: LaneCapacityState | undefined;
  /** Reconciles what admission took with the real usage (`null`: the call reported none). Never throws. */
  settle(usage: KeyUsage | null): Promise<void>;
  /**
   * When the key or its quota owner is cooling as far as this consumer instance has learned since (its
   * own calls' cooldowns, and those its takes read), without a read; `undefined`: not known to be
   * cooling. A caller that waited for a booked slot asks before calling (optional: pools without
   * shared state omit it).
   */
  coolingUntil?(): Date | undefined;
}

/** No key can take the call now. */
export interface KeyDenial {
  admitted: false;
  /** When a key or tokens are next due. */
  retryAt: Date;
  /** For logs: why (cooling, no budget, contention). */
  detail: string;
  /** Set when every key is out for a long reset (daily quota, billing): the lane may pause until then. */
  laneOut?: { until: Date; reason: LaneOutReason } | undefined;
  /** As {@link KeyGrant.waitedMs}. */
  waitedMs?: number | undefined;
  /** As {@link KeyGrant.laneCapacity}; also `booked_ahead` when the slot lies more than a provider minute ahead. */
  laneCapacity?: LaneCapacityState | undefined;
}

/**
 * Some of the lane's quota owners are out for a long reset (daily quota, billing, auth): `share` of
 * them still usable (0: none, the lane is out), the earliest back at `until`, out for `reason`; or
 * (`booked_ahead`) the slots are booked more than a provider minute ahead: `share` of the mapping's
 * records is what the quota can start, until `until`.
 */
export interface LaneCapacityState {
  share: number;
  until: Date;
  reason: LaneLimitReason;
}

/** A key for the call, or when to come back. */
export type KeyAdmission = KeyGrant | KeyDenial;

/** Where a cooldown applies: one key, or every key of its quota owner. */
export interface CooldownTarget {
  scope: Cooldown['scope'];
  reason: Cooldown['reason'];
}

/** Hands out keys for model calls. */
export interface KeyPool {
  /** How many keys the lane has. */
  readonly size: number;
  /** A key for one call, or a denial with the time to come back. */
  acquire(request: KeyRequest): Promise<KeyAdmission>;
  /**
   * How many keys stay usable (not out for a long reset) once `key` (or its quota owner) cools as
   * `target` says; `undefined` when the pool keeps no shared state.
   */
  keysLeftAfter(key: ProviderKey, target: CooldownTarget): Promise<number | undefined>;
  /**
   * Records a cooldown the policy decided, so no consumer spends a call to learn it again; says whether it
   * also cut the owner's rates (pools without shared state say nothing).
   */
  cool(key: ProviderKey, cooldown: Cooldown): Promise<CoolOutcome | undefined>;
  /**
   * The lane's capacity as every consumer recorded it (a fresh read), `null` while every quota owner
   * is usable; share 0: every key is out until the earliest reset (optional: pools without shared
   * state omit it).
   */
  laneCapacity?(): Promise<LaneCapacityState | null>;
}

/** Raised when a lane has no usable key. */
export class NoProviderKeyError extends RatelaneError {
  override name = 'NoProviderKeyError';
  readonly kind = 'config';
  readonly retryable = false;
}

/** Round robin over a fixed set of keys; admits every call and remembers nothing. */
export function roundRobinKeys(keys: readonly ProviderKey[]): KeyPool & { next(): ProviderKey } {
  if (keys.length === 0) throw new NoProviderKeyError('no provider key configured for this lane');
  let cursor = 0;
  const next = (): ProviderKey => {
    const key = keys[cursor % keys.length] as ProviderKey;
    cursor = (cursor + 1) % keys.length;
    return key;
  };
  return {
    size: keys.length,
    next,
    async acquire() {
      return { admitted: true, key: next(), settle: async () => undefined };
    },
    async keysLeftAfter() {
      return undefined;
    },
    async cool() {
      return undefined;
    },
  };
}
