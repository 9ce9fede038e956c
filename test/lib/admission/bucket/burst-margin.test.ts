/**
 * The safety margin trims the bucket's burst, not its rate: a busy lane uses its whole per-minute
 * quota, and what admission admits still fits the provider's bucket when every call reaches the
 * provider late by up to the margin's share of a window.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { takeFromBucket } from '../../../../lib/admission/bucket/token-bucket.js';
import type { BucketLimits, BucketState } from '../../../../lib/admission/model/bucket.js';
import { marginForSkew } from '../../../../lib/admission/config/settings.js';
import { LIMITS, T0 } from '../support.js';

const CALL = { requests: 1, tokens: 100 };
/** 6 requests a minute, a burst of 90 % of them (a margin of 0.1). */
const TRIMMED: BucketLimits = { ...LIMITS, burstShare: 0.9 };

/** Calls admitted as early as the bucket allows over `ms`, asked every `stepMs`: their times. */
function admittedTimes(limits: BucketLimits, ms: number, stepMs: number): number[] {
  let state: BucketState | undefined;
  const times: number[] = [];
  for (let at = T0; at <= T0 + ms; at += stepMs) {
    for (;;) {
      const verdict = takeFromBucket(state, limits, CALL, at, { reserve: false });
      if (!verdict.admitted) break;
      state = verdict.next;
      times.push(at);
    }
  }
  return times;
}

/** The provider's request bucket (a whole window's capacity, starting full) facing `times`: its lowest level. */
function providerLowest(times: number[], perWindow: number, windowMs: number): number {
  let level = perWindow;
  let last = T0;
  let lowest = perWindow;
  for (const at of [...times].sort((a, b) => a - b)) {
    level = Math.min(perWindow, level + ((at - last) * perWindow) / windowMs) - 1;
    last = at;
    lowest = Math.min(lowest, level);
  }
  return lowest;
}

describe('admission: the safety margin trims the burst', () => {
  it('admits 90 % of a window at once, then the full rate', () => {
    // Act: ten minutes of asking every second
    const times = admittedTimes(TRIMMED, 600_000, 1000);
    // Assess: 5 at once (5.4 held), then one every 10 s: 60 more in ten minutes, less the 0.4 held back
    assert.equal(times.filter((t) => t === T0).length, 5);
    assert.ok(times.length >= 64 && times.length <= 65, `${times.length} calls`);
  });

  it('stays within the provider’s bucket when calls arrive late by up to the margin’s share of a window', () => {
    // Prepare: every call admitted over ten minutes, each arriving late by a random 0..6 s (10 % of a minute)
    const times = admittedTimes(TRIMMED, 600_000, 250);
    let seed = 7;
    const random = (): number => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    const late = 0.1 * LIMITS.windowMs;
    // The worst case first: the burst arrives as late as it may, the calls after it on time.
    const worst = times.map((t) => (t === T0 ? t + late : t));
    assert.ok(providerLowest(worst, LIMITS.requestsPerWindow, LIMITS.windowMs) >= -1e-9, 'the burst late');
    for (let round = 0; round < 20; round++) {
      const arrivals = times.map((t) => t + random() * late);
      // Act + Assess: the provider never has to refuse one
      assert.ok(providerLowest(arrivals, LIMITS.requestsPerWindow, LIMITS.windowMs) >= -1e-9, `round ${round}`);
    }
  });
});

describe('admission: the margin of a scaled minute', () => {
  it('keeps the skew tolerance in time: the default on a real minute, more on a short one, at most half', () => {
    // Act + Assess
    assert.equal(marginForSkew(60_000, 500), 0.05);
    assert.ok(Math.abs(marginForSkew(3000, 500) - 1 / 6) < 1e-12);
    assert.equal(marginForSkew(500, 500), 0.5);
  });
});
