/**
 * A lane booked ahead: a denial whose slot lies more than a window ahead says the lane is `booked_ahead`
 * when its mapping holds more records than the quota keeps busy, with the share it does keep busy (the
 * lane's call rate — for the tokens the instance's calls used, where tokens bind — × (booking window, at
 * least a fresh record's, + the calls' learned time) over the records held), for 900 s, or until the owners
 * out it was worked out without come back; a nearer slot, an instance that has not seen a call answer, or a
 * lane without a mapping says nothing.
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
const WINDOW = 600_000;
const CALL_MS = 2_000;
const MAX_DELAY_MS = 900_000;

/** Two owners of one request (or as given) per window; two calls granted and answered after 2 s. */
async function afterTwoCalls(
  settings: Partial<AdmissionSettings>,
  options: { answered?: boolean; requestsPerWindow?: number; tokensPerWindow?: number; usedTokens?: number; statedRequests?: number } = {},
): Promise<{ pool: SharedKeyPool; clock: { now: number } }> {
  const limits: BucketLimits = {
    requestsPerWindow: options.requestsPerWindow ?? 1,
    tokensPerWindow: options.tokensPerWindow ?? 1_000_000,
    windowMs: WINDOW,
    requestsPerDay: 1000,
    dayMs: 86_400_000,
  };
  const clock = { now: T0 };
  const all = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, probeFirstCalls: false, leaseCalls: 0, windowMs: WINDOW, ...settings });
  const pool = new SharedKeyPool({ keys: KEYS, store: new MemoryRateStateStore(), limits, settings: all, now: () => clock.now });
  const used = options.usedTokens ?? 10;
  const grants = [await pool.acquire({ estimatedTokens: used }), await pool.acquire({ estimatedTokens: used })];
  if (options.answered !== false) {
    clock.now += CALL_MS;
    const stated = options.statedRequests === undefined ? {} : { providerLimits: { requestsPerWindow: options.statedRequests } };
    for (const grant of grants) if (grant.admitted) await grant.settle({ inputTokens: used, outputTokens: 0, ...stated });
  }
  return { pool, clock };
}

/** The denials of `count` more calls of `estimatedTokens`, one after the other (each reserves the next slot). */
async function denials(pool: SharedKeyPool, count: number, estimatedTokens = 10): Promise<KeyAdmission[]> {
  const out: KeyAdmission[] = [];
  for (let i = 0; i < count; i++) out.push(await pool.acquire({ estimatedTokens }));
  return out;
}

const capacityOf = (denied: KeyAdmission | undefined) => (denied && !denied.admitted ? denied.laneCapacity : undefined);

describe('admission: a lane booked ahead', () => {
  it('limits a mapping larger than the quota keeps busy to the share it does, for 900 s, once a slot is more than a window ahead', async () => {
    // Prepare: 2 calls a window of 10 min per owner, calls of 2 s, a mapping of 10 records
    const { pool, clock } = await afterTwoCalls({ mappingRecords: 10 }, { requestsPerWindow: 2 });
    // Act: more calls, until one's slot is more than a window ahead
    const asked = await denials(pool, 8);
    // Assess
    const near = asked.filter((d) => !d.admitted && d.retryAt.getTime() - clock.now <= WINDOW);
    const far = asked.find((d) => !d.admitted && d.retryAt.getTime() - clock.now > WINDOW);
    assert.ok(near.length > 0 && near.every((d) => capacityOf(d) === undefined), 'slots within the window: no limit');
    assert.ok(far && !far.admitted && far.retryAt.getTime() - clock.now < MAX_DELAY_MS, 'a slot beyond the window, within what SQS can delay');
    assert.ok(!far.laneOut, 'the lane is not out');
    const capacity = capacityOf(far);
    assert.equal(capacity?.reason, 'booked_ahead');
    assert.equal(capacity?.until.getTime(), clock.now + MAX_DELAY_MS, 'for 900 s, the slot near or far');
    assertNear(capacity?.share ?? NaN, ((4 / WINDOW) * CALL_MS) / 10, 'share: calls per ms x (booking window 0 + call 2 s) / 10 records');
  });

  it("works the share out at the rates the owners' buckets admit: a provider that stated half the configured requests halves it", async () => {
    // Prepare: 2 requests a window configured per owner, the answers stating 1
    const { pool, clock } = await afterTwoCalls({ mappingRecords: 10 }, { requestsPerWindow: 2, statedRequests: 1 });
    // Act
    const asked = await denials(pool, 8);
    // Assess
    const far = asked.find((d) => !d.admitted && d.retryAt.getTime() - clock.now > WINDOW);
    assertNear(capacityOf(far)?.share ?? NaN, ((2 / WINDOW) * CALL_MS) / 10, 'share: the stated 2 calls per window x call 2 s / 10 records');
  });

  it('works the share out from the tokens the calls used, not from the one call denied, where tokens bind', async () => {
    // Prepare: 10 requests and 1 000 tokens a window per owner, calls that used 100; then calls of 900 tokens asked for
    const { pool, clock } = await afterTwoCalls({ mappingRecords: 100 }, { requestsPerWindow: 10, tokensPerWindow: 1_000, usedTokens: 100 });
    // Act
    const denied = (await denials(pool, 8, 900)).find((d) => !d.admitted && d.retryAt.getTime() - clock.now > WINDOW);
    // Assess: 2 owners x min(10 requests, 1 000 / 100 tokens) calls a window, not 2 x 1 000 / 900
    const capacity = capacityOf(denied);
    assert.equal(capacity?.reason, 'booked_ahead');
    assertNear(capacity?.share ?? NaN, ((20 / WINDOW) * CALL_MS) / 100, 'share: at the calls’ own size');
  });

  it('works the share out with at least the booking window a record fresh from the mapping has', async () => {
    // Prepare: a mapping whose records have 10 s to book at the start of their invocation
    const { pool, clock } = await afterTwoCalls({ mappingRecords: 10, mappingWindowMs: 10_000 });
    // Act: records denied with none of their window left
    const denied = (await denials(pool, 3)).find((d) => !d.admitted && d.retryAt.getTime() - clock.now > WINDOW);
    // Assess
    assertNear(capacityOf(denied)?.share ?? NaN, ((2 / WINDOW) * (10_000 + CALL_MS)) / 10, 'share: calls per ms x (10 s + call 2 s) / 10 records');
  });

  it('lasts no longer than the owners out it was worked out without', async () => {
    // Prepare: one owner out of credit for 10 min
    const { pool, clock } = await afterTwoCalls({ mappingRecords: 10 });
    const back = clock.now + WINDOW;
    await pool.cool(KEYS[1]!, { scope: 'quota_owner', reason: 'billing', until: new Date(back).toISOString() });
    // Act
    const denied = (await denials(pool, 3)).find((d) => !d.admitted && d.retryAt.getTime() - clock.now > WINDOW);
    // Assess
    const capacity = capacityOf(denied);
    assert.equal(capacity?.reason, 'booked_ahead');
    assert.equal(capacity?.until.getTime(), back, 'until the owner comes back');
    assertNear(capacity?.share ?? NaN, (((2 / WINDOW) * CALL_MS) / 10) * 0.5, 'share: of the owners usable');
  });

  it('says nothing for a slot within a window, before a call answered, or without a mapping', async () => {
    // Prepare / act
    const near = await denials((await afterTwoCalls({ mappingRecords: 10 })).pool, 2);
    const unanswered = await denials((await afterTwoCalls({ mappingRecords: 10 }, { answered: false })).pool, 3);
    const noMapping = await denials((await afterTwoCalls({})).pool, 3);
    // Assess
    for (const [name, all] of Object.entries({ near, unanswered, noMapping })) {
      for (const denied of all) {
        assert.equal(denied.admitted, false, name);
        assert.equal(capacityOf(denied), undefined, `${name}: no limit`);
      }
    }
  });
});
