/**
 * The producer client (`ratelane/client`) against DynamoDB Local and fauxqs: a document submitted with
 * it is stored and enqueued as the CLI's would be, the real consumer commits it, and `wait` returns the
 * committed object; `wait` ends at its deadline with the job's last state; the client's own errors
 * carry codes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RatelaneClient, RatelaneClientError } from '../../../lib/client/client.js';
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
