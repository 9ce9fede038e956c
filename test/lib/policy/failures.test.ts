/**
 * The policy's real failures (visibility backoff, the retry budget carried across re-sends, the
 * last receive), deadlines, and invariants over many random inputs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type BackoffSettings,
  decide,
  type JobOutcome,
  type ProviderErrorClassification,
  SQS_MAX_DELAY_SECONDS,
  SQS_MAX_VISIBILITY_TIMEOUT_SECONDS,
} from '../../../lib/policy/index.js';
import { seededRandom } from '../../../lib/platform/random.js';
import { asDefer, asFail, asReject, BACKOFF, HOUR, input, iso, job, NOW, providerError, SECOND } from './support.js';

describe('decide: real failures', () => {
  it('fails an overload with a capped full-jitter visibility from ApproximateReceiveCount', () => {
    // Prepare: failure base 5 s, cap 900 s, random 0.5
    const receiveCounts = [1, 2, 3, 8, 20];
    // Act
    const visibilities = receiveCounts.map(
      (approximateReceiveCount) =>
        asFail(decide(input(providerError({ kind: 'overloaded' }), { approximateReceiveCount, maxReceiveCount: 50 }))).visibilityTimeoutSeconds,
    );
    // Assess: ceil(0.5 × min(900, 5 × 2^(n−1)))
    assert.deepEqual(visibilities, [3, 5, 10, 320, 450]);
  });

  it('does not use the deferrals for the visibility backoff and leaves the job untouched', () => {
    // Act
    const action = asFail(decide(input(providerError({ kind: 'overloaded' }), { job: job({ deferrals: 30 }) })));
    // Assess
    assert.deepEqual(action, {
      type: 'fail',
      reason: 'overloaded',
      detail: 'provider overloaded',
      visibilityTimeoutSeconds: 3,
      receiveCount: 1,
      maxReceiveCount: 5,
      carriedAttempt: 0,
      lastReceive: false,
    });
  });

  it('counts failures carried by a re-sent job towards the retry budget', () => {
    // Prepare: the job failed twice as an earlier message, then was deferred (re-sent: receive count 1 again)
    const carried = job({ attempt: 3 });
    // Act
    const second = asFail(
      decide(input({ kind: 'transport_failure', cause: 'server_error' }, { job: carried, approximateReceiveCount: 1, maxReceiveCount: 5 })),
    );
    const last = asFail(decide(input({ kind: 'transport_failure', cause: 'server_error' }, { job: carried, approximateReceiveCount: 2, maxReceiveCount: 5 })));
    // Assess
    assert.equal(second.lastReceive, false);
    assert.equal(second.carriedAttempt, 3);
    assert.equal(last.lastReceive, true);
  });

  it("carries this message's failed receives into the attempt of a deferred re-send", () => {
    // Prepare: the third receive of a message (two real failures before) hits a rate limit
    const throttled = providerError({ kind: 'rate_limit', retryAfterMs: 5_000 });
    // Act
    const action = decide(input(throttled, { job: job({ attempt: 1, deferrals: 4 }), approximateReceiveCount: 3 }));
    // Assess
    assert.equal(action.type, 'defer');
    if (action.type !== 'defer') return;
    assert.equal(action.attempt, 3);
    assert.equal(action.deferrals, 5);
  });

  it('flags the last receive so the consumer can write the DLQ reason first', () => {
    // Act
    const last = asFail(decide(input({ kind: 'transport_failure', cause: 'timeout' }, { approximateReceiveCount: 5, maxReceiveCount: 5 })));
    const before = asFail(decide(input({ kind: 'transport_failure', cause: 'timeout' }, { approximateReceiveCount: 4, maxReceiveCount: 5 })));
    // Assess
    assert.equal(last.lastReceive, true);
    assert.equal(last.reason, 'transport_failure');
    assert.equal(last.detail, 'timeout');
    assert.equal(before.lastReceive, false);
  });

  it('fails a non-throttle provider error, and honours an overload hint as a floor', () => {
    // Act
    const other = asFail(decide(input(providerError({ kind: 'not_rate_limit', retryAfterMs: 60_000 }))));
    const hinted = asFail(decide(input(providerError({ kind: 'overloaded', retryAfterMs: 60_000 }))));
    // Assess
    assert.equal(other.reason, 'provider_error');
    assert.equal(other.visibilityTimeoutSeconds, 3);
    assert.equal(hinted.visibilityTimeoutSeconds, 60);
  });

  it('never sets a visibility timeout above 12 h', () => {
    // Act
    const action = asFail(
      decide(
        input(
          { kind: 'transport_failure', cause: 'server_error' },
          { approximateReceiveCount: 40, maxReceiveCount: 100, random: () => 0.999_999, backoff: { ...BACKOFF, failureCapSeconds: 100_000 } },
        ),
      ),
    );
    // Assess
    assert.equal(action.visibilityTimeoutSeconds, SQS_MAX_VISIBILITY_TIMEOUT_SECONDS);
  });
});

describe('decide: deadlines', () => {
  it('rejects now when the wait would end after the deadline', () => {
    // Prepare
    const due = job({ deadline: iso(NOW + 2 * HOUR) });
    // Act
    const quota = asReject(decide(input(providerError({ kind: 'quota_exhausted', resetAt: new Date(NOW + 24 * HOUR) }), { job: due })));
    // (a rate limit's stated wait is believed up to its ceiling, an hour by default: 45 minutes past a 30-minute deadline)
    const hinted = asReject(decide(input(providerError({ kind: 'rate_limit', retryAfterMs: 0.75 * HOUR }), { job: job({ deadline: iso(NOW + 0.5 * HOUR) }) })));
    const admission = asReject(decide(input({ kind: 'admission_denied', retryAt: NOW + 2 * HOUR }, { job: due })));
    // Assess
    for (const action of [quota, hinted, admission]) assert.equal(action.reason, 'deadline');
    assert.match(quota.detail, /quota_exhausted/);
  });

  it('defers when the wait ends before the deadline', () => {
    // Act
    const action = asDefer(decide(input(providerError({ kind: 'rate_limit', retryAfterMs: 30 * SECOND }), { job: job({ deadline: iso(NOW + 31 * SECOND) }) })));
    // Assess
    assert.equal(action.delaySeconds, 30);
  });

  it('rejects a real failure whose redelivery would come after the deadline', () => {
    // Prepare: visibility would be ceil(0.5 × 900) = 450 s
    const context = { job: job({ deadline: iso(NOW + 400 * SECOND) }), approximateReceiveCount: 10, maxReceiveCount: 20 };
    // Act
    const action = asReject(decide(input({ kind: 'transport_failure', cause: 'timeout' }, context)));
    // Assess
    assert.equal(action.reason, 'deadline');
  });
});

describe('invariants over many random inputs', () => {
  it('delays are integers in 0..900, visibility in 0..43200, throttles never fail, deferrals only carry real failures into attempt', () => {
    // Prepare
    const rand = seededRandom(20260101); // seeded, so the property loop is reproducible
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    const maybe = <T>(value: () => T): T | null => (rand() < 0.5 ? null : value());
    const throttleKinds = new Set(['rate_limit', 'quota_exhausted', 'billing', 'auth']);
    // Act + Assess
    for (let i = 0; i < 20_000; i++) {
      const now = NOW + Math.floor(rand() * 365 * 24 * HOUR);
      const scheduling = job({
        attempt: Math.floor(rand() * 10),
        deferrals: Math.floor(rand() * 2000),
        eligibleAt: iso(now + Math.floor((rand() - 0.5) * 48 * HOUR)),
        deadline: rand() < 0.3 ? iso(now + Math.floor(rand() * 48 * HOUR)) : undefined,
      });
      const backoff: BackoffSettings = {
        throttleBaseSeconds: 0.1 + rand() * 10,
        throttleCapSeconds: 1 + rand() * 3600,
        failureBaseSeconds: 0.1 + rand() * 30,
        failureCapSeconds: 1 + rand() * 100_000,
      };
      const classification: ProviderErrorClassification = {
        kind: pick(['rate_limit', 'quota_exhausted', 'billing', 'auth', 'overloaded', 'not_rate_limit'] as const),
        retryAfterMs: maybe(() => (rand() - 0.1) * 48 * HOUR),
        resetAt: maybe(() => new Date(now + (rand() - 0.1) * 48 * HOUR)),
      };
      const outcome = pick<JobOutcome>([
        { kind: 'not_yet_eligible' },
        { kind: 'admission_denied', retryAt: now + (rand() - 0.2) * 48 * HOUR },
        { kind: 'provider_error', classification, keysLeft: pick([undefined, 0, 1]) },
        { kind: 'transport_failure', cause: 'timeout' },
        { kind: 'validation_failed', repairAttemptsUsed: Math.floor(rand() * 3), maxRepairAttempts: Math.floor(rand() * 3) },
      ]);
      const receiveCount = 1 + Math.floor(rand() * 30);
      const maxReceiveCount = 1 + Math.floor(rand() * 30);
      const action = decide({ job: scheduling, lane: 'eu', approximateReceiveCount: receiveCount, maxReceiveCount, now, backoff, random: rand, outcome });
      const context = JSON.stringify({ i, scheduling, outcome, receiveCount, action });

      if (action.type === 'defer') {
        assert.ok(Number.isInteger(action.delaySeconds) && action.delaySeconds >= 0 && action.delaySeconds <= SQS_MAX_DELAY_SECONDS, context);
        assert.ok(Number.isInteger(action.waitSeconds) && action.waitSeconds >= action.delaySeconds, context);
        assert.equal(action.attempt, scheduling.attempt + receiveCount - 1, context);
        const expectedDeferrals = action.reason === 'not_yet_eligible' ? scheduling.deferrals : scheduling.deferrals + 1;
        assert.equal(action.deferrals, expectedDeferrals, context);
        if (scheduling.deadline) assert.ok(Date.parse(action.eligibleAt) < Date.parse(scheduling.deadline), context);
        if (action.reason !== 'not_yet_eligible') assert.equal(Date.parse(action.eligibleAt), now + action.waitSeconds * SECOND, context);
      }
      if (action.type === 'fail') {
        assert.ok(
          Number.isInteger(action.visibilityTimeoutSeconds) &&
            action.visibilityTimeoutSeconds >= 0 &&
            action.visibilityTimeoutSeconds <= SQS_MAX_VISIBILITY_TIMEOUT_SECONDS,
          context,
        );
        assert.equal(action.lastReceive, scheduling.attempt + receiveCount >= maxReceiveCount, context);
      }
      if (action.type === 'reject') assert.equal(action.reason, 'deadline', context);
      const isThrottle =
        outcome.kind === 'not_yet_eligible' ||
        outcome.kind === 'admission_denied' ||
        (outcome.kind === 'provider_error' && throttleKinds.has(outcome.classification.kind));
      if (isThrottle) assert.ok(action.type === 'defer' || action.type === 'reject', context);
      if (outcome.kind === 'validation_failed') assert.ok(action.type === 'repair' || action.type === 'needs_review', context);
    }
  });
});
