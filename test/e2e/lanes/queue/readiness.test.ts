/**
 * The consumer's invocation deadline cutting its work in real time (moved from the unit and contract
 * tier, which runs on a virtual clock): a model call still running when the work must stop, a step that
 * never returns, a re-send whose ledger line never returns. Each test runs the real handler on DynamoDB
 * Local and fauxqs and waits for the invocation's own deadline, a few seconds. The rest of the consumer's
 * readiness: `test/lib/lanes/queue/readiness.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sha256Hex } from '../../../../lib/contract/job.js';
import { ProviderError } from '../../../../lib/providers/model.js';
import {
  documentOf,
  englishDocuments,
  invoke,
  jobOf,
  queueCounts,
  receive,
  scriptedModel,
  submitTo,
  testConsumer,
  trackedLanes,
  waitUntil,
} from '../../../helpers/consumer-harness.js';

const newLane = trackedLanes();

/** The parsed JSON log lines of a sink. */
const logLines = (lines: readonly string[]): Record<string, unknown>[] =>
  lines.flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as Record<string, unknown>] : []));

describe('consumer readiness: the invocation deadline', () => {
  it('cuts a model call still running when the work must stop, and sends its record back in the time left to wait about half a function timeout: no receive spent', async () => {
    // Prepare: two jobs; the model hangs on the first until its call is aborted
    const t = await newLane();
    const docs = englishDocuments(2);
    await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#hang` })),
    );
    const hangOn = sha256Hex(docs[0]!.text);
    const aborted: boolean[] = [];
    const model = scriptedModel();
    const extract = model.extract.bind(model);
    model.extract = async (request) => {
      if (sha256Hex(documentOf(request)) !== hangOn) return extract(request);
      await new Promise<void>((resolve) => request.signal?.addEventListener('abort', () => resolve(), { once: true }));
      aborted.push(request.signal?.aborted ?? false);
      throw request.signal?.reason ?? new Error('aborted');
    };
    // (jitter 0: a record cut off mid-step waits half a function timeout, 2.5 s here, before it comes back)
    const { handler, sink } = testConsumer(t, model, { random: () => 0 });
    const messages = await receive(t, { max: 2, waitSeconds: 2 });
    const hanging = messages.find((m) => jobOf(m).input.contentSha256 === hangOn)!;

    // Act: the invocation has 4 s (a 2 s call fits), the first call never answers
    const out = await invoke(t, handler, messages, { timeoutMs: 4_000 });
    const waiting = await queueCounts(t);
    const [back] = await receive(t, { max: 1, waitSeconds: 5 });

    // Assess
    assert.ok(out.elapsedMs < 4_000, `returned after ${out.elapsedMs} ms, before Lambda's timeout`);
    assert.deepEqual(out.response.batchItemFailures, []);
    assert.deepEqual(aborted, [true], 'the call saw its signal abort');
    assert.equal(await t.results.count(), 1);
    assert.equal(sink.totals.total.InvocationDeadlineDeferred, 1);
    assert.equal(sink.totals.total.RecordFailed ?? 0, 0);
    assert.deepEqual(waiting, { visible: 0, notVisible: 0, delayed: 1 }, 'the copy waits; nothing else is left');
    assert.equal(jobOf(back!).jobId, jobOf(hanging).jobId, 'sent back');
    assert.equal(back!.Attributes?.ApproximateReceiveCount, '1');
  });

  it('fails a record still unsettled when the time is up (a step that never returns): the batch returns in time, logged and counted', async () => {
    // Prepare: two jobs; the ledger's claim of the first never returns
    const t = await newLane();
    const docs = englishDocuments(2);
    await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#stuck` })),
    );
    const messages = await receive(t, { max: 2, waitSeconds: 2 });
    const stuck = messages[0]!;
    const { handler, deps, sink } = testConsumer(t, scriptedModel());
    const claim = deps.ledger.claimJob.bind(deps.ledger);
    deps.ledger.claimJob = async (input) => (input.jobId === jobOf(stuck).jobId ? new Promise(() => undefined) : claim(input));

    // Act
    const out = await invoke(t, handler, messages, { timeoutMs: 4_000 });

    // Assess
    assert.ok(out.elapsedMs < 4_000, `returned after ${out.elapsedMs} ms, before Lambda's timeout`);
    assert.deepEqual(
      out.response.batchItemFailures.map((f) => f.itemIdentifier),
      [stuck.MessageId],
    );
    assert.equal(await t.results.count(), 1);
    assert.equal(sink.totals.total.RecordFailed, 1);
    assert.equal(sink.totals.total.RecordFailedDeadline, 1);
    const line = logLines(sink.lines).find((l) => l.message === 'record failed: SQS brings it back');
    assert.equal(line?.messageId, stuck.MessageId);
    assert.equal(line?.reason, 'invocation_deadline');
    assert.ok(line?.error);
  });

  it('acknowledges a record whose re-send succeeded even when the time runs out before it returns', async () => {
    // Prepare: a rate limit defers the job; the ledger line after the re-send never returns
    const t = await newLane();
    const [doc] = englishDocuments(1);
    await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#resent` }]);
    const model = scriptedModel(() => new ProviderError('429', 'scripted', 429, { kind: 'rate_limit', retryAfterMs: 1_000, resetAt: null }));
    const { handler, deps } = testConsumer(t, model);
    const record = deps.ledger.record.bind(deps.ledger);
    deps.ledger.record = async (entry) => (entry.kind === 'deferred' ? new Promise(() => undefined) : record(entry));

    // Act
    const out = await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 2 }), { timeoutMs: 3_000 });

    // Assess: acknowledged (not failed back), and exactly one copy of the job waits in the queue
    assert.deepEqual(out.response.batchItemFailures, []);
    await waitUntil('the re-sent copy', async () => (await receive(t, { max: 2, waitSeconds: 2 })).length === 1, 5_000);
  });
});
