/**
 * The bucket updates admission makes, compiled into `UpdateItem`s (`dynamodb/bucket-item.ts`) and run on the
 * run's DynamoDB Local, land or fail exactly as the in-memory rules the simulator and the unit tests use
 * (`bucket/item-update.ts`) say, and leave the same bucket: a sequence of takes, bookings, reservations,
 * cooldowns, settlements, flows, rate limits and refusals decided on the memory table, each applied to both.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  adjustTokens,
  cooldownUpdate,
  ratedLimits,
  rateLimitedUpdate,
  statedLimitsUpdate,
  takeFromBucket,
} from '../../../../lib/admission/bucket/token-bucket.js';
import { UpdateBuilder } from '../../../../lib/admission/bucket/item-update.js';
import { DynamoRateStateStore } from '../../../../lib/admission/dynamodb/rate-state.js';
import type { BucketState, BucketUpdate } from '../../../../lib/admission/model/bucket.js';
import { createAwsClients } from '../../../../lib/platform/clients.js';
import { ensureTable } from '../../../../lib/store/ensure-table.js';
import { RATE_STATE_TABLE } from '../../../../lib/store/tables.js';
import { testEndpoints, uniqueName } from '../../../helpers/endpoints.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { LIMITS, T0 } from '../support.js';

const clients = createAwsClients('us-east-1', testEndpoints());
after(() => clients.destroy());

const CALL = { requests: 1, tokens: 700 };
const FLOW = { id: 'urgent:ab12', weight: 3 };

describe('bucket items on DynamoDB Local: the same rules as in memory', () => {
  it('every update lands or fails alike, and leaves the same bucket', async () => {
    // Prepare
    const tableName = uniqueName('rate');
    await ensureTable(clients.dynamodb, tableName, RATE_STATE_TABLE);
    const dynamo = new DynamoRateStateStore({ dynamodb: clients.dynamodb, tableName });
    const memory = new MemoryRateStateStore();
    /** The memory table's bucket before each step. */
    const cached: (BucketState | undefined)[] = [];
    let at = T0;
    /** The update `decide` makes of the memory table's bucket (or of a cache that many steps old). */
    const steps: { name: string; decide: (bucket: BucketState | undefined) => BucketUpdate | undefined }[] = [
      ...[0, 1, 2, 3, 4, 5].map((i) => ({
        name: `take ${i}`,
        decide: (b: BucketState | undefined) => takeFromBucket(b, LIMITS, CALL, at, { reserve: false, flow: i % 2 ? FLOW : undefined }).update,
      })),
      { name: 'booking on a spent minute', decide: (b) => takeFromBucket(b, LIMITS, CALL, at, { reserve: false, bookWithinMs: 20_000 }).update },
      { name: 'reservation', decide: (b) => takeFromBucket(b, LIMITS, CALL, at, { reserve: true }).update },
      { name: 'reservation of a flow', decide: (b) => takeFromBucket(b, LIMITS, CALL, at, { reserve: true, flow: FLOW }).update },
      { name: 'token correction', decide: () => adjustTokens(LIMITS, -350) },
      { name: 'a stale take (refused by the quota)', decide: () => takeFromBucket(cached[2], LIMITS, CALL, at, { reserve: false }).update },
      { name: 'a stale reservation (the bucket refilled)', decide: () => takeFromBucket(cached[8], LIMITS, CALL, at + 120_000, { reserve: true }).update },
      { name: 'cooldown', decide: (b) => cooldownUpdate(b, LIMITS, { until: at + 30_000, reason: 'quota_exhausted' }, at)?.build() },
      { name: 'a stale take on a cooling owner', decide: () => takeFromBucket(cached[1], LIMITS, CALL, at + 1, { reserve: false }).update },
      { name: 'a shorter cooldown (refused)', decide: () => cooldownUpdate(cached[12], LIMITS, { until: at + 10_000, reason: 'rate_limit' }, at)?.build() },
      {
        name: 'a flow removed, the probe set if none is out',
        decide: () =>
          new UpdateBuilder()
            .remove(`flow:${FLOW.id}:until`)
            .remove(`flow:${FLOW.id}:vt`)
            .remove(`flow:${FLOW.id}:weight`)
            .set('probeUntil', at + 60_000)
            .require({
              any: [
                { field: 'proven', cmp: '=', value: true },
                { field: 'probeUntil', missing: true },
                { field: 'probeUntil', cmp: '<=', value: at },
              ],
            })
            .build(),
      },
      { name: 'after the cooldown, a take on no cache', decide: () => takeFromBucket(cached[0], LIMITS, CALL, at + 31_000, { reserve: false }).update },
      { name: 'a rate limit the provider answered', decide: (b) => rateLimitedUpdate(b, LIMITS, at + 31_000, at + 36_000) },
      { name: 'another within three windows: the rates cut', decide: (b) => rateLimitedUpdate(b, LIMITS, at + 31_000, at + 36_000) },
      { name: 'a stale one cutting again within the window (refused)', decide: () => rateLimitedUpdate(cached[18], LIMITS, at + 31_000, at + 40_000) },
      {
        name: 'a take at the cut rates',
        decide: (b) => takeFromBucket(b, ratedLimits(LIMITS, b, at + 200_000), CALL, at + 200_000, { reserve: false }).update,
      },
      { name: 'limits the provider stated below the configured', decide: (b) => statedLimitsUpdate(b, LIMITS, { requestsPerWindow: 2, tokensPerWindow: 500 }) },
      { name: 'the requests stated back at the configured', decide: (b) => statedLimitsUpdate(b, LIMITS, { requestsPerWindow: LIMITS.requestsPerWindow }) },
    ];

    // Act + Assess
    const outcomes: boolean[] = [];
    for (const [i, step] of steps.entries()) {
      const before = memory.buckets.get('o1');
      cached.push(before);
      const update = step.decide(before);
      assert.ok(update, `${step.name}: an update`);
      // The item's TTL from the real clock: DynamoDB Local deletes items whose `expiresAt` has passed, and T0 has.
      const [m, d] = [await memory.writeBucket('o1', update), await dynamo.writeBucket('o1', update, Date.now())];
      assert.equal(d.ok, m.ok, `${step.name}: lands on DynamoDB as in memory (${m.ok})`);
      assert.deepEqual(await dynamo.readBucket('o1'), memory.buckets.get('o1'), `${step.name}: the same bucket after`);
      if (m.ok && d.ok) assert.deepEqual(d.before, m.before, `${step.name}: the same bucket found`);
      outcomes.push(m.ok);
      at += 1_000 + i;
    }
    // and the sequence went through both outcomes, the rates cut once
    assert.ok(outcomes.filter(Boolean).length >= 10 && outcomes.some((ok) => !ok), `outcomes: ${outcomes.join(' ')}`);
    assert.deepEqual(outcomes.slice(17, 21), [true, true, false, true], 'the rate limits: recorded, cut, a second cut refused, a take');
    assert.equal((await dynamo.readBucket('o1'))?.rateCut, 0.75);
    const stated = await dynamo.readBucket('o1');
    assert.deepEqual([stated?.statedRequests, stated?.statedTokens], [undefined, 500], 'the stated requests lifted, the tokens kept');
  });
});
