/**
 * Which key may take a call, given what is known about the lane's keys: pure (no clock, no SDK).
 * A key is out while it, or its quota owner, has a cooldown that has not ended; keys that share a
 * quota owner cool together.
 */
import type { Cooldown, CooldownReason, LaneLimitReason } from '../../policy/index.js';
import type { CooldownRecord, CooldownSnapshot, KeyRef } from '../model/cooldowns.js';

/** The policy's cooldown for `key`, as a record of its scope. */
export function cooldownRecordOf(key: KeyRef, cooldown: Pick<Cooldown, 'scope' | 'reason'> & { until: number }): CooldownRecord {
  return cooldown.scope === 'key'
    ? { scope: 'key', id: key.id, reason: cooldown.reason, until: cooldown.until }
    : { scope: 'quota_owner', id: key.quotaOwner, reason: cooldown.reason, until: cooldown.until };
}

/** A long cooldown lasts until a reset or a person (daily quota, billing, auth); a rate limit is short. */
function isLongReason(reason: CooldownReason): boolean {
  return reason !== 'rate_limit';
}

/** Whether `snapshot` holds a long cooldown that has not ended at `now`. */
function hasLongCooldown(snapshot: CooldownSnapshot, now: number): boolean {
  for (const records of [snapshot.keys, snapshot.owners]) for (const r of records.values()) if (r.until > now && isLongReason(r.reason)) return true;
  return false;
}

/** The cooldown that keeps `key` out at `now` (the one ending last), or `undefined` when it is free. */
export function blockerOf(key: KeyRef, snapshot: CooldownSnapshot, now: number): CooldownRecord | undefined {
  const own = snapshot.keys.get(key.id);
  const owner = snapshot.owners.get(key.quotaOwner);
  const keyCools = own !== undefined && own.until > now;
  const ownerCools = owner !== undefined && owner.until > now;
  if (keyCools && ownerCools) return owner.until > own.until ? owner : own;
  return keyCools ? own : ownerCools ? owner : undefined;
}

/** The keys split into those free now (in round-robin order from `cursor`) and those cooling. */
export interface KeyChoice<K extends KeyRef> {
  free: { key: K; index: number }[];
  cooling: { key: K; index: number; blocker: CooldownRecord }[];
}

/** Splits `keys` by cooldown, free keys ordered round robin starting at `cursor`. */
export function chooseKeys<K extends KeyRef>(keys: readonly K[], cursor: number, snapshot: CooldownSnapshot, now: number): KeyChoice<K> {
  const choice: KeyChoice<K> = { free: [], cooling: [] };
  const n = keys.length;
  for (let i = 0; i < n; i++) {
    const index = (((cursor + i) % n) + n) % n;
    const key = keys[index]!;
    const blocker = blockerOf(key, snapshot, now);
    if (blocker) choice.cooling.push({ key, index, blocker });
    else choice.free.push({ key, index });
  }
  return choice;
}

/**
 * How many keys stay usable (not out for a long reset) once `cooled` is added: the policy's
 * `keysLeft` (0 with a quota or billing error pauses the lane).
 */
export function keysLeftAfter(keys: readonly KeyRef[], snapshot: CooldownSnapshot, cooled: CooldownRecord, now: number): number {
  const withCooled = addCooldown(snapshot, cooled);
  return keys.filter((key) => {
    const blocker = blockerOf(key, withCooled, now);
    return blocker === undefined || !isLongReason(blocker.reason);
  }).length;
}

/** The snapshot with `record` added (kept only if it ends later than what is there). */
export function addCooldown(snapshot: CooldownSnapshot, record: CooldownRecord): CooldownSnapshot {
  const keys = new Map(snapshot.keys);
  const owners = new Map(snapshot.owners);
  const map = record.scope === 'key' ? keys : owners;
  const existing = map.get(record.id);
  if (!existing || existing.until < record.until) map.set(record.id, record);
  return { keys, owners };
}

/**
 * What the lane can start while some quota owners are out for a long reset: `share` of its owners
 * still usable (0: the lane is out), and when the earliest out owner comes back (epoch ms) and why; or,
 * for `booked_ahead`, the share of its mapping's records the quota can start, for 900 s after a slot more
 * than a window ahead (`bookedAhead` in `pool-core.ts`).
 */
export interface LaneCapacity {
  share: number;
  until: number;
  reason: LaneLimitReason;
}

/** A quota owner whose daily quota admission saw spent: in what share of its bucket items (1: all), and until the earliest of their resets. */
export interface DailyOut {
  share: number;
  until: number;
}

/**
 * The lane's capacity at `now`: an owner is out when each of its keys is cooling for a long reset
 * (daily quota, billing, auth) or its daily quota is spent (`dailyOut`: owner → what admission itself
 * saw spent, for `quota_exhausted`: an owner whose bucket is split into shards counts as the share of
 * them left); out until the earliest of its keys' returns. `null` while every owner has a usable key
 * (or is only cooling for a rate limit).
 */
export function laneCapacity(keys: readonly KeyRef[], snapshot: CooldownSnapshot, now: number, dailyOut?: ReadonlyMap<string, DailyOut>): LaneCapacity | null {
  // Every decision asks: nothing long recorded and no day seen spent is the usual answer, found without a walk over the keys.
  if (!dailyOut?.size && !hasLongCooldown(snapshot, now)) return null;
  // Per owner: `null` once one of its keys is usable, else its earliest return.
  const owners = new Map<string, { until: number; reason: CooldownReason } | null>();
  for (const key of keys) {
    const known = owners.get(key.quotaOwner);
    if (known === null) continue;
    const blocker = blockerOf(key, snapshot, now);
    const daily = dailyOut?.get(key.quotaOwner);
    let out: { until: number; reason: CooldownReason } | null = blocker && isLongReason(blocker.reason) ? blocker : null;
    if (daily !== undefined && daily.share >= 1 && daily.until > now && (out === null || daily.until > out.until))
      out = { until: daily.until, reason: 'quota_exhausted' };
    owners.set(key.quotaOwner, out === null ? null : known === undefined || out.until < known.until ? out : known);
  }
  let usable = 0;
  let earliest: { until: number; reason: CooldownReason } | null = null;
  for (const [owner, out] of owners) {
    const daily = dailyOut?.get(owner);
    if (out !== null) {
      if (earliest === null || out.until < earliest.until) earliest = out;
    } else if (daily !== undefined && daily.share < 1 && daily.until > now) {
      // Some of its bucket shards are spent for the day: the owner starts the share of its calls the others hold.
      usable += 1 - daily.share;
      if (earliest === null || daily.until < earliest.until) earliest = { until: daily.until, reason: 'quota_exhausted' };
    } else usable++;
  }
  if (earliest === null) return null;
  return { share: usable / owners.size, until: earliest.until, reason: earliest.reason === 'rate_limit' ? 'quota_exhausted' : earliest.reason };
}
