import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_SIM_SETTINGS, type SimSettings } from '../../../workbench/sim/settings.js';
import { simulate } from '../../../workbench/sim/engine.js';
import { JobTable } from '../../../workbench/sim/jobs.js';
import { quotaBoundMs, SCENARIOS, withOwners, type Scenario } from '../../../workbench/sim/scenarios.js';
import { STRATEGIES } from '../../../workbench/sim/strategies.js';
import type { StrategyResult } from '../../../workbench/sim/results.js';

/** 1 key, 5 requests a minute, no binding token or daily limit. */
const TINY: Scenario = {
  id: 'minute',
  title: 'tiny: 1 key x 5 RPM',
  start: Date.parse('2026-03-02T09:00:00.000Z'),
  dailyResetOffsetMs: 0,
  keys: 1,
  limits: { requestsPerMinute: 5, tokensPerMinute: 1_000_000, requestsPerDay: 1_000_000 },
};

/** The event source's scale-up at ten times AWS's rate (50 consumers a second), to keep runs short. */
const QUICK_SCALE_UP: SimSettings['eventSource'] = { initialConcurrency: 5, scaleUpPerMinute: 3000, scaleDownAfterMs: 60_000 };

const TEN_JOBS: SimSettings = { ...DEFAULT_SIM_SETTINGS, jobs: 10, consumers: 10, failureRate: 0, seed: 7 };

describe('simulate: 10 jobs, 1 key at 5 RPM, 10 consumers', () => {
  it('(a) naive dead-letters jobs: every 429 spends one of 5 receives', () => {
    // Act
    const r = simulate(TINY, STRATEGIES.naive, TEN_JOBS);
    // Assess: the burst of 5 commits at once; the other 5 are retried within ~80 s of backoff
    // while only one call refills every 12 s, so some run out of receives.
    assert.equal(r.completed + r.deadLettered, 10);
    assert.ok(r.completed >= 5, `completed ${r.completed}`);
    assert.ok(r.deadLettered > 0, `dead-lettered ${r.deadLettered}`);
    assert.equal(r.lost, 0);
    assert.equal(r.unfinished, 0);
    assert.equal(r.modelCalls, r.completed + r.rateLimited);
    assert.ok(r.modelCalls <= 10 * 5, 'at most 5 receives a job');
    assert.equal(r.sqs.redriven, r.deadLettered, 'SQS redrive moved them, not the consumer');
    assert.equal(r.deferrals, 0);
  });

  it('(b) reschedule finishes all 10 with 0 dead letters, paying in 429s', () => {
    // Act
    const r = simulate(TINY, STRATEGIES.reschedule, TEN_JOBS);
    // Assess
    assert.equal(r.completed, 10);
    assert.equal(r.deadLettered, 0);
    assert.equal(r.lost, 0);
    assert.ok(r.rateLimited > 0);
    assert.equal(r.deferrals, r.rateLimited, 'every 429 is one deferral');
    // Burst of 5 at t=0, then one every 12 s: the 10th call starts at ~60 s.
    assert.ok(r.drainMs >= 60_000 && r.drainMs < 70_000, `drain ${r.drainMs}`);
    assert.equal(r.boundMs, 60_000, 'a burst of 5, then 5 jobs at 5 RPM');
    assert.ok(r.drainMs >= r.boundMs, 'the bound is a minimum');
  });

  it('(b) stopped by the work limit reports the jobs it left unfinished, not a finished drain', () => {
    // Prepare: (b) needs more than 2 receives a job here (each 429 is a re-send)
    const limited = { ...TEN_JOBS, maxReceivesPerJob: 2 };
    // Act
    const whole = simulate(TINY, STRATEGIES.reschedule, TEN_JOBS);
    const stopped = simulate(TINY, STRATEGIES.reschedule, limited);
    // Assess
    assert.equal(whole.stoppedBy, 'done');
    assert.ok(whole.receives > 20, `receives ${whole.receives}`);
    assert.equal(stopped.stoppedBy, 'receive-limit');
    assert.ok(stopped.receives >= 20 && stopped.receives < whole.receives, `receives ${stopped.receives}`);
    assert.ok(stopped.unfinished > 0, 'the jobs still queued are unfinished');
    assert.equal(stopped.completed + stopped.unfinished + stopped.lost, 10);
    assert.equal(stopped.lost, 0);
    assert.ok(stopped.drainMs > 0 && stopped.drainMs < whole.drainMs, `the drain so far ${stopped.drainMs}`);
  });

  it('(c) admission finishes all 10 with exactly 10 calls: no 429 is ever spent', () => {
    // Act
    const r = simulate(TINY, STRATEGIES.admission, TEN_JOBS);
    // Assess
    assert.equal(r.completed, 10);
    assert.equal(r.deadLettered, 0);
    assert.equal(r.lost, 0);
    assert.equal(r.modelCalls, 10);
    assert.equal(r.rateLimited, 0);
    assert.equal(r.callsPerCompletion, 1);
    assert.ok(r.admissionDenials > 0, 'the jobs over the budget waited without a call');
    assert.ok(r.admission && r.admission.grants === 10);
  });

  it('(c) books a near slot and waits for it in-process, as the consumer does: fewer re-sends, a longer invocation', () => {
    // Prepare: one slot every 12 s; 10 jobs, so most slots are more than 12 s away
    const booking = { ...TEN_JOBS, bookWithinMs: 30_000 };
    // Act
    const booked = simulate(TINY, STRATEGIES.admission, booking);
    const resent = simulate(TINY, STRATEGIES.admission, { ...booking, bookWithinMs: 0 });
    // Assess: a booked call starts at its slot (no 429), and its record waits for it billed
    for (const r of [booked, resent]) {
      assert.equal(r.completed, 10);
      assert.equal(r.modelCalls, 10);
      assert.equal(r.rateLimited, 0);
    }
    assert.ok(booked.admissionDenials < resent.admissionDenials, `denials: ${booked.admissionDenials} booked vs ${resent.admissionDenials}`);
    assert.ok(booked.receives < resent.receives, `receives: ${booked.receives} booked vs ${resent.receives}`);
    assert.ok(booked.usage.lambdaGbSeconds > resent.usage.lambdaGbSeconds, `GB-s: ${booked.usage.lambdaGbSeconds} booked vs ${resent.usage.lambdaGbSeconds}`);
  });

  it('is deterministic for a seed, and the seed matters', () => {
    // Prepare
    const strip = (r: ReturnType<typeof simulate>) => ({ ...r, wallMs: 0 });
    const settings = { ...TEN_JOBS, jobs: 200, consumers: 20, failureRate: 0.05 };
    // Act
    const a = strip(simulate(TINY, STRATEGIES.reschedule, settings));
    const b = strip(simulate(TINY, STRATEGIES.reschedule, settings));
    const c = strip(simulate(TINY, STRATEGIES.reschedule, { ...settings, seed: 8 }));
    // Assess
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
  });

  it('real failures keep their retry budget across deferrals and still end in commits', () => {
    // Act: one call in five fails for real
    const r = simulate(TINY, STRATEGIES.reschedule, { ...TEN_JOBS, jobs: 50, failureRate: 0.2 });
    // Assess
    assert.equal(r.completed + r.deadLettered, 50);
    assert.ok(r.failedCalls > 0);
    assert.equal(r.lost, 0);
  });
});

/** 4 keys whose limits never bind: what paces the drain is the consumers. */
const UNBOUND: Scenario = {
  ...TINY,
  title: 'unbound: 4 keys x 1M RPM',
  keys: 4,
  limits: { requestsPerMinute: 1_000_000, tokensPerMinute: 1_000_000_000, requestsPerDay: 100_000_000 },
};

describe('simulate: the event source scales up as AWS documents, within the account concurrency', () => {
  it('starts 5 consumers and adds them at the scale-up rate until the account concurrency stops it', () => {
    // Prepare: 1,000 consumers asked, the account allows 600; a scale-up of 3,000 a minute (50 a second) keeps the run short
    const settings: SimSettings = {
      ...TEN_JOBS,
      jobs: 40_000,
      consumers: 1000,
      accountConcurrency: 600,
      eventSource: QUICK_SCALE_UP,
    };
    // Act
    const r = simulate(UNBOUND, STRATEGIES.reschedule, settings);
    // Assess: 600 at most, first reached when the scale-up allows 600: (600 - 5) / 50 per second = 11.9 s
    assert.equal(r.completed, 40_000);
    assert.deepEqual([r.fleet.configured, r.fleet.cap, r.fleet.peak], [1000, 600, 600]);
    assert.ok(r.fleet.peakAfterMs >= 11_900 && r.fleet.peakAfterMs < 14_000, `600 consumers after ${r.fleet.peakAfterMs} ms`);
  });

  it('a slower scale-up takes proportionally longer to reach the same fleet, and drains later', () => {
    // Prepare
    const base: SimSettings = { ...TEN_JOBS, jobs: 40_000, consumers: 200, accountConcurrency: 1000 };
    const fast = { ...base, eventSource: QUICK_SCALE_UP };
    const slow = { ...base, eventSource: { initialConcurrency: 5, scaleUpPerMinute: 600, scaleDownAfterMs: 60_000 } };
    // Act
    const [a, b] = [simulate(UNBOUND, STRATEGIES.reschedule, fast), simulate(UNBOUND, STRATEGIES.reschedule, slow)];
    // Assess: 195 more consumers at 50 and at 10 a second
    assert.equal(a.fleet.peak, 200);
    assert.equal(b.fleet.peak, 200);
    assert.ok(a.fleet.peakAfterMs >= 3_900 && a.fleet.peakAfterMs < 5_000, `fast: ${a.fleet.peakAfterMs} ms`);
    assert.ok(b.fleet.peakAfterMs >= 19_500 && b.fleet.peakAfterMs < 21_000, `slow: ${b.fleet.peakAfterMs} ms`);
    assert.ok(b.drainMs > a.drainMs, `drain ${b.drainMs} ms (slow) vs ${a.drainMs} ms (fast)`);
  });
});

describe('simulate: an owner’s bucket split into shards', () => {
  it('spreads the writes over the shards: each item’s peak well below one bucket’s, the drain within 5 % of one bucket’s', () => {
    // Prepare: one key at 6,000 a minute binding, 300 consumers (the scale-up quick), 20,000 jobs
    const bound: Scenario = {
      ...TINY,
      title: 'one key x 6,000 RPM',
      limits: { requestsPerMinute: 6000, tokensPerMinute: 1_000_000_000, requestsPerDay: 100_000_000 },
    };
    const settings: SimSettings = {
      ...TEN_JOBS,
      jobs: 20_000,
      consumers: 300,
      eventSource: QUICK_SCALE_UP,
    };
    // Act
    const [one, two] = [1, 2].map((bucketShards) => simulate(bound, STRATEGIES.admission, { ...settings, bucketShards }));
    // Assess
    const peak = (r: ReturnType<typeof simulate>) => Math.max(...Object.values(r.peakItemWritesPerSecond ?? {}));
    assert.deepEqual(Object.keys(two!.peakItemWritesPerSecond ?? {}).sort(), ['owner-1', 'owner-1#s1']);
    assert.ok(peak(two!) < 0.75 * peak(one!), `peaks: ${peak(two!)} per item with 2 shards, ${peak(one!)} with 1`);
    for (const r of [one!, two!]) {
      assert.equal(r.completed, 20_000);
      assert.equal(r.rateLimited, 0);
      assert.ok(r.callsPerCompletion < 1.01, `${r.callsPerCompletion} calls per completion`);
    }
    assert.ok(
      two!.drainMs <= 1.05 * one!.drainMs,
      `drain ${two!.drainOverBound.toFixed(3)}x the bound with 2 shards, ${one!.drainOverBound.toFixed(3)}x with 1`,
    );
  });
});

describe('simulate: tens of quota owners', () => {
  it("splits a scenario's quota over the owners: the same bound, a key and a bucket item per owner", () => {
    // Prepare
    const split = withOwners(SCENARIOS.day, 40);
    // Act
    const r = simulate(withOwners(UNBOUND, 40), STRATEGIES.admission, { ...TEN_JOBS, jobs: 4_000, consumers: 100 });
    // Assess: 40 keys with a tenth of the 4 keys' limits each; the bound unchanged; every owner's item written
    assert.equal(split.keys, 40);
    assert.deepEqual(split.limits, { requestsPerMinute: 1_000, tokensPerMinute: 1_000_000, requestsPerDay: 20_000 });
    assert.equal(quotaBoundMs(split, 1_000_000, 750_000_000), quotaBoundMs(SCENARIOS.day, 1_000_000, 750_000_000));
    assert.equal(withOwners(SCENARIOS.day, undefined), SCENARIOS.day);
    assert.throws(() => withOwners(SCENARIOS.day, 0), RangeError);
    assert.equal(r.completed, 4_000);
    assert.equal(Object.keys(r.peakItemWritesPerSecond ?? {}).length, 40);
  });

  it('settles grants on every key up to the most owners `--owners` takes (1,000)', () => {
    // Prepare: 1,000 keys (more than a byte numbers) of 3 requests a minute each, so 3,000 jobs spread over all of them
    const thousand: Scenario = { ...TINY, keys: 1_000, limits: { ...TINY.limits, requestsPerMinute: 3 } };
    // Act
    const r = simulate(thousand, STRATEGIES.admission, { ...TEN_JOBS, jobs: 3_000, consumers: 100 });
    // Assess: every job committed without a 429, grants taken and settled on every key
    assert.equal(r.completed, 3_000);
    assert.equal(r.lost, 0);
    assert.equal(r.rateLimited, 0);
    assert.equal(Object.keys(r.peakItemWritesPerSecond ?? {}).length, 1_000);
  });
});

describe('simulate: the lane limited while some owners are out', () => {
  it('claims the limit as the consumer does, and the run still ends with every job committed and no 429', () => {
    // Prepare: 2 keys with 1,000 calls a day each, 3,000 jobs from 23:50 UTC: the day runs out before midnight
    const daily: Scenario = {
      ...TINY,
      id: 'day',
      start: Date.parse('2026-03-02T23:50:00.000Z'),
      keys: 2,
      limits: { requestsPerMinute: 600, tokensPerMinute: 1_000_000_000, requestsPerDay: 1_000 },
    };
    const settings: SimSettings = {
      ...TEN_JOBS,
      jobs: 3_000,
      consumers: 50,
      eventSource: QUICK_SCALE_UP,
    };
    // Act
    const [limited, unlimited] = [true, false].map((laneLimit) => simulate(daily, STRATEGIES.admission, { ...settings, laneLimit }));
    // Assess: one owner seen spent before the other limits the lane, then both pause it until midnight
    assert.ok(limited!.laneLimits >= 1, `${limited!.laneLimits} limits`);
    assert.equal(unlimited!.laneLimits, 0);
    for (const r of [limited!, unlimited!]) {
      assert.equal(r.completed, 3_000);
      assert.equal(r.rateLimited, 0);
      assert.ok(r.lanePauses >= 1, `${r.lanePauses} pauses`);
    }
  });
});

/**
 * (c) on one key at `requestsPerMinute`, `jobs` jobs, 50 consumers of 10 records, with the lane limit and
 * without; both commit every job with no 429, and the limited one drains within 2 % of the other.
 */
function withAndWithoutLimit(requestsPerMinute: number, jobs: number): { limited: StrategyResult; unlimited: StrategyResult } {
  const scenario: Scenario = {
    ...TINY,
    title: `one key x ${requestsPerMinute} RPM`,
    limits: { requestsPerMinute, tokensPerMinute: 1_000_000_000, requestsPerDay: 100_000_000 },
  };
  const settings: SimSettings = { ...TEN_JOBS, jobs, consumers: 50, eventSource: QUICK_SCALE_UP };
  const [limited, unlimited] = [true, false].map((laneLimit) => simulate(scenario, STRATEGIES.admission, { ...settings, laneLimit })) as [
    StrategyResult,
    StrategyResult,
  ];
  for (const r of [limited, unlimited]) {
    assert.equal(r.completed, jobs);
    assert.equal(r.rateLimited, 0);
  }
  assert.ok(limited.drainMs <= 1.02 * unlimited.drainMs, `drain ${limited.drainOverBound}x limited, ${unlimited.drainOverBound}x not`);
  assert.ok(limited.laneLimits >= 1, `${limited.laneLimits} limits`);
  assert.equal(unlimited.laneLimits, 0);
  return { limited, unlimited };
}

describe('simulate: the lane limited while booked ahead', () => {
  it('limits a mapping that holds more records than the quota keeps busy once slots lie more than a minute ahead: fewer hops, the same drain', () => {
    // Prepare / act: 120 a minute, 6,000 jobs (50 minutes of quota)
    const { limited, unlimited } = withAndWithoutLimit(120, 6_000);
    // Assess
    assert.ok(limited.hops < 0.8 * unlimited.hops, `hops: ${limited.hops} limited, ${unlimited.hops} not`);
  });

  it('re-sends far fewer jobs of a backlog whose slots lie within 900 s, with the same drain', () => {
    // Prepare / act: 1,200 a minute, 20,000 jobs (17 minutes of quota: no hops either way)
    const { limited, unlimited } = withAndWithoutLimit(1_200, 20_000);
    // Assess
    assert.ok(limited.deferrals < 0.5 * unlimited.deferrals, `deferrals: ${limited.deferrals} limited, ${unlimited.deferrals} not`);
  });
});

describe('simulate: the token-bound scenario, its long jobs apart', () => {
  it('makes every tenth job 8 times as long and reports those jobs apart from the others, their deferrals adding up to the run’s', () => {
    // Prepare
    const settings: SimSettings = { ...TEN_JOBS, jobs: 20_000, consumers: 200 };
    // Act
    const r = simulate(SCENARIOS.tokens, STRATEGIES.admission, settings);
    const plain = simulate(SCENARIOS.minute, STRATEGIES.admission, { ...settings, jobs: 2_000 });
    // Assess: a tenth of the jobs long, every job committed, each class's deferrals summing to the run's re-sends
    const classes = r.sizeClasses!;
    assert.equal(classes.long.jobs, 2_000);
    assert.equal(classes.other.jobs, 18_000);
    assert.equal(classes.long.committed + classes.other.committed, r.completed);
    assert.equal(r.completed, 20_000);
    assert.equal(Math.round(classes.long.deferralsPerJob * classes.long.jobs + classes.other.deferralsPerJob * classes.other.jobs), r.deferrals);
    for (const c of [classes.long, classes.other]) {
      assert.ok(c.halfCommittedAfterMs! <= c.ninetyPercentCommittedAfterMs!, 'half before 90 %');
      assert.ok(c.ninetyPercentCommittedAfterMs! <= r.drainMs, '90 % within the drain');
    }
    assert.equal(plain.sizeClasses, null, 'a scenario without long jobs reports no classes');
  });

  it('draws the same jobs as the other scenarios, the last of every ten with its prompt 8 times as long', () => {
    // Act
    const plain = new JobTable(30, DEFAULT_SIM_SETTINGS, 0, false);
    const uneven = new JobTable(30, DEFAULT_SIM_SETTINGS, 0, false, SCENARIOS.tokens.longJobs);
    // Assess
    for (let j = 0; j < 30; j++) {
      const long = j % 10 === 9;
      assert.equal(uneven.isLong(j), long);
      assert.equal(uneven.inputTokens[j], plain.inputTokens[j]! * (long ? 8 : 1), `job ${j}`);
      assert.equal(uneven.outputTokens[j], plain.outputTokens[j], `job ${j}`);
    }
  });

  it('binds on tokens: its bound is the tokens per minute’s, longer than the same jobs’ at the minute scenario’s limits', () => {
    // Prepare: a million jobs of about 1,170 tokens on average (750, a tenth of them with an 8x prompt)
    const jobs = 1_000_000;
    const tokens = jobs * 1_170;
    // Act
    const tokensBound = quotaBoundMs(SCENARIOS.tokens, jobs, tokens);
    const requestsBound = quotaBoundMs({ ...SCENARIOS.tokens, limits: { ...SCENARIOS.tokens.limits, tokensPerMinute: 1e12 } }, jobs, tokens);
    // Assess: 4 keys x 3M tokens a minute over 1,170 tokens a call, about 10,256 calls a minute, less the first minute's burst
    assert.ok(tokensBound > 2 * requestsBound, `${tokensBound} ms against ${requestsBound} ms`);
    assert.ok(Math.abs(tokensBound / 60_000 - (jobs / ((4 * 3_000_000) / 1_170) - 1)) < 0.1, `${tokensBound / 60_000} min`);
  });
});
