/**
 * The whole local stack delivering over time (moved from the unit and contract tier, which runs on a
 * virtual clock): the poller, the consumer and the fake provider at a tiny rate limit commit every job
 * once while the 429s are deferred and come back through fauxqs's real delays, for several scaled
 * "minutes"; and, the provider stating its limit on its answers, without a 429. The consumer's delivery
 * guarantees one record at a time: `test/lib/lanes/queue/delivery.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadCorpus } from '../../../../workbench/corpus/index.js';
import { resolveLanes } from '../../../../lib/config/lanes.js';
import { startLocalStack } from '../../../../workbench/local-stack/stack.js';
import { queueCounts, submitTo, waitUntil, type TestLane } from '../../../helpers/consumer-harness.js';
import { testEndpoints, uniqueLaneResources } from '../../../helpers/endpoints.js';

/** 30 jobs through the local stack's `us` lane (config: 500 requests a minute) against a provider of 10 per 2 s "minute". */
async function thirtyJobs(statesLimits: boolean) {
  const lane = resolveLanes({
    us: {
      resources: uniqueLaneResources(),
      queue: { visibilityTimeoutSeconds: 30, receiveWaitTimeSeconds: 1 },
      consumer: { timeoutSeconds: 5, maximumConcurrency: 5 },
      backoff: { throttleBaseSeconds: 1, throttleCapSeconds: 10, failureBaseSeconds: 1, failureCapSeconds: 30 },
      provider: { timeoutMs: 2000 },
    },
  }).us!;
  const stack = await startLocalStack({
    lanes: { us: lane },
    endpoints: testEndpoints(),
    provider: { limits: { requestsPerMinute: 10 }, minuteMs: 2000, seed: 7, statesLimits },
  });
  try {
    const l = stack.lanes.us!;
    const t: TestLane = { ...l, destroy: () => undefined };
    const docs = loadCorpus().slice(0, 30);
    const submitted = await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#stack` })),
    );
    await waitUntil('30 commits', async () => (await l.results.count()) >= 30, 45_000, 250);
    await sleep(500); // let in-flight duplicates (if any) land
    await l.poller?.stop();
    return {
      lane,
      submitted,
      results: await l.results.scanAll(),
      provider: stack.provider.stats(),
      metrics: stack.telemetry.totals.total,
      dlq: await queueCounts(t, 'dlq'),
      queue: await queueCounts(t),
    };
  } finally {
    await stack.stop();
  }
}

describe('consumer on the full local stack', () => {
  it('30 jobs against a provider of 10 requests per 2 s "minute" that states no limits: all committed once, 429s deferred, DLQ empty', async () => {
    // Prepare: the lane's config far above the provider's limit, which its answers do not state (admission
    // would keep to stated ones: admission.md); 30 jobs need at least three windows, so 429s are certain
    // Act
    const run = await thirtyJobs(false);
    // Assess
    assert.equal(run.results.length, 30);
    assert.deepEqual(new Set(run.results.map((r) => r.jobId)), new Set(run.submitted.map((s) => s.jobId)));
    assert.ok(run.provider.rateLimited.rpm > 0, `429s from the provider: ${JSON.stringify(run.provider.rateLimited)}`);
    assert.equal(run.metrics.Completed, 30, 'no double commit');
    assert.equal(run.metrics.RateLimited, run.provider.rateLimited.rpm, 'every 429 was seen as a throttle');
    assert.ok((run.metrics.Deferred ?? 0) > 0, 'the 429s were deferred');
    assert.equal(run.metrics.Failed, undefined, 'no 429 took the failure path');
    assert.deepEqual(run.dlq, { visible: 0, notVisible: 0, delayed: 0 });
    assert.deepEqual(run.queue, { visible: 0, notVisible: 0, delayed: 0 });
  });

  it('the same provider stating its limit on its answers: admission keeps to it from the first answer, and each answer is counted', async () => {
    // Act
    const run = await thirtyJobs(true);
    // Assess: every job committed once, and no 429 (the lane's first call probes the owner alone, and its
    // answer states the limit)
    assert.ok(run.lane.provider.limits.requestsPerMinute > 10, 'the config states more than the provider allows');
    assert.equal(run.results.length, 30);
    assert.equal(run.metrics.Completed, 30, 'no double commit');
    assert.equal(run.provider.rateLimited.rpm, 0, `429s from the provider: ${JSON.stringify(run.provider.rateLimited)}`);
    assert.equal(run.metrics.ProviderLimitsBelowConfig, run.metrics.ModelCalls, 'every answer stated less than the config');
    assert.deepEqual(run.dlq, { visible: 0, notVisible: 0, delayed: 0 });
    assert.deepEqual(run.queue, { visible: 0, notVisible: 0, delayed: 0 });
  });
});
