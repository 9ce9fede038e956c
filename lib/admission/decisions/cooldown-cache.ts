/**
 * The cooldowns as one pool instance knows them (`PoolState.cooldowns`): read from the rate-state
 * table, cached for `cooldownCacheMs`, read ahead beside the decisions for a while after that, plus
 * the cooldowns the instance learned since. An instance's **first** read runs beside its first
 * decision instead of before it ({@link cooldownsOrBeside}): the decision takes on what the buckets
 * say (an owner's cooldown is kept in its bucket too), and its answer is checked against the read
 * once the read lands (`acquireOps` in `pool-core.ts`), so a cold consumer's first take costs one
 * round trip, not two.
 */
import { COOLDOWN_READ_AHEAD_SHARE } from '../config/settings.js';
import { EMPTY_SNAPSHOT, type CooldownRecord, type CooldownSnapshot } from '../model/cooldowns.js';
import { addCooldown } from './choice.js';
import type { PoolConfig, PoolOps, PoolState, StoreOp } from './pool-state.js';

const READ_COOLDOWNS: StoreOp = Object.freeze({ kind: 'readCooldowns' });
const READ_COOLDOWNS_AHEAD: StoreOp = Object.freeze({ kind: 'readCooldowns', ahead: true });
const READ_FIRST_COOLDOWNS: StoreOp = Object.freeze({ kind: 'readCooldowns', ahead: true, first: true });

/**
 * Caches `read`, the cooldowns as read by a read begun at `at` (epoch ms), unless the cache holds a
 * read begun later, or this very snapshot (one load answers the instance's concurrent reads). A
 * driver that answered a read `ahead` with `undefined` calls this when the read lands.
 */
export function cacheCooldownsRead(state: PoolState, read: CooldownSnapshot, at: number): void {
  if (read === state.cooldownsRead || (state.cooldownsRead !== undefined && at < state.cooldownsAt)) return;
  state.cooldownsRead = read;
  state.cooldowns = read;
  state.cooldownsAt = at;
}

/** Adds a cooldown this instance learned to its cache (keeping the cache's read time). */
export function learnCooldown(config: PoolConfig, state: PoolState, record: CooldownRecord): void {
  if (state.cooldowns === undefined) state.cooldownsAt = config.now();
  state.cooldowns = addCooldown(state.cooldowns ?? EMPTY_SNAPSHOT, record);
}

/**
 * The cooldowns, from the instance's cache while it is fresh (unless `fresh`), else read. For a
 * while after it stops being fresh ({@link COOLDOWN_READ_AHEAD_SHARE}) the cache still answers and a
 * read runs beside the decision (`ahead`), so a busy consumer's takes do not wait for it.
 */
export function* cooldowns(config: PoolConfig, state: PoolState, fresh: boolean): PoolOps<CooldownSnapshot> {
  const now = config.now();
  const cached = state.cooldownsRead === undefined ? undefined : state.cooldowns;
  const age = now - state.cooldownsAt;
  const { cooldownCacheMs } = config.settings;
  if (!fresh && cached !== undefined && age < cooldownCacheMs) return cached;
  if (!fresh && cached !== undefined && age < cooldownCacheMs * (1 + COOLDOWN_READ_AHEAD_SHARE)) {
    const read = (yield READ_COOLDOWNS_AHEAD) as CooldownSnapshot | undefined;
    if (read !== undefined) cacheCooldownsRead(state, read, now);
    return state.cooldowns ?? cached;
  }
  const read = (yield READ_COOLDOWNS) as CooldownSnapshot;
  cacheCooldownsRead(state, read, now);
  return state.cooldowns ?? read;
}

/**
 * The cooldowns as {@link cooldowns} gives them, except before the instance's first read has landed:
 * then the read is begun beside the decision (`first`) and `undefined` says the decision goes on
 * without it and checks its answer with {@link firstCooldowns}.
 */
export function* cooldownsOrBeside(config: PoolConfig, state: PoolState): PoolOps<CooldownSnapshot | undefined> {
  if (state.cooldownsRead !== undefined) return yield* cooldowns(config, state, false);
  yield READ_FIRST_COOLDOWNS;
  return undefined;
}

/** The instance's first read begun by {@link cooldownsOrBeside} at `at`, awaited (the driver answers with the same load), with what was learned since. */
export function* firstCooldowns(state: PoolState, at: number): PoolOps<CooldownSnapshot> {
  if (state.cooldownsRead === undefined) cacheCooldownsRead(state, (yield READ_COOLDOWNS) as CooldownSnapshot, at);
  return state.cooldowns ?? EMPTY_SNAPSHOT;
}
