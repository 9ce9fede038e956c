/**
 * No thin booking (issue 40): one 429 early in a drain cools one key for a moment; the lane goes on
 * booking its calls one slot apart and commits at its full rate to the end, instead of spreading the
 * rest of its backlog too thin. The bench's lane (2 keys of 8 requests per 3 s "minute"), on the local stack.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExtractionRequest, ModelAdapter } from '../../../lib/providers/model.js';
import { benchLanes } from '../../../workbench/drivers/bench/strategies.js';
import { startLocalStack } from '../../../workbench/local-stack/stack.js';
import { englishDocuments, queueCounts, submitTo, throttle, waitUntil, type TestLane } from '../../helpers/consumer-harness.js';
import { testEndpoints, uniqueName } from '../../helpers/endpoints.js';

const MINUTE_MS = 3000;
const RPM = 8;
const JOBS = 140;

/**
 * `model`, answering the lane's `nth` call (counted in `calls`, shared by every consumer instance) with a
 * provider's rate-limit 429 (a 0.4 s wait stated), and noting when the others answered.
 */
function throttlingOnce(model: ModelAdapter, nth: number, answeredAt: number[], calls: { n: number }): ModelAdapter {
  return {
    provider: model.provider,
    ...(model.host ? { host: model.host } : {}),
    extract: async (request: ExtractionRequest) => {
      calls.n += 1;
      if (calls.n === nth) throw throttle({ kind: 'rate_limit', retryAfterMs: 400 });
      const response = await model.extract(request);
      answeredAt.push(Date.now());
      return response;
    },
  };
}

describe('admission: one early 429', () => {
  it('the lane keeps its full rate after it: every whole provider minute from the second answers at least 14 of 16 calls', async (t) => {
    // Prepare: the bench's us lane; its twelfth model call (about 1 s in) is answered with a 429
    const lane = benchLanes({ keys: 2, providerRpm: RPM, providerTpm: 1_000_000, minuteMs: MINUTE_MS }, uniqueName('thin')).us!;
    const answeredAt: number[] = [];
    // (one count for every consumer instance of the lane: each builds its own model)
    const calls = { n: 0 };
    const stack = await startLocalStack({
      lanes: { us: lane },
      endpoints: testEndpoints(),
      provider: { limits: { requestsPerMinute: RPM, tokensPerMinute: 1_000_000, requestsPerDay: 1_000_000 }, minuteMs: MINUTE_MS, seed: 7 },
      overrideDeps: (_lane, deps) => ({ ...deps, model: throttlingOnce(deps.model, 12, answeredAt, calls) }),
    });
    try {
      const l = stack.lanes.us!;
      const testLane: TestLane = { ...l, destroy: () => undefined };
      const corpus = englishDocuments(32);
      // Act: the corpus's documents over again, each job its own source
      await submitTo(
        testLane,
        Array.from({ length: JOBS }, (_, i) => ({ text: corpus[i % corpus.length]!.text, sourceId: `thin-${i}#${l.lane.resources.queueName}` })),
      );
      await waitUntil(`${JOBS} commits`, async () => (await l.results.count()) >= JOBS, 60_000, 250);

      // Assess: per whole provider minute after the first (the burst and the 429 in it) up to the last
      // whole one, the calls answered: 16 a minute at most (2 keys x 8), at least 14 (7-10 when booked thin)
      const first = Math.min(...answeredAt);
      const perMinute = new Map<number, number>();
      for (const at of answeredAt) perMinute.set(Math.floor((at - first) / MINUTE_MS), (perMinute.get(Math.floor((at - first) / MINUTE_MS)) ?? 0) + 1);
      const last = Math.floor((Math.max(...answeredAt) - first) / MINUTE_MS);
      const whole = [...perMinute.entries()].filter(([minute]) => minute >= 1 && minute < last).sort((a, b) => a[0] - b[0]);
      t.diagnostic(`calls answered per provider minute: ${JSON.stringify([...perMinute.entries()].sort((a, b) => a[0] - b[0]))}`);
      assert.ok(whole.length >= 3, `whole minutes after the first: ${JSON.stringify(whole)}`);
      for (const [minute, answered] of whole) assert.ok(answered >= 14, `minute ${minute}: ${answered} calls answered (${JSON.stringify(whole)})`);
      assert.equal(answeredAt.length, JOBS, 'one answered call per job (the 429 aside)');
      assert.equal(calls.n, JOBS + 1, 'one 429 in all');
      assert.equal(stack.provider.stats().rateLimited.rpm, 0, 'no 429 from the provider itself');
      assert.deepEqual(await queueCounts(testLane, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
    } finally {
      await stack.stop();
    }
  });
});
