/**
 * The producer client (`ratelane/client`) against DynamoDB Local and fauxqs: a document submitted with
 * it is stored and enqueued as the CLI's would be, the real consumer commits it, and `wait` returns the
 * committed object; `wait` ends at its deadline with the job's last state; the client's own errors
 * carry codes.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { RatelaneClient, RatelaneClientError } from '../../../lib/client/client.js';
import { tenantOfPrincipal } from '../../../lib/contract/job.js';
import { localCallerArn, startLiveHttpServer } from '../../../workbench/local-stack/lambda/http-adapter.js';
import { testLiveHandler } from '../../helpers/live-harness.js';
import { englishDocuments, invoke, receive, scriptedModel, testConsumer, trackedLanes } from '../../helpers/consumer-harness.js';
import { testEndpoints } from '../../helpers/endpoints.js';
import { virtualClock } from '../../helpers/virtual-clock.js';

const newLane = trackedLanes();

describe('RatelaneClient', () => {
  it('submits a document that the consumer commits; wait returns the committed object, and status the same', async () => {
    // Prepare
    const t = await newLane();
    const client = new RatelaneClient({ lanes: { us: t.lane }, endpoints: testEndpoints() });
    const [doc] = englishDocuments(1);
    const { handler } = testConsumer(t, scriptedModel());
    try {
      // Act: submit, then (as the event source mapping would) the consumer takes the message
      const submitted = await client.submit({ region: 'us', text: doc!.text, sourceId: `${doc!.sourceId}#client` });
      const sent = submitted.results[0]!;
      const before = await client.status(sent.jobId);
      await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 2 }));
      const settled = await client.wait(sent.jobId, { timeoutMs: 5_000, pollMs: 50 });
      // Assess
      assert.equal(sent.status, 'sent');
      assert.equal(before.state, 'unknown', 'queued, not yet received');
      assert.equal(settled.state, 'committed');
      assert.ok(settled.state === 'committed' && settled.result.invoiceNumber !== undefined, 'the validated extraction');
      assert.equal((await t.results.get(sent.idempotencyKey))?.jobId, sent.jobId);
      assert.equal((await client.status(sent.jobId, { lane: 'us' })).state, 'committed');
    } finally {
      client.close();
    }
  });

  it('wait ends at its deadline with the job state it last read, without waiting in real time', async () => {
    // Prepare
    const t = await newLane();
    const clock = virtualClock({ at: Date.parse('2026-12-05T08:00:00Z') });
    const client = new RatelaneClient({ lanes: { us: t.lane }, endpoints: testEndpoints(), now: clock.now, sleep: clock.sleep });
    const started = clock.nowMs();
    try {
      // Act
      const error = await client.wait('never-submitted', { timeoutMs: 30_000 }).catch((e: unknown) => e);
      // Assess
      assert.ok(error instanceof RatelaneClientError);
      assert.equal(error.code, 'wait_timeout');
      assert.equal(error.retryable, true);
      assert.equal(error.lastStatus?.state, 'unknown');
      assert.equal(clock.nowMs() - started, 30_000, 'the whole deadline passed, on the virtual clock');
    } finally {
      client.close();
    }
  });

  it("reads through the lane's live API when given its URL, SigV4-signed: its own job committed, another tenant's as never seen", async () => {
    // Prepare: two committed jobs, one of the local API's fixed caller (the client's principal there), one of another tenant
    const t = await newLane();
    const [mine, theirs] = englishDocuments(2);
    const writer = new RatelaneClient({ lanes: { us: t.lane }, endpoints: testEndpoints() });
    const submitted = await writer.submit([
      { region: 'us', text: mine!.text, sourceId: `${mine!.sourceId}#api-mine`, tenant: tenantOfPrincipal(localCallerArn()) },
      { region: 'us', text: theirs!.text, sourceId: `${theirs!.sourceId}#api-theirs`, tenant: 'arn:aws:iam::000000000000:role/someone-else' },
    ]);
    writer.close();
    const { handler } = testConsumer(t, scriptedModel());
    await invoke(t, handler, await receive(t, { max: 2, waitSeconds: 2 }));
    const live = testLiveHandler(t, { model: scriptedModel(), clock: virtualClock() });
    const api = await startLiveHttpServer({ handler: live.handler, timeoutMs: 5_000 });
    const client = new RatelaneClient({ lanes: { us: t.lane }, endpoints: testEndpoints(), liveApis: { us: api.url } });
    const closed = new RatelaneClient({ lanes: { us: t.lane }, endpoints: testEndpoints(), liveApis: { us: 'http://127.0.0.1:9/' } });
    // What API Gateway would be sent: a server that keeps the request's headers
    let seen: IncomingHttpHeaders = {};
    let seenPath = '';
    const recorder = createServer((request, response) => {
      seen = request.headers;
      seenPath = request.url ?? '';
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'unknown', code: 'unknown_job', jobId: 'x', history: {} }));
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    const recorded = new RatelaneClient({
      lanes: { us: t.lane },
      endpoints: testEndpoints(),
      liveApis: { us: `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/prod` },
    });
    try {
      // Act
      const own = await client.wait(submitted.results[0]!.jobId, { timeoutMs: 5_000, pollMs: 50 });
      const other = await client.status(submitted.results[1]!.jobId);
      const down = await closed.status(submitted.results[0]!.jobId).catch((e: unknown) => e);
      const unseen = await recorded.status('job 1/2');
      // Assess
      assert.equal(own.state, 'committed');
      assert.ok(own.state === 'committed' && own.result.invoiceNumber !== undefined);
      assert.equal(other.state, 'unknown', "another tenant's job is one never seen");
      assert.equal(await t.results.count(), 2, 'both were committed');
      assert.ok(down instanceof RatelaneClientError && down.code === 'unavailable' && down.retryable);
      assert.equal(unseen.state, 'unknown');
      assert.equal(seenPath, '/prod/v1/extractions/job%201%2F2', "under the API's stage, the id one path segment");
      assert.match(
        String(seen.authorization),
        /^AWS4-HMAC-SHA256 Credential=ratelanelocal\/\d{8}\/us-east-1\/execute-api\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
      );
      assert.match(String(seen['x-amz-date']), /^\d{8}T\d{6}Z$/);
    } finally {
      client.close();
      closed.close();
      recorded.close();
      await api.stop();
      await new Promise((resolve) => recorder.close(resolve));
    }
  });

  it("refuses what it cannot address: AWS without the lanes' account, a lane it does not have, no lanes", () => {
    // Act / Assess
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (error) {
        return error instanceof RatelaneClientError ? error.code : String(error);
      }
      return 'no error';
    };
    assert.equal(
      code(() => new RatelaneClient({ lanes: [{ name: 'eu', region: 'eu-central-1' }] })),
      'account_required',
    );
    assert.equal(
      code(() => new RatelaneClient({ lanes: [] })),
      'no_lanes',
    );
    const client = new RatelaneClient({
      lanes: [
        { name: 'eu', region: 'eu-central-1' },
        { name: 'us', region: 'us-east-1' },
      ],
      account: '123456789012',
    });
    assert.equal(client.lanes.eu?.resources.bucketName.includes('123456789012'), true, "the buckets are the account's");
    return assert.rejects(client.status('job-1', { lane: 'apac' }), (e: unknown) => e instanceof RatelaneClientError && e.code === 'unknown_lane');
  });
});
