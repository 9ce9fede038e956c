/**
 * `ratelane redrive` on the run's DynamoDB Local and fauxqs (which has no `StartMessageMoveTask`: the
 * redrive moves the messages itself): a DLQ holding a committed job, a cancelled job, two jobs the consumer
 * dead-lettered and a message that is no job. `--dry-run` groups them by reason and changes nothing; the
 * redrive deletes the settled ones and moves the rest back; the consumer then commits each moved job once,
 * and the committed job is not called for again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { runCommand, type CommandIo } from '../../../lib/cli/command.js';
import { createRedriveCommand, REDRIVE_EXIT } from '../../../lib/cli/redrive.js';
import { JobSchema } from '../../../lib/contract/job.js';
import type { LaneSet } from '../../../lib/config/lanes.js';
import { sendToDeadLetterQueue } from '../../../lib/lanes/queue/dead-letter.js';
import { laneStores } from '../../../lib/store/lane-stores.js';
import { englishDocuments, invoke, queueCounts, receive, scriptedModel, submitTo, testConsumer, trackedLanes } from '../../helpers/consumer-harness.js';
import { testEndpoints } from '../../helpers/endpoints.js';

const newLane = trackedLanes();

async function redrive(lanes: LaneSet, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CommandIo = { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: {} };
  const code = await runCommand(createRedriveCommand({ lanes }), [...argv, '--endpoints', JSON.stringify(testEndpoints())], io);
  return { code, out, err };
}

describe('ratelane redrive', () => {
  it('groups the DLQ by reason (dry run changes nothing), deletes settled jobs, moves the rest back; each moved job then commits once', async () => {
    // Prepare: four jobs; one committed, one cancelled, all four's messages put in the DLQ as the consumer does, and a message that is no job
    const t = await newLane();
    const items = await submitTo(
      t,
      englishDocuments(4).map((d, i) => ({ text: d.text, sourceId: `${d.sourceId}#redrive-${i}` })),
    );
    const [committed, cancelled, failedA, failedB] = items;
    const messages = await receive(t, { max: 4, waitSeconds: 1 });
    const jobs = messages.map((m) => JobSchema.parse(JSON.parse(m.Body!)));
    const jobOf = (jobId: string) => jobs.find((j) => j.jobId === jobId)!;
    const model = scriptedModel();
    await invoke(
      t,
      testConsumer(t, model).handler,
      messages.filter((m) => m.Body!.includes(committed!.jobId)),
    );
    await laneStores(t.lane, t.clients.dynamodb).cancellations.cancel(cancelled!.jobId, 'ops');
    const reasons: Record<string, string> = {
      [committed!.jobId]: 'provider_5xx',
      [cancelled!.jobId]: 'provider_5xx',
      [failedA!.jobId]: 'timeout',
      [failedB!.jobId]: 'timeout',
    };
    for (const item of items) await sendToDeadLetterQueue({ sqs: t.clients.sqs, dlqUrl: t.dlqUrl, job: jobOf(item!.jobId), reason: reasons[item!.jobId]! });
    await t.clients.sqs.send(new SendMessageCommand({ QueueUrl: t.dlqUrl, MessageBody: 'not a job' }));
    const lanes = { us: t.lane };

    // Act
    const dry = await redrive(lanes, ['--lane', 'us', '--dry-run', '--json']);
    const afterDry = await queueCounts(t, 'dlq');
    const run = await redrive(lanes, ['--lane', 'us']);
    const afterRun = { dlq: await queueCounts(t, 'dlq'), queue: await queueCounts(t) };
    const moved = await receive(t, { max: 10, waitSeconds: 1 });
    const { handler, sink } = testConsumer(t, model);
    const callsBefore = model.calls.length;
    await invoke(t, handler, moved);

    // Assess: the dry run
    assert.equal(dry.code, REDRIVE_EXIT.ok);
    const report = JSON.parse(dry.out);
    assert.equal(report.found, 5);
    assert.deepEqual(
      report.groups.map((g: { reason: string; count: number }) => [g.reason, g.count]),
      [
        ['timeout', 2],
        ['not_a_job', 1],
      ],
    );
    assert.deepEqual(report.settled, { committed: 1, cancelled: 1, erased: 0 });
    assert.deepEqual([report.moved, report.method.kind], [0, 'none']);
    assert.equal(afterDry.visible, 5, 'the dry run released every message');
    // Assess: the redrive
    assert.equal(run.code, REDRIVE_EXIT.ok, run.err);
    assert.match(run.out, /settled, deleted \(never re-run\): 1 committed, 1 cancelled, 0 erased/);
    assert.match(run.out, /moved 3 message\(s\) back to the lane's queue \(send, then delete\)/);
    assert.deepEqual(afterRun.dlq, { visible: 0, notVisible: 0, delayed: 0 });
    assert.equal(afterRun.queue.visible, 3);
    // Assess: the moved jobs commit once each; the committed job made no second call
    assert.equal(model.calls.length - callsBefore, 2, 'one call for each moved job');
    assert.equal(sink.totals.total.Completed, 2);
    for (const item of [failedA, failedB]) assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId);
    assert.equal(await t.results.get(cancelled!.idempotencyKey), undefined);
  });
});
