/**
 * Sharing a binding quota between flows (`bucket/flows.ts`): one bucket, jobs that come back when a
 * denial says and start when a grant says, in virtual time. A backlog of one flow does not hold back a
 * later flow's jobs beyond its weighted share, the backlog still drains as fast as the quota allows,
 * and without flows the later jobs wait behind the whole backlog (what the rule changes).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_FLOWS, flowShare, flowStanding } from '../../../../lib/admission/bucket/flows.js';
import { takeFromBucket } from '../../../../lib/admission/bucket/token-bucket.js';
import type { BucketLimits, BucketState, Flow } from '../../../../lib/admission/model/bucket.js';

/** One request a second, a minute's burst; tokens never bind. */
const LIMITS: BucketLimits = { requestsPerWindow: 60, tokensPerWindow: 1e9, windowMs: 60_000, requestsPerDay: 1e9, dayMs: 86_400_000 };
const BOOK_WITHIN_MS = 2_000;

interface Job {
  flow: Flow | undefined;
  /** When it arrives at admission (submitted, or back from a deferral). */
  at: number;
  attempts: number;
  startedAt?: number;
}

/**
 * Runs `jobs` against one bucket: each arrival takes (reserving when denied) and comes back at its
 * denial's `retryAt`, as a deferred SQS message does. Returns every job's start.
 */
function drain(jobs: Job[]): Job[] {
  let state: BucketState | undefined;
  const waiting = [...jobs];
  while (waiting.length > 0) {
    waiting.sort((a, b) => a.at - b.at);
    const job = waiting.shift()!;
    job.attempts += 1;
    const verdict = takeFromBucket(state, LIMITS, { requests: 1, tokens: 1 }, job.at, { reserve: true, bookWithinMs: BOOK_WITHIN_MS, flow: job.flow });
    state = verdict.next;
    if (verdict.admitted) job.startedAt = verdict.startAt;
    else {
      job.at = verdict.retryAt;
      waiting.push(job);
    }
  }
  return jobs;
}

const backlogAndLater = (flows: { backlog: Flow | undefined; later: Flow | undefined }, laterAt: number, backlog = 600, later = 30): Job[] => [
  ...Array.from({ length: backlog }, () => ({ flow: flows.backlog, at: 0, attempts: 0 })),
  ...Array.from({ length: later }, () => ({ flow: flows.later, at: laterAt, attempts: 0 })),
];

const lastStart = (jobs: Job[]): number => Math.max(...jobs.map((j) => j.startedAt!));

describe('admission: flows share a binding quota', () => {
  it('gives a later tenant at least its fair share while a backlog holds the quota, and the backlog drains as fast as alone', () => {
    // Prepare: tenant A's 600 jobs at 0, tenant B's 30 at 120 s, equal weights, 1 request/s (the quota binds throughout)
    const A = { id: 'bulk:a', weight: 1 };
    const B = { id: 'bulk:b', weight: 1 };
    // Act
    const jobs = drain(backlogAndLater({ backlog: A, later: B }, 120_000));
    // Assess: B's 30 jobs need 60 s at half the rate; every start within the quota (a minute's burst, then 1/s)
    const bJobs = jobs.filter((j) => j.flow === B);
    const bTook = lastStart(bJobs) - 120_000;
    assert.ok(bTook <= 1.2 * 60_000, `B's last start ${bTook} ms after it came, its fair share needs 60 000 ms`);
    const all = jobs.map((j) => j.startedAt!).sort((a, b) => a - b);
    const bound = (630 - 60) * 1000;
    assert.ok(lastStart(jobs) <= bound * 1.01, `drained in ${lastStart(jobs)} ms, the quota allows ${bound}`);
    for (const [i, t] of all.entries()) assert.ok(t >= (i + 1 - 60) * 1000 - 1, `start ${i + 1} at ${t} ms is within the quota`);
    const extra = jobs.reduce((n, j) => n + j.attempts, 0) - 2 * jobs.length;
    assert.ok(extra <= 60, `${extra} attempts beyond one deferral each (about B's jobs' worth of A's stepped aside)`);
  });

  it('without flows the later jobs wait behind the whole backlog', () => {
    // Prepare: the same jobs, no flow named
    // Act
    const jobs = drain(backlogAndLater({ backlog: undefined, later: undefined }, 120_000));
    // Assess: the later jobs start only after the backlog
    const later = jobs.slice(600);
    assert.ok(lastStart(later) - 120_000 > 400_000, `the later jobs' last start ${lastStart(later) - 120_000} ms after they came`);
  });

  it('starts urgent jobs first by their class weight, and bulk keeps its share', () => {
    // Prepare: 600 bulk jobs at 0, 30 urgent at 120 s; urgent weight 9, bulk 1
    const bulk = { id: 'bulk', weight: 1 };
    const urgent = { id: 'urgent', weight: 9 };
    // Act
    const jobs = drain(backlogAndLater({ backlog: bulk, later: urgent }, 120_000));
    // Assess: the urgent jobs need 33 s at 90 % of the rate; bulk starts at least 10 % meanwhile
    const urgentJobs = jobs.filter((j) => j.flow === urgent);
    const took = lastStart(urgentJobs) - 120_000;
    assert.ok(took <= 1.2 * (30 / 0.9) * 1000, `urgent's last start ${took} ms after they came`);
    const bulkMeanwhile = jobs.filter((j) => j.flow === bulk && j.startedAt! > 120_000 && j.startedAt! <= 120_000 + took).length;
    assert.ok(bulkMeanwhile >= 0.1 * (took / 1000) - 2, `${bulkMeanwhile} bulk jobs started in the ${took} ms urgent ones took`);
  });

  it('starts urgent jobs first also where the backlog only books (its jobs come as fast as the quota serves them)', () => {
    // Prepare: a minute's burst of bulk jobs, then one a second (a mapping that holds what admission can
    // start: the bucket stays empty, each call takes or books its slot); 30 urgent jobs at 120 s
    const bulk = { id: 'bulk', weight: 1 };
    const urgent = { id: 'urgent', weight: 9 };
    const jobs: Job[] = [
      ...Array.from({ length: 60 }, () => ({ flow: bulk, at: 0, attempts: 0 })),
      ...Array.from({ length: 300 }, (_, i) => ({ flow: bulk, at: (i + 1) * 1000, attempts: 0 })),
      ...Array.from({ length: 30 }, () => ({ flow: urgent, at: 120_000, attempts: 0 })),
    ];
    // Act
    drain(jobs);
    // Assess: the urgent jobs start within their 90 % share's time
    const took = lastStart(jobs.filter((j) => j.flow === urgent)) - 120_000;
    assert.ok(took <= 1.2 * (30 / 0.9) * 1000, `urgent's last start ${took} ms after they came`);
  });

  it('keeps at most MAX_FLOWS timelines: a further flow queues on the shared one', () => {
    // Prepare: a bucket with MAX_FLOWS flows promised slots until 10 s
    const flows = Object.fromEntries(Array.from({ length: MAX_FLOWS }, (_, i) => [`bulk:${i}`, { until: 10_000, vt: 0, weight: 1 }]));
    const state = { flows, reservedUntil: 20_000 };
    // Act
    const kept = flowStanding(state, { id: 'bulk:0', weight: 1 }, 0);
    const extra = flowStanding(state, { id: 'bulk:new', weight: 1 }, 0);
    // Assess
    assert.equal(kept.kept, true);
    assert.equal(extra.kept, false);
    assert.equal(extra.until, 20_000, 'the shared timeline');
    assert.equal(flowShare(state, { id: 'bulk:0', weight: 1 }, 0), 1 / MAX_FLOWS);
    assert.equal(flowShare(state, { id: 'bulk:0', weight: 1 }, 10_000), 1, 'alone past the others');
  });
});
