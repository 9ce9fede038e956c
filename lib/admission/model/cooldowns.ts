/**
 * Cooldowns as admission keeps them: a key, or every key of one quota owner, is out until a time
 * (keys that share a quota owner cool together). The choices made on them are in `decisions/choice.ts`.
 */
import type { CooldownReason } from '../../policy/index.js';

/** A key as admission sees it (no secret). */
export interface KeyRef {
  id: string;
  quotaOwner: string;
}

/** A cooldown as stored: one key, or every key of one quota owner, is out until `until`. */
export interface CooldownRecord {
  scope: 'key' | 'quota_owner';
  /** The key id (scope `key`) or the quota owner (scope `quota_owner`). */
  id: string;
  reason: CooldownReason;
  /** Epoch ms. */
  until: number;
  /** For an `auth` cooldown: the fingerprint of the key's secret that was refused (a new secret lifts it). */
  fingerprint?: string | undefined;
}

/** What recording a cooldown did beyond the cooldown itself. */
export interface CoolOutcome {
  /**
   * A rate limit that came again within three windows cut the owner's rates to this share of the
   * configured ones (`rateLimitedUpdate`); absent: no cut by this cooldown.
   */
  rateCut?: number | undefined;
}

/** Every cooldown known for a lane's keys and owners. */
export interface CooldownSnapshot {
  keys: ReadonlyMap<string, CooldownRecord>;
  owners: ReadonlyMap<string, CooldownRecord>;
}

/** No cooldowns at all. */
export const EMPTY_SNAPSHOT: CooldownSnapshot = { keys: new Map(), owners: new Map() };

/** Billing and auth wait for a person, who may act any time: such a cooldown is re-checked, not waited out. */
export const RECHECKED: ReadonlySet<string> = new Set(['billing', 'auth']);
