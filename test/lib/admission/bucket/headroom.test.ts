/**
 * One start horizon for calls up to the headroom where tokens bind: a smaller call books only when it can
 * start by the window less the headroom, as a larger one must, so a backlog of smaller calls no longer keeps
 * the window full to an edge where only they fit; and the key pool keeps that horizon for the largest call
 * its instance asked for within the last window.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import { takeFromBucket } from '../../../../lib/admission/bucket/token-bucket.js';
import type { BucketLimits, BucketState } from '../../../../lib/admission/model/bucket.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import { T0 } from '../support.js';

/** Tokens bind: 100 tokens a second refill (a 100-token call in 1 s, a 400-token one in 4 s); requests never do. */
const LIMITS: BucketLimits = { requestsPerWindow: 1000, tokensPerWindow: 6000, windowMs: 60_000, requestsPerDay: 1e6, dayMs: 86_400_000 };
const SMALL = { requests: 1, tokens: 100 };
const LARGE = { requests: 1, tokens: 400 };
const WINDOW_MS = 10_500;

/** The bucket with its whole tokens level spent at T0. */
function spent(): BucketState {
  const verdict = takeFromBucket(undefined, LIMITS, { requests: 1, tokens: 6000 }, T0, { reserve: false });
  assert.ok(verdict.admitted);
  return verdict.next;
}

/** Books small calls at T0 until one is denied: how many were booked, and the bucket they leave. */
function bookSmallCalls(headroomMs: number): { booked: number; state: BucketState } {
  let state = spent();
  let booked = 0;
  for (;;) {
    const verdict = takeFromBucket(state, LIMITS, SMALL, T0, { reserve: false, bookWithinMs: WINDOW_MS, tokensHeadroomMs: headroomMs });
    if (!verdict.admitted) return { booked, state };
    booked++;
    state = verdict.next;
  }
}

describe('admission: one start horizon for calls up to the headroom', () => {
  it('without it, small calls book to the window’s edge and a larger call asking a second later is denied', () => {
    // Prepare: ten 1 s calls fill the 10.5 s window
    const { booked, state } = bookSmallCalls(0);
    // Act: a second later, a 4 s call (it would start at 9 s)
    const large = takeFromBucket(state, LIMITS, LARGE, T0 + 1000, { reserve: false, bookWithinMs: WINDOW_MS });
    // Assess
    assert.equal(booked, 10);
    assert.equal(large.admitted, false);
  });

  it('with 4 s of it, small calls start by 6.5 s, and the larger call asking a second later is booked', () => {
    // Prepare: seven 1 s calls, the last one starting at 6 s
    const { booked, state } = bookSmallCalls(4000);
    // Act: a second later, the 4 s call (it starts 6 s from then and ends within its window)
    const large = takeFromBucket(state, LIMITS, LARGE, T0 + 1000, { reserve: false, bookWithinMs: WINDOW_MS, tokensHeadroomMs: 4000 });
    // Assess
    assert.equal(booked, 7);
    assert.ok(large.admitted, 'the larger call is booked');
    assert.ok(Math.abs(large.startAt - (T0 + 11_000)) < 1, `starts at T0 + ${large.startAt - T0} ms`);
  });

  it('a call as large as the headroom books as it always did: to the window’s edge', () => {
    // Prepare: 10 s of calls booked
    const { state } = bookSmallCalls(0);
    // Act: behind them a 4 s call ends at 14 s, within a 14.1 s window
    const large = takeFromBucket(state, LIMITS, LARGE, T0, { reserve: false, bookWithinMs: 14_100, tokensHeadroomMs: 4000 });
    // Assess
    assert.ok(large.admitted && Math.abs(large.startAt - (T0 + 14_000)) < 1);
  });
});

describe('SharedKeyPool: the start horizon of the largest call it asked for', () => {
  const key = { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' };
  // Calls cost their input tokens alone (no output estimate).
  const settings = admissionSettings({ outputTokenEstimate: 0, outputTokenEstimateMin: 0, safetyMargin: 0, probeFirstCalls: false });
  const window = { bookWithinMs: 20_500 };

  /**
   * A pool that asked for a 400-token call at T0 (`sawLarge`) or not, spent the rest of the tokens, booked
   * 100-token calls until one was denied, and a second later asks for a 400-token call.
   */
  async function run(sawLarge: boolean): Promise<{ small: number; large: boolean }> {
    let now = T0;
    const pool = new SharedKeyPool({ keys: [key], store: new MemoryRateStateStore(), limits: LIMITS, settings, now: () => now });
    if (sawLarge) assert.equal((await pool.acquire({ estimatedTokens: 400, ...window })).admitted, true);
    assert.equal((await pool.acquire({ estimatedTokens: sawLarge ? 5600 : 6000 })).admitted, true);
    let small = 0;
    while ((await pool.acquire({ estimatedTokens: 100, ...window })).admitted) small++;
    now += 1000;
    const large = await pool.acquire({ estimatedTokens: 400, ...window });
    return { small, large: large.admitted };
  }

  it('books a larger call behind a backlog of small ones once it has asked for one that large within the window', async () => {
    // Act
    const fresh = await run(false);
    const seen = await run(true);
    // Assess: a fresh instance books twenty 1 s calls to the 20.5 s window's edge, and the 4 s call a second
    // later is denied; one that asked for a 4 s call (within a quarter of the window) starts its small calls
    // by 16.5 s (seventeen), and books the 4 s call
    assert.deepEqual(fresh, { small: 20, large: false });
    assert.deepEqual(seen, { small: 17, large: true });
  });
});
