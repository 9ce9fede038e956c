/**
 * First calls (`bucket/first-calls.ts`): an owner no consumer has seen answer takes one call at a
 * time, across every consumer sharing the rate state, so a key out of credit costs one call, not one
 * per concurrent record; the others wait in-process for that answer within their booking window, or
 * take another owner.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROBE_WAIT_SPREAD, SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import type { KeyAdmission } from '../../../../lib/admission/keys/key-pool.js';
import type { Sleep } from '../../../../lib/platform/sleep.js';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { LIMITS, T0 } from '../support.js';

const KEYS = [
  { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' },
  { id: 'k2', quotaOwner: 'o2', secret: 'sk-2' },
];
const USAGE = { inputTokens: 100, outputTokens: 10 };
const BILLING = { scope: 'quota_owner' as const, reason: 'billing' as const, until: new Date(T0 + 86_400_000).toISOString() };

function newPool(clock: { now: number }, billingRecheckMs = 300_000, store = new MemoryRateStateStore(), random?: () => number, sleep?: Sleep): SharedKeyPool {
  const settings = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, billingRecheckMs });
  return new SharedKeyPool({ keys: KEYS, store, limits: LIMITS, settings, now: () => clock.now, ...(random ? { random } : {}), sleep });
}

/**
 * A sleep on the global `setTimeout`, which `t.mock.timers` moves (Node's mock timers do not reach the
 * `timers/promises` the pool's default sleep is made of), honouring the abort signal.
 */
const mockedTimerSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** The in-memory store, counting bucket reads. */
class ReadCountingStore extends MemoryRateStateStore {
  bucketReads = 0;

  override async readBucket(owner: string) {
    this.bucketReads++;
    return super.readBucket(owner);
  }
}

/** Two consumers on `store`, primed together at the lane's start, whose first takes probed one owner each (`a`'s `first`, `b`'s `second`). */
async function twoProbers(store: MemoryRateStateStore) {
  const clock = { now: T0 };
  const [a, b] = [0, 1].map((i) => newPool(clock, 300_000, store, () => i / 2)) as [SharedKeyPool, SharedKeyPool];
  await Promise.all([a.prime(), b.prime()]);
  const first = await a.acquire({ estimatedTokens: 100 });
  const second = await b.acquire({ estimatedTokens: 100 });
  assert.ok(first.admitted && second.admitted && first.key.id !== second.key.id);
  return { a, first, second };
}

/** Runs what is due without the (mocked) timers: a few turns of the event loop. */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

const keyOf = (a: KeyAdmission): string => (a.admitted ? a.key.id : `denied: ${a.detail}`);

describe('SharedKeyPool: first calls', () => {
  it('sends one call to each unproven owner; a third caller without a window is told to come back after one slot', async () => {
    // Prepare
    const clock = { now: T0 };
    const pool = newPool(clock);
    // Act
    const first = await pool.acquire({ estimatedTokens: 100 });
    const second = await pool.acquire({ estimatedTokens: 100 });
    const third = await pool.acquire({ estimatedTokens: 100 });
    // Assess: k1 and k2 probed once each; the third denied for the probes (one request slot: 10 s)
    assert.deepEqual([keyOf(first), keyOf(second)], ['k1', 'k2']);
    assert.equal(third.admitted, false);
    assert.ok(!third.admitted && third.detail === 'first call of a key in flight' && third.retryAt.getTime() === T0 + 10_000);
  });

  it('admits freely once the owner answered', async () => {
    // Prepare: both owners' first calls answered
    const clock = { now: T0 };
    const pool = newPool(clock);
    for (const grant of [await pool.acquire({ estimatedTokens: 100 }), await pool.acquire({ estimatedTokens: 100 })]) {
      assert.ok(grant.admitted);
      await grant.settle(USAGE);
    }
    // Act
    const next = await Promise.all([1, 2, 3, 4].map(() => pool.acquire({ estimatedTokens: 100 })));
    // Assess: all four admitted at once, none held for a probe
    assert.ok(
      next.every((a) => a.admitted),
      next.map(keyOf).join(', '),
    );
  });

  it('a caller with a booking window waits in-process for the probe and is admitted when it answers', async () => {
    // Prepare: one owner only in play (k2's owner out of credit), its probe out
    const clock = { now: T0 };
    const pool = newPool(clock);
    await pool.cool(KEYS[1]!, BILLING);
    const probe = await pool.acquire({ estimatedTokens: 100 });
    assert.equal(keyOf(probe), 'k1');
    // Act: a second caller waits; the probe answers meanwhile
    const waiting = pool.acquire({ estimatedTokens: 100, bookWithinMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(probe.admitted);
    await probe.settle(USAGE);
    const second = await waiting;
    // Assess: admitted on the proven owner, without a denial
    assert.equal(keyOf(second), 'k1');
  });

  it('consumers that found a probe out together come back apart: each its own share of a slot sooner', async (t) => {
    // Prepare: one owner in play (k2's out of credit), its probe out; two consumers drawing the least and the most spread
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const clock = { now: T0 };
    const store = new ReadCountingStore();
    const prover = newPool(clock, 300_000, store);
    await prover.cool(KEYS[1]!, BILLING);
    const probe = await prover.acquire({ estimatedTokens: 100 });
    const [early, late] = [() => 0, () => 0.99].map((random) => newPool(clock, 300_000, store, random, mockedTimerSleep));
    const waits = [early!, late!].map((pool) => pool.acquire({ estimatedTokens: 100, bookWithinMs: 60_000 }));
    await flush();
    const slotMs = LIMITS.windowMs / LIMITS.requestsPerWindow;
    const soonestMs = Math.ceil(slotMs * (1 - 0.99 * PROBE_WAIT_SPREAD)) + 1;
    // Act: the most spread consumer's time passes, then the rest of the slot
    const before = store.bucketReads;
    t.mock.timers.tick(soonestMs);
    await flush();
    const afterSoonest = store.bucketReads;
    t.mock.timers.tick(slotMs - soonestMs);
    await flush();
    const afterSlot = store.bucketReads;
    // Assess: one asked again after its share less than a slot, the other only after the slot
    assert.equal(afterSoonest - before, 1);
    assert.equal(afterSlot - afterSoonest, 1);
    assert.ok(probe.admitted);
    await probe.settle(USAGE);
    t.mock.timers.tick(60_000);
    assert.deepEqual((await Promise.all(waits)).map(keyOf), ['k1', 'k1']);
  });

  it('a key out of credit gets one call: the others wait, then go to the working key', async () => {
    // Prepare: k1 probed; it answers out of credit
    const clock = { now: T0 };
    const pool = newPool(clock);
    const probe = await pool.acquire({ estimatedTokens: 100 });
    const other = await pool.acquire({ estimatedTokens: 100 });
    assert.deepEqual([keyOf(probe), keyOf(other)], ['k1', 'k2']);
    const waiting = Promise.all([1, 2, 3].map(() => pool.acquire({ estimatedTokens: 100, bookWithinMs: 5_000 })));
    // Act: k1's call fails for billing (cooled, then released); k2's answers
    await new Promise((resolve) => setTimeout(resolve, 20));
    await pool.cool(KEYS[0]!, BILLING);
    assert.ok(probe.admitted && other.admitted);
    await probe.settle(null);
    await other.settle(USAGE);
    const after = await waiting;
    // Assess: nobody went to k1 again
    assert.deepEqual(after.map(keyOf), ['k2', 'k2', 'k2']);
  });

  it('after the billing cooldown ends, the owner is probed again: one call, not a burst', async () => {
    // Prepare: k1 proven, then out of credit until T0 + 60 s; k2 spent for the minute
    const clock = { now: T0 };
    const pool = newPool(clock, 5_000);
    const proven = await pool.acquire({ estimatedTokens: 100 });
    assert.ok(proven.admitted && proven.key.id === 'k1');
    await proven.settle(USAGE);
    await pool.cool(KEYS[0]!, { ...BILLING, until: new Date(T0 + 60_000).toISOString() });
    for (let i = 0; i < 6; i++) {
      const grant = await pool.acquire({ estimatedTokens: 100 });
      assert.ok(grant.admitted && grant.key.id === 'k2');
      await grant.settle(USAGE);
    }
    // Act: the cooldown over, eight callers at once (k2, refilled, holds six)
    clock.now = T0 + 61_000;
    const callers = await Promise.all(Array.from({ length: 8 }, () => pool.acquire({ estimatedTokens: 100 })));
    // Assess: the proven k2 takes what it holds first, then one call on k1 (its probe), the last one waits for it
    assert.equal(callers.filter((c) => c.admitted && c.key.id === 'k2').length, 6);
    assert.equal(callers.filter((c) => c.admitted && c.key.id === 'k1').length, 1);
    assert.equal(callers.filter((c) => !c.admitted).length, 1);
  });

  it('takes an owner known proven before one it does not know proven, which another consumer may be probing', async () => {
    // Prepare: two consumers primed at the lane's start, each has probed one owner (a's grant proved its own, b's holds its probe)
    const store = new MemoryRateStateStore();
    const { a, first } = await twoProbers(store);
    await first.settle(USAGE);
    const conflicts = store.conflicts;
    // Act: a's next take, its round robin pointing at the owner b probes
    const next = await a.acquire({ estimatedTokens: 100 });
    // Assess: the owner a knows proven, and no write of a's refused
    assert.ok(next.admitted);
    assert.equal(next.key.id, first.key.id);
    assert.equal(store.conflicts - conflicts, 0);
  });

  it('reads an owner it cached unproven before taking from it, once another owner was proven since', async () => {
    // Prepare: two consumers primed together; each probes one owner and its call answers
    const store = new ReadCountingStore();
    const { a, first, second } = await twoProbers(store);
    await Promise.all([first.settle(USAGE), second.settle(USAGE)]);
    // Act: a takes until its own owner is spent, then the other one
    const grants: KeyAdmission[] = [];
    const [conflicts, reads] = [store.conflicts, store.bucketReads];
    for (let i = 0; i < LIMITS.requestsPerWindow; i++) grants.push(await a.acquire({ estimatedTokens: 100 }));
    // Assess: the last one on b's owner, read first (the prime's copy shows it untouched), and no write refused
    const last = grants.at(-1)!;
    assert.ok(last.admitted && last.key.id === second.key.id);
    assert.equal(store.bucketReads - reads, 1);
    assert.equal(store.conflicts - conflicts, 0);
  });

  it('holds the probe across consumers: a second consumer takes the other owner, a third is told to wait', async () => {
    // Prepare: three consumers on one rate state
    const clock = { now: T0 };
    const store = new MemoryRateStateStore();
    const [a, b, c] = [0, 1, 2].map(() => newPool(clock, 300_000, store));
    // Act
    const fromA = await a!.acquire({ estimatedTokens: 100 });
    const fromB = await b!.acquire({ estimatedTokens: 100 });
    const fromC = await c!.acquire({ estimatedTokens: 100 });
    // Assess: one probe on each owner; c passed over both
    assert.deepEqual([keyOf(fromA), keyOf(fromB)], ['k1', 'k2']);
    assert.ok(!fromC.admitted && fromC.detail === 'first call of a key in flight');
  });

  it('a key out of credit costs one call across consumers; once the other answers, every consumer takes it freely', async () => {
    // Prepare: a probes k1, b probes k2
    const clock = { now: T0 };
    const store = new MemoryRateStateStore();
    const [a, b, c] = [0, 1, 2].map(() => newPool(clock, 300_000, store));
    const probe1 = await a!.acquire({ estimatedTokens: 100 });
    const probe2 = await b!.acquire({ estimatedTokens: 100 });
    assert.ok(probe1.admitted && probe2.admitted);
    // Act: k1's owner out of credit (cooled, then released); k2 answers
    await a!.cool(KEYS[0]!, BILLING);
    await probe1.settle(null);
    await probe2.settle(USAGE);
    const after = [await c!.acquire({ estimatedTokens: 100 }), await c!.acquire({ estimatedTokens: 100 }), await a!.acquire({ estimatedTokens: 100 })];
    // Assess: every later call on k2, none held
    assert.deepEqual(after.map(keyOf), ['k2', 'k2', 'k2']);
  });

  it('a probe that failed without an answer gives the owner back: the next call probes it', async () => {
    // Prepare: a's probe of k1 out, c's take passed over it (k2 cooled for a rate limit)
    const clock = { now: T0 };
    const store = new MemoryRateStateStore();
    const [a, c] = [0, 1].map(() => newPool(clock, 300_000, store));
    await a!.cool(KEYS[1]!, { scope: 'key', reason: 'rate_limit', until: new Date(T0 + 60_000).toISOString() });
    const probe = await a!.acquire({ estimatedTokens: 100 });
    assert.equal(keyOf(probe), 'k1');
    assert.equal((await c!.acquire({ estimatedTokens: 100 })).admitted, false);
    // Act: the call failed (a timeout): no answer
    assert.ok(probe.admitted);
    await probe.settle(null);
    const next = await c!.acquire({ estimatedTokens: 100 });
    // Assess
    assert.equal(keyOf(next), 'k1');
  });
});
