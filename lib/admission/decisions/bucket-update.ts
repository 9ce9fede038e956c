/**
 * One conditional update of a bucket item, as every decision of `pool-core.ts` makes it: decided on
 * the instance's cached bucket, read first only when this instance lost a write on it lately, and
 * decided again on the state a failed write returns. A write that lands returns the bucket it found:
 * the cache learns what the update made of it, and a take's times are those that bucket gives.
 */
import { retimed, type BucketChange } from '../bucket/changes.js';
import { applyUpdate } from '../bucket/item-update.js';
import type { BucketLimits, BucketState } from '../model/bucket.js';
import type { BucketWrite } from '../model/store.js';
import { beginDecision, learnBucket, learnedSince, type PoolConfig, type PoolOps, type PoolState } from './pool-state.js';

/**
 * Applies `change` to the bucket item `owner` (of `limits`) with a conditional write, deciding again
 * on the bucket a failed write returned; `'contended'` after `maxBucketAttempts` failed writes.
 * `since`: the decision's number (see `refreshContended`).
 */
export function* update<A, T>(
  config: PoolConfig,
  state: PoolState,
  owner: string,
  limits: BucketLimits,
  change: BucketChange<A, T>,
  arg: A,
  since = beginDecision(state),
): PoolOps<T | 'contended'> {
  const locks = config.serial !== true;
  if (locks) yield { kind: 'lock', owner };
  let refreshed = false;
  for (let attempt = 0; attempt < config.settings.maxBucketAttempts; ) {
    const cached = state.buckets.get(owner);
    const now = config.now();
    const { result, write } = change(limits, cached, now, arg);
    if (write === undefined) {
      // Nothing to write, nothing read: a stale cache mostly over-counts what is left (other instances
      // take); where it under-counts (tokens given back), the denial's reserving take reads before it writes.
      if (locks) yield { kind: 'unlock', owner };
      return result;
    }
    if (!refreshed) {
      refreshed = true;
      if (yield* refreshContended(config, state, owner, limits, since)) continue; // decide again on what was read
    }
    const outcome = (yield { kind: 'writeBucket', owner, update: write, now }) as BucketWrite;
    if (outcome.ok) {
      learnBucket(state, owner, applyUpdate(outcome.before, write));
      if (locks) yield { kind: 'unlock', owner };
      // Found as cached (no other write since) and decided on it: the decision stands as made.
      if (outcome.before?.version === cached?.version) return result;
      return retimed(result, change(limits, outcome.before, now, arg, true).result);
    }
    learnBucket(state, owner, outcome.current);
    state.conflictAt.set(owner, now);
    attempt++;
  }
  state.contended++;
  if (locks) yield { kind: 'unlock', owner };
  return 'contended';
}

/**
 * Before a write: reads bucket item `owner` when this instance's write of it conflicted within the
 * last window (`PoolState.conflictAt`): under contention a read is cheaper than a write that fails.
 * Not when its state was learned from the table since decision `since` began: a decision, or a group
 * of them, reads each bucket once at most. Whether it read.
 */
function* refreshContended(config: PoolConfig, state: PoolState, owner: string, limits: BucketLimits, since: number): PoolOps<boolean> {
  const at = state.conflictAt.get(owner);
  if (at === undefined) return false;
  if (config.now() - at >= limits.windowMs) {
    state.conflictAt.delete(owner);
    return false;
  }
  if (learnedSince(state, owner, since)) return false;
  learnBucket(state, owner, (yield { kind: 'readBucket', owner }) as BucketState | undefined);
  return true;
}
