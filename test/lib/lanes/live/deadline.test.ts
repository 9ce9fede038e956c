/**
 * The live lane's deadline arithmetic: one total deadline per request, the retry budget
 * inside it, a hand-over margin at its end; and the recent call times a retry is priced with.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultLiveSettings, liveFunctionTimeoutSeconds, LiveSettingsSchema, MAX_LIVE_DEADLINE_MS } from '../../../../lib/config/live.js';
import { RECENT_SAMPLES, RecentCallTimes, UNMEASURED_CALL_MS, UNMEASURED_COMMIT_MS } from '../../../../lib/lanes/live/call-times.js';
import { effectiveDeadlineMs, liveBudget, overDeadline, retryFits } from '../../../../lib/lanes/live/deadline.js';

const LIVE = defaultLiveSettings();
const T0 = 1_800_000_000_000;

describe('live deadline: one total deadline', () => {
  it('a request gets its own deadline within the lane bounds, else the default', () => {
    // Act / Assess
    assert.equal(effectiveDeadlineMs(undefined, LIVE), LIVE.defaultDeadlineMs);
    assert.equal(effectiveDeadlineMs(3_000, LIVE), 3_000);
    assert.equal(effectiveDeadlineMs(10 * 60_000, LIVE), LIVE.maxDeadlineMs);
    assert.equal(effectiveDeadlineMs(10, LIVE), LIVE.handoverMarginMs + 100);
  });

  it('the budget counts from the arrival at the API, unless that time is not credible', () => {
    // Prepare
    const input = { startedAt: T0, deadlineMs: 5_000, handoverMarginMs: 1_000 };
    // Act
    const fromApi = liveBudget({ ...input, arrivedAt: T0 - 300 });
    const future = liveBudget({ ...input, arrivedAt: T0 + 60_000 });
    const ancient = liveBudget({ ...input, arrivedAt: T0 - 3_600_000 });
    const none = liveBudget({ ...input, arrivedAt: undefined });
    // Assess
    assert.deepEqual(fromApi, { arrivedAt: T0 - 300, answerBy: T0 + 4_700, workUntil: T0 + 3_700, deadlineMs: 5_000 });
    for (const b of [future, ancient, none]) assert.equal(b.arrivedAt, T0);
  });

  it('a retry fits only when its wait, the expected call and the commit end before the work must', () => {
    // Prepare
    const budget = liveBudget({ arrivedAt: T0, startedAt: T0, deadlineMs: 8_000, handoverMarginMs: 1_000 });
    const cost = { waitMs: 2_000, callMs: 1_500, commitMs: 100 };
    // Act / Assess: 7 000 ms of work time
    assert.equal(retryFits(budget, T0, cost), true);
    assert.equal(retryFits(budget, T0 + 3_400, cost), true);
    assert.equal(retryFits(budget, T0 + 3_401, cost), false);
    assert.equal(retryFits(budget, T0, { ...cost, waitMs: 60_000 }), false, 'a daily quota never fits');
    assert.equal(retryFits(budget, T0, { ...cost, waitMs: -5_000 }), true, 'a wait in the past is no wait');
  });

  it('an answer is late only past the deadline plus the slack', () => {
    // Prepare
    const budget = liveBudget({ arrivedAt: T0, startedAt: T0, deadlineMs: 2_000, handoverMarginMs: 500 });
    // Act / Assess
    assert.equal(overDeadline(budget, T0 + 2_250, 250), false);
    assert.equal(overDeadline(budget, T0 + 2_251, 250), true);
  });

  it('the lane settings keep the deadline under the API integration timeout', () => {
    // Act
    const tooLong = LiveSettingsSchema.safeParse({ ...LIVE, maxDeadlineMs: 29_500 });
    const inverted = LiveSettingsSchema.safeParse({ ...LIVE, defaultDeadlineMs: 20_000, maxDeadlineMs: 10_000 });
    // Assess
    assert.equal(tooLong.success, false);
    assert.equal(inverted.success, false);
    assert.ok(liveFunctionTimeoutSeconds({ maxDeadlineMs: MAX_LIVE_DEADLINE_MS }) < 30);
  });
});

describe('live call times: a recent p95 per quota owner', () => {
  it('before any measurement, the stated defaults', () => {
    // Act
    const times = new RecentCallTimes();
    // Assess
    assert.equal(times.expectedCallMs(), UNMEASURED_CALL_MS);
    assert.equal(times.expectedCallMs('org-a'), UNMEASURED_CALL_MS);
    assert.equal(times.measuredCallMs(), undefined);
    assert.equal(times.expectedCommitMs(), UNMEASURED_COMMIT_MS);
  });

  it('the p95 of the owner, else the slowest owner; only the recent samples count', () => {
    // Prepare
    const times = new RecentCallTimes();
    for (let i = 1; i <= 100; i++) times.observeCall('org-a', i * 10);
    for (let i = 0; i < 20; i++) times.observeCall('org-b', 5_000);
    times.observeCommit(40);
    times.observeCall('org-a', Number.NaN);
    // Act
    const a = times.expectedCallMs('org-a');
    const b = times.expectedCallMs('org-b');
    const unknownOwner = times.expectedCallMs('org-c');
    // Assess: org-a keeps its last 50 (510..1000 ms): the p95 is 980 ms
    assert.equal(RECENT_SAMPLES, 50);
    assert.equal(a, 980);
    assert.equal(b, 5_000);
    assert.equal(unknownOwner, 5_000);
    assert.equal(times.expectedCommitMs(), 40);
  });
});
