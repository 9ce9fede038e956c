/**
 * Cancelled jobs in the batch lane, on the local services and the fake provider's Batch API (a virtual
 * clock): a batch item whose job is cancelled while the batch runs is reconciled `rejected` (reason
 * `cancelled`) and never committed, its batch's other items commit; an item cancelled while its part waits
 * after a submission throttle is never sent.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { submitBatch } from '../../../../lib/lanes/batch/submit.js';
import { sweepBatches } from '../../../../lib/lanes/batch/sweep.js';
import { laneStores } from '../../../../lib/store/lane-stores.js';
import { scriptedLane } from './scripted-lane.js';

const PACE = { validationMs: 100, completionMs: 10_000, finalizingMs: 100 };

describe('batch lane: cancelled jobs', () => {
  it('an item cancelled while its batch runs is reconciled cancelled and never committed; the others commit', async () => {
    // Prepare: a batch of three running at the provider
    const l = await scriptedLane(PACE);
    const { cancellations } = laneStores(l.t.lane, l.t.clients.dynamodb);
    const deps = { ...l.submitDeps, ...l.reconcileDeps, cancellations };
    const batchId = (await submitBatch(l.documents('cancel-run', 3), deps)).batchId!;
    const [first] = await l.manifest.items(batchId);

    // Act: cancel one item's job, then let the batch end and reconcile it
    const outcome = await cancellations.cancel(first!.jobId, 'ops@example.com');
    await l.untilEnded(batchId);
    await l.clock.until('the batch is done', async () => (await sweepBatches(deps)).open === 0);

    // Assess
    assert.equal(outcome.status, 'cancelled');
    const items = await l.manifest.items(batchId);
    assert.deepEqual(
      items.map((i) => [i.state, i.reason]),
      [
        ['rejected', 'cancelled'],
        ['committed', undefined],
        ['committed', undefined],
      ],
    );
    assert.equal(await l.t.results.get(first!.idempotencyKey), undefined, 'its answer was not committed');
  });

  it('an item cancelled while its part waits after a throttle is never sent; the part goes without it', async () => {
    // Prepare: the provider refuses the batch once (enqueued-token limit): its part waits to be submitted again
    const l = await scriptedLane({ ...PACE, completionMs: 600, enqueuedTokenLimit: 10 });
    const { cancellations } = laneStores(l.t.lane, l.t.clients.dynamodb);
    const deps = { ...l.submitDeps, ...l.reconcileDeps, cancellations };
    const batchId = (await submitBatch(l.documents('cancel-wait', 2), deps)).batchId!;
    await l.clock.until('the part waits after the throttle', async () => {
      await sweepBatches(deps);
      return (await l.manifest.header(batchId))?.providerJobs[0]?.state === 'pending_submit';
    });
    const [cancelled, kept] = await l.manifest.items(batchId);

    // Act: cancel one job, then the next sweeps (the provider's limit still refuses: nothing more is answered)
    await cancellations.cancel(cancelled!.jobId, 'ops@example.com');
    l.clock.advance(60_000);
    await sweepBatches(deps);

    // Assess: the cancelled item settled and left out; the other still waits to be sent
    const items = await l.manifest.items(batchId);
    assert.deepEqual(
      items.map((i) => [i.itemId, i.state, i.reason]),
      [
        [cancelled!.itemId, 'rejected', 'cancelled'],
        [kept!.itemId, 'submitted', undefined],
      ],
    );
    assert.equal(l.fake.stats().batches.created, 2, 'submitted again, without the cancelled item');
  });
});
