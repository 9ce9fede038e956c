/**
 * Tenants apart in the live lane: a job belongs to its caller's IAM principal (a role's sessions are one
 * tenant); `GET /v1/extractions/{jobId}` answers it to that tenant and to the lane's lane-wide readers,
 * and to anyone else exactly as a job never seen (404, the same body). Two tenants' identical documents
 * are two jobs with two results: neither is answered the other's. The handler as the live function runs
 * it, on DynamoDB Local and fauxqs, a scripted model, a virtual clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { tenantOfPrincipal } from '../../../../lib/contract/job.js';
import { englishDocuments, scriptedModel, trackedLanes, type TestLane } from '../../../helpers/consumer-harness.js';
import { liveContext, liveGet, livePost, TEST_PRINCIPAL, testLiveHandler } from '../../../helpers/live-harness.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';

const newLane = trackedLanes();
const SAME_ROLE_OTHER_SESSION = 'arn:aws:sts::000000000000:assumed-role/service-a/session-2';
const OTHER_TENANT = 'arn:aws:sts::000000000000:assumed-role/service-b/session-1';
const LANE_READER = 'arn:aws:iam::000000000000:role/ops/ratelane-readers';

/** Status and JSON body of a response. */
function answerOf(response: APIGatewayProxyStructuredResultV2): { status: number; body: Record<string, unknown> } {
  return { status: response.statusCode ?? 0, body: JSON.parse(String(response.body)) as Record<string, unknown> };
}

/** A live handler of `t`'s lane and a caller: `call(event)` answers as the function would. */
function liveLane(t: TestLane, model = scriptedModel()) {
  const { handler } = testLiveHandler(t, { model, clock: virtualClock() });
  return { model, call: async (event: Parameters<typeof handler>[0]) => answerOf(await handler(event, liveContext(t))) };
}

describe('live lane: tenants apart', () => {
  it('a job is read by its tenant (any session of its role) and a lane-wide reader; to another tenant it is unknown, the same 404 as a job never seen', async () => {
    // Prepare: a job committed by service-a
    const t = await newLane({ live: { readers: [LANE_READER] } });
    const { call } = liveLane(t);
    const [doc] = englishDocuments(1);
    const posted = await call(livePost({ text: doc!.text, sourceId: `${doc!.sourceId}#tenants` }));
    assert.equal(posted.status, 200, JSON.stringify(posted.body));
    const jobId = String(posted.body.jobId);

    // Act
    const own = await call(liveGet(jobId, { principal: SAME_ROLE_OTHER_SESSION }));
    const reader = await call(liveGet(jobId, { principal: 'arn:aws:sts::000000000000:assumed-role/ratelane-readers/ops-session' }));
    const other = await call(liveGet(jobId, { principal: OTHER_TENANT }));
    const neverSeen = await call(liveGet('job-never-seen', { principal: OTHER_TENANT }));

    // Assess
    assert.deepEqual([own.status, own.body.status], [200, 'committed']);
    assert.deepEqual([reader.status, reader.body.status], [200, 'committed']);
    assert.equal(other.status, 404);
    assert.deepEqual(other.body, { ...neverSeen.body, jobId }, 'the same body as a job never seen');
    assert.equal(JSON.stringify(other.body).includes('invoice'), false, 'nothing of the result');
    const claim = await t.ledger.claimOf(jobId);
    const caller = tenantOfPrincipal(TEST_PRINCIPAL);
    assert.deepEqual([claim?.tenant, claim?.submittedBy], [caller, caller], 'the job records its tenant and who submitted it');
  });

  it("two tenants' identical documents are two jobs with two results: neither is answered the other's", async () => {
    // Prepare
    const t = await newLane();
    const { call, model } = liveLane(t);
    const [doc] = englishDocuments(1);
    const body = { text: doc!.text, sourceId: `${doc!.sourceId}#same-document` };

    // Act
    const a = await call(livePost(body));
    const b = await call(livePost(body, { principal: OTHER_TENANT }));
    const aAgain = await call(livePost(body, { principal: SAME_ROLE_OTHER_SESSION }));

    // Assess: b made its own call; a's tenant (another session) is answered a's result
    assert.deepEqual([a.status, b.status, aAgain.status], [200, 200, 200]);
    assert.equal(model.calls.length, 2, 'one call per tenant');
    assert.notEqual(b.body.jobId, a.body.jobId);
    assert.equal(b.body.duplicate, undefined, "b is not a's duplicate");
    assert.deepEqual([aAgain.body.jobId, aAgain.body.duplicate], [a.body.jobId, true]);
    assert.equal((await t.results.scanAll()).length, 2);
  });

  it('a request that names no IAM principal is refused (403) before anything is read or called', async () => {
    // Prepare
    const t = await newLane();
    const { call, model } = liveLane(t);

    // Act
    const posted = await call(livePost({ text: 'Invoice INV-1', sourceId: 'no-principal' }, { principal: null }));
    const read = await call(liveGet('any-job', { principal: null }));

    // Assess
    assert.deepEqual([posted.status, posted.body.code], [403, 'no_principal']);
    assert.deepEqual([read.status, read.body.code], [403, 'no_principal']);
    assert.equal(model.calls.length, 0);
  });

  it("a principal's tenant: a role's sessions and paths are the role; users, root and federated users as they are", () => {
    assert.equal(tenantOfPrincipal(TEST_PRINCIPAL), 'arn:aws:iam::000000000000:role/service-a');
    assert.equal(tenantOfPrincipal('arn:aws-us-gov:sts::123456789012:assumed-role/r/s'), 'arn:aws-us-gov:iam::123456789012:role/r');
    assert.equal(tenantOfPrincipal('arn:aws:iam::123456789012:role/team/x/r'), 'arn:aws:iam::123456789012:role/r');
    for (const arn of ['arn:aws:iam::123456789012:user/u', 'arn:aws:iam::123456789012:root', 'arn:aws:sts::123456789012:federated-user/f']) {
      assert.equal(tenantOfPrincipal(arn), arn);
    }
  });
});
