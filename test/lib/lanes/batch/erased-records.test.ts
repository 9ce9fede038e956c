/**
 * An erased source's records at the batch provider, on the local services and the fake provider's Batch
 * API (a virtual clock): the operator's erasure settles the source's batch items and marks them on the
 * batch; the lane's sweep, which holds the provider key, deletes the batch's files at OpenAI once the jobs
 * holding them have ended — never while one runs — and takes the marks off; the batch's other items
 * commit as before. Two erasures of one batch's sources at once leave both marked, and one sweep serves both.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { eraseSource, laneEraseDeps } from '../../../../lib/erasure/erase.js';
import { submitBatch } from '../../../../lib/lanes/batch/submit.js';
import { sweepBatches } from '../../../../lib/lanes/batch/sweep.js';
import type { FakeProviderBatchOptions } from '../../../../workbench/fake-provider/index.js';
import { scriptedLane } from './scripted-lane.js';

const PACE = { validationMs: 100, completionMs: 600, finalizingMs: 100 };
/** A batch that runs 10 s of the clock: it is still running when the test's next step comes, however slow the machine (the clock's base is real time). */
const SLOW = { ...PACE, completionMs: 10_000 };

/** A scripted batch lane, its erasure (reading the same manifest), and what the provider still keeps. */
async function erasingLane(pace: FakeProviderBatchOptions = PACE) {
  const l = await scriptedLane(pace);
  const erase = (sourceId: string) =>
    eraseSource({ ...laneEraseDeps(l.t.lane, l.t.clients, { now: l.clock.now, local: true }), manifest: l.manifest }, { sourceId, by: 'dpo@example.com' });
  const sweep = () => sweepBatches({ ...l.submitDeps, ...l.reconcileDeps });
  const sdk = new OpenAI({ apiKey: 'sk-batch-scripted', baseURL: l.fake.baseUrl, maxRetries: 0 });
  /** The batch's file ids the provider named (input, output, error), each with whether the provider still has it. */
  const files = async (batchId: string) => {
    const header = (await l.manifest.header(batchId))!;
    const ids = header.providerJobs.flatMap((p) => [p.inputRef, p.outputRef, p.errorRef]).filter((id): id is string => typeof id === 'string' && id !== '');
    return Promise.all(
      ids.map(async (id) => [
        id,
        await sdk.files.retrieve(id).then(
          () => 'kept',
          (error: unknown) => (error instanceof OpenAI.NotFoundError ? 'gone' : 'error'),
        ),
      ]),
    );
  };
  return { ...l, erase, sweep, files };
}

describe("batch lane: an erased source's records at the provider", () => {
  it("erased while its batch runs: never committed; its batch's files at OpenAI deleted once the batch has ended, not before", async () => {
    // Prepare: a batch of three sources, running at the provider
    const l = await erasingLane(SLOW);
    const docs = l.documents('run', 3);
    const batchId = (await submitBatch(docs, l.submitDeps)).batchId!;
    // Act: erase one source while the batch runs; sweep; let the provider end it; sweep again, and once more
    const receipt = await l.erase(docs[0]!.sourceId);
    const whileRunning = await l.sweep();
    const markedWhileRunning = (await l.manifest.header(batchId))?.erasedItems;
    await l.untilEnded(batchId);
    const afterEnd = await l.sweep();
    const again = await l.sweep();
    // Assess: the receipt and the wait
    assert.deepEqual(receipt.batchRecordsPending, [batchId]);
    const erasedItem = receipt.batchItems?.[0];
    assert.ok(erasedItem, 'the receipt lists the batch item');
    assert.deepEqual([whileRunning.erasedRecords, whileRunning.erasedRecordsWaiting], [0, 1], 'nothing deleted while the batch runs');
    assert.deepEqual(markedWhileRunning, [erasedItem.itemId]);
    // Assess: after the batch ended
    assert.deepEqual([afterEnd.erasedRecords, afterEnd.erasedRecordsWaiting], [1, 0]);
    assert.deepEqual([again.erasedRecords, again.erasedRecordsWaiting], [0, 0], 'the mark was taken off');
    const header = (await l.manifest.header(batchId))!;
    assert.equal(header.erasedItems, undefined);
    assert.ok(header.providerRecordsErasedAt, 'when the records were removed is recorded');
    assert.equal(header.state, 'done');
    const files = await l.files(batchId);
    assert.ok(files.length >= 2, 'the batch had an input and an output file');
    assert.deepEqual(
      files.map(([, kept]) => kept),
      files.map(() => 'gone'),
      "every file of the batch is gone from the provider's Files API",
    );
    const items = await l.manifest.items(batchId);
    const erased = items.find((i) => i.itemId === erasedItem.itemId)!;
    assert.deepEqual([erased.state, erased.reason], ['rejected', 'erased']);
    assert.equal(await l.t.results.get(erased.idempotencyKey), undefined, 'never committed');
    for (const item of items.filter((i) => i !== erased)) {
      assert.equal(item.state, 'committed', `${item.itemId} of another source commits`);
      assert.equal((await l.t.results.get(item.idempotencyKey))?.jobId, item.jobId);
    }
    assert.ok(
      l.logs.some((line) => line.message.includes('removed from the provider') && line.fields?.batchId === batchId),
      'the sweep logs what it removed',
    );
  });

  it('two sources of a done batch erased at once: both marked, one sweep deletes the files once', async () => {
    // Prepare: a batch reconciled to the end
    const l = await erasingLane();
    const docs = l.documents('done', 4);
    const batchId = (await submitBatch(docs, l.submitDeps)).batchId!;
    await l.untilEnded(batchId);
    await l.reconcileToEnd(batchId);
    const deletedBefore = l.fake.stats().batches.filesDeleted;
    // Act
    const receipts = await Promise.all([l.erase(docs[1]!.sourceId), l.erase(docs[2]!.sourceId)]);
    const marked = (await l.manifest.header(batchId))?.erasedItems;
    const sweeps = [await l.sweep(), await l.sweep()];
    // Assess
    assert.deepEqual(
      receipts.map((r) => r.batchRecordsPending),
      [[batchId], [batchId]],
    );
    assert.deepEqual(marked, receipts.map((r) => r.batchItems![0]!.itemId).sort(), 'both erasures stay marked');
    assert.deepEqual(
      sweeps.map((s) => s.erasedRecords),
      [1, 0],
    );
    const files = await l.files(batchId);
    assert.equal(l.fake.stats().batches.filesDeleted - deletedBefore, files.length, 'each file deleted once');
    assert.ok(files.every(([, kept]) => kept === 'gone'));
    const results = await Promise.all(receipts.map((r) => r.batchItems![0]!.resultRemoved));
    assert.deepEqual(results, [true, true], 'their committed results were removed by the erasures');
  });

  it('a part waiting after a submission throttle whose every source was erased is never sent again: it ends cancelled and the batch is done', async () => {
    // Prepare: the provider refuses the batch (enqueued-token limit): its part waits to be submitted again
    const l = await erasingLane({ ...PACE, enqueuedTokenLimit: 10 });
    const docs = l.documents('throttled', 2);
    const batchId = (await submitBatch(docs, l.submitDeps)).batchId!;
    await l.untilEnded(batchId).catch(() => undefined);
    await l.clock.until('the part waits after the throttle', async () => {
      await l.sweep();
      return (await l.manifest.header(batchId))?.providerJobs[0]?.state === 'pending_submit';
    });
    // Act: both sources erased, then the next sweep
    for (const doc of docs) await l.erase(doc.sourceId);
    l.clock.advance(60_000);
    const sweep = await l.sweep();
    // Assess
    const header = (await l.manifest.header(batchId))!;
    assert.deepEqual([header.state, header.providerJobs.map((p) => p.state)], ['done', ['cancelled']]);
    assert.deepEqual(
      (await l.manifest.items(batchId)).map((i) => [i.state, i.reason]),
      [
        ['rejected', 'erased'],
        ['rejected', 'erased'],
      ],
    );
    assert.equal(l.fake.stats().batches.created, 1, 'nothing of the erased sources sent again');
    assert.equal(sweep.errors, 0);
  });
});
