/**
 * The bounds of the bench scenarios (workbench/drivers/bench/scenarios/bounds.ts), on hand-computed
 * cases: a daily quota that runs out and resets mid-run, tokens per minute binding, and requests per
 * minute on the keys with credit only (a dead owner left out).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dailyBound, dailyDrainMs, requestBound, tokenBound, type LaneLoad } from '../../../../../workbench/drivers/bench/scenarios/bounds.js';
import { laneLoads, planScenario } from '../../../../../workbench/drivers/bench/scenarios/scenarios.js';
import { benchLanes } from '../../../../../workbench/drivers/bench/strategies.js';
import { burstAwareMinimumMs, burstMinutes } from '../../../../../workbench/drivers/lanes.js';

const MINUTE = 3000;

function load(overrides: Partial<LaneLoad>): LaneLoad {
  return { lane: 'eu', jobs: 160, tokens: 0, owners: 2, rpm: 8, tpm: 1_000_000, daily: 100_000_000, ...overrides };
}

describe('bench scenario bounds: burst-aware minutes', () => {
  it('sends one minute at once, then the rest at the limit; nothing to send takes nothing; no limit never ends', () => {
    // Act + Assess
    assert.equal(burstMinutes(160, 16), 9);
    assert.equal(burstMinutes(10, 16), 0);
    assert.equal(burstMinutes(0, 0), 0);
    assert.equal(burstMinutes(5, 0), Number.POSITIVE_INFINITY);
  });
});

describe('bench scenario bounds: a daily quota that runs out mid-run', () => {
  it('spends the day, waits for the reset, and sends the rest from a full bucket', () => {
    // Prepare: 16 per minute, 96 per day, the reset after 12 minutes (36 s)
    // Act
    const ms = dailyDrainMs(160, 16, 96, MINUTE, 36_000, 36_000);
    // Assess: 96 by (96 - 16) / 16 = 5 min (15 s); at the reset 16 at once, 48 more in 3 min: 36 s + 9 s
    assert.equal(ms, 45_000);
  });

  it('waits for the reset even when the bucket has not refilled by then', () => {
    // Prepare: 10 per minute of 1 s, 15 per day, the first reset 800 ms after the start
    // Act
    const ms = dailyDrainMs(30, 10, 15, 1000, 800, 10_000);
    // Assess: 15 by 500 ms; the bucket holds 3 at the reset (800 ms); the other 12 take 1200 ms more
    assert.equal(ms, 2000);
  });

  it('waits for two resets when two days are not enough', () => {
    // Act: 20 per day, days of 5 s, 10 per 1 s minute
    const ms = dailyDrainMs(50, 10, 20, 1000, 5000, 5000);
    // Assess: 20 by 1 s, 20 by 6 s, the last 10 at once at the second reset (10 s)
    assert.equal(ms, 10_000);
  });

  it('is the burst-aware minimum when the daily quota never runs out, the days passing meanwhile', () => {
    // Act
    const ms = dailyDrainMs(100, 10, 1000, MINUTE, 3000, 6000);
    // Assess: (100 - 10) / 10 minutes
    assert.equal(ms, 27_000);
  });

  it('takes a reset at or before the start as a whole day ahead', () => {
    // Act: 20 per day, days of 5 s
    const atStart = dailyDrainMs(40, 10, 20, 1000, 0, 5000);
    const before = dailyDrainMs(40, 10, 20, 1000, -5000, 5000);
    // Assess: 20 by 1 s, the reset at 5 s, 10 at once and 10 more by 6 s
    assert.equal(atStart, 6000);
    assert.equal(before, 6000);
  });

  it('is the slowest lane, with the reset wait in its detail', () => {
    // Prepare
    const loads = [load({ lane: 'us', jobs: 140, daily: 48 }), load({ lane: 'eu', jobs: 160, daily: 48 })];
    // Act
    const bound = dailyBound(loads, MINUTE, 36_000, 36_000);
    // Assess: us 96 by 15 s, 44 after the reset at 36 s: 16 at once and 28 in 5.25 s
    assert.equal(bound.ms, 45_000);
    assert.deepEqual(
      bound.perLane.map((l) => [l.lane, l.ms]),
      [
        ['us', 41_250],
        ['eu', 45_000],
      ],
    );
    assert.match(bound.perLane[1]!.detail, /ran out 1 time/);
    assert.match(bound.formula, /daily reset/);
  });
});

describe('bench scenario bounds: tokens per minute', () => {
  it('holds a lane to its tokens when they take longer than its requests, and to its requests otherwise', () => {
    // Prepare: us has long documents (150 000 tokens on 2 x 10 000 tpm); eu few tokens on 1 x 10 rpm
    const loads = [
      load({ lane: 'us', jobs: 100, tokens: 150_000, owners: 2, rpm: 32, tpm: 10_000 }),
      load({ lane: 'eu', jobs: 40, tokens: 10_000, owners: 1, rpm: 10, tpm: 10_000 }),
    ];
    // Act
    const bound = tokenBound(loads, MINUTE);
    // Assess: us (150 000 - 20 000) / 20 000 = 6.5 min (requests 0.56 min); eu (40 - 10) / 10 = 3 min (tokens 0)
    assert.deepEqual(
      bound.perLane.map((l) => [l.lane, l.ms]),
      [
        ['us', 19_500],
        ['eu', 9_000],
      ],
    );
    assert.equal(bound.ms, 19_500);
    assert.match(bound.perLane[0]!.detail, /tokens 6\.50 min, requests 0\.56 min/);
  });
});

describe('bench scenario bounds: requests on the keys with credit', () => {
  it('leaves a dead owner out: each lane at one key of 8 rpm', () => {
    // Prepare: the bench's lanes (2 keys each), key-1 of each lane out of credit
    const lanes = benchLanes({ keys: 2, providerRpm: 8, providerTpm: 1_000_000, minuteMs: MINUTE }, 't');
    const sent = [...Array.from({ length: 140 }, () => 'us'), ...Array.from({ length: 160 }, () => 'eu')].map((lane) => ({ lane, document: { text: 'x' } }));
    // Act
    const loads = laneLoads(lanes, sent, { outOfCreditKeyIds: ['key-1'], boundKind: 'requests' });
    const bound = requestBound(loads, MINUTE);
    // Assess: eu (160 - 8) / 8 = 19 min = 57 s; us (140 - 8) / 8 = 16.5 min
    assert.deepEqual(
      loads.map((l) => [l.lane, l.jobs, l.owners]),
      [
        ['us', 140, 1],
        ['eu', 160, 1],
      ],
    );
    assert.equal(bound.ms, 57_000);
    assert.deepEqual(
      bound.perLane.map((l) => l.ms),
      [49_500, 57_000],
    );
  });

  it('never ends for a lane without a key with credit', () => {
    // Act
    const bound = requestBound([load({ owners: 0 })], MINUTE);
    // Assess
    assert.equal(bound.ms, Number.POSITIVE_INFINITY);
  });

  it('is the baseline burst-aware minimum when every key has credit', () => {
    // Prepare
    const plan = planScenario('baseline', { jobs: 300, keys: 2, providerRpm: 8, providerTpm: 1_000_000, minuteMs: MINUTE });
    const lanes = benchLanes({ keys: 2, providerRpm: 8, providerTpm: 1_000_000, minuteMs: MINUTE }, 't');
    const sent = plan.documents.map((document) => ({ lane: document.region, document }));
    // Act
    const bound = requestBound(laneLoads(lanes, sent, plan), MINUTE);
    // Assess
    assert.equal(bound.ms, burstAwareMinimumMs(lanes, sent, MINUTE));
    assert.equal(bound.ms, 27_000);
  });
});
