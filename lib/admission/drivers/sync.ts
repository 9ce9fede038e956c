/**
 * The synchronous driver of the key pool's decisions (`decisions/pool-core.ts`): runs a decision to
 * its end against a rate-state table that answers at once, as the virtual-time simulator's in-memory
 * one does (`workbench/sim/sim-key-pool.ts`).
 */
import type { PoolOps } from '../decisions/pool-state.js';
import type { BucketState, BucketUpdate } from '../model/bucket.js';
import type { CooldownRecord, CooldownSnapshot } from '../model/cooldowns.js';
import type { BucketWrite } from '../model/store.js';

/** The rate-state operations a synchronous driver answers at once (an in-memory table). */
export interface SyncRateState {
  /** The cooldowns of the lane's keys and owners: a new snapshot object for every read. */
  readCooldowns(): CooldownSnapshot;
  /** The owner's bucket, or `undefined` when none is stored. */
  readBucket(owner: string): BucketState | undefined;
  /** Applies `update` if its condition holds on the stored bucket (`bucket/item-update.ts`). */
  writeBucket(owner: string, update: BucketUpdate, now: number): BucketWrite;
  /** Records a cooldown unless a longer one is recorded. */
  putCooldown(record: CooldownRecord, now: number): void;
}

/** Runs a decision to its end against `store`, answering each operation at once (one caller: no locks to wait for). */
export function runSync<T>(ops: PoolOps<T>, store: SyncRateState): T {
  let step = ops.next();
  while (!step.done) {
    const op = step.value;
    let answer: unknown;
    switch (op.kind) {
      case 'readCooldowns':
        // A read ahead too: a table that answers at once has landed it before the decision's next step.
        // An instance's first read is asked for again once its decision is made
        // (`decisions/cooldown-cache.ts`).
        answer = op.first ? undefined : store.readCooldowns();
        break;
      case 'readBucket':
        answer = store.readBucket(op.owner);
        break;
      case 'writeBucket':
        answer = store.writeBucket(op.owner, op.update, op.now);
        break;
      case 'putCooldown':
        store.putCooldown(op.record, op.now);
        break;
      case 'lock':
      case 'unlock':
        break;
    }
    step = ops.next(answer);
  }
  return step.value;
}
