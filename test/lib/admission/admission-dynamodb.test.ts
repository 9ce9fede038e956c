/**
 * Admission on the run's DynamoDB Local: the shared bucket under concurrent consumers, cooldowns
 * learned once for all consumers, the consumer deferring without a call, booked slots waited for
 * in-process (on a virtual clock). A lane out of credit that waits for a person, on the local stack:
 * `test/e2e/admission/admission-dynamodb.test.ts`; the local stack's load and daily-quota runs:
 * `test/e2e/run/admission.test.ts`.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { admissionSettings } from '../../../lib/admission/config/settings.js';
import { SharedKeyPool } from '../../../lib/admission/drivers/shared-key-pool.js';
import { DynamoRateStateStore } from '../../../lib/admission/dynamodb/rate-state.js';
import { createLaneAdmission } from '../../../lib/admission/index.js';
import type { LanePauseController } from '../../../lib/admission/pause/lane-pause.js';
import { runResumeCommand } from '../../../lib/cli/resume.js';
import type { ProviderKey } from '../../../lib/admission/keys/key-pool.js';
import { createAwsClients } from '../../../lib/platform/clients.js';
import { ProviderError, type ModelAdapter } from '../../../lib/providers/model.js';
import { ensureTable } from '../../../lib/store/ensure-table.js';
import { RATE_STATE_TABLE } from '../../../lib/store/tables.js';
import {
  englishDocuments,
  invoke,
  provisionTestLane,
  queueCounts,
  receive,
  scriptedModel,
  submitTo,
  testConsumer,
  throttle,
  type TestLane,
} from '../../helpers/consumer-harness.js';
import { virtualClock } from '../../helpers/virtual-clock.js';
import { testEndpoints, uniqueName } from '../../helpers/endpoints.js';

const clients = createAwsClients('us-east-1', testEndpoints());
const lanes: TestLane[] = [];
after(() => {
  clients.destroy();
  for (const t of lanes) t.destroy();
});

async function rateStateTable(): Promise<DynamoRateStateStore> {
  const tableName = uniqueName('rate');
  await ensureTable(clients.dynamodb, tableName, RATE_STATE_TABLE);
  return new DynamoRateStateStore({ dynamodb: clients.dynamodb, tableName });
}

const ONE_KEY: ProviderKey[] = [{ id: 'key-1', quotaOwner: 'owner-1', secret: 'sk-1' }];
const HOUR = 3_600_000;

describe('admission: the shared bucket', () => {
  it('two consumers taking from one bucket at once never spend more than it holds', async () => {
    // Prepare: a bucket of 20 requests per hour (no refill to speak of during the test), two
    // consumer instances (each with its own cache), 30 takes each, all at once
    const store = await rateStateTable();
    const limits = { requestsPerWindow: 20, tokensPerWindow: 1e9, windowMs: HOUR, requestsPerDay: 1e6, dayMs: 24 * HOUR };
    // Takes only (no calls answer): first-call probes are `bucket/first-calls.test.ts`'s.
    const settings = admissionSettings({ windowMs: HOUR, maxBucketAttempts: 50, probeFirstCalls: false });
    const consumers = [0, 1].map(() => new SharedKeyPool({ keys: ONE_KEY, store, limits, settings }));

    // Act
    const started = Date.now();
    const verdicts = await Promise.all(consumers.flatMap((pool) => Array.from({ length: 30 }, () => pool.acquire({ estimatedTokens: 10 }))));

    // Assess: exactly the bucket's 20 admitted; the stored bucket is empty, not overdrawn
    const admitted = verdicts.filter((v) => v.admitted).length;
    assert.equal(admitted, 20, `admitted ${admitted}`);
    const bucket = await store.readBucket('owner-1');
    // (the 20 requests of the hour taken from the first take on: full again an hour after it, not later)
    assert.ok(bucket && bucket.requestsFullAt >= started + HOUR - 1 && bucket.requestsFullAt <= Date.now() + HOUR, `full again at ${bucket?.requestsFullAt}`);
    // the denied were told to come back one refill slot apart (3 min each at 20 per hour), not all at once
    const retryAts = verdicts.flatMap((v) => (v.admitted ? [] : [v.retryAt.getTime()])).sort((a, b) => a - b);
    assert.equal(retryAts.length, 40);
    assert.ok(retryAts.at(-1)! - retryAts[0]! > 30 * 3 * 60_000, 'spread over the refill');
  });

  it('takes of consumers whose caches are stale all land on their first write while the quota allows', async () => {
    // Prepare: 100 requests an hour; three instances, each primed and with one call taken (so each cache
    // misses the others' takes)
    const store = await rateStateTable();
    const limits = { requestsPerWindow: 100, tokensPerWindow: 1e9, windowMs: HOUR, requestsPerDay: 1e6, dayMs: 24 * HOUR };
    const settings = admissionSettings({ windowMs: HOUR, probeFirstCalls: false, leaseCalls: 0 });
    const pools = [0, 1, 2].map(() => new SharedKeyPool({ keys: ONE_KEY, store, limits, settings }));
    for (const pool of pools) {
      await pool.prime();
      const grant = await pool.acquire({ estimatedTokens: 10 });
      assert.ok(grant.admitted);
    }
    const failuresBefore = pools.reduce((sum, p) => sum + p.counts.conditionFailures, 0);

    // Act: 3 x 10 acquires at once
    const verdicts = await Promise.all(pools.flatMap((pool) => Array.from({ length: 10 }, () => pool.acquire({ estimatedTokens: 10 }))));

    // Assess: all 30 granted without one failed conditional write (the version-checked bucket lost about half)
    assert.equal(verdicts.filter((v) => v.admitted).length, 30);
    assert.equal(pools.reduce((sum, p) => sum + p.counts.conditionFailures, 0) - failuresBefore, 0);
    const bucket = await store.readBucket('owner-1');
    assert.ok(bucket && bucket.dailyUsed === 33, `33 requests counted in the day: ${bucket?.dailyUsed}`);
  });

  it('an instance primes with one request: the cooldowns and every bucket it takes from', async () => {
    // Prepare: two owners, o1's bucket written by a call another instance made, o2 cooling; a store on a
    // client that names every command it sends
    const keys: ProviderKey[] = [ONE_KEY[0]!, { id: 'key-2', quotaOwner: 'owner-2', secret: 'sk-2' }];
    const table = await rateStateTable();
    const limits = { requestsPerWindow: 100, tokensPerWindow: 1e9, windowMs: 60_000, requestsPerDay: 1e6, dayMs: 24 * HOUR };
    const settings = admissionSettings({ probeFirstCalls: false });
    const other = new SharedKeyPool({ keys: ONE_KEY, store: table, limits, settings });
    const grant = await other.acquire({ estimatedTokens: 1 });
    assert.ok(grant.admitted);
    await grant.settle({ inputTokens: 1, outputTokens: 1 });
    await table.putCooldown({ scope: 'quota_owner', id: 'owner-2', reason: 'billing', until: Date.now() + HOUR }, Date.now());
    const counted = createAwsClients('us-east-1', testEndpoints());
    const sent: string[] = [];
    counted.dynamodb.middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize' },
    );
    const store = new DynamoRateStateStore({ dynamodb: counted.dynamodb, tableName: table.tableName });
    const pool = new SharedKeyPool({ keys, store, limits, settings });
    try {
      // Act
      await pool.prime();
      const first = await pool.acquire({ estimatedTokens: 1 });

      // Assess: one BatchGetItem, then the take is one write on owner-1 (owner-2 known to cool)
      assert.deepEqual(sent, ['BatchGetItemCommand', 'UpdateItemCommand']);
      assert.ok(first.admitted && first.key.id === 'key-1');
      const read = await store.readCooldownsAndBuckets(keys, ['owner-1', 'owner-2']);
      assert.deepEqual([...read.buckets.keys()], ['owner-1']);
      assert.deepEqual([...read.cooldowns.owners.keys()], ['owner-2']);
    } finally {
      counted.destroy();
    }
  });

  it('a limit for owners out is extended by a longer one at its share; one for slots booked ahead replaces only a higher one for owners out', async () => {
    // Prepare
    const store = await rateStateTable();
    const now = Date.now();
    const limit = (share: number, inMs: number, reason: 'billing' | 'booked_ahead') => ({ share, until: now + inMs, reason, limitedAt: now });
    // Act
    const claims = [
      await store.claimLimit(limit(0.3, 1_000_000, 'booked_ahead'), now),
      await store.claimLimit(limit(0.3, 1_200_000, 'booked_ahead'), now),
      await store.claimLimit(limit(0.3, 1_300_000, 'billing'), now),
      await store.claimLimit(limit(0.3, 1_400_000, 'booked_ahead'), now),
      await store.claimLimit(limit(0.2, 1_100_000, 'booked_ahead'), now),
      await store.claimLimit(limit(0.1, 1_500_000, 'booked_ahead'), now),
    ];
    // Assess
    assert.deepEqual(claims, [true, false, true, false, true, false]);
    assert.deepEqual(await store.readLimit(), limit(0.2, 1_100_000, 'booked_ahead'));
  });

  it('a cooldown one consumer records stops another at its next take, even with a warm cache', async () => {
    // Prepare: two instances, both have taken once and had their call answered (warm caches)
    const store = await rateStateTable();
    const settings = admissionSettings({ cooldownCacheMs: 60_000 });
    const limits = { requestsPerWindow: 100, tokensPerWindow: 1e9, windowMs: 60_000, requestsPerDay: 1e6, dayMs: 24 * HOUR };
    const [a, b] = [0, 1].map(() => new SharedKeyPool({ keys: ONE_KEY, store, limits, settings }));
    for (const pool of [a!, b!]) {
      const grant = await pool.acquire({ estimatedTokens: 1 });
      assert.ok(grant.admitted);
      await grant.settle({ inputTokens: 1, outputTokens: 1 });
    }
    const until = new Date(Date.now() + 2 * HOUR);

    // Act: a learns the owner's daily quota is out
    assert.equal(await a!.keysLeftAfter(ONE_KEY[0]!, { scope: 'quota_owner', reason: 'quota_exhausted' }), 0);
    await a!.cool(ONE_KEY[0]!, { scope: 'quota_owner', reason: 'quota_exhausted', until: until.toISOString() });
    const verdict = await b!.acquire({ estimatedTokens: 1 });

    // Assess: b is denied until the reset and sees the lane out
    assert.equal(verdict.admitted, false);
    assert.ok(!verdict.admitted && verdict.retryAt.getTime() === until.getTime());
    assert.ok(!verdict.admitted && verdict.laneOut?.until.getTime() === until.getTime() && verdict.laneOut.reason === 'quota_exhausted');
    // the cooldown record carries its TTL
    const [record] = await store.listCooldowns();
    assert.deepEqual(record, { scope: 'quota_owner', id: 'owner-1', reason: 'quota_exhausted', until: until.getTime() });
    // a person resumes it: the pause and a limit of the lane go (the mapping's calls faked)
    await store.claimPause({ until: until.getTime(), reason: 'quota_exhausted', pausedAt: Date.now() }, Date.now());
    assert.ok(await store.claimLimit({ share: 0.5, until: until.getTime(), reason: 'billing', limitedAt: Date.now() }, Date.now()));
    const out: string[] = [];
    const mapping: string[] = [];
    const sink = { write: (s: string) => out.push(s) };
    const code = await runResumeCommand(['--lane', 'us', '--clear', 'quota', '--json'], {
      stdout: sink,
      stderr: { write: () => true },
      rateState: () => store,
      pauseCalls: (lane) => ({
        // (the lane's own maximum concurrency is what the mapping is set back to)
        mappingId: async () => `uuid-${lane.consumer.maximumConcurrency}`,
        setMappingEnabled: async (_uuid, enabled) => void mapping.push(`enabled ${enabled}`),
        setMappingConcurrency: async (uuid, n) => void mapping.push(`concurrency ${n} of ${uuid}`),
        createResumeSchedule: async () => true,
        listSchedules: async () => ['resume-us-20260101T000000', 'restore-us-20260101T000000', 'resume-eu-20260101T000000'],
        deleteSchedule: async (_group, name) => void mapping.push(`deleted ${name}`),
      }),
    });
    assert.equal(code, 0);
    const summary = JSON.parse(out.join(''));
    assert.deepEqual(summary.clearedCooldowns, ['owner owner-1 (quota_exhausted)']);
    assert.equal(await store.readPause(), undefined);
    assert.ok(await store.claimLimit({ share: 0.9, until: until.getTime(), reason: 'billing', limitedAt: Date.now() }, Date.now()), 'the limit record is gone');
    assert.match(mapping[1] ?? '', /^concurrency (\d+) of uuid-\1$/, "the mapping back at the lane's maximum concurrency");
    assert.deepEqual(
      mapping.filter((_, i) => i !== 1),
      ['enabled true', 'deleted resume-us-20260101T000000', 'deleted restore-us-20260101T000000'],
    );
    const fresh = new SharedKeyPool({ keys: ONE_KEY, store, limits, settings });
    assert.ok((await fresh.acquire({ estimatedTokens: 1 })).admitted, 'admitted again after the resume');
  });
});

/** A model that answers every call with a daily-quota 429 resetting at `resetAt`, and counts calls per key. */
function quotaExhaustedModel(resetAt: Date): ModelAdapter & { calls: string[] } {
  const calls: string[] = [];
  return {
    provider: 'scripted',
    calls,
    async extract(request) {
      calls.push(request.apiKey ?? '');
      throw new ProviderError('429 daily quota', 'scripted', 429, { kind: 'quota_exhausted', retryAfterMs: null, resetAt });
    },
  };
}

describe('admission: the consumer', () => {
  it('cools each quota owner once, pauses the lane when none is left, then defers without a call', async () => {
    // Prepare: two keys of two quota owners; every call is a daily-quota 429 resetting in 2 hours
    const t = await provisionTestLane({
      provider: {
        keys: [
          { id: 'key-1', quotaOwner: 'o1' },
          { id: 'key-2', quotaOwner: 'o2' },
        ],
      },
    });
    lanes.push(t);
    const docs = englishDocuments(3);
    const submitted = await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#${t.lane.resources.queueName}` })),
    );
    const keys: ProviderKey[] = t.lane.provider.keys.map((k) => ({ ...k, secret: `sk-${k.id}` }));
    const pauses: { until: Date; reason: string }[] = [];
    const controller: LanePauseController = { pause: async (until, reason) => void pauses.push({ until, reason }), resume: async () => undefined };
    const admission = createLaneAdmission({ lane: t.lane, dynamodb: t.clients.dynamodb, keys, controller });
    const resetAt = new Date(Math.ceil((Date.now() + 2 * HOUR) / 1000) * 1000);
    const model = quotaExhaustedModel(resetAt);
    const { handler, sink } = testConsumer(t, model, { keys: admission.newPool(), lanePause: admission.pauser! });

    // Act: one record at a time
    for (let i = 0; i < 3; i++) {
      const messages = await receive(t, { max: 1, waitSeconds: 1 });
      assert.equal(messages.length, 1);
      const { response } = await invoke(t, handler, messages);
      assert.deepEqual(response.batchItemFailures, []);
    }

    // Assess: two calls (one per owner), the third job deferred by admission without a call
    assert.deepEqual(model.calls.sort(), ['sk-key-1', 'sk-key-2']);
    const m = sink.totals.total;
    assert.equal(m.ModelCalls, 2);
    assert.equal(m.RateLimited, 2);
    assert.equal(m.KeyCooldown, 2);
    assert.equal(m.KeyCooldownQuotaExhausted, 2);
    assert.equal(m.AdmissionDenied, 1);
    assert.equal(m.LanePaused, 1, 'paused once: the second consumer to see it finds the pause claimed');
    assert.equal(pauses.length, 1);
    assert.equal(pauses[0]!.reason, 'quota_exhausted');
    assert.ok(Math.abs(pauses[0]!.until.getTime() - resetAt.getTime()) <= 1000, `paused until ${pauses[0]!.until.toISOString()}`);
    // all three wait in the queue for the reset; none failed or dead-lettered
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 3 });
    assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
    const ledgers = await Promise.all(submitted.map((s) => t.ledger.entriesFor(s.jobId)));
    const reasons = ledgers.map((entries) => entries.map((e) => e.reason).join(',')).sort();
    assert.deepEqual(reasons, ['admission_denied', 'quota_exhausted', 'quota_exhausted']);
    const deferredByAdmission = ledgers.find((entries) => entries[0]?.reason === 'admission_denied')![0]!;
    assert.equal(deferredByAdmission.deferrals, 1);
    assert.equal(deferredByAdmission.attempt, 0);
  });
});

describe('admission: a key out of credit', () => {
  it('limits the lane to the quota owners left, once, and costs its one call', async () => {
    // Prepare: two keys of two quota owners; key-1 is out of credit
    const t = await provisionTestLane({
      provider: {
        keys: [
          { id: 'key-1', quotaOwner: 'o1' },
          { id: 'key-2', quotaOwner: 'o2' },
        ],
      },
    });
    lanes.push(t);
    await submitTo(
      t,
      englishDocuments(4).map((d) => ({ text: d.text, sourceId: `${d.sourceId}#${t.lane.resources.queueName}` })),
    );
    const keys: ProviderKey[] = t.lane.provider.keys.map((k) => ({ ...k, secret: `sk-${k.id}` }));
    const limits: { share: number; reason: string }[] = [];
    const controller: LanePauseController = {
      pause: async () => undefined,
      resume: async () => undefined,
      limit: async (share, _until, reason) => void limits.push({ share, reason }),
    };
    const admission = createLaneAdmission({ lane: t.lane, dynamodb: t.clients.dynamodb, keys, controller });
    const scripted = scriptedModel();
    const deadKeyCalls: string[] = [];
    const model: ModelAdapter = {
      provider: 'scripted',
      extract: async (request) => {
        if (request.apiKey !== 'sk-key-1') return scripted.extract(request);
        deadKeyCalls.push(request.apiKey);
        throw throttle({ kind: 'billing' });
      },
    };
    const { handler, sink } = testConsumer(t, model, { keys: admission.newPool(), lanePause: admission.pauser! });

    // Act: one record at a time (the round robin starts at key-1)
    for (let i = 0; i < 4; i++) {
      const messages = await receive(t, { max: 1, waitSeconds: 1 });
      if (messages.length > 0) await invoke(t, handler, messages);
    }

    // Assess: key-1 answered once; the lane runs at half its concurrency from then on, limited once
    const m = sink.totals.total;
    assert.deepEqual(deadKeyCalls, ['sk-key-1']);
    assert.equal(m.KeyCooldownBilling, 1);
    assert.equal(m.LaneLimited, 1, JSON.stringify(m));
    assert.deepEqual(limits, [{ share: 0.5, reason: 'billing' }]);
    assert.equal(m.LanePaused ?? 0, 0);
  });
});

describe('admission: a lane booked ahead', () => {
  it('limits the lane once to the share of its mapping the quota keeps busy, for 900 s when the slot is further', async () => {
    // Prepare: one key of one request per hour-long window (the window scaled as the local stack scales it)
    const t = await provisionTestLane({
      provider: { keys: [{ id: 'key-1', quotaOwner: 'o1' }], limits: { requestsPerMinute: 1, tokensPerMinute: 1_000_000, requestsPerDay: 1_000 } },
    });
    lanes.push(t);
    await submitTo(
      t,
      englishDocuments(3).map((d) => ({ text: d.text, sourceId: `${d.sourceId}#${t.lane.resources.queueName}` })),
    );
    const keys: ProviderKey[] = t.lane.provider.keys.map((k) => ({ ...k, secret: `sk-${k.id}` }));
    const limits: { share: number; until: Date; reason: string }[] = [];
    const controller: LanePauseController = {
      pause: async () => undefined,
      resume: async () => undefined,
      limit: async (share, until, reason) => void limits.push({ share, until, reason }),
    };
    const admission = createLaneAdmission({ lane: t.lane, dynamodb: t.clients.dynamodb, keys, controller, settings: { windowMs: HOUR } });
    const { handler, sink } = testConsumer(t, scriptedModel(), { keys: admission.newPool(), lanePause: admission.pauser! });
    const started = Date.now();

    // Act: one record at a time: the first is called and answers, the next two find the slot an hour ahead
    for (let i = 0; i < 3; i++) {
      const messages = await receive(t, { max: 1, waitSeconds: 1 });
      assert.equal(messages.length, 1);
      await invoke(t, handler, messages);
    }

    // Assess: one call, two denials, one limit (the second denial's slot does not replace it)
    const m = sink.totals.total;
    assert.equal(m.ModelCalls, 1);
    assert.equal(m.AdmissionDenied, 2);
    assert.equal(m.LaneLimited, 1, JSON.stringify(m));
    assert.equal(limits.length, 1);
    const [limit] = limits;
    assert.equal(limit!.reason, 'booked_ahead');
    const untilMs = limit!.until.getTime() - started;
    assert.ok(untilMs >= 900_000 && untilMs < 900_000 + (Date.now() - started), `until +${untilMs} ms: 900 s after the denial`);
    const held = t.lane.consumer.maximumConcurrency * t.lane.queue.batchSize;
    assert.ok(limit!.share > 0 && limit!.share < 1 / held, `share ${limit!.share}: the quota keeps less than one of ${held} records busy`);
  });
});

describe('admission: waiting in-process for a near slot', () => {
  it('a batch over the bucket books its calls on the next slots and waits for them: every job committed on its first receive', async () => {
    // Prepare: one key of 2 requests per 1.5 s "minute" (1.9 after the margin: one refills in about
    // 0.8 s); the lane's records may wait half its 12 s timeout, less the provider's 2 s timeout: room
    // for two refills (1.6 s) and the real time of four records' reads, claims and commits on a machine
    // loaded by the whole unit tier (the clock is real time plus the waits; CI once spent over 2 s on them)
    const t = await provisionTestLane({
      consumer: { timeoutSeconds: 12 },
      queue: { visibilityTimeoutSeconds: 72 },
      provider: { keys: [{ id: 'key-1', quotaOwner: 'o1' }], limits: { requestsPerMinute: 2, tokensPerMinute: 1_000_000, requestsPerDay: 100_000 } },
    });
    lanes.push(t);
    const docs = englishDocuments(4);
    await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#${t.lane.resources.queueName}` })),
    );
    const keys: ProviderKey[] = [{ id: 'key-1', quotaOwner: 'o1', secret: 'sk-key-1' }];
    const admission = createLaneAdmission({
      lane: t.lane,
      dynamodb: t.clients.dynamodb,
      keys,
      settings: { windowMs: 1_500, outputTokenEstimate: 16 },
      reserveShare: 0,
    });
    // (the consumer, its key pool and the model share a virtual clock: the waits move it instead of passing)
    const clock = virtualClock();
    const model = scriptedModel(undefined, { now: clock.nowMs });
    const { handler, sink } = testConsumer(t, model, { keys: admission.newPool(clock.nowMs, clock.sleep), now: clock.now, sleep: clock.sleep });
    const messages = [];
    while (messages.length < 4) messages.push(...(await receive(t, { max: 4 - messages.length, waitSeconds: 1 })));

    // Act: one invocation of all four
    const startedAt = clock.nowMs();
    const { response } = await invoke(t, handler, messages);
    const elapsedMs = clock.nowMs() - startedAt;

    // Assess: nothing re-sent or failed; the two calls beyond the burst waited about a slot each
    assert.deepEqual(response.batchItemFailures, []);
    const m = sink.totals.total;
    assert.equal(m.Completed, 4, JSON.stringify(m));
    assert.equal(m.ModelCalls, 4);
    assert.equal(m.AdmissionDenied ?? 0, 0);
    assert.equal(m.Deferred ?? 0, 0);
    assert.ok(
      elapsedMs >= 1_200 && elapsedMs < 8_000,
      `the invocation waited for two refills (${elapsedMs} ms of clock time; slept ${clock.slept.join(', ')} ms)`,
    );
    // (from the invocation's start, not the first call's: a loaded machine may start the first call late, never a booked one early)
    const callTimes = model.calls.map((c) => c.at).sort((a, b) => a - b);
    assert.ok(callTimes[3]! - startedAt >= 1_400, `the last call waited two slots after the first take (${callTimes[3]! - startedAt} ms)`);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });
});
