/**
 * The pure policy (lib/policy): backoff, the gate before a call, terminal and simple outcomes,
 * admission denials, validation, and whole scenarios. Throttles are in `policy-throttle.test.ts`,
 * real failures, deadlines and the random invariants in `policy-failures.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Action, backoffCeilingMs, decide, fullJitterBackoffMs, gateBeforeCall, type ProviderErrorClassification } from '../../../lib/policy/index.js';
import { asDefer, asReject, HOUR, half, input, iso, job, NOW, providerError, SECOND } from './support.js';

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

describe('decide: admission denied, the job able to wait in-process on return', () => {
  it('rounds the delay down when the rest of the wait fits the in-process wait, else up, never under 1 s', () => {
    // Act: 2.3 s to the slot; 0.3 s fits a wait of 0.5 s, not one of 0.2 s; 0.4 s to the slot
    const fits = asDefer(decide(input({ kind: 'admission_denied', retryAt: NOW + 2_300, mayWaitMs: 500 })));
    const tooShort = asDefer(decide(input({ kind: 'admission_denied', retryAt: NOW + 2_300, mayWaitMs: 200 })));
    const none = asDefer(decide(input({ kind: 'admission_denied', retryAt: NOW + 2_300 })));
    const near = asDefer(decide(input({ kind: 'admission_denied', retryAt: NOW + 400, mayWaitMs: 500 })));
    // Assess: eligibleAt agrees with DelaySeconds, so the gate lets the early job through
    assert.equal(fits.delaySeconds, 2);
    assert.equal(fits.eligibleAt, iso(NOW + 2 * SECOND));
    assert.equal(tooShort.delaySeconds, 3);
    assert.equal(none.delaySeconds, 3);
    assert.equal(near.delaySeconds, 1);
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
