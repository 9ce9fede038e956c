/**
 * The policy's throttle branches: a short-window rate limit, an exhausted quota, billing and an
 * invalid key (`auth`) — each a deferral that keeps the retry budget, never a failure.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decide } from '../../../lib/policy/index.js';
import { asDefer, asReject, BACKOFF, HOUR, input, iso, job, NOW, providerError, SECOND } from './support.js';

describe('decide: rate_limit (short window)', () => {
  it("uses the provider's stated wait over the backoff, even when the backoff would be longer", () => {
    // Prepare: 10 deferrals would give a jittered 150 s
    const context = { job: job({ deferrals: 10, attempt: 1 }), approximateReceiveCount: 1 };
    // Act
    const action = asDefer(decide(input(providerError({ kind: 'rate_limit', retryAfterMs: 7000 }), context)));
    // Assess
    assert.deepEqual(action, {
      type: 'defer',
      reason: 'rate_limit',
      delaySeconds: 7,
      waitSeconds: 7,
      basis: 'provider_hint',
      eligibleAt: iso(NOW + 7 * SECOND),
      attempt: 1,
      deferrals: 11,
      cooldown: { until: iso(NOW + 7 * SECOND), scope: 'key', reason: 'rate_limit' },
    });
  });

  it("uses the provider's stated wait even when it is longer than the backoff cap", () => {
    // Act
    const action = asDefer(decide(input(providerError({ kind: 'rate_limit', retryAfterMs: 420_000 }))));
    // Assess
    assert.equal(action.delaySeconds, 420);
    assert.equal(action.basis, 'provider_hint');
  });

  it('reads a reset time, rounds up to whole seconds, and takes the later of two hints', () => {
    // Act
    const reset = asDefer(decide(input(providerError({ kind: 'rate_limit', resetAt: new Date(NOW + 42_300) }))));
    const both = asDefer(decide(input(providerError({ kind: 'rate_limit', retryAfterMs: 5000, resetAt: new Date(NOW + 20_000) }))));
    // Assess
    assert.equal(reset.delaySeconds, 43);
    assert.equal(reset.eligibleAt, iso(NOW + 43 * SECOND));
    assert.equal(both.delaySeconds, 20);
  });

  it('ignores a reset time already past (clock skew) and falls back to the backoff', () => {
    // Act
    const action = asDefer(decide(input(providerError({ kind: 'rate_limit', resetAt: new Date(NOW - 5000), retryAfterMs: 0 }))));
    // Assess
    assert.equal(action.basis, 'backoff');
    assert.equal(action.delaySeconds, 1);
  });

  it('grows the backoff with (receiveCount − 1) + deferrals and keeps it under the cap', () => {
    // Prepare: [receiveCount, deferrals] → exponent = receiveCount − 1 + deferrals
    const cases: [number, number, number][] = [
      [1, 0, 1], // 0.5 × 2 s
      [2, 0, 2],
      [1, 1, 2],
      [2, 1, 4],
      [3, 2, 16],
      [1, 7, 128],
      [1, 8, 150], // 0.5 × cap 300 s
      [5, 40, 150],
    ];
    // Act
    const delays = cases.map(
      ([receiveCount, deferrals]) =>
        asDefer(decide(input(providerError({ kind: 'rate_limit' }), { job: job({ deferrals }), approximateReceiveCount: receiveCount }))).delaySeconds,
    );
    const atCap = asDefer(decide(input(providerError({ kind: 'rate_limit' }), { job: job({ deferrals: 60 }), random: () => 0.999_999 })));
    // Assess
    assert.deepEqual(
      delays,
      cases.map(([, , expected]) => expected),
    );
    assert.equal(atCap.delaySeconds, 300);
    assert.equal(atCap.basis, 'backoff');
  });

  it('cools the key briefly (throttle base) when the provider states no wait', () => {
    // Act
    const action = asDefer(decide(input(providerError({ kind: 'rate_limit' }))));
    // Assess
    assert.deepEqual(action.cooldown, { until: iso(NOW + 2 * SECOND), scope: 'key', reason: 'rate_limit' });
    assert.equal(action.pauseLane, undefined);
  });
});

describe('decide: quota_exhausted (daily / long window)', () => {
  it('waits 24 h for a 24-hour reset: eligibleAt 24 h out, DelaySeconds 900, quota owner cooled', () => {
    // Prepare
    const resetAt = new Date(NOW + 24 * HOUR);
    // Act
    const action = asDefer(decide(input(providerError({ kind: 'quota_exhausted', resetAt }))));
    // Assess
    assert.deepEqual(action, {
      type: 'defer',
      reason: 'quota_exhausted',
      delaySeconds: 900,
      waitSeconds: 86_400,
      basis: 'provider_hint',
      eligibleAt: resetAt.toISOString(),
      attempt: 0,
      deferrals: 1,
      cooldown: { until: resetAt.toISOString(), scope: 'quota_owner', reason: 'quota_exhausted' },
    });
  });

  it('uses retryAfterMs when it is the only hint', () => {
    // Act
    const action = asDefer(decide(input(providerError({ kind: 'quota_exhausted', retryAfterMs: HOUR }))));
    // Assess
    assert.equal(action.waitSeconds, 3600);
    assert.equal(action.delaySeconds, 900);
    assert.equal(action.eligibleAt, iso(NOW + HOUR));
  });

  it('does not believe a quota that says "retry in 5 s": waits at least the throttle cap', () => {
    // Act
    const fewSeconds = asDefer(decide(input(providerError({ kind: 'quota_exhausted', retryAfterMs: 5000 }))));
    const noHint = asDefer(decide(input(providerError({ kind: 'quota_exhausted' }))));
    // Assess
    for (const action of [fewSeconds, noHint]) {
      assert.equal(action.waitSeconds, 300);
      assert.equal(action.basis, 'quota_floor');
      assert.equal(action.cooldown?.until, iso(NOW + 300 * SECOND));
    }
  });

  it('pauses the lane until the reset when no other key is left', () => {
    // Prepare
    const resetAt = new Date(NOW + 10 * HOUR);
    // Act
    const lastKey = asDefer(decide(input(providerError({ kind: 'quota_exhausted', resetAt }, 0))));
    const otherKeys = asDefer(decide(input(providerError({ kind: 'quota_exhausted', resetAt }, 2))));
    // Assess
    assert.deepEqual(lastKey.pauseLane, { until: resetAt.toISOString(), reason: 'quota_exhausted' });
    assert.equal(otherKeys.pauseLane, undefined);
  });
});

describe('decide: billing', () => {
  it('defers by the throttle cap, alarms, and cools the quota owner for a day', () => {
    // Act
    const action = asDefer(decide(input(providerError({ kind: 'billing' }), { job: job({ attempt: 2, deferrals: 4 }) })));
    // Assess
    assert.deepEqual(action, {
      type: 'defer',
      reason: 'billing',
      delaySeconds: 300,
      waitSeconds: 300,
      basis: 'billing_cap',
      eligibleAt: iso(NOW + 300 * SECOND),
      attempt: 2,
      deferrals: 5,
      alarm: 'billing',
      cooldown: { until: iso(NOW + 24 * HOUR), scope: 'quota_owner', reason: 'billing' },
    });
  });

  it('honours a configured billing cooldown and pauses the lane when it was the last key', () => {
    // Act
    const action = asDefer(decide(input(providerError({ kind: 'billing' }, 0), { backoff: { ...BACKOFF, billingCooldownSeconds: 7 * 24 * 3600 } })));
    // Assess
    assert.equal(action.cooldown?.until, iso(NOW + 7 * 24 * HOUR));
    assert.deepEqual(action.pauseLane, { until: iso(NOW + 7 * 24 * HOUR), reason: 'billing' });
  });
});

describe('decide: auth (an invalid, revoked or unauthorized key)', () => {
  it('defers by the throttle cap, alarms auth, and cools that key (not its quota owner) for a day', () => {
    // Act
    const action = asDefer(decide(input(providerError({ kind: 'auth' }, 2), { job: job({ attempt: 1, deferrals: 3 }) })));
    // Assess
    assert.deepEqual(action, {
      type: 'defer',
      reason: 'auth',
      delaySeconds: 300,
      waitSeconds: 300,
      basis: 'auth_cap',
      eligibleAt: iso(NOW + 300 * SECOND),
      attempt: 1,
      deferrals: 4,
      alarm: 'auth',
      cooldown: { until: iso(NOW + 24 * HOUR), scope: 'key', reason: 'auth' },
    });
  });

  it('ignores any wait the classification states: the key waits for a person, the job for the throttle cap', () => {
    // Act
    const action = asDefer(decide(input(providerError({ kind: 'auth', retryAfterMs: 5_000, resetAt: new Date(NOW + 3 * HOUR) }))));
    // Assess
    assert.equal(action.waitSeconds, 300);
    assert.equal(action.basis, 'auth_cap');
    assert.equal(action.cooldown?.until, iso(NOW + 24 * HOUR));
  });

  it('pauses the lane for the auth cooldown when it was the last key, and not while others are left', () => {
    // Act
    const lastKey = asDefer(decide(input(providerError({ kind: 'auth' }, 0))));
    const otherKeys = asDefer(decide(input(providerError({ kind: 'auth' }, 1))));
    const unknown = asDefer(decide(input(providerError({ kind: 'auth' }))));
    // Assess
    assert.deepEqual(lastKey.pauseLane, { until: iso(NOW + 24 * HOUR), reason: 'auth' });
    assert.equal(otherKeys.pauseLane, undefined);
    assert.equal(unknown.pauseLane, undefined);
  });

  it('honours a configured auth cooldown', () => {
    // Act
    const action = asDefer(decide(input(providerError({ kind: 'auth' }, 0), { backoff: { ...BACKOFF, authCooldownSeconds: 3 * 3600 } })));
    // Assess
    assert.deepEqual(action.cooldown, { until: iso(NOW + 3 * HOUR), scope: 'key', reason: 'auth' });
    assert.deepEqual(action.pauseLane, { until: iso(NOW + 3 * HOUR), reason: 'auth' });
  });

  it('rejects for the deadline when the throttle cap would end at or after it', () => {
    // Act
    const rejected = asReject(decide(input(providerError({ kind: 'auth' }, 0), { job: job({ deadline: iso(NOW + 300 * SECOND) }) })));
    const deferred = asDefer(decide(input(providerError({ kind: 'auth' }), { job: job({ deadline: iso(NOW + 301 * SECOND) }) })));
    // Assess
    assert.equal(rejected.reason, 'deadline');
    assert.match(rejected.detail, /auth/);
    assert.equal(deferred.reason, 'auth');
  });

  it('never fails the job, however many receives, deferrals or failures it carries', () => {
    // Prepare
    const contexts = [
      { approximateReceiveCount: 5, maxReceiveCount: 5 },
      { approximateReceiveCount: 1, maxReceiveCount: 1, job: job({ attempt: 9, deferrals: 500 }) },
      { approximateReceiveCount: 40, maxReceiveCount: 3 },
    ];
    // Act
    const types = contexts.map((context) => decide(input(providerError({ kind: 'auth' }, 0), context)).type);
    // Assess
    assert.deepEqual(types, ['defer', 'defer', 'defer']);
  });
});
