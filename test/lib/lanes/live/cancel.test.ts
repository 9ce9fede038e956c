/**
 * `POST /v1/extractions/{jobId}/cancel` through the handler as the live function runs it (DynamoDB Local and
 * fauxqs, a scripted model): the owner cancels a job the live lane handed to the queue (pending), `GET` then
 * answers `cancelled` (the queue's consumer stops such a job at its receive: test/lib/extraction/cancel.test.ts);
 * a second cancel says so; another
 * tenant is answered exactly as its `GET` (404) and a lane-wide reader is refused, nothing written; a
 * committed job is 409 and stays committed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { englishDocuments, scriptedModel, throttle, trackedLanes, type TestLane } from '../../../helpers/consumer-harness.js';
import { liveCancel, liveContext, liveGet, livePost, testLiveHandler } from '../../../helpers/live-harness.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';

const newLane = trackedLanes();
const OTHER_TENANT = 'arn:aws:sts::000000000000:assumed-role/service-b/session-1';
const LANE_READER = 'arn:aws:iam::000000000000:role/ops/ratelane-readers';
const LANE_READER_SESSION = 'arn:aws:sts::000000000000:assumed-role/ratelane-readers/ops-session';

function answerOf(response: APIGatewayProxyStructuredResultV2) {
  const raw = String(response.body);
  return { status: response.statusCode ?? 0, raw, body: JSON.parse(raw) as Record<string, unknown> };
}

/** A live handler of `t`'s lane whose model answers as `model` does. */
function liveLane(t: TestLane, model: ReturnType<typeof scriptedModel>) {
  const { handler } = testLiveHandler(t, { model, clock: virtualClock() });
  const context = liveContext(t);
  return async (event: Parameters<typeof handler>[0]) => answerOf(await handler(event, context));
}

describe('live API: cancelling a job', () => {
  it('the owner cancels a job handed to the queue: GET answers cancelled; another tenant and a reader change nothing', async () => {
    // Prepare: the provider's daily quota is out, so the live request hands its job to the queue (pending)
    const t = await newLane({ live: { readers: [LANE_READER] } });
    const call = liveLane(
      t,
      scriptedModel(() => throttle({ kind: 'quota_exhausted', resetAt: new Date(Date.now() + 3_600_000) })),
    );
    const [doc] = englishDocuments(1);
    const posted = await call(livePost({ text: doc!.text, sourceId: `${doc!.sourceId}#live-cancel`, deadlineMs: 8_000 }));
    assert.equal(posted.body.status, 'pending', posted.raw);
    const jobId = String(posted.body.jobId);

    // Act
    const byOther = await call(liveCancel(jobId, { principal: OTHER_TENANT }));
    const otherGet = await call(liveGet(jobId, { principal: OTHER_TENANT }));
    const byReader = await call(liveCancel(jobId, { principal: LANE_READER_SESSION }));
    const byOwner = await call(liveCancel(jobId));
    const again = await call(liveCancel(jobId));
    const read = await call(liveGet(jobId));

    // Assess
    assert.deepEqual([byOther.status, byOther.raw], [otherGet.status, otherGet.raw], "another tenant's cancel is answered as its GET");
    assert.equal(byOther.status, 404);
    assert.deepEqual([byReader.status, byReader.body.code], [403, 'not_owner']);
    assert.deepEqual([byOwner.status, byOwner.body.status, byOwner.body.jobId], [200, 'cancelled', jobId]);
    assert.match(String(byOwner.body.cancelledBy), /service-a/);
    assert.deepEqual([again.status, again.body.code, again.body.cancelledAt], [200, 'already_cancelled', byOwner.body.cancelledAt]);
    assert.deepEqual([read.status, read.body.status], [200, 'cancelled']);
  });

  it('a committed job is 409 committed and stays committed', async () => {
    // Prepare
    const t = await newLane();
    const call = liveLane(t, scriptedModel());
    const [doc] = englishDocuments(1);
    const posted = await call(livePost({ text: doc!.text, sourceId: `${doc!.sourceId}#live-cancel-committed` }));
    assert.equal(posted.status, 200, posted.raw);
    const jobId = String(posted.body.jobId);

    // Act
    const cancelled = await call(liveCancel(jobId));
    const read = await call(liveGet(jobId));

    // Assess
    assert.deepEqual([cancelled.status, cancelled.body.code, cancelled.body.committedBy], [409, 'committed', jobId]);
    assert.equal(read.body.status, 'committed');
  });
});
