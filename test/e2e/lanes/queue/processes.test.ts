/**
 * Two consumer processes per lane on the local stack (`npm run bench --
 * --scenario two-consumers`): each its own poller, AWS clients, admission store and handler instances,
 * sharing the lane's queue, keys and tables. Every job is committed once, both processes take part,
 * the lane's concurrency is split between them, and a lane pause stops both. A whole local stack over
 * real time (pollers long-polling fauxqs, a provider's latency): the e2e tier.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveLanes } from '../../../../lib/config/lanes.js';
import { startLocalStack } from '../../../../workbench/local-stack/stack.js';
import { englishDocuments, submitTo, waitUntil } from '../../../helpers/consumer-harness.js';
import { testEndpoints, uniqueLaneResources } from '../../../helpers/endpoints.js';

describe('local stack: two consumer processes per lane', () => {
  it('commits every job once with both processes taking part; a lane pause stops both', async () => {
    // Prepare: the lane's concurrency of 4 split two each
    const lane = resolveLanes({
      us: {
        resources: uniqueLaneResources(),
        queue: { visibilityTimeoutSeconds: 12, receiveWaitTimeSeconds: 1, batchSize: 1 },
        consumer: { timeoutSeconds: 2, maximumConcurrency: 4 },
        provider: { timeoutMs: 1000 },
      },
    }).us!;
    const stack = await startLocalStack({ lanes: { us: lane }, endpoints: testEndpoints(), consumerProcesses: 2, provider: { latencyMs: 100 } });
    try {
      const t = { ...stack.lanes.us!, destroy: () => undefined };
      const docs = englishDocuments(12);
      // Act
      await submitTo(
        t,
        docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#two-processes` })),
      );
      await waitUntil('12 jobs committed', async () => (await t.results.count()) >= 12, 60_000, 250);
      // Assess
      const pollers = stack.lanes.us!.pollers;
      assert.equal(pollers.length, 2);
      const records = pollers.map((p) => p.stats.records);
      assert.ok(
        records.every((n) => n > 0),
        `both processes received records: ${records.join(', ')}`,
      );
      assert.ok(
        pollers.every((p) => p.stats.maxInFlightObserved <= 2),
        'the lane concurrency of 4 is split two each',
      );
      assert.equal(await t.results.count(), 12, 'each job committed once');
      assert.equal(stack.telemetry.totals.total.Completed, 12);
      // Act: a lane pause, then an immediate resume
      await stack.lanes.us!.pause!.pause(new Date(Date.now() + 60_000), 'quota_exhausted');
      const pausedBoth = pollers.every((p) => p.state === 'paused');
      await stack.lanes.us!.pause!.resume();
      // Assess
      assert.ok(pausedBoth, 'a lane pause pauses every process');
      assert.ok(pollers.every((p) => p.state === 'running'));
    } finally {
      await stack.stop();
    }
  });
});
