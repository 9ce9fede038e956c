/**
 * The batch lane against a provider whose output is broken or hostile (a scripted server in front of
 * the fake provider's Batch API rewrites what it answers), on the local services and a virtual clock:
 *
 * - an answer too large to store settles its item `needs_review` (`result_unstorable`) and the lines
 *   after it are read: every item settles, the batch ends; an item whose settling fails (a store
 *   unavailable) is reported and the pass goes on, and the next pass settles it;
 * - batch X whose provider batch names batch Y's output file commits nothing of Y: Y's lines carry Y's
 *   record prefix and are refused (`other_batch`); a provider batch of another ratelane batch is not read
 *   at all (`foreign_output`); a manifest without a record prefix (written before prefixes) still
 *   reconciles by its item ids;
 * - an answer whose bytes are not UTF-8, or that decodes to a lone surrogate, settles `not_text` and
 *   nothing of it is committed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reconcileBatch } from '../../../../lib/lanes/batch/reconcile.js';
import { submitBatch } from '../../../../lib/lanes/batch/submit.js';
import { StoreUnavailableError } from '../../../../lib/store/errors.js';
import { itemIdFor } from '../../../../lib/store/manifest-model.js';
import type { ResultStore } from '../../../../lib/store/results.js';
import { answerOf, rewriteLines, withAnswer } from './scripted-batch-server.js';
import { scriptedLane } from './scripted-lane.js';

const PACE = { validationMs: 100, completionMs: 600, finalizingMs: 100 };

describe('batch lane: one bad answer never jams a batch', () => {
  it('an answer too large to store: its item needs review (result_unstorable), every other item is committed, the batch ends', async () => {
    // Prepare: five documents; the provider answers the second with a seller name of 450 000 characters (valid, over DynamoDB's 400 KB)
    const l = await scriptedLane(PACE);
    const submitted = await submitBatch(l.documents('huge', 5), l.submitDeps);
    const batchId = submitted.batchId!;
    l.server.script.content = (_file, bytes) =>
      rewriteLines(bytes, {
        [itemIdFor(1)]: (line) => {
          const answer = answerOf(line) as { seller: { name: string } };
          answer.seller.name = 'x'.repeat(450_000);
          return withAnswer(line, JSON.stringify(answer));
        },
      });
    await l.untilEnded(batchId);
    // Act
    await l.reconcileToEnd(batchId);
    // Assess: every item settled with a reason; the batch ended
    const items = await l.manifest.items(batchId);
    const huge = items.find((i) => i.itemId === itemIdFor(1))!;
    assert.equal((await l.manifest.header(batchId))?.state, 'done');
    assert.deepEqual(
      items.map((i) => [i.itemId, i.state, i.reason]),
      [0, 1, 2, 3, 4].map((i) => (i === 1 ? [itemIdFor(1), 'needs_review', 'result_unstorable'] : [itemIdFor(i), 'committed', undefined])),
    );
    assert.equal(await l.t.results.get(huge.idempotencyKey), undefined, 'nothing committed for it');
    const review = (await l.t.ledger.entriesFor(huge.jobId)).filter((e) => e.kind === 'needs_review');
    assert.deepEqual(
      review.map((e) => e.reason),
      ['result_unstorable'],
      'one review entry in the ledger',
    );
    assert.ok(!JSON.stringify(l.logs).includes('xxxxxxxxxx'), 'no answer text in the logs');
  });

  it('an item whose commit fails (store unavailable) is reported and the pass goes on; the part is read again and the next pass settles it', async () => {
    // Prepare: the results table refuses the second item's commit once
    const l = await scriptedLane(PACE);
    const submitted = await submitBatch(l.documents('flaky', 4), l.submitDeps);
    const batchId = submitted.batchId!;
    const flaky = (await l.manifest.item(batchId, itemIdFor(1)))!;
    let refused = 0;
    const results = new Proxy(l.t.results, {
      get(target, property, receiver) {
        if (property !== 'commitOnce') return Reflect.get(target, property, receiver);
        return async (record: Parameters<ResultStore['commitOnce']>[0]) => {
          if (record.idempotencyKey === flaky.idempotencyKey && refused++ === 0)
            throw new StoreUnavailableError('PutItem', target.tableName, { cause: new Error('ServiceUnavailable') });
          return target.commitOnce(record);
        };
      },
    });
    const deps = { ...l.reconcileDeps, results };
    await l.untilEnded(batchId);
    // Act
    const first = await reconcileBatch(batchId, deps).catch((error: unknown) => error);
    const between = await l.manifest.counts(batchId);
    const second = await reconcileBatch(batchId, deps);
    // Assess: the first pass settled the others and reported the one it could not
    assert.ok(!(first instanceof Error), `the pass does not throw: ${String(first)}`);
    const pass = first as Awaited<ReturnType<typeof reconcileBatch>>;
    assert.deepEqual(pass.failed, [{ itemId: itemIdFor(1), errorName: 'StoreUnavailableError' }]);
    assert.deepEqual([pass.moved, pass.state, pass.jobsOpen], [{ committed: 3 }, 'submitted', 1], 'the part stays open to be read again');
    assert.deepEqual([between.committed, between.submitted], [3, 1]);
    // the second pass settled it and ended the batch
    assert.deepEqual([second.moved, second.failed, second.state], [{ committed: 1 }, [], 'done']);
    assert.equal((await l.t.results.get(flaky.idempotencyKey))?.jobId, flaky.jobId);
    assert.ok(
      l.logs.some((g) => g.level === 'error' && g.fields?.itemId === itemIdFor(1) && g.fields?.error === 'StoreUnavailableError'),
      'the item is logged with its error name',
    );
  });
});

describe('batch lane: batches cannot be crossed', () => {
  it("batch X whose provider batch names batch Y's output file: Y's lines are refused (other_batch), nothing of Y is committed to X", async () => {
    // Prepare: batch Y reconciled to the end; batch X, three other documents, whose provider batch answers with Y's output file
    const l = await scriptedLane(PACE);
    const y = (await submitBatch(l.documents('y', 3), l.submitDeps)).batchId!;
    const x = (await submitBatch(l.documents('x', 3, 3), l.submitDeps)).batchId!;
    await l.untilEnded(x);
    await l.reconcileToEnd(y);
    const yProviderId = await l.providerBatchId(y);
    const xProviderId = await l.providerBatchId(x);
    const yOutput = (await l.provider.status({ provider: 'openai', batchId: y, index: 0, model: '', jobId: yProviderId, inputRef: '', recordIds: [] }))
      .outputRef;
    assert.ok(yOutput, "Y's output file");
    l.server.script.batch = (id, body) => (id === xProviderId ? { ...body, output_file_id: yOutput, error_file_id: null } : body);
    const yResults = await l.t.results.scanAll();
    // Act
    await l.reconcileToEnd(x);
    // Assess: X's items unresolved, none committed; every line of Y refused as another batch's
    const xItems = await l.manifest.items(x);
    assert.deepEqual(
      xItems.map((i) => [i.state, i.reason]),
      [0, 1, 2].map(() => ['unresolved', 'no_result']),
    );
    for (const item of xItems) assert.equal(await l.t.results.get(item.idempotencyKey), undefined, `${item.itemId} of X has no result`);
    assert.deepEqual(await l.t.results.scanAll(), yResults, "Y's results, and nothing else");
    const refused = l.logs.filter((g) => g.message === 'batch result line matches no record' && g.fields?.batchId === x);
    assert.deepEqual(
      refused.map((g) => g.fields?.code),
      ['other_batch', 'other_batch', 'other_batch'],
    );
  });

  it('a provider batch that belongs to another ratelane batch is not read: every item of its part is unresolved (foreign_output)', async () => {
    // Prepare: X's provider batch answers with Y's ratelane batch id in its metadata
    const l = await scriptedLane(PACE);
    const y = (await submitBatch(l.documents('y', 2), l.submitDeps)).batchId!;
    const x = (await submitBatch(l.documents('x', 2, 2), l.submitDeps)).batchId!;
    const xProviderId = await l.providerBatchId(x);
    l.server.script.batch = (id, body) => (id === xProviderId ? { ...body, metadata: { ratelane_batch_id: y, ratelane_part: '0' } } : body);
    await l.untilEnded(x);
    // Act
    await l.reconcileToEnd(x);
    // Assess
    const items = await l.manifest.items(x);
    assert.deepEqual(
      items.map((i) => [i.state, i.reason]),
      [
        ['unresolved', 'foreign_output'],
        ['unresolved', 'foreign_output'],
      ],
    );
    assert.equal((await l.t.results.scanAll()).length, 0);
  });

  it('a manifest without a record prefix (as written before prefixes) reconciles by its item ids', async () => {
    // Prepare: a batch client whose record ids hold only the item id (11 characters: no room for a prefix)
    const l = await scriptedLane(PACE, { maxRecordIdLength: 11 });
    const batchId = (await submitBatch(l.documents('old', 3), l.submitDeps)).batchId!;
    const header = await l.manifest.header(batchId);
    await l.untilEnded(batchId);
    // Act
    await l.reconcileToEnd(batchId);
    // Assess
    assert.equal(header?.recordPrefix, undefined);
    assert.deepEqual((await l.manifest.counts(batchId)).committed, 3);
  });
});

describe('batch lane: strict text for batch answers', () => {
  it('an answer with bytes that are not UTF-8, and one that decodes to a lone surrogate: both unresolved (not_text), nothing of them committed', async () => {
    // Prepare: the provider spoils the answers of items 1 (invalid UTF-8 bytes) and 2 (a \ud800 escape)
    const l = await scriptedLane(PACE);
    const batchId = (await submitBatch(l.documents('text', 4), l.submitDeps)).batchId!;
    const spoil = (marker: string) => (line: Parameters<typeof withAnswer>[0]) => {
      const answer = answerOf(line) as { invoiceNumber: string };
      answer.invoiceNumber = `INV${marker}1`;
      return withAnswer(line, JSON.stringify(answer));
    };
    l.server.script.content = (_file, bytes) => {
      const rewritten = rewriteLines(bytes, { [itemIdFor(1)]: spoil('@@BYTES@@'), [itemIdFor(2)]: spoil('@@SURROGATE@@') });
      const at = rewritten.indexOf('@@BYTES@@');
      const bad = Buffer.concat([rewritten.subarray(0, at), Buffer.from([0xc3, 0x28]), rewritten.subarray(at + '@@BYTES@@'.length)]);
      // In the line the answer is a JSON string inside a JSON string: its backslash is escaped once more.
      return Buffer.from(bad.toString('latin1').replace('@@SURROGATE@@', '\\\\ud800'), 'latin1');
    };
    await l.untilEnded(batchId);
    // Act
    await l.reconcileToEnd(batchId);
    // Assess
    const items = await l.manifest.items(batchId);
    assert.deepEqual(
      items.map((i) => [i.itemId, i.state, i.reason]),
      [
        [itemIdFor(0), 'committed', undefined],
        [itemIdFor(1), 'unresolved', 'not_text'],
        [itemIdFor(2), 'unresolved', 'not_text'],
        [itemIdFor(3), 'committed', undefined],
      ],
    );
    for (const item of items.slice(1, 3)) assert.equal(await l.t.results.get(item.idempotencyKey), undefined, `${item.itemId}: nothing committed`);
    for (const result of await l.t.results.scanAll()) assert.ok(!JSON.stringify(result).includes('\ufffd'), 'no replacement character committed');
  });
});
