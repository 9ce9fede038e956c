/**
 * Conditional bucket updates (`bucket/item-update.ts`): DynamoDB's rules in memory (a comparison on a
 * missing field is false), two updates made one, a clock moved on by `ADD` or `SET` — and the race it is
 * for: takes decided on stale caches, landing in any order, all succeed while the quota allows and never
 * take more than it holds. The same updates on DynamoDB Local: `test/lib/admission/dynamodb/bucket-item.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyUpdate,
  composeUpdates,
  conditionHolds,
  IncompatibleUpdatesError,
  UpdateBuilder,
  updateInMemory,
} from '../../../../lib/admission/bucket/item-update.js';
import { levelsAt, takeFromBucket } from '../../../../lib/admission/bucket/token-bucket.js';
import type { BucketState } from '../../../../lib/admission/model/bucket.js';
import { LIMITS, T0 } from '../support.js';

const CALL = { requests: 1, tokens: 100 };

describe('bucket updates: DynamoDB’s rules in memory', () => {
  it('a comparison on a missing field (or item) is false, `missing` is true; ADD counts a missing number as 0', () => {
    // Prepare
    const stored = applyUpdate(undefined, new UpdateBuilder().set('requestsFullAt', T0).add('dailyUsed', 2).set('flow:f1:vt', 5).build()!);
    // Act + Assess
    assert.equal(stored.dailyUsed, 2);
    assert.equal(stored.version, 1);
    assert.deepEqual(stored.flows, { f1: { until: 0, vt: 5, weight: 1 } });
    assert.equal(conditionHolds(undefined, { field: 'requestsFullAt', cmp: '<', value: T0 }), false);
    assert.equal(conditionHolds(undefined, { field: 'requestsFullAt', missing: true }), true);
    assert.equal(conditionHolds(stored, { field: 'probeUntil', cmp: '<=', value: T0 }), false);
    assert.equal(
      conditionHolds(stored, {
        any: [
          { field: 'probeUntil', missing: true },
          { field: 'probeUntil', cmp: '<=', value: T0 },
        ],
      }),
      true,
    );
    assert.equal(
      conditionHolds(stored, {
        all: [
          { field: 'requestsFullAt', cmp: '=', value: T0 },
          { field: 'dailyUsed', cmp: '>', value: 2 },
        ],
      }),
      false,
    );
    const removed = applyUpdate(stored, new UpdateBuilder().remove('flow:f1:until').remove('flow:f1:vt').remove('flow:f1:weight').build()!);
    assert.equal(removed.flows, undefined, 'a flow without clocks is gone');
  });

  it('two updates made one do what both do, the second’s condition moved onto the state before the first', () => {
    // Prepare: the first takes 10 ms of the clock and starts a day; the second takes 20 more if the clock is ≤ T0 + 15
    const first = new UpdateBuilder().add('requestsFullAt', 10).set('dailyUsed', 1).remove('flow:old:vt').build();
    const second = new UpdateBuilder()
      .add('requestsFullAt', 20)
      .add('dailyUsed', 1)
      .require({ field: 'requestsFullAt', cmp: '<=', value: T0 + 15 })
      .require({ field: 'dailyUsed', cmp: '<=', value: 5 })
      .require({ field: 'flow:old:vt', missing: true })
      .build();
    // Act
    const both = composeUpdates(first, second)!;
    // Assess: one add of 30, the day set to 2, the conditions that still say something about the state before
    assert.deepEqual(both.changes.get('requestsFullAt'), { add: 30 });
    assert.deepEqual(both.changes.get('dailyUsed'), { set: 2 });
    // (a missing clock, added 10, would be 10: within the condition too)
    assert.deepEqual(both.condition, {
      any: [
        { field: 'requestsFullAt', cmp: '<=', value: T0 + 5 },
        { field: 'requestsFullAt', missing: true },
      ],
    });
    for (const start of [T0, T0 + 5, T0 + 6]) {
      const before: BucketState = { requestsFullAt: start, tokensFullAt: 0, reservedUntil: 0, version: 3 };
      const stepwise = updateInMemory(before, first!);
      const stepwiseOk = stepwise.ok && conditionHolds(stepwise.after, second!.condition);
      assert.equal(conditionHolds(before, both.condition), stepwiseOk, `from ${start - T0}`);
    }
    assert.throws(
      () => composeUpdates(first, new UpdateBuilder().add('dailyUsed', 1).require({ field: 'dailyUsed', cmp: '>', value: 4 }).build()),
      IncompatibleUpdatesError,
    );
  });

  it('takes decided on stale caches land in any order while the quota allows, and never take more than it holds', () => {
    // Prepare: 6 requests a minute; five consumers cached the bucket after one take, then each decides one more
    const first = takeFromBucket(undefined, LIMITS, CALL, T0, { reserve: false });
    assert.ok(first.admitted);
    const stale = first.next;
    const updates = [0, 1, 2, 3, 4, 5, 6].map((i) => {
      const v = takeFromBucket(stale, LIMITS, CALL, T0 + i, { reserve: false });
      assert.ok(v.admitted && v.update, `decided as a grant on the cache (${i})`);
      return v.update;
    });
    // Act: applied in two orders on the stored bucket
    const outcomes = [updates, [...updates].reverse()].map((order) => {
      let stored: BucketState | undefined = first.next;
      const landed = order.map((update) => {
        const outcome = updateInMemory(stored, update);
        if (outcome.ok) stored = outcome.after;
        return outcome.ok;
      });
      return { landed, stored: stored! };
    });
    // Assess: the first five land (the bucket holds 6), the rest fail on the quota; nothing overdrawn
    for (const { landed, stored } of outcomes) {
      assert.equal(landed.filter(Boolean).length, 5);
      assert.deepEqual(landed.slice(0, 5), [true, true, true, true, true]);
      assert.ok(levelsAt(stored, LIMITS, T0 + 6).requests > -1e-6, 'not overdrawn');
    }
  });

  it('a clock cached just behind the present moves on by ADD, as far further as it was behind; far behind, by SET', () => {
    // Prepare: the requests clock full again 100 ms ago (one request slot is 10 s)
    const cached: BucketState = { requestsFullAt: T0 - 100, tokensFullAt: 0, reservedUntil: 0, version: 1 };
    const racing: BucketState = { ...cached, requestsFullAt: T0 + 10_000 }; // another consumer took one meanwhile
    // Act
    const near = takeFromBucket(cached, LIMITS, CALL, T0, { reserve: false });
    const far = takeFromBucket({ ...cached, requestsFullAt: T0 - 60_000 }, LIMITS, CALL, T0, { reserve: false });
    // Assess: ADD 10 s + 100 ms (never less than SET from now would give), landing on the raced bucket too
    assert.ok(near.admitted && far.admitted);
    assert.deepEqual(near.update?.changes.get('requestsFullAt'), { add: 10_100 });
    const landed = updateInMemory(racing, near.update!);
    assert.ok(landed.ok && landed.after.requestsFullAt === T0 + 20_100);
    assert.deepEqual(far.update?.changes.get('requestsFullAt'), { set: T0 + 10_000 });
    assert.equal(updateInMemory(racing, far.update!).ok, false, 'a SET decided on an idle cache fails once another consumer took');
  });
});
