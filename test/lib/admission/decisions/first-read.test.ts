/**
 * A cold pool instance's first decision runs beside its first cooldown read (`decisions/cooldown-cache.ts`):
 * its take is written while the read is out, and its answer stands only once the read lands and
 * agrees with it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BucketUpdate } from '../../../../lib/admission/model/bucket.js';
import type { CooldownSnapshot, KeyRef } from '../../../../lib/admission/model/cooldowns.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import type { KeyAdmission, ProviderKey } from '../../../../lib/admission/keys/key-pool.js';
import { RateStateUnavailableError } from '../../../../lib/admission/dynamodb/rate-state.js';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';

const T0 = Date.parse('2026-03-02T20:00:00.000Z');
const KEYS: ProviderKey[] = [
  { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' },
  { id: 'k2', quotaOwner: 'o2', secret: 'sk-2' },
];
const LIMITS = { requestsPerWindow: 20, tokensPerWindow: 1e9, windowMs: 60_000, requestsPerDay: 1e6, dayMs: 86_400_000 };
const SETTINGS = admissionSettings({ outputTokenEstimate: 100 });

/** The in-memory store whose cooldown reads wait until {@link release} (or fail with {@link fail}), noting what was written meanwhile. */
class GatedStore extends MemoryRateStateStore {
  cooldownReads = 0;
  /** Bucket writes made while a cooldown read was out. */
  writesDuringRead = 0;
  private pending: { resolve: () => void; reject: (error: unknown) => void }[] = [];

  override async readCooldowns(keys: readonly KeyRef[]): Promise<CooldownSnapshot> {
    this.cooldownReads++;
    await new Promise<void>((resolve, reject) => this.pending.push({ resolve, reject }));
    return super.readCooldowns(keys);
  }

  override async writeBucket(owner: string, update: BucketUpdate) {
    if (this.pending.length > 0) this.writesDuringRead++;
    return super.writeBucket(owner, update);
  }

  release(): void {
    for (const p of this.pending.splice(0)) p.resolve();
  }

  fail(): void {
    for (const p of this.pending.splice(0)) p.reject(new RateStateUnavailableError('BatchGetItem', 'rate-test', { cause: new Error('connection reset') }));
  }
}

/** Lets the pool run every step it can without the read (a few turns of the event loop). */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

describe('admission: a cold instance decides beside its first cooldown read', () => {
  it('writes its first take while the read is out and answers once it lands', async () => {
    // Prepare
    const store = new GatedStore();
    const pool = new SharedKeyPool({ keys: KEYS, store, limits: LIMITS, settings: SETTINGS, now: () => T0 });
    // Act
    let answer: KeyAdmission | undefined;
    const acquiring = pool.acquire({ estimatedTokens: 10 }).then((a) => {
      answer = a;
    });
    await settle();
    const beforeRead = { answer, writes: store.writesDuringRead };
    store.release();
    await acquiring;
    // Assess: the take went out beside the read; the grant waited for the read
    assert.equal(beforeRead.writes, 1);
    assert.equal(beforeRead.answer, undefined);
    assert.ok(answer?.admitted && answer.key.id === 'k1');
    assert.equal(store.cooldownReads, 1);
  });

  it('gives back the probe of a key the read shows cooling and grants another key', async () => {
    // Prepare: k1's key (not its owner) cools for an invalid secret, in the table only
    const store = new GatedStore();
    await store.putCooldown({ scope: 'key', id: 'k1', reason: 'auth', until: T0 + 3_600_000 });
    const pool = new SharedKeyPool({ keys: KEYS, store, limits: LIMITS, settings: SETTINGS, now: () => T0 });
    // Act
    const acquiring = pool.acquire({ estimatedTokens: 10 });
    await settle();
    store.release();
    const answer = await acquiring;
    // Assess: the call goes to k2; o1's probe is free again for the next consumer
    assert.ok(answer.admitted && answer.key.id === 'k2');
    assert.equal(store.buckets.get('o1')?.probeUntil, 0);
    assert.ok((store.buckets.get('o2')?.probeUntil ?? 0) > T0, 'k2 is the probe now');
  });

  it('decides a denial again on what the read says: every owner cooling for billing puts the lane out', async () => {
    // Prepare: both owners out of credit, in the table only (their buckets not yet written)
    const store = new GatedStore();
    for (const owner of ['o1', 'o2']) await store.putCooldown({ scope: 'quota_owner', id: owner, reason: 'billing', until: T0 + 86_400_000 });
    const pool = new SharedKeyPool({ keys: KEYS, store, limits: LIMITS, settings: SETTINGS, now: () => T0 });
    // Act
    const acquiring = pool.acquire({ estimatedTokens: 10 });
    await settle();
    store.release();
    const answer = await acquiring;
    // Assess: no call goes, and the lane is out for billing
    assert.equal(answer.admitted, false);
    assert.equal(answer.admitted ? undefined : answer.laneOut?.reason, 'billing');
  });

  it('gives back the probe of its take when the read fails, and throws', async () => {
    // Prepare
    const store = new GatedStore();
    const pool = new SharedKeyPool({ keys: KEYS, store, limits: LIMITS, settings: SETTINGS, now: () => T0 });
    // Act
    const acquiring = pool.acquire({ estimatedTokens: 10 });
    await settle();
    store.fail();
    const outcome = await acquiring.then(
      () => undefined,
      (error: unknown) => error,
    );
    // Assess
    assert.ok(outcome instanceof RateStateUnavailableError);
    assert.equal(store.buckets.get('o1')?.probeUntil, 0, 'the next consumer may probe o1');
  });
});
