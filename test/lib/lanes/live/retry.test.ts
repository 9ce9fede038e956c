/**
 * The live lane's in-request retry on a virtual clock: the handler (as the live function runs it) on
 * DynamoDB Local and fauxqs, a scripted model, and the lane's clock and sleep from `virtual-clock.ts`,
 * so a stated wait that fits the deadline is slept on that clock instead of in real time. The same
 * cases through the whole local stack, in real time: `test/e2e/lanes/live/live.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { englishDocuments, scriptedModel, throttle, trackedLanes } from '../../../helpers/consumer-harness.js';
import { liveContext, livePost, testLiveHandler } from '../../../helpers/live-harness.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';

const newLane = trackedLanes();

describe('live lane: in-request retries on the lane clock', () => {
  it('a 429 whose stated wait fits the deadline is waited out in the request and retried: committed, the wait on the clock', async () => {
    // Prepare: the first call answers 429 "retry in 2 s"; the request's deadline is 8 s
    const t = await newLane();
    const clock = virtualClock();
    const model = scriptedModel((call) => (call.callNo === 1 ? throttle({ kind: 'rate_limit', retryAfterMs: 2_000 }) : undefined), { now: clock.nowMs });
    const { handler, sink } = testLiveHandler(t, { model, clock });
    const [doc] = englishDocuments(1);
    const context = liveContext(t);

    // Act
    const response = await handler(livePost({ text: doc!.text, sourceId: `${doc!.sourceId}#live-retry`, deadlineMs: 8_000 }), context);

    // Assess: committed after one retry, the stated wait slept on the lane's clock, the second call 2 s after the first
    const body = JSON.parse(String(response.body)) as { status: string; attempts: number; jobId: string };
    assert.equal(response.statusCode, 200, String(response.body));
    assert.equal(body.status, 'committed');
    assert.equal(body.attempts, 2, 'one 429, one in-request retry');
    assert.equal(clock.slept.length, 1);
    assert.ok(clock.slept[0]! > 1_500 && clock.slept[0]! <= 2_000, `slept ${clock.slept[0]} ms: the stated wait, less the time since the 429`);
    const [first, second] = model.calls;
    assert.ok(second!.at - first!.at >= 2_000, `the retry ${second!.at - first!.at} ms after the first call`);
    assert.equal(sink.totals.total.LiveInRequestRetries, 1);
    assert.equal((await t.results.scanAll()).filter((r) => r.jobId === body.jobId).length, 1, 'committed once');
  });
});
