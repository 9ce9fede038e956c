/**
 * The limits a provider states on its answers (OpenAI's `x-ratelimit-limit-*`, Anthropic's
 * `anthropic-ratelimit-*-limit`) are the quota owner's real ones: a figure below the configured one bounds
 * the owner's takes from the answer that stated it on, at each bucket's share of the owner; one at or
 * above it changes nothing, and lifts a lower figure kept before.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settleChange, takeChange } from '../../../../lib/admission/bucket/changes.js';
import { applyUpdate } from '../../../../lib/admission/bucket/item-update.js';
import { ratedLimits, statedLimitsUpdate } from '../../../../lib/admission/bucket/token-bucket.js';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { LIMITS, T0 } from '../support.js';

/** Two keys of one quota owner (6 requests a minute configured: a slot every 10 s). */
const KEYS = [
  { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' },
  { id: 'k2', quotaOwner: 'o1', secret: 'sk-2' },
];

describe('admission: limits the provider stated', () => {
  it('keeps a figure below the configured one, lifts it at or above, writes nothing it holds already, and ignores what was not stated', () => {
    // Prepare: LIMITS configure 6 requests and 6,000 tokens a window
    const limits = LIMITS;
    // Act
    const lower = statedLimitsUpdate(undefined, limits, { requestsPerWindow: 4, tokensPerWindow: 9_000 });
    const kept = applyUpdate(undefined, lower!);
    const again = statedLimitsUpdate(kept, limits, { requestsPerWindow: 4 });
    const raised = statedLimitsUpdate(kept, limits, { requestsPerWindow: 6 });
    const silent = statedLimitsUpdate(kept, limits, {});
    const nonsense = statedLimitsUpdate(kept, limits, { requestsPerWindow: -3, tokensPerWindow: Number.NaN });
    // Assess
    assert.equal(kept.statedRequests, 4, 'requests below the configured 6: kept');
    assert.equal(kept.statedTokens, undefined, 'tokens above the configured 6,000: not kept');
    assert.equal(again, undefined, 'the same figure: nothing to write');
    assert.equal(applyUpdate(kept, raised!).statedRequests, undefined, 'the configured figure stated: the lower one lifted');
    assert.equal(silent, undefined, 'nothing stated: nothing changes');
    assert.equal(nonsense, undefined, 'figures that are no limit: ignored');
  });

  it("bounds a bucket's rates by the owner's stated figures at the bucket's share of the owner, beside a rate cut", () => {
    // Prepare: a bucket holding a quarter of its owner's limits (a reserve's live side, or one of four shards)
    const quarter = { ...LIMITS, requestsPerWindow: 1.5, tokensPerWindow: 1_500, ownerShare: 0.25 };
    // Act: the provider states 4 requests a window for the owner, then a cut leaves 1/2 of the configured
    const stated = applyUpdate(undefined, statedLimitsUpdate(undefined, quarter, { requestsPerWindow: 4 })!);
    const alsoCut = { ...stated, rateCut: 0.5, rateCutAt: T0 };
    // Assess
    assert.equal(stated.statedRequests, 4, "the owner's figure is stored, not the bucket's");
    assert.deepEqual(ratedLimits(quarter, stated, T0), { ...quarter, requestsPerWindow: 1, tokensPerWindow: 1_500 }, 'a quarter of the stated 4');
    assert.equal(ratedLimits(quarter, alsoCut, T0).requestsPerWindow, 0.75, 'the lower of the two: the cut');
    assert.equal(ratedLimits(quarter, undefined, T0), quarter, 'nothing stated: the configured limits themselves');
  });

  it("counts a settled call's token correction and a lease's rest in the stated rates, as the take moved the clocks", () => {
    // Prepare: LIMITS configure 6 requests and 6,000 tokens a minute; the provider stated 3 and 3,000
    const stated = { version: 1, reservedUntil: 0, requestsFullAt: T0 + 70_000, tokensFullAt: T0 + 50_000, statedRequests: 3, statedTokens: 3_000 };
    const rest = { requests: 1, tokens: 0, until: T0 + 1_000, dayEnd: 0 };
    // Act: 100 tokens more used than taken; a take too far ahead to fit that gives back one leased request
    const settled = settleChange(LIMITS, stated, T0, { delta: 100, prove: false }).write;
    const taken = takeChange(LIMITS, stated, T0, { cost: { requests: 1, tokens: 0 }, reserve: true, givenBack: rest }).write;
    // Assess: 100 tokens at 3,000 a minute are 2 s of the clock (1 s at the configured 6,000); a request at 3 a minute 20 s
    assert.deepEqual(settled?.changes.get('tokensFullAt'), { add: 2_000 });
    assert.equal(applyUpdate(stated, taken!).requestsFullAt, T0 + 50_000, 'the leased request given back: 20 s (the take, still refused, reserved a slot)');
  });

  it("spaces the owner's calls at the stated rate from the answer that stated it: a slot of 10 s becomes 20 s, on every key", async () => {
    // Prepare: one call taken and answered, its answer stating 3 requests a window for the owner
    const settings = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, probeFirstCalls: false, leaseMs: 0 });
    const clock = { now: T0 };
    const store = new MemoryRateStateStore();
    const pool = new SharedKeyPool({ keys: KEYS, store, limits: LIMITS, settings, now: () => clock.now });
    const first = await pool.acquire({ estimatedTokens: 100 });
    assert.ok(first.admitted);
    await first.settle({ inputTokens: 100, outputTokens: 0, providerLimits: { requestsPerWindow: 3 } });
    // Act: a minute later (the bucket whole again at either rate), calls asked one after another
    clock.now = T0 + 60_000;
    const answers = [];
    for (let i = 0; i < 5; i += 1) answers.push(await pool.acquire({ estimatedTokens: 100 }));
    // Assess: a burst of the stated 3, not the configured 6, and the next slot 20 s on (60 s / 3), on either key
    assert.deepEqual(
      answers.map((a) => a.admitted),
      [true, true, true, false, false],
    );
    const retry = answers[3]!.admitted ? Number.NaN : answers[3]!.retryAt.getTime() - clock.now;
    assert.ok(Math.abs(retry - 20_000) <= 2, `the next slot in ${retry} ms, expected 20,000`);
    assert.equal(new Set(answers.filter((a) => a.admitted).map((a) => (a.admitted ? a.key.id : ''))).size, 2, 'both keys served');
    const stored = await store.readBucket('o1');
    assert.equal(stored?.statedRequests, 3, "the bucket item holds the provider's figure");
  });

  it('writes nothing more on a settlement when the provider states the configured limits', async () => {
    // Prepare
    const settings = admissionSettings({ outputTokenEstimate: 0, safetyMargin: 0, probeFirstCalls: false, leaseMs: 0 });
    const store = new MemoryRateStateStore();
    const pool = new SharedKeyPool({ keys: KEYS, store, limits: LIMITS, settings, now: () => T0 });
    const grant = await pool.acquire({ estimatedTokens: 100 });
    assert.ok(grant.admitted);
    const before = (await store.readBucket('o1'))?.version;
    // Act: an answer that used the tokens taken and stated 6 requests and 6,000 tokens
    await grant.settle({ inputTokens: 100, outputTokens: 0, providerLimits: { requestsPerWindow: 6, tokensPerWindow: 6_000 } });
    // Assess
    assert.equal((await store.readBucket('o1'))?.version, before, 'no write');
  });
});
