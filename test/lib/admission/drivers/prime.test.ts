/**
 * A pool primed in its execution environment's INIT (`SharedKeyPool.prime`) knows the lane's
 * cooldowns and buckets before its first take: that take is one conditional write, on the state
 * other instances left, with no read on its way; priming starts the round robin at a random key and
 * never fails the INIT.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BucketState } from '../../../../lib/admission/model/bucket.js';
import type { CooldownSnapshot, KeyRef } from '../../../../lib/admission/model/cooldowns.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import type { ProviderKey } from '../../../../lib/admission/keys/key-pool.js';
import { RateStateUnavailableError } from '../../../../lib/admission/dynamodb/rate-state.js';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { LIMITS, T0 } from '../support.js';

const KEYS: ProviderKey[] = [
  { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' },
  { id: 'k2', quotaOwner: 'o2', secret: 'sk-2' },
];
const SETTINGS = admissionSettings({ outputTokenEstimate: 100 });
const USAGE = { inputTokens: 10, outputTokens: 100 };

/** The in-memory table, counting reads (and failing them when `down`). */
class CountingStore extends MemoryRateStateStore {
  cooldownReads = 0;
  bucketReads = 0;
  down = false;

  override async readCooldowns(keys: readonly KeyRef[]): Promise<CooldownSnapshot> {
    this.cooldownReads++;
    if (this.down) throw new RateStateUnavailableError('BatchGetItem', 'rate-test', { cause: new Error('connection reset') });
    return super.readCooldowns(keys);
  }

  override async readBucket(owner: string): Promise<BucketState | undefined> {
    this.bucketReads++;
    if (this.down) throw new RateStateUnavailableError('GetItem', 'rate-test', { cause: new Error('connection reset') });
    return super.readBucket(owner);
  }

  /** Reads, successful writes and failed writes so far. */
  get operations(): number {
    return this.cooldownReads + this.bucketReads + this.writes + this.conflicts;
  }
}

/** A pool instance on `store` at T0 whose random draws are `draw`. */
const instance = (store: CountingStore, draw = 0): SharedKeyPool =>
  new SharedKeyPool({ keys: KEYS, store, limits: LIMITS, settings: SETTINGS, now: () => T0, random: () => draw });

/** Another instance's call on k1, answered: o1's bucket written and proven. */
async function otherInstanceCalled(store: CountingStore): Promise<void> {
  const grant = await instance(store).acquire({ estimatedTokens: 10 });
  assert.ok(grant.admitted && grant.key.id === 'k1');
  await grant.settle(USAGE);
}

describe('admission: a pool primed before its first take', () => {
  it('takes with one conditional write on the state another instance left, and reads nothing on the way', async () => {
    // Prepare
    const store = new CountingStore();
    await otherInstanceCalled(store);
    const pool = instance(store);
    await pool.prime();
    const before = { operations: store.operations, conflicts: store.conflicts };
    // Act
    const grant = await pool.acquire({ estimatedTokens: 10 });
    // Assess
    assert.ok(grant.admitted && grant.key.id === 'k1');
    assert.equal(store.operations - before.operations, 1);
    assert.equal(store.conflicts, before.conflicts);
  });

  it('is what saves the write: unprimed, the same first take conflicts, then writes again', async () => {
    // Prepare
    const store = new CountingStore();
    await otherInstanceCalled(store);
    const conflicts = store.conflicts;
    // Act
    const grant = await instance(store).acquire({ estimatedTokens: 10 });
    // Assess
    assert.ok(grant.admitted);
    assert.equal(store.conflicts - conflicts, 1);
  });

  it('knows a cooldown before its first take: the cooling owner is passed over without a read', async () => {
    // Prepare: o1 cools for billing
    const store = new CountingStore();
    await store.putCooldown({ scope: 'quota_owner', id: 'o1', reason: 'billing', until: T0 + 900_000 });
    const pool = instance(store);
    await pool.prime();
    const reads = store.cooldownReads + store.bucketReads;
    // Act
    const grant = await pool.acquire({ estimatedTokens: 10 });
    // Assess
    assert.ok(grant.admitted && grant.key.id === 'k2');
    assert.equal(store.cooldownReads + store.bucketReads, reads);
  });

  it('starts the round robin at a random key, so instances that start together spread over the owners', async () => {
    // Prepare: this instance draws the last quarter of [0, 1)
    const store = new CountingStore();
    const pool = instance(store, 0.75);
    // Act
    await pool.prime();
    const grant = await pool.acquire({ estimatedTokens: 10 });
    // Assess
    assert.ok(grant.admitted && grant.key.id === 'k2');
  });

  it('never fails: with the table unreachable it resolves, and the first take reads as an unprimed one does', async () => {
    // Prepare
    const store = new CountingStore();
    store.down = true;
    const pool = instance(store);
    // Act
    await pool.prime();
    store.down = false;
    const reads = store.cooldownReads;
    const grant = await pool.acquire({ estimatedTokens: 10 });
    // Assess
    assert.ok(grant.admitted);
    assert.equal(store.cooldownReads - reads, 1);
  });
});
