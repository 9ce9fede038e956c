import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SharedKeyPool } from '../../../lib/admission/drivers/shared-key-pool.js';
import { admissionSettings, bucketLimitsFor } from '../../../lib/admission/config/settings.js';
import type { LaneConfig } from '../../../lib/config/lanes.js';
import type { KeyAdmission } from '../../../lib/admission/keys/key-pool.js';
import { TimeHeap } from '../../../workbench/sim/heap.js';
import { Rng } from '../../../workbench/sim/rng.js';
import { MemoryRateStateStore } from '../../helpers/memory-rate-state.js';
import { CALL_OK, CALL_QUOTA, CALL_RATE_LIMIT, ProviderModel } from '../../../workbench/sim/provider-model.js';
import { SimKeyPool } from '../../../workbench/sim/sim-key-pool.js';
import { billedChunks, SqsModel } from '../../../workbench/sim/sqs-model.js';

const T0 = Date.parse('2026-03-02T23:59:00.000Z');

function queue(maxReceiveCount = 3): { sqs: SqsModel; dead: number[] } {
  const dead: number[] = [];
  const sqs = new SqsModel({ maxReceiveCount, visibilityTimeoutSeconds: 30, messageBytes: 1024, onDeadLetter: (job) => dead.push(job) }, 16);
  return { sqs, dead };
}

describe('TimeHeap', () => {
  it('pops in time order, growing as needed', () => {
    // Prepare
    const heap = new TimeHeap(2);
    const input = [5, 1, 3, 1.5, 9, 0, 3.5, 2, 8, 7, 6, 4, 0.5, 10, 11, 12, 13, 14];
    for (const [i, t] of input.entries()) heap.push(t, i);
    // Act
    const times: number[] = [];
    while (heap.size > 0) {
      times.push(heap.peekTime());
      heap.pop();
    }
    // Assess
    assert.deepEqual(
      times,
      [...input].sort((a, b) => a - b),
    );
    assert.equal(heap.peekTime(), Infinity);
  });

  it('breaks ties the same way every time', () => {
    // Prepare: 100 entries over 7 distinct times
    const run = () => {
      const heap = new TimeHeap();
      for (let i = 0; i < 100; i++) heap.push(i % 7, i);
      const out: number[] = [];
      while (heap.size > 0) out.push(heap.pop());
      return out;
    };
    // Act + Assess
    assert.deepEqual(run(), run());
  });
});

describe('SqsModel', () => {
  it('holds AWS limits: DelaySeconds 0..900, visibility 0..43200, at most 10 per receive', () => {
    // Prepare
    const { sqs } = queue();
    // Act + Assess
    assert.throws(() => sqs.send(1, 901, T0), /DelaySeconds/);
    assert.throws(() => sqs.send(1, -1, T0), /DelaySeconds/);
    assert.throws(() => sqs.send(1, 1.5, T0), /DelaySeconds/);
    sqs.send(1, 900, T0);
    const out = new Int32Array(11);
    assert.throws(() => sqs.receive(T0, 11, out), /1\.\.10/);
    for (let j = 0; j < 25; j++) sqs.send(j, 0, T0);
    assert.equal(sqs.receive(T0, 10, out), 10);
    assert.throws(() => sqs.changeVisibility(out[0]!, 43_201, T0), /VisibilityTimeout/);
  });

  it('keeps a delayed message invisible until it is due', () => {
    // Prepare
    const { sqs } = queue();
    const out = new Int32Array(10);
    // Act
    sqs.send(7, 900, T0);
    // Assess
    assert.equal(sqs.receive(T0 + 899_999, 10, out), 0);
    assert.equal(sqs.nextVisibleAt(), T0 + 900_000);
    assert.equal(sqs.receive(T0 + 900_000, 10, out), 1);
    assert.equal(sqs.jobOfMessage(out[0]!), 7);
    assert.equal(sqs.receiveCountOf(out[0]!), 1);
  });

  it('counts receives and redrives to the DLQ after maxReceiveCount; a re-send starts at 0', () => {
    // Prepare
    const { sqs, dead } = queue(3);
    const out = new Int32Array(10);
    sqs.send(42, 0, T0);
    // Act + Assess: three receives that fail, each counted
    for (let receive = 1; receive <= 3; receive++) {
      assert.equal(sqs.receive(T0 + receive * 10_000, 10, out), 1);
      assert.equal(sqs.receiveCountOf(out[0]!), receive);
      sqs.changeVisibility(out[0]!, 5, T0 + receive * 10_000);
    }
    // The 4th receive finds the count at 3 = maxReceiveCount: moved to the DLQ, not delivered.
    assert.equal(sqs.receive(T0 + 40_000, 10, out), 0);
    assert.deepEqual(dead, [42]);
    assert.equal(sqs.counters.redriven, 1);
    assert.equal(sqs.size, 0);
    sqs.send(42, 0, T0 + 50_000);
    assert.equal(sqs.receive(T0 + 50_000, 10, out), 1);
    assert.equal(sqs.receiveCountOf(out[0]!), 1);
  });

  it('bills every call per started 64 KiB of payload', () => {
    // Act + Assess
    assert.equal(billedChunks(1024), 1);
    assert.equal(billedChunks(64 * 1024), 1);
    assert.equal(billedChunks(64 * 1024 + 1), 2);
    assert.equal(billedChunks(256 * 1024), 4);
    const sqs = new SqsModel({ maxReceiveCount: 5, visibilityTimeoutSeconds: 30, messageBytes: 10 * 1024 });
    sqs.sendInitial([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], T0); // 10 × 10 KiB = 100 KiB → 2; then 1 × 10 KiB → 1
    assert.equal(sqs.counters.sendMessageBatch, 2);
    assert.equal(sqs.counters.billedRequests, 3);
  });
});

describe('ProviderModel', () => {
  it('answers 429 rate_limit with a retry hint once a 5 RPM key is spent, and refills continuously', () => {
    // Prepare
    const provider = new ProviderModel({
      keys: 1,
      limits: { requestsPerMinute: 5, tokensPerMinute: 1_000_000, requestsPerDay: 1000 },
      dailyResetOffsetMs: 0,
      failureRate: 0,
      start: T0 - 3_600_000,
    });
    const t = T0 - 3_600_000;
    // Act + Assess
    for (let i = 0; i < 5; i++) assert.equal(provider.call(0, 100, t, 0.5), CALL_OK);
    assert.equal(provider.call(0, 100, t, 0.5), CALL_RATE_LIMIT);
    assert.equal(provider.retryAfterMs, 12_000); // one request refills in 60 s / 5
    assert.equal(provider.call(0, 100, t + 11_999, 0.5), CALL_RATE_LIMIT);
    assert.equal(provider.call(0, 100, t + 12_000, 0.5), CALL_OK);
    assert.deepEqual(provider.counters, { calls: 8, ok: 6, rateLimited: 2, quotaExhausted: 0, failures: 0 });
  });

  it('answers quota_exhausted with the next 00:00 UTC reset, and the quota comes back whole then', () => {
    // Prepare: 3 requests a day per key
    const provider = new ProviderModel({
      keys: 2,
      limits: { requestsPerMinute: 100, tokensPerMinute: 1_000_000, requestsPerDay: 3 },
      dailyResetOffsetMs: 0,
      failureRate: 0,
      start: T0,
    });
    // Act + Assess
    for (let i = 0; i < 3; i++) assert.equal(provider.call(1, 10, T0 + i, 0.5), CALL_OK);
    assert.equal(provider.call(1, 10, T0 + 10, 0.5), CALL_QUOTA);
    assert.equal(provider.resetAt, Date.parse('2026-03-03T00:00:00.000Z'));
    assert.equal(provider.call(0, 10, T0 + 10, 0.5), CALL_OK); // the other key has its own quota
    assert.equal(provider.call(1, 10, Date.parse('2026-03-03T00:00:00.000Z'), 0.5), CALL_OK);
  });
});

describe('fast dates', () => {
  it('format and parse exactly like Date for the instants the simulator uses', async () => {
    // Prepare: edge dates and 20,000 pseudo-random instants up to 2100
    const { fastIso, fastParseIso, withFastDates } = await import('../../../workbench/sim/fast-dates.js');
    const samples = [0, 951_782_400_000 /* 2000-02-29 */, 4_107_542_400_000 /* 2100-03-01 */, 253_402_300_799_999, Date.parse('2026-12-31T23:59:59.999Z')];
    let x = 123_456_789;
    for (let i = 0; i < 20_000; i++) {
      x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
      samples.push(Math.floor((x / 2_147_483_648) * 4_102_444_800_000) + (i % 3 === 0 ? 0.25 : 0));
    }
    // Act + Assess
    for (const ms of samples) {
      const iso = new Date(ms).toISOString();
      assert.equal(fastIso(ms), iso, String(ms));
      const parsed = fastParseIso(iso);
      if (parsed !== undefined) assert.equal(parsed, Date.parse(iso), iso);
    }
    assert.equal(fastParseIso('2026-03-02T09:00:00Z'), undefined);
    const original = Date.prototype.toISOString;
    assert.equal(
      withFastDates(() => new Date(-1).toISOString()),
      '1969-12-31T23:59:59.999Z',
    );
    assert.equal(
      withFastDates(() => Date.parse('not a date')),
      NaN,
    );
    assert.equal(Date.prototype.toISOString, original, 'restored');
  });
});

describe('SimKeyPool', () => {
  it('answers exactly as SharedKeyPool does: grants, slots, lane out, learned estimates, conflicts', async () => {
    // Prepare: 3 keys of 6 requests a minute and 40 a day, two consumer instances sharing one store
    const limits = { requestsPerMinute: 6, tokensPerMinute: 4000, requestsPerDay: 40 };
    const overrides = { cooldownCacheMs: 1000, outputTokenEstimate: 512 };
    const settings = admissionSettings(overrides);
    const model = new SimKeyPool({ keys: 3, limits, consumers: 2, settings: overrides });
    let now = Date.parse('2026-03-02T22:00:00.000Z');
    const store = new MemoryRateStateStore();
    const keys = model.keys.map((k) => ({ ...k, secret: `sk-${k.id}` }));
    const pools = [0, 1].map(
      () =>
        new SharedKeyPool({
          keys,
          store,
          limits: bucketLimitsFor({ provider: { limits } } as unknown as Pick<LaneConfig, 'provider'>, settings),
          settings,
          now: () => now,
        }),
    );
    const rng = new Rng(7);
    const sawLaneOut: boolean[] = [];
    // Act: 400 acquires at random times over ~5 hours, across midnight; some settle, one key cooled
    for (let i = 0; i < 400; i++) {
      now += Math.floor(rng.uniform() * 90_000);
      const consumer = rng.uniform() < 0.5 ? 0 : 1;
      const input = 50 + Math.floor(rng.uniform() * 400);
      const real: KeyAdmission = await pools[consumer]!.acquire({ estimatedTokens: input });
      const mirrored = model.acquire(consumer, input, now);
      // Assess: the same answer
      if (real.admitted) {
        assert.equal(model.keys[mirrored]?.id, real.key.id, `acquire ${i}: granted key`);
        const output = 20 + Math.floor(rng.uniform() * 200);
        await real.settle({ inputTokens: input, outputTokens: output });
        model.settle(consumer, model.takenShard, mirrored, model.grantedTokens, input, output, now, now);
        assert.equal(model.outputEstimateOf(consumer), pools[consumer]!.outputTokenEstimate, `acquire ${i}: learned estimate`);
      } else {
        assert.equal(mirrored, -1, `acquire ${i}: denied`);
        // (the pool's answer is a Date: whole milliseconds)
        assert.equal(new Date(model.retryAt).getTime(), real.retryAt.getTime(), `acquire ${i}: retryAt`);
        const out = model.laneOut ? { until: new Date(model.laneOut.until).getTime(), reason: model.laneOut.reason } : null;
        assert.deepEqual(out, real.laneOut ? { until: real.laneOut.until.getTime(), reason: real.laneOut.reason } : null, `acquire ${i}: laneOut`);
        sawLaneOut.push(real.laneOut !== undefined);
      }
      if (i === 150) {
        const cooldown = { until: new Date(now + 600_000).toISOString(), scope: 'quota_owner' as const, reason: 'quota_exhausted' as const };
        await pools[consumer]!.cool(keys[1]!, cooldown);
        model.cool(consumer, 1, cooldown, now);
      }
    }
    // the run went through denials, a lane out on spent days, and write conflicts
    assert.ok(sawLaneOut.includes(true) && sawLaneOut.includes(false), 'lane out and not');
    assert.equal(model.counters.bucketConflicts, store.conflicts, 'the same conditional-write conflicts');
    assert.ok(store.conflicts > 0);
  });

  it("starts each primed instance's round robin at a random key, as SharedKeyPool.prime does: a fleet's first takes spread over the owners", () => {
    // Prepare: 40 keys with room for every call, 200 instances (no first-call probes, which would spread them too);
    // a second pool whose instances are not primed
    const limits = { requestsPerMinute: 1_000, tokensPerMinute: 1_000_000, requestsPerDay: 100_000 };
    const options = { keys: 40, limits, consumers: 200, settings: { probeFirstCalls: false } };
    const primed = new SimKeyPool({ ...options, random: Rng.derive(1, 6).next });
    const unprimed = new SimKeyPool({ ...options, random: Rng.derive(1, 6).next });
    const now = Date.parse('2026-03-02T09:00:00.000Z');
    // Act: each instance's first take
    for (let c = 0; c < 200; c++) primed.prime(c);
    const first = (pool: SimKeyPool) => new Set(Array.from({ length: 200 }, (_, c) => pool.acquire(c, 100, now)));
    const spread = first(primed);
    const together = first(unprimed);
    // Assess: without the start at random, every instance took the first key
    assert.ok(spread.size >= 30, `${spread.size} keys taken first`);
    assert.deepEqual([...together], [0]);
  });
});
