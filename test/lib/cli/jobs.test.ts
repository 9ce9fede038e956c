/**
 * `ratelane jobs show` and `ratelane jobs list` on the run's DynamoDB Local and fauxqs, with the real producer
 * and consumer: a committed job's whole story (its state, delivery facts, ledger lines, result location and
 * timeline); waiting jobs listed (deferred by a rate limit, each with when it is eligible again), a page at a
 * time with a cursor; a cancelled job listed as cancelled; a tenant filter; bad usage.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCommand, type CommandIo } from '../../../lib/cli/command.js';
import { createJobsCommand, JOBS_EXIT } from '../../../lib/cli/jobs.js';
import type { LaneSet } from '../../../lib/config/lanes.js';
import { laneStores } from '../../../lib/store/lane-stores.js';
import { englishDocuments, invoke, receive, scriptedModel, submitTo, testConsumer, throttle, trackedLanes } from '../../helpers/consumer-harness.js';
import { testEndpoints } from '../../helpers/endpoints.js';

const newLane = trackedLanes();

async function jobs(lanes: LaneSet, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CommandIo = { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: {} };
  const code = await runCommand(createJobsCommand({ lanes }), [...argv, '--endpoints', JSON.stringify(testEndpoints())], io);
  return { code, out, err };
}

describe('ratelane jobs', () => {
  it("shows a committed job's whole story, lists waiting jobs a page at a time and a cancelled one, filters by tenant", async () => {
    // Prepare: four jobs; the first committed, the next two deferred by a rate limit, the last cancelled
    const t = await newLane();
    const items = await submitTo(
      t,
      englishDocuments(4).map((d, i) => ({ text: d.text, sourceId: `${d.sourceId}#jobs-${i}`, ...(i === 1 ? { priority: 'urgent' as const } : {}) })),
    );
    const [done, waitA, waitB, cancelled] = items;
    const messages = await receive(t, { max: 4, waitSeconds: 1 });
    const byJob = (jobId: string) => messages.filter((m) => m.Body?.includes(jobId));
    await invoke(t, testConsumer(t, scriptedModel()).handler, byJob(done!.jobId));
    const limited = testConsumer(
      t,
      scriptedModel(() => throttle({ kind: 'rate_limit', retryAfterMs: 30_000 })),
    );
    await invoke(t, limited.handler, [...byJob(waitA!.jobId), ...byJob(waitB!.jobId)]);
    await laneStores(t.lane, t.clients.dynamodb).cancellations.cancel(cancelled!.jobId, 'ops@example.com');
    const lanes = { us: t.lane };

    // Act
    const shown = await jobs(lanes, ['show', done!.jobId, '--lane', 'us', '--json']);
    const shownText = await jobs(lanes, ['show', waitA!.jobId, '--lane', 'us']);
    const firstPage = JSON.parse((await jobs(lanes, ['list', '--lane', 'us', '--state', 'waiting', '--limit', '1', '--json'])).out);
    const secondPage = JSON.parse((await jobs(lanes, ['list', '--lane', 'us', '--state', 'waiting', '--cursor', firstPage.nextCursor, '--json'])).out);
    const cancelledList = JSON.parse((await jobs(lanes, ['list', '--lane', 'us', '--state', 'cancelled', '--json'])).out);
    const ofTenant = JSON.parse((await jobs(lanes, ['list', '--lane', 'us', '--state', 'waiting', '--tenant', 'tenant-b', '--json'])).out);
    const badState = await jobs(lanes, ['list', '--lane', 'us', '--state', 'asleep']);

    // Assess: show
    assert.equal(shown.code, JOBS_EXIT.ok);
    const record = JSON.parse(shown.out);
    assert.equal(record.status.state, 'committed');
    assert.deepEqual(
      [record.claim.facts.attempt, record.claim.facts.deferrals, record.claim.facts.receiveCount, record.claim.facts.schemaVersion],
      [0, 0, 1, 'invoice@1'],
    );
    assert.deepEqual([record.result.table, record.result.key, record.result.committedBy], [t.lane.resources.resultsTable, done!.idempotencyKey, done!.jobId]);
    assert.deepEqual(
      record.timeline.map((e: { event: string }) => e.event),
      ['created', 'received', 'committed'],
    );
    assert.match(shownText.out, new RegExp(`job ${waitA!.jobId} in lane us: pending\\n`));
    assert.match(shownText.out, /waiting: rate_limit, eligible again at /);
    assert.match(shownText.out, /tenant \(none\), priority urgent, submitted by /);
    assert.equal(record.claim.facts.priority, undefined, 'bulk: the default, not stored');
    assert.match(shownText.out, /deferred\s+rate_limit \(attempt 0, deferrals 1\) receive 1 eligible /);
    // Assess: list
    const listed = [...firstPage.jobs, ...secondPage.jobs].map((j: { jobId: string }) => j.jobId).sort();
    assert.equal(firstPage.jobs.length, 1);
    assert.deepEqual(listed, [waitA!.jobId, waitB!.jobId].sort(), 'two pages: each waiting job once');
    assert.ok(firstPage.jobs[0].eligibleAt, 'a waiting job says when it is eligible again');
    assert.deepEqual(
      cancelledList.jobs.map((j: { jobId: string; reason: string }) => [j.jobId, j.reason]),
      [[cancelled!.jobId, 'cancelled by ops@example.com']],
    );
    assert.deepEqual(ofTenant.jobs, [], 'the jobs have no tenant');
    assert.equal(badState.code, JOBS_EXIT.usage);
    assert.match(badState.err, /--state is required: one of waiting, needs_review, dead_lettered, cancelled \(got "asleep"\)/);
  });
});
