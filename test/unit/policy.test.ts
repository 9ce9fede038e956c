import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Action,
  type BackoffSettings,
  backoffCeilingMs,
  decide,
  type DeferAction,
  type FailAction,
  fullJitterBackoffMs,
  gateBeforeCall,
  type JobDecisionInput,
  type JobOutcome,
  type JobScheduling,
  type ProviderErrorClassification,
  type RejectAction,
  SQS_MAX_DELAY_SECONDS,
  SQS_MAX_VISIBILITY_TIMEOUT_SECONDS,
} from '../../lib/policy/index.js';
import { seededRandom } from '../../lib/shared/random.js';

const NOW = Date.parse('2026-01-01T00:00:00.000Z');
const SECOND = 1000;
const HOUR = 3600 * SECOND;
const iso = (ms: number) => new Date(ms).toISOString();
/** The lane defaults (lib/config/lanes.ts). */
const BACKOFF: BackoffSettings = { throttleBaseSeconds: 2, throttleCapSeconds: 300, failureBaseSeconds: 5, failureCapSeconds: 900 };
const half = () => 0.5;

function job(overrides: Partial<JobScheduling> = {}): JobScheduling {
  return { attempt: 0, deferrals: 0, eligibleAt: iso(NOW - 60 * SECOND), region: 'eu', ...overrides };
}

function input(outcome: JobOutcome, overrides: Partial<Omit<JobDecisionInput, 'outcome'>> = {}): JobDecisionInput {
  return {
    job: job(),
    lane: 'eu',
    approximateReceiveCount: 1,
    maxReceiveCount: 5,
    now: NOW,
    backoff: BACKOFF,
    random: half,
    ...overrides,
    outcome,
  };
}

function providerError(classification: Partial<ProviderErrorClassification> & Pick<ProviderErrorClassification, 'kind'>, keysLeft?: number): JobOutcome {
  return { kind: 'provider_error', classification: { retryAfterMs: null, resetAt: null, ...classification }, keysLeft };
}

function asDefer(action: Action | ReturnType<typeof gateBeforeCall>): DeferAction {
  assert.equal(action.type, 'defer', `expected defer, got ${JSON.stringify(action)}`);
  return action as DeferAction;
}
function asFail(action: Action): FailAction {
  assert.equal(action.type, 'fail', `expected fail, got ${JSON.stringify(action)}`);
  return action as FailAction;
}
function asReject(action: Action | ReturnType<typeof gateBeforeCall>): RejectAction {
  assert.equal(action.type, 'reject', `expected reject, got ${JSON.stringify(action)}`);
  return action as RejectAction;
}

describe('fullJitterBackoffMs', () => {
  it('is random × min(cap, base × 2^exponent)', () => {
    // Prepare
    const settings = { baseMs: 2000, capMs: 300_000, random: half };
    // Act
    const values = [0, 1, 3, 7, 8, 20].map((exponent) => fullJitterBackoffMs({ ...settings, exponent }));
    // Assess
    assert.deepEqual(values, [1000, 2000, 8000, 128_000, 150_000, 150_000]);
  });

  it('stays at the cap for huge exponents without overflowing, and never returns NaN', () => {
    // Prepare
    const settings = { baseMs: 2000, capMs: 300_000, random: () => 0.999 };
    // Act
    const huge = [1024, 1e6, Number.MAX_SAFE_INTEGER, Infinity].map((exponent) => fullJitterBackoffMs({ ...settings, exponent }));
    const zeroBase = fullJitterBackoffMs({ exponent: 5000, baseMs: 0, capMs: 300_000, random: half });
    // Assess
    for (const value of huge) assert.equal(value, 0.999 * 300_000);
    assert.equal(zeroBase, 0);
  });

  it('treats a negative exponent as 0, spans [0, ceiling), and rejects bad input', () => {
    // Act + Assess
    assert.equal(fullJitterBackoffMs({ exponent: -3, baseMs: 2000, capMs: 300_000, random: half }), 1000);
    assert.equal(fullJitterBackoffMs({ exponent: 4, baseMs: 2000, capMs: 300_000, random: () => 0 }), 0);
    assert.equal(backoffCeilingMs({ exponent: 4, baseMs: 2000, capMs: 300_000 }), 32_000);
    assert.throws(() => fullJitterBackoffMs({ exponent: 1, baseMs: 2000, capMs: 300_000, random: () => 1.5 }), RangeError);
    assert.throws(() => fullJitterBackoffMs({ exponent: Number.NaN, baseMs: 2000, capMs: 300_000, random: half }), RangeError);
    assert.throws(() => fullJitterBackoffMs({ exponent: 1, baseMs: -1, capMs: 300_000, random: half }), RangeError);
  });
});

describe('gateBeforeCall', () => {
  it('lets an eligible job of this lane proceed', () => {
    // Act
    const result = gateBeforeCall(job({ eligibleAt: iso(NOW) }), 'eu', NOW);
    // Assess
    assert.deepEqual(result, { type: 'proceed' });
  });

  it('rejects a job of another region first, whatever else is true of it', () => {
    // Prepare
    const wrongLane = job({ region: 'us', eligibleAt: iso(NOW + HOUR), deadline: iso(NOW - HOUR) });
    // Act
    const result = asReject(gateBeforeCall(wrongLane, 'eu', new Date(NOW)));
    // Assess
    assert.equal(result.reason, 'region_mismatch');
    assert.match(result.detail, /"us".*"eu"/);
  });

  it('rejects a job whose deadline has passed (or is now)', () => {
    // Act
    const passed = asReject(gateBeforeCall(job({ deadline: iso(NOW - SECOND) }), 'eu', NOW));
    const exactlyNow = asReject(gateBeforeCall(job({ deadline: iso(NOW) }), 'eu', NOW));
    // Assess
    assert.equal(passed.reason, 'deadline');
    assert.equal(exactlyNow.reason, 'deadline');
  });

  it('hops a job eligible in 2000 s: DelaySeconds 900, eligibleAt, attempt and deferrals unchanged', () => {
    // Prepare
    const waiting = job({ eligibleAt: iso(NOW + 2000 * SECOND), attempt: 2, deferrals: 7 });
    // Act
    const hop = asDefer(gateBeforeCall(waiting, 'eu', NOW));
    // Assess
    assert.deepEqual(hop, {
      type: 'defer',
      reason: 'not_yet_eligible',
      delaySeconds: 900,
      waitSeconds: 2000,
      basis: 'eligible_at',
      eligibleAt: waiting.eligibleAt,
      attempt: 2,
      deferrals: 7,
    });
  });

  it('hops the remainder rounded up, and at least 1 s', () => {
    // Act
    const remainder = asDefer(gateBeforeCall(job({ eligibleAt: iso(NOW + 300_200) }), 'eu', NOW));
    const almostDue = asDefer(gateBeforeCall(job({ eligibleAt: iso(NOW + 200) }), 'eu', NOW));
    // Assess
    assert.equal(remainder.delaySeconds, 301);
    assert.equal(almostDue.delaySeconds, 1);
  });

  it('rejects now a job that only becomes eligible at or after its deadline', () => {
    // Prepare
    const hopeless = job({ eligibleAt: iso(NOW + 2 * HOUR), deadline: iso(NOW + HOUR) });
    const atDeadline = job({ eligibleAt: iso(NOW + HOUR), deadline: iso(NOW + HOUR) });
    // Act + Assess
    assert.equal(asReject(gateBeforeCall(hopeless, 'eu', NOW)).reason, 'deadline');
    assert.equal(asReject(gateBeforeCall(atDeadline, 'eu', NOW)).reason, 'deadline');
  });
});

describe('decide: terminal and simple outcomes', () => {
  it('rejects an invalid body or unknown version without needing a job', () => {
    // Act
    const invalid = asReject(decide({ outcome: { kind: 'invalid_body', reason: 'region: Invalid string' } }));
    const unknown = asReject(decide({ outcome: { kind: 'unknown_version', version: 'invoice@9' } }));
    // Assess
    assert.deepEqual(invalid, { type: 'reject', reason: 'invalid_body', detail: 'region: Invalid string' });
    assert.equal(unknown.reason, 'unknown_version');
    assert.match(unknown.detail, /invoice@9/);
  });

  it('rejects region mismatch and passed deadlines, hops not-yet-eligible, commits valid output', () => {
    // Act
    const mismatch = asReject(decide(input({ kind: 'region_mismatch' }, { job: job({ region: 'us' }) })));
    const deadline = asReject(decide(input({ kind: 'deadline_passed' }, { job: job({ deadline: iso(NOW - SECOND) }) })));
    const hop = asDefer(decide(input({ kind: 'not_yet_eligible' }, { job: job({ eligibleAt: iso(NOW + 2000 * SECOND), deferrals: 3 }) })));
    const commit = decide(input({ kind: 'valid_output' }));
    // Assess
    assert.equal(mismatch.reason, 'region_mismatch');
    assert.equal(deadline.reason, 'deadline');
    assert.equal(hop.delaySeconds, 900);
    assert.equal(hop.eligibleAt, iso(NOW + 2000 * SECOND));
    assert.equal(hop.deferrals, 3);
    assert.deepEqual(commit, { type: 'commit' });
  });
});

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
    const hinted = asReject(decide(input(providerError({ kind: 'rate_limit', retryAfterMs: 3 * HOUR }), { job: due })));
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

describe('decide: admission denied', () => {
  it('defers until retryAt, counting a deferral, hopping past 900 s, at least 1 s', () => {
    // Act
    const soon = asDefer(decide(input({ kind: 'admission_denied', retryAt: NOW + 12_500 })));
    const later = asDefer(decide(input({ kind: 'admission_denied', retryAt: new Date(NOW + 3000 * SECOND) })));
    const due = asDefer(decide(input({ kind: 'admission_denied', retryAt: NOW - SECOND })));
    // Assess
    assert.equal(soon.delaySeconds, 13);
    assert.equal(soon.basis, 'admission_retry_at');
    assert.equal(soon.deferrals, 1);
    assert.equal(soon.attempt, 0);
    assert.equal(later.delaySeconds, 900);
    assert.equal(later.eligibleAt, iso(NOW + 3000 * SECOND));
    assert.equal(due.delaySeconds, 1);
  });
});

describe('decide: validation', () => {
  it('repairs once with budget, then needs review; never the throttle path', () => {
    // Act
    const first = decide(input({ kind: 'validation_failed', repairAttemptsUsed: 0, maxRepairAttempts: 1 }));
    const afterRepair = decide(input({ kind: 'validation_failed', repairAttemptsUsed: 1, maxRepairAttempts: 1 }));
    const noBudget = decide(input({ kind: 'validation_failed', repairAttemptsUsed: 0, maxRepairAttempts: 0 }));
    // Assess
    assert.deepEqual(first, { type: 'repair', repairAttempt: 1, maxRepairAttempts: 1 });
    assert.equal(afterRepair.type, 'needs_review');
    assert.equal(noBudget.type, 'needs_review');
  });
});

describe('scenarios', () => {
  it('50 consecutive throttles never fail the job (five fast retries then the DLQ, as in the seed article)', () => {
    // Prepare: every re-send is a new message, so each receive has ApproximateReceiveCount 1
    const kinds: ProviderErrorClassification[] = [
      { kind: 'rate_limit', retryAfterMs: null, resetAt: null },
      { kind: 'rate_limit', retryAfterMs: 20_000, resetAt: null },
      { kind: 'quota_exhausted', retryAfterMs: 3000, resetAt: null },
    ];
    let current = job({ attempt: 1 });
    let now = NOW;
    const actions: Action[] = [];
    // Act
    for (let i = 0; i < 50; i++) {
      const classification = kinds[i % kinds.length]!;
      const action = decide(input({ kind: 'provider_error', classification }, { job: current, now, approximateReceiveCount: 1, maxReceiveCount: 5 }));
      actions.push(action);
      if (action.type !== 'defer') break;
      current = { ...current, attempt: action.attempt, deferrals: action.deferrals, eligibleAt: action.eligibleAt };
      now += action.waitSeconds * SECOND;
    }
    // Assess
    assert.equal(actions.length, 50);
    assert.ok(actions.every((a) => a.type === 'defer'));
    assert.equal(current.deferrals, 50);
    assert.equal(current.attempt, 1);
    assert.ok(actions.every((a) => a.type === 'defer' && a.delaySeconds <= 300));
  });

  it('a 24-hour quota reset hops 95 times without calling the model, then proceeds, attempt untouched', () => {
    // Prepare
    const first = asDefer(decide(input(providerError({ kind: 'quota_exhausted', resetAt: new Date(NOW + 24 * HOUR) }))));
    let current = job({ deferrals: first.deferrals, eligibleAt: first.eligibleAt });
    let now = NOW + first.delaySeconds * SECOND;
    let hops = 0;
    // Act
    for (let gate = gateBeforeCall(current, 'eu', now); gate.type !== 'proceed'; gate = gateBeforeCall(current, 'eu', now)) {
      const hop = asDefer(gate);
      hops += 1;
      current = { ...current, deferrals: hop.deferrals, eligibleAt: hop.eligibleAt, attempt: hop.attempt };
      now += hop.delaySeconds * SECOND;
      assert.ok(hops < 200, 'runaway hop loop');
    }
    // Assess
    assert.equal(hops, 95);
    assert.equal(now, NOW + 24 * HOUR);
    assert.equal(current.deferrals, 1);
    assert.equal(current.attempt, 0);
  });
});

describe('invariants over many random inputs', () => {
  it('delays are integers in 0..900, visibility in 0..43200, throttles never fail, deferrals only carry real failures into attempt', () => {
    // Prepare
    const rand = seededRandom(20260101); // seeded, so the property loop is reproducible
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    const maybe = <T>(value: () => T): T | null => (rand() < 0.5 ? null : value());
    const throttleKinds = new Set(['rate_limit', 'quota_exhausted', 'billing']);
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
        kind: pick(['rate_limit', 'quota_exhausted', 'billing', 'overloaded', 'not_rate_limit'] as const),
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
