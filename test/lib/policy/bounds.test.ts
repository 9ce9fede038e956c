/**
 * What the policy believes of input from outside: a provider's stated wait only up to a
 * ceiling per kind, a job's `eligibleAt` and deadline only within the lane's horizon, and an
 * invocation's time (`out_of_time`) as a re-send at once, not a failure.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_MAX_QUOTA_HINT_SECONDS, DEFAULT_MAX_RATE_LIMIT_HINT_SECONDS, decide, gateBeforeCall } from '../../../lib/policy/index.js';
import { asDefer, asReject, BACKOFF, HOUR, input, iso, job, NOW, providerError, SECOND } from './support.js';

const DAY = 24 * HOUR;

describe('decide: stated waits have a ceiling', () => {
  it('a rate limit stating more than its ceiling is not believed: the backoff, a brief cooldown, the ignored wait reported', () => {
    // Act
    const believed = asDefer(decide(input(providerError({ kind: 'rate_limit', retryAfterMs: DEFAULT_MAX_RATE_LIMIT_HINT_SECONDS * SECOND }))));
    const year = asDefer(decide(input(providerError({ kind: 'rate_limit', retryAfterMs: 365 * DAY }))));
    // Assess
    assert.equal(believed.basis, 'provider_hint');
    assert.equal(believed.ignoredHintMs, undefined);
    assert.equal(year.basis, 'backoff');
    assert.equal(year.ignoredHintMs, 365 * DAY);
    assert.ok(year.waitSeconds <= BACKOFF.throttleCapSeconds);
    assert.equal(year.cooldown?.until, iso(NOW + BACKOFF.throttleBaseSeconds * SECOND));
  });

  it('a quota stating more than a month is not believed: the quota floor; a configured ceiling applies', () => {
    // Act
    const month = asDefer(decide(input(providerError({ kind: 'quota_exhausted', resetAt: new Date(NOW + 31 * DAY) }))));
    const decade = asDefer(decide(input(providerError({ kind: 'quota_exhausted', retryAfterMs: 3650 * DAY }))));
    const configured = asDefer(
      decide(input(providerError({ kind: 'quota_exhausted', retryAfterMs: 2 * DAY }), { backoff: { ...BACKOFF, maxQuotaHintSeconds: DAY / SECOND } })),
    );
    // Assess
    assert.ok(31 * DAY <= DEFAULT_MAX_QUOTA_HINT_SECONDS * SECOND);
    assert.equal(month.basis, 'provider_hint');
    assert.equal(month.waitSeconds, (31 * DAY) / SECOND);
    assert.equal(decade.basis, 'quota_floor');
    assert.equal(decade.waitSeconds, BACKOFF.throttleCapSeconds);
    assert.equal(decade.ignoredHintMs, 3650 * DAY);
    assert.equal(configured.basis, 'quota_floor');
  });

  it('never throws for a wait no Date can hold (10^18 ms), nor for a reset in year 275760', () => {
    // Act
    const huge = () => decide(input(providerError({ kind: 'rate_limit', retryAfterMs: 1e18 })));
    const lastDate = () => decide(input(providerError({ kind: 'quota_exhausted', resetAt: new Date(8.64e15) })));
    // Assess
    assert.doesNotThrow(huge);
    assert.doesNotThrow(lastDate);
    assert.equal(asDefer(huge()).basis, 'backoff');
    assert.equal(asDefer(lastDate()).basis, 'quota_floor');
  });
});

describe('gate: the horizon', () => {
  it('rejects an eligibleAt or a deadline beyond the horizon, and hops within it', () => {
    // Prepare
    const horizonMs = 35 * DAY;
    // Act
    const far = gateBeforeCall(job({ eligibleAt: '9999-12-31T00:00:00.000Z' }), 'eu', NOW, 1, horizonMs);
    const late = gateBeforeCall(job({ deadline: iso(NOW + 36 * DAY) }), 'eu', NOW, 1, horizonMs);
    const near = gateBeforeCall(job({ eligibleAt: iso(NOW + 34 * DAY) }), 'eu', NOW, 1, horizonMs);
    const unbounded = gateBeforeCall(job({ eligibleAt: iso(NOW + 365 * DAY) }), 'eu', NOW, 1);
    // Assess
    assert.equal(asReject(far).reason, 'beyond_horizon');
    assert.equal(asReject(late).reason, 'beyond_horizon');
    assert.equal(asDefer(near).reason, 'not_yet_eligible');
    assert.equal(asDefer(unbounded).reason, 'not_yet_eligible', 'without a horizon, nothing beyond it to reject');
  });
});

describe('decide: out of time', () => {
  it('re-sends at once, counting neither a failure nor a throttle; a deadline already at hand rejects', () => {
    // Act
    const action = asDefer(decide(input({ kind: 'out_of_time' }, { approximateReceiveCount: 2, job: job({ attempt: 1, deferrals: 3 }) })));
    const due = decide(input({ kind: 'out_of_time' }, { job: job({ deadline: iso(NOW) }) }));
    // Assess
    assert.equal(action.reason, 'invocation_deadline');
    assert.equal(action.delaySeconds, 0);
    assert.equal(action.deferrals, 3);
    assert.equal(action.attempt, 2, 'the failures carried (1) and the earlier receive of this message');
    assert.equal(asReject(due).reason, 'deadline');
  });

  it('a step cut off in the middle stays away for its wait, still neither a failure nor a throttle; a wait past the deadline rejects', () => {
    // Act
    const action = asDefer(decide(input({ kind: 'out_of_time', waitMs: 2_400 }, { job: job({ attempt: 0, deferrals: 3 }) })));
    const late = decide(input({ kind: 'out_of_time', waitMs: 60_000 }, { job: job({ deadline: iso(NOW + 30_000) }) }));
    // Assess
    assert.equal(action.reason, 'invocation_deadline');
    assert.equal(action.delaySeconds, 3, 'whole seconds, rounded up');
    assert.equal(action.deferrals, 3);
    assert.equal(Date.parse(action.eligibleAt), NOW + 3_000);
    assert.equal(asReject(late).reason, 'deadline');
  });
});
