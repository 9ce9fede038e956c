/**
 * Cancelling a job on the local services (DynamoDB Local, fauxqs) through the queue lane's consumer: a job
 * cancelled while queued makes no call when it comes; one cancelled during its model call is not committed;
 * a committed job cannot be cancelled; and cancel and commit racing each other — many at once — leave every
 * job either committed or cancelled, never both.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ModelAdapter } from '../../../lib/providers/model.js';
import { commitGuards } from '../../../lib/store/cancellation.js';
import { jobStatus } from '../../../lib/store/job-status.js';
import { laneStores } from '../../../lib/store/lane-stores.js';
import { resultRecordFor } from '../../../lib/store/results.js';
import { JobSchema } from '../../../lib/contract/job.js';
import {
  englishDocuments,
  invoke,
  queueCounts,
  receive,
  scriptedModel,
  submitTo,
  testConsumer,
  trackedLanes,
  type TestLane,
} from '../../helpers/consumer-harness.js';

const newLane = trackedLanes();

/** The lane's cancel markers and a status read that sees them. */
function cancelling(t: TestLane) {
  const stores = laneStores(t.lane, t.clients.dynamodb);
  const status = (jobId: string) => jobStatus(jobId, { results: t.results, ledger: t.ledger, cancellations: stores.cancellations });
  return { cancellations: stores.cancellations, status };
}

describe('cancelling a job', () => {
  it('a job cancelled while it waits in the queue makes no call when it comes; the other job commits', async () => {
    // Prepare: two jobs queued; one cancelled before any consumer saw it
    const t = await newLane();
    const [cancelled, kept] = await submitTo(
      t,
      englishDocuments(2).map((d, i) => ({ text: d.text, sourceId: `${d.sourceId}#cancel-queued-${i}` })),
    );
    const { cancellations, status } = cancelling(t);
    const outcome = await cancellations.cancel(cancelled!.jobId, 'ops@example.com');
    const model = scriptedModel();
    const { handler, sink } = testConsumer(t, model);

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 2, waitSeconds: 1 }));

    // Assess
    assert.equal(outcome.status, 'cancelled');
    assert.equal(outcome.status === 'cancelled' && outcome.received, false, 'no consumer had claimed it');
    assert.deepEqual(response.batchItemFailures, [], 'both messages acknowledged');
    assert.equal(model.calls.length, 1, 'only the other job was called for');
    assert.deepEqual([sink.totals.total.Cancelled, sink.totals.total.Completed], [1, 1]);
    assert.equal(await t.results.get(cancelled!.idempotencyKey), undefined);
    assert.ok(await t.results.get(kept!.idempotencyKey));
    const view = await status(cancelled!.jobId);
    assert.deepEqual([view.state, view.state === 'cancelled' && view.cancelledBy], ['cancelled', 'ops@example.com']);
    const [entry] = await t.ledger.entriesFor(cancelled!.jobId);
    assert.deepEqual([entry?.kind, entry?.reason], ['rejected', 'cancelled']);
    assert.match(entry?.details ?? '', /cancelled by ops@example.com .*at its receive: no model call/);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });

  it('a job cancelled during its model call is not committed; cancelling it again says so', async () => {
    // Prepare: the model cancels the job while "answering"
    const t = await newLane();
    const [item] = await submitTo(t, englishDocuments(1));
    const { cancellations, status } = cancelling(t);
    const inner = scriptedModel();
    const outcomes: unknown[] = [];
    const model: ModelAdapter = {
      provider: 'scripted',
      async extract(request) {
        const answer = await inner.extract(request);
        outcomes.push(await cancellations.cancel(item!.jobId, 'ops@example.com'));
        return answer;
      },
    };
    const { handler, sink } = testConsumer(t, model);

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 1 }));
    const again = await cancellations.cancel(item!.jobId, 'someone-else');

    // Assess
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(inner.calls.length, 1);
    assert.deepEqual(
      outcomes.map((o) => (o as { status: string; received?: boolean }).status),
      ['cancelled'],
    );
    assert.equal((outcomes[0] as { received: boolean }).received, true, 'the consumer had claimed it');
    assert.equal(sink.totals.total.Cancelled, 1);
    assert.equal(sink.totals.total.Completed, undefined);
    assert.equal(await t.results.get(item!.idempotencyKey), undefined, 'the answer was not committed');
    assert.equal((await status(item!.jobId)).state, 'cancelled');
    assert.deepEqual([again.status, again.status === 'already_cancelled' && again.marker.cancelledBy], ['already_cancelled', 'ops@example.com']);
    assert.match((await t.ledger.entriesFor(item!.jobId)).at(-1)?.details ?? '', /at its commit: the answer was not committed/);
  });

  it("reads a job's cancel marker and its source's tombstone together at its receive, each only where it is", async () => {
    // Prepare: job a cancelled, job b's source erased, job c neither
    const t = await newLane();
    const stores = laneStores(t.lane, t.clients.dynamodb);
    const [a, b, c] = await submitTo(
      t,
      englishDocuments(3).map((d, i) => ({ text: d.text, sourceId: `${d.sourceId}#at-receive-${i}` })),
    );
    await stores.cancellations.cancel(a!.jobId, 'ops@example.com');
    await stores.erasure.layTombstone(b!.sourceId, 'dpo@example.com', []);
    const jobOf = (item: typeof a) => ({ jobId: item!.jobId, input: { sourceId: item!.sourceId } });

    // Act
    const [onA, onB, onC] = await Promise.all([
      stores.cancellations.atReceive(jobOf(a)),
      stores.cancellations.atReceive(jobOf(b)),
      stores.cancellations.atReceive(jobOf(c)),
    ]);

    // Assess
    assert.deepEqual([onA.marker?.cancelledBy, onA.tombstone], ['ops@example.com', undefined]);
    assert.deepEqual([onB.marker, onB.tombstone?.erasedBy, onB.tombstone?.sourceId], [undefined, 'dpo@example.com', b!.sourceId]);
    assert.deepEqual(onC, { tombstone: undefined, marker: undefined });
  });

  it('a committed job cannot be cancelled: the cancel says who committed it and nothing changes', async () => {
    // Prepare
    const t = await newLane();
    const [item] = await submitTo(t, englishDocuments(1));
    const { handler } = testConsumer(t, scriptedModel());
    await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 1 }));
    const { cancellations, status } = cancelling(t);

    // Act
    const outcome = await cancellations.cancel(item!.jobId, 'ops@example.com');

    // Assess
    assert.deepEqual([outcome.status, outcome.status === 'committed' && outcome.committedBy], ['committed', item!.jobId]);
    assert.equal(await cancellations.marker(item!.jobId), undefined, 'no marker written');
    assert.equal((await status(item!.jobId)).state, 'committed');
  });

  it('cancel and commit in either order and at once: 30 jobs each committed or cancelled, never both, never neither', async () => {
    // Prepare: 30 jobs, each claimed by a consumer (their claims bind their ids to their keys)
    const t = await newLane();
    const items = await submitTo(
      t,
      englishDocuments(30).map((d, i) => ({ text: d.text, sourceId: `${d.sourceId}#race-${i}` })),
    );
    const messages = await receive(t, { max: 30, waitSeconds: 1 });
    const jobs = messages.map((m) => JobSchema.parse(JSON.parse(m.Body!)));
    await Promise.all(jobs.map((job) => t.ledger.claimJob({ jobId: job.jobId, idempotencyKey: job.idempotencyKey, region: job.region })));
    const { cancellations, status } = cancelling(t);
    const record = (job: (typeof jobs)[number]) =>
      resultRecordFor(job, { result: { invoiceNumber: 'X' }, usage: { inputTokens: 1, outputTokens: 1 }, model: 'm', modelCalls: 1 });

    // Act: a third of the jobs committed first, a third cancelled first, and a third both at once (the
    // commit started 0 to 9 ms after the cancel, which reads the claim and the result before its transaction)
    const commit = (job: (typeof jobs)[number]) =>
      t.results.commitOnce(record(job), commitGuards(t.lane.resources.ledgerTable, job, t.lane.erasure.afterErasure));
    const raced = await Promise.all(
      jobs.map(async (job, i) => {
        if (i < 10) {
          const committed = await Promise.allSettled([commit(job)]);
          return { job, commit: committed[0], cancel: (await Promise.allSettled([cancellations.cancel(job.jobId, 'race')]))[0] };
        }
        if (i >= 20) {
          const cancelled = await Promise.allSettled([cancellations.cancel(job.jobId, 'race')]);
          return { job, cancel: cancelled[0], commit: (await Promise.allSettled([commit(job)]))[0] };
        }
        const [committed, cancelled] = await Promise.allSettled([
          new Promise((resolve) => setTimeout(resolve, i - 10)).then(() => commit(job)),
          cancellations.cancel(job.jobId, 'race'),
        ]);
        return { job, commit: committed, cancel: cancelled };
      }),
    );
    const ends = raced.map(({ commit }) => (commit.status === 'fulfilled' ? commit.value.status : 'threw'));

    // Assess: a commit that lost to a conflicting transaction is retried by the lane; here it counts as not committed
    assert.equal(items.length, 30);
    assert.deepEqual(ends.slice(0, 10), Array(10).fill('committed'), 'committed first: the cancel finds it committed');
    assert.deepEqual(ends.slice(20), Array(10).fill('cancelled'), 'cancelled first: the commit finds the marker');
    for (const { job, commit, cancel } of raced) {
      const committed = commit.status === 'fulfilled' && commit.value.status === 'committed';
      const cancelled = cancel.status === 'fulfilled' && cancel.value.status === 'cancelled';
      assert.ok(!(committed && cancelled), `${job.jobId}: committed and cancelled`);
      const stored = await t.results.get(job.idempotencyKey);
      const marker = await cancellations.marker(job.jobId);
      assert.ok(!(stored && marker), `${job.jobId}: a result and a cancel marker`);
      assert.equal(Boolean(stored), committed, `${job.jobId}: the store agrees with the commit's answer`);
      if (cancel.status === 'fulfilled') {
        assert.equal(cancel.value.status, committed ? 'committed' : 'cancelled', `${job.jobId}: the cancel's answer`);
        assert.equal((await status(job.jobId)).state, committed ? 'committed' : 'cancelled');
      }
    }
  });
});
