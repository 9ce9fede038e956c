/**
 * The live lane's in-request retry on a virtual clock: the handler (as the live function runs it) on
 * DynamoDB Local and fauxqs, a scripted model, and the lane's clock and sleep from `virtual-clock.ts`,
 * so a stated wait that fits the deadline is slept on that clock instead of in real time. The same
 * cases through the whole local stack, in real time: `test/e2e/lanes/live/live.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { roundRobinKeys } from '../../../../lib/admission/keys/key-pool.js';
import { createLaneTelemetry } from '../../../../lib/extraction/deps.js';
import { createLiveDeps } from '../../../../lib/lanes/live/deps.js';
import { createLiveHandler } from '../../../../lib/lanes/live/handler.js';
import { LIVE_ROUTES } from '../../../../lib/platform/resources.js';
import { liveServiceName } from '../../../../lib/platform/telemetry.js';
import { createLambdaContext } from '../../../../workbench/local-stack/lambda/invocation.js';
import { redirectPowertoolsConsole } from '../../../../workbench/local-stack/lambda/telemetry.js';
import { CapturingSink, englishDocuments, scriptedModel, throttle, trackedLanes, type TestLane } from '../../../helpers/consumer-harness.js';
import { virtualClock, type VirtualClock } from '../../../helpers/virtual-clock.js';

const newLane = trackedLanes();

/** A live handler of `t`'s lane on `clock`, with the given model; its telemetry captured. */
function liveHandler(t: TestLane, clock: VirtualClock, model: ReturnType<typeof scriptedModel>) {
  const sink = new CapturingSink();
  const { logger, metrics } = createLaneTelemetry(t.lane, { serviceName: liveServiceName(t.lane) });
  redirectPowertoolsConsole(logger, sink.console());
  redirectPowertoolsConsole(metrics, sink.console());
  const deps = createLiveDeps(t.lane, t.clients, {
    queueUrl: t.queueUrl,
    results: t.results,
    ledger: t.ledger,
    model,
    keys: roundRobinKeys([{ id: 'key-1', quotaOwner: 'us-org', secret: 'sk-test-key-1' }]),
    logger,
    metrics,
    now: clock.now,
    sleep: clock.sleep,
  });
  return { handler: createLiveHandler(deps), sink };
}

/** `POST /v1/extractions` as API Gateway's HTTP API hands it over. */
function post(body: unknown): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: `POST ${LIVE_ROUTES.extractions}`,
    rawPath: LIVE_ROUTES.extractions,
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    requestContext: { http: { method: 'POST', path: LIVE_ROUTES.extractions }, requestId: 'req-retry-1' },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2;
}

describe('live lane: in-request retries on the lane clock', () => {
  it('a 429 whose stated wait fits the deadline is waited out in the request and retried: committed, the wait on the clock', async () => {
    // Prepare: the first call answers 429 "retry in 2 s"; the request's deadline is 8 s
    const t = await newLane();
    const clock = virtualClock();
    const model = scriptedModel((call) => (call.callNo === 1 ? throttle({ kind: 'rate_limit', retryAfterMs: 2_000 }) : undefined), { now: clock.nowMs });
    const { handler, sink } = liveHandler(t, clock, model);
    const [doc] = englishDocuments(1);
    const context = createLambdaContext({
      functionName: 'ratelane-us-live',
      awsRegion: t.lane.region,
      accountId: '000000000000',
      memoryLimitInMB: 512,
      deadline: Date.now() + 30_000,
      now: Date.now,
    });

    // Act
    const response = await handler(post({ text: doc!.text, sourceId: `${doc!.sourceId}#live-retry`, deadlineMs: 8_000 }), context);

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
