/**
 * `ratelane consume`: consumers as OS processes of their own against services already running (the
 * run's DynamoDB Local and fauxqs, a fake provider), sharing one lane's keys through its rate-state
 * table, held until told to poll (`--hold`), each stopped by SIGTERM with nothing lost.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { resolveLanes } from '../../../lib/config/lanes.js';
import { spawnConsumer } from '../../../workbench/drivers/consume/processes.js';
import { writeLanesFile } from '../../../workbench/drivers/lanes.js';
import { startLocalStack } from '../../../workbench/local-stack/stack.js';
import { englishDocuments, queueCounts, submitTo, waitUntil, type TestLane } from '../../helpers/consumer-harness.js';
import { testEndpoints, uniqueLaneResources } from '../../helpers/endpoints.js';

describe('ratelane consume', () => {
  it('two consumer processes share a lane: held until started, every job committed once, one stopped by SIGTERM mid-run, nothing lost', async () => {
    // Prepare: a lane of two keys (two quota owners) at 12 requests per 2 s minute each, 30 jobs queued;
    // the stack provisions the lane and runs the fake provider, no consumer of its own
    const minuteMs = 2000;
    const lane = resolveLanes({
      us: {
        resources: uniqueLaneResources(),
        queue: { visibilityTimeoutSeconds: 30, receiveWaitTimeSeconds: 1, batchSize: 2 },
        consumer: { timeoutSeconds: 5, maximumConcurrency: 4 },
        backoff: { throttleBaseSeconds: 1, throttleCapSeconds: 3, failureBaseSeconds: 1, failureCapSeconds: 10 },
        provider: {
          keys: [
            { id: 'key-1', quotaOwner: 'us-owner-1' },
            { id: 'key-2', quotaOwner: 'us-owner-2' },
          ],
          limits: { requestsPerMinute: 12, tokensPerMinute: 10_000_000, requestsPerDay: 100_000 },
          timeoutMs: 2000,
        },
        live: { reserveShare: 0 },
      },
    }).us!;
    const stack = await startLocalStack({
      lanes: { us: lane },
      endpoints: testEndpoints(),
      consumers: false,
      provider: { limits: { requestsPerMinute: 12, tokensPerMinute: 10_000_000, requestsPerDay: 100_000 }, minuteMs, seed: 5 },
    });
    const l = stack.lanes.us!;
    const lanesFile = join('.cache', 'test-consume', `${lane.resources.queueName}.json`);
    writeLanesFile(lanesFile, { us: l.lane }); // the lane as provisioned, its provider the fake one
    const t: TestLane = { ...l, destroy: () => undefined };
    const started = [0, 1].map(() => spawnConsumer({ lanesFile, lane: 'us', endpoints: stack.endpoints, minuteMs, concurrency: 2, hold: true }));
    try {
      await submitTo(
        t,
        englishDocuments(30).map((d) => ({ text: d.text, sourceId: `${d.sourceId}#consume-${lane.resources.queueName}` })),
      );
      await Promise.all(started.map((p) => p.ready));
      // Held (--hold): ready, and nothing received until told
      await sleep(700);
      const whileHeld = await queueCounts(t);

      // Act: both told to poll; SIGTERM the first once 8 jobs are committed; the second finishes the lane, then is stopped too
      for (const p of started) p.start();
      await waitUntil('8 commits', async () => (await l.results.count()) >= 8, 30_000, 100);
      const first = await started[0]!.stop();
      await waitUntil('30 commits', async () => (await l.results.count()) >= 30, 60_000, 200);
      const second = await started[1]!.stop();

      // Assess: both stopped as asked, each with its summary; every job committed once, with one model
      // call each (a stopped consumer finished what it held); nothing left in the queue or its DLQ
      assert.deepEqual(whileHeld, { visible: 30, notVisible: 0, delayed: 0 });
      assert.equal(first.code, 0);
      assert.equal(second.code, 0);
      assert.ok(first.summary && second.summary, 'each printed its summary');
      assert.ok(first.summary.records > 0 && second.summary.records > 0, `both consumed: ${first.summary.records} and ${second.summary.records} records`);
      assert.equal(first.summary.committed + second.summary.committed, 30);
      assert.equal(await l.results.count(), 30);
      assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
      assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
      assert.equal(stack.provider.stats().successes, 30, 'one answered call per job');
      assert.ok(first.summary.takes > 0 && second.summary.takes > 0 && Number.isInteger(first.summary.conditionFailures));
    } finally {
      await Promise.all(started.map((p) => p.stop()));
      await stack.stop();
    }
  });
});
