/**
 * A lane booked ahead: a denial whose slot lies further ahead than SQS can delay a message says the
 * lane is `booked_ahead` when its mapping holds more records than the quota keeps busy, with the share
 * it does keep busy (the lane's call rate × (booking window + the calls' learned time) over the records
 * held), until that slot but for 900 s at most; a nearer slot, an instance that has not seen a call
 * answer, or a lane without a mapping says nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionSettings, type AdmissionSettings } from '../../../../lib/admission/config/settings.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import type { KeyAdmission } from '../../../../lib/admission/keys/key-pool.js';
import type { BucketLimits } from '../../../../lib/admission/model/bucket.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { assertNear, T0 } from '../support.js';

const KEYS = [
  { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' },
  { id: 'k2', quotaOwner: 'o2', secret: 'sk-2' },
];
const HOUR = 3_600_000;

/** Two owners of one request per `windowMs`; both calls of the window granted, answered after `callMs`; then one more asked for. */
async function deniedAfterTwoCalls(windowMs: number, settings: Partial<AdmissionSettings>, callMs: number | null): Promise<KeyAdmission> {
  const limits: BucketLimits = { requestsPerWindow: 1, tokensPerWindow: 1_000_000, windowMs, requestsPerDay: 1000, dayMs: 86_400_000 };
  const clock = { now: T0 };
  const all = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, probeFirstCalls: false, leaseCalls: 0, windowMs, ...settings });
  const pool = new SharedKeyPool({ keys: KEYS, store: new MemoryRateStateStore(), limits, settings: all, now: () => clock.now });
  const grants = [await pool.acquire({ estimatedTokens: 10 }), await pool.acquire({ estimatedTokens: 10 })];
  if (callMs !== null) {
    clock.now += callMs;
    for (const grant of grants) if (grant.admitted) await grant.settle({ inputTokens: 10, outputTokens: 0 });
  }
  return pool.acquire({ estimatedTokens: 10 });
}

describe('admission: a lane booked ahead', () => {
  it('limits a mapping larger than the quota keeps busy to the share it does, for 900 s when the slot is further', async () => {
    // Prepare / act: 2 calls an hour, calls of 2 s, a mapping of 10 records
    const denied = await deniedAfterTwoCalls(HOUR, { mappingRecords: 10 }, 2_000);
    // Assess
    assert.equal(denied.admitted, false);
    assert.ok(!denied.admitted && !denied.laneOut, 'the lane is not out');
    const capacity = !denied.admitted ? denied.laneCapacity : undefined;
    assert.equal(capacity?.reason, 'booked_ahead');
    assert.ok(!denied.admitted && denied.retryAt.getTime() - (T0 + 2_000) > 900_000, 'the slot is beyond 900 s');
    assert.equal(capacity?.until.getTime(), T0 + 2_000 + 900_000, 'until the slot, but for 900 s at most');
    assertNear(capacity?.share ?? NaN, ((2 / HOUR) * 2_000) / 10, 'share: calls per ms x (booking window 0 + call 2 s) / 10 records');
  });

  it('says nothing for a slot within 900 s, before a call answered, or without a mapping', async () => {
    // Prepare / act
    const near = await deniedAfterTwoCalls(600_000, { mappingRecords: 10 }, 2_000);
    const unanswered = await deniedAfterTwoCalls(HOUR, { mappingRecords: 10 }, null);
    const noMapping = await deniedAfterTwoCalls(HOUR, {}, 2_000);
    // Assess
    for (const [name, denied] of Object.entries({ near, unanswered, noMapping })) {
      assert.equal(denied.admitted, false, name);
      assert.equal(!denied.admitted && denied.laneCapacity, undefined, `${name}: no limit`);
    }
  });
});
