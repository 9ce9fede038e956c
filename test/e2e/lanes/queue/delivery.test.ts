/**
 * The whole local stack delivering over time (moved from the unit and contract tier, which runs on a
 * virtual clock): the poller, the consumer and the fake provider at a tiny rate limit commit every job
 * once while the 429s are deferred and come back through fauxqs's real delays, for several scaled
 * "minutes". The consumer's delivery guarantees one record at a time: `test/lib/lanes/queue/delivery.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadCorpus } from '../../../../workbench/corpus/index.js';
import { resolveLanes } from '../../../../lib/config/lanes.js';
import { startLocalStack } from '../../../../workbench/local-stack/stack.js';
import { queueCounts, submitTo, waitUntil, type TestLane } from '../../../helpers/consumer-harness.js';
import { testEndpoints, uniqueLaneResources } from '../../../helpers/endpoints.js';

describe('consumer on the full local stack', () => {
  it('30 jobs against a provider of 10 requests per 2 s "minute": all committed once, 429s deferred, DLQ empty', async () => {
    // Prepare: one lane (us) with scaled timings; the fake provider with one key at a tiny rpm
    // (30 jobs need at least three windows, so 429s are certain)
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
      provider: { limits: { requestsPerMinute: 10 }, minuteMs: 2000, seed: 7 },
    });
    try {
      const l = stack.lanes.us!;
      const t: TestLane = { ...l, destroy: () => undefined };
      const docs = loadCorpus().slice(0, 30);

      // Act
      const submitted = await submitTo(
        t,
        docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#stack` })),
      );
      await waitUntil('30 commits', async () => (await l.results.count()) >= 30, 45_000, 250);
      await sleep(500); // let in-flight duplicates (if any) land
      await l.poller?.stop();

      // Assess
      const results = await l.results.scanAll();
      assert.equal(results.length, 30);
      assert.deepEqual(new Set(results.map((r) => r.jobId)), new Set(submitted.map((s) => s.jobId)));
      const stats = stack.provider.stats();
      assert.ok(stats.rateLimited.rpm > 0, `429s from the provider: ${JSON.stringify(stats.rateLimited)}`);
      const m = stack.telemetry.totals.total;
      assert.equal(m.Completed, 30, 'no double commit');
      assert.equal(m.RateLimited, stats.rateLimited.rpm, 'every 429 was seen as a throttle');
      assert.ok((m.Deferred ?? 0) > 0, 'the 429s were deferred');
      assert.equal(m.Failed, undefined, 'no 429 took the failure path');
      assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
      assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    } finally {
      await stack.stop();
    }
  });
});
