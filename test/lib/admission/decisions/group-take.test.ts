/**
 * The takes of a group of calls made together (one conditional write per quota owner per batch):
 * `acquireGroupOps` decides each call on the instance's cached buckets, writes each changed bucket
 * once, and decides again the calls whose bucket another instance wrote first.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UpdateBuilder } from '../../../../lib/admission/bucket/item-update.js';
import { takeFromBucket } from '../../../../lib/admission/bucket/token-bucket.js';
import type { BucketState } from '../../../../lib/admission/model/bucket.js';
import type { KeyRef } from '../../../../lib/admission/model/cooldowns.js';
import { acquireGroupOps } from '../../../../lib/admission/decisions/group-take.js';
import { acquireOps, type CoreAdmission } from '../../../../lib/admission/decisions/pool-core.js';
import { newPoolState, type PoolConfig } from '../../../../lib/admission/decisions/pool-state.js';
import { runSync } from '../../../../lib/admission/drivers/sync.js';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import { newAdmissionCounters, SimRateState, type AdmissionCounters } from '../../../../workbench/sim/sim-key-pool.js';
import { assertNear, levelsOf, LIMITS, T0 } from '../support.js';

const KEYS: KeyRef[] = [
  { id: 'k1', quotaOwner: 'o1' },
  { id: 'k2', quotaOwner: 'o2' },
];

function newTable(): { store: SimRateState; counters: AdmissionCounters } {
  const counters = newAdmissionCounters();
  return { store: new SimRateState(KEYS, counters), counters };
}

function configOf(probeFirstCalls = false): PoolConfig {
  const settings = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, probeFirstCalls });
  return { keys: KEYS, limits: LIMITS, settings, now: () => T0 };
}

const calls = (n: number, tokens = 100) => Array.from({ length: n }, () => ({ estimatedTokens: tokens }));
const keysOf = (answers: CoreAdmission<KeyRef>[]): string[] => answers.map((a) => (a.admitted ? a.key.id : a.probing ? 'probing' : 'denied'));

describe('acquireGroupOps: the takes of a group together', () => {
  it('fills one owner before the next, one write per owner, and starts the next group at the next key', () => {
    // Prepare: 6 requests a minute per owner
    const { store, counters } = newTable();
    const config = configOf();
    const state = newPoolState(config.settings);
    // Act
    const first = runSync(acquireGroupOps(config, state, calls(8)), store);
    const second = runSync(acquireGroupOps(config, state, calls(1)), store);
    // Assess
    assert.deepEqual(keysOf(first), ['k1', 'k1', 'k1', 'k1', 'k1', 'k1', 'k2', 'k2']);
    assert.equal(counters.bucketWrites, 2 + 1, 'one write per owner for the group of 8, one for the single call');
    assertNear(levelsOf(store.bucketOf('o1')).requests, 0, 'o1: 6 of 6 taken');
    assertNear(levelsOf(store.bucketOf('o2')).requests, 3, 'o2: 3 of 6 taken');
    assert.deepEqual(keysOf(second), ['k2']);
  });

  it("reserves a group's denials on one owner when that delays them little: one write, its calls one refill apart", () => {
    // Prepare: owners of 600 requests a minute (a slot every 100 ms), both minutes taken
    const { store, counters } = newTable();
    const config: PoolConfig = { ...configOf(), limits: { ...LIMITS, requestsPerWindow: 600, tokensPerWindow: 6_000_000, requestsPerDay: 100_000 } };
    const state = newPoolState(config.settings);
    runSync(acquireGroupOps(config, state, calls(1200)), store);
    const writesBefore = counters.bucketWrites;
    // Act: a group of 4 denied
    const answers = runSync(acquireGroupOps(config, state, calls(4)), store);
    // Assess: one reservation write, on one owner, the 4 slots 100 ms apart (a request's refill)
    assert.equal(counters.bucketWrites - writesBefore, 1);
    const retries = answers.map((a) => (a.admitted ? Number.NaN : Math.round(a.retryAt - T0)));
    assert.deepEqual(retries, [100, 200, 300, 400]);
    const promised = ['o1', 'o2'].map((owner) => Math.max(0, Math.round(store.bucketOf(owner)!.reservedUntil - T0)));
    assert.deepEqual(promised.sort(), [0, 500], 'one owner holds the four slots, the other none');
  });

  it("spreads a group's denials over the owners where one owner's slots are coarse (a slot every 10 s)", () => {
    // Prepare: both owners' minutes taken (6 requests each)
    const { store, counters } = newTable();
    const config = configOf();
    const state = newPoolState(config.settings);
    runSync(acquireGroupOps(config, state, calls(12)), store);
    const writesBefore = counters.bucketWrites;
    // Act: a group of 4 denied
    const answers = runSync(acquireGroupOps(config, state, calls(4)), store);
    // Assess: two slots on each owner (joining one would delay the last call by 20 s, a third of a window)
    assert.equal(counters.bucketWrites - writesBefore, 2);
    const retries = answers.map((a) => (a.admitted ? Number.NaN : a.retryAt - T0));
    assert.deepEqual(retries, [10_000, 10_000, 20_000, 20_000]);
  });

  it('decides again on the current bucket when another instance wrote it first, never taking more than the budget', () => {
    // Prepare: instance B has seen o1 and o2 empty; instance A then takes 4 of o1's 6 and 5 of o2's 6
    const { store, counters } = newTable();
    const config: PoolConfig = { ...configOf(), keys: [KEYS[0]!] };
    const a = newPoolState(config.settings);
    const b = newPoolState(config.settings);
    runSync(acquireGroupOps(config, b, calls(1)), store);
    runSync(acquireGroupOps(config, a, calls(4)), store);
    const conflictsBefore = counters.bucketConflicts;
    // Act: B's group of 3, on its stale cache (1 taken)
    const answers = runSync(acquireGroupOps(config, b, calls(3)), store);
    // Assess: the first write failed; the retry on the current bucket (5 taken) admits one, the others are denied
    assert.equal(counters.bucketConflicts - conflictsBefore, 1);
    assert.deepEqual(keysOf(answers), ['k1', 'denied', 'denied']);
    assertNear(levelsOf(store.bucketOf('o1')).requests, 0);
  });

  it('reads a bucket it lost a write on before writing it again, for a window: a read instead of a failed write', () => {
    // Prepare: B loses one write on o1 to A: A took the 5 calls B's cache still shows
    const { store, counters } = newTable();
    const config: PoolConfig = { ...configOf(), keys: [KEYS[0]!] };
    const a = newPoolState(config.settings);
    const b = newPoolState(config.settings);
    runSync(acquireGroupOps(config, b, calls(1)), store);
    runSync(acquireGroupOps(config, a, calls(5)), store);
    const lost = counters.bucketConflicts;
    assert.deepEqual(keysOf(runSync(acquireGroupOps(config, b, calls(1)), store)), ['denied']);
    assert.equal(counters.bucketConflicts - lost, 1, 'B’s take failed on the quota');
    runSync(acquireGroupOps(config, a, calls(1)), store);
    const before = { ...counters };
    // Act: after A wrote again (its reservation), B asks again
    runSync(acquireGroupOps(config, b, calls(2)), store);
    // Assess: B read o1 first and its write (their reservations) went through
    assert.equal(counters.bucketConflicts - before.bucketConflicts, 0);
    assert.equal(counters.cooldownReads - before.cooldownReads, 1, 'one GetItem of the bucket');
    assertNear(levelsOf(store.bucketOf('o1')).requests, 0);
    assert.equal(counters.bucketWrites - before.bucketWrites, 1);
  });

  it('under contention reads a bucket only before writing it, once per decision: not for a denial that writes nothing', () => {
    // Prepare: B creates o1; A fills o1 and o2 (its first write conflicts with B's); B then loses writes on both
    const { store, counters } = newTable();
    const config = configOf();
    const a = newPoolState(config.settings);
    const b = newPoolState(config.settings);
    runSync(acquireGroupOps(config, b, calls(1)), store);
    assert.ok(
      runSync(acquireGroupOps(config, a, calls(11)), store).every((answer) => answer.admitted),
      'A took the 11 calls left',
    );
    assert.deepEqual(keysOf(runSync(acquireGroupOps(config, b, calls(1)), store)), ['denied']);
    assert.ok(b.conflictAt.has('o1') && b.conflictAt.has('o2'), 'B lost a write on each owner');
    const before = { ...counters };
    // Act: B's next call finds both owners spent in its cache, and reserves a slot on one
    const [answer] = runSync(acquireGroupOps(config, b, calls(1)), store);
    // Assess: one read, of the bucket it reserves on (the owners it passed over were not read), and no failed write
    assert.ok(answer && !answer.admitted);
    assert.equal(counters.cooldownReads - before.cooldownReads, 1, 'one GetItem of a bucket');
    assert.equal(counters.bucketWrites - before.bucketWrites, 1, 'the reservation');
    assert.equal(counters.bucketConflicts - before.bucketConflicts, 0);
  });

  it('writes the token corrections it owes with the group, once, even when the first write conflicted', () => {
    // Prepare: B owes o1 500 tokens; A writes o1 after B cached it
    const { store } = newTable();
    const config: PoolConfig = { ...configOf(), keys: [KEYS[0]!] };
    const a = newPoolState(config.settings);
    const b = newPoolState(config.settings);
    runSync(acquireGroupOps(config, b, calls(1)), store);
    b.carried.set('o1', 500);
    runSync(acquireGroupOps(config, a, calls(1)), store);
    // Act
    runSync(acquireGroupOps(config, b, calls(2)), store);
    // Assess: 4 calls of 100 tokens (plus the output estimate), plus the 500 owed, once
    const perCall = 100 + Math.round(b.outputEstimate);
    assertNear(levelsOf(store.bucketOf('o1')).tokens, LIMITS.tokensPerWindow - 4 * perCall - 500);
    assert.equal(b.carried.size, 0);
  });

  it('sends one first call per unproven owner; the rest of the group is told a first call is in flight', () => {
    // Prepare
    const { store, counters } = newTable();
    const config = configOf(true);
    const state = newPoolState(config.settings);
    // Act
    const answers = runSync(acquireGroupOps(config, state, calls(4)), store);
    // Assess
    assert.deepEqual(keysOf(answers), ['k1', 'k2', 'probing', 'probing']);
    assert.equal(counters.bucketWrites, 2);
    assert.deepEqual([...state.probes].sort(), ['o1', 'o2']);
  });

  it("keeps the corrections it owes when its reserving take meets another call's probe (nothing is written)", () => {
    // Prepare: B cached o1 spent; since then o1 has budget again and another consumer's first call holds its probe
    const { store, counters } = newTable();
    const config: PoolConfig = { ...configOf(true), keys: [KEYS[0]!] };
    let spent: BucketState | undefined;
    for (let i = 0; i < LIMITS.requestsPerWindow; i++) {
      const v = takeFromBucket(spent, LIMITS, { requests: 1, tokens: 100 }, T0, { reserve: false });
      assert.ok(v.admitted);
      spent = v.next;
    }
    const refilled = takeFromBucket(undefined, LIMITS, { requests: 1, tokens: 100 }, T0, { reserve: false });
    assert.ok(refilled.admitted);
    store.writeBucket('o1', refilled.update!, T0);
    store.writeBucket(
      'o1',
      new UpdateBuilder()
        .set('proven', false)
        .set('probeUntil', T0 + 60_000)
        .build()!,
      T0,
    );
    const b = newPoolState(config.settings);
    b.buckets.set('o1', { ...spent!, proven: true });
    b.carried.set('o1', 50);
    const writes = counters.bucketWrites;
    // Act
    const answer = runSync(acquireOps(config, b, { estimatedTokens: 100 }), store);
    // Assess: denied for the probe, nothing written, the 50 tokens still owed
    assert.ok(!answer.admitted && answer.probing);
    assert.equal(counters.bucketWrites, writes);
    assert.equal(b.carried.get('o1'), 50);
  });
  it('asks for no lock where its driver runs one decision at a time (serial), and decides the same', () => {
    // Prepare: the same group of takes on two fresh tables, one config serial; every operation's kind recorded
    const run = (serial: boolean): { kinds: string[]; keys: string[] } => {
      const { store } = newTable();
      const config: PoolConfig = { ...configOf(), serial };
      const kinds: string[] = [];
      const ops = acquireGroupOps(config, newPoolState(config.settings), calls(9));
      const recorded = (function* () {
        let step = ops.next();
        while (!step.done) {
          kinds.push(step.value.kind);
          step = ops.next(yield step.value);
        }
        return step.value;
      })();
      return { kinds, keys: keysOf(runSync(recorded, store)) };
    };
    // Act
    const locking = run(false);
    const serial = run(true);
    // Assess
    assert.ok(locking.kinds.includes('lock'), 'the interleaving driver locks what it writes');
    assert.deepEqual(
      serial.kinds.filter((k) => k === 'lock' || k === 'unlock'),
      [],
    );
    assert.deepEqual(
      serial.kinds,
      locking.kinds.filter((k) => k !== 'lock' && k !== 'unlock'),
    );
    assert.deepEqual(serial.keys, locking.keys);
  });
});
