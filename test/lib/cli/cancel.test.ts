/**
 * `ratelane cancel` and `RatelaneClient.cancel` on the run's DynamoDB Local and fauxqs, with the real producer
 * and consumer: a queued job cancelled (exit 0; the consumer then stops it, and `wait` settles on
 * `cancelled`), cancelled again (said so, exit 0), a committed job (exit 3, nothing changed), an unknown lane
 * and a missing job id (exit 2).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCancelCommand, CANCEL_EXIT } from '../../../lib/cli/cancel.js';
import { runCommand, type CommandIo } from '../../../lib/cli/command.js';
import { RatelaneClient } from '../../../lib/client/client.js';
import type { LaneSet } from '../../../lib/config/lanes.js';
import { englishDocuments, invoke, receive, scriptedModel, submitTo, testConsumer, trackedLanes } from '../../helpers/consumer-harness.js';
import { testEndpoints } from '../../helpers/endpoints.js';

const newLane = trackedLanes();

/** Runs `ratelane cancel …` with the test's endpoints; resolves the exit code and the output. */
async function cancel(lanes: LaneSet, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CommandIo = { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: {} };
  const code = await runCommand(createCancelCommand({ lanes, osUser: () => 'os-user' }), [...argv, '--endpoints', JSON.stringify(testEndpoints())], io);
  return { code, out, err };
}

describe('ratelane cancel', () => {
  it('cancels a queued job (the consumer then stops it and wait settles on cancelled), says so again, refuses a committed job', async () => {
    // Prepare: two jobs queued
    const t = await newLane();
    const [queued, other] = await submitTo(
      t,
      englishDocuments(2).map((d, i) => ({ text: d.text, sourceId: `${d.sourceId}#cli-cancel-${i}` })),
    );
    const lanes = { us: t.lane };
    const client = new RatelaneClient({ lanes, endpoints: testEndpoints() });
    try {
      // Act
      const first = await cancel(lanes, [queued!.jobId, '--lane', 'us', '--by', 'alice']);
      const again = await cancel(lanes, [queued!.jobId, '--lane', 'us', '--json']);
      const { handler, sink } = testConsumer(t, scriptedModel());
      await invoke(t, handler, await receive(t, { max: 2, waitSeconds: 1 }));
      const settled = await client.wait(queued!.jobId, { lane: 'us', timeoutMs: 5_000 });
      const committed = await cancel(lanes, [other!.jobId, '--lane', 'us', '--json']);
      const fromClient = await client.cancel({ lane: 'us', jobId: other!.jobId, by: 'service-team' });

      // Assess
      assert.equal(first.code, CANCEL_EXIT.ok);
      assert.match(first.out, new RegExp(`job ${queued!.jobId} in lane us cancelled by alice at .*not received yet: it is stopped when it is`));
      assert.equal(again.code, CANCEL_EXIT.ok);
      assert.deepEqual((({ ok, status, marker }) => [ok, status, marker.cancelledBy])(JSON.parse(again.out)), [true, 'already_cancelled', 'alice']);
      assert.equal(sink.totals.total.Cancelled, 1);
      assert.deepEqual([settled.state, settled.state === 'cancelled' && settled.cancelledBy], ['cancelled', 'alice']);
      assert.equal(committed.code, CANCEL_EXIT.committed);
      assert.deepEqual((({ ok, status, committedBy }) => [ok, status, committedBy])(JSON.parse(committed.out)), [false, 'committed', other!.jobId]);
      assert.deepEqual([fromClient.lane, fromClient.status], ['us', 'committed']);
      assert.equal((await client.status(other!.jobId, { lane: 'us' })).state, 'committed', 'nothing changed');
    } finally {
      client.close();
    }
  });

  it('refuses an unknown lane and a missing job id (exit 2)', async () => {
    const t = await newLane();
    const unknown = await cancel({ us: t.lane }, ['job-1', '--lane', 'ap', '--json']);
    const missing = await cancel({ us: t.lane }, ['--lane', 'us']);
    assert.equal(unknown.code, CANCEL_EXIT.usage);
    assert.equal(JSON.parse(unknown.out).error.message, 'unknown lane "ap"; known lanes: us');
    assert.equal(missing.code, CANCEL_EXIT.usage);
    assert.match(missing.err, /give the job id: ratelane cancel <jobId> --lane <name>/);
  });
});
