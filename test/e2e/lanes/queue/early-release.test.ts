/**
 * Slowness must not amplify, when the invocation's own deadline cuts a record in real time (moved from
 * the unit and contract tier, which runs on a virtual clock): a re-send answered after the deadline, a
 * redelivered record's duplicate check answered after the record's work stopped. Each test invokes the
 * handler with a 2 s invocation, never applies its batch response, and waits a few seconds of real time.
 * The other cases: `test/lib/lanes/queue/early-release.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import { createAwsClients } from '../../../../lib/platform/clients.js';
import { ResultStore } from '../../../../lib/store/results.js';
import { testEndpoints } from '../../../helpers/endpoints.js';
import {
  englishDocuments,
  freshSqsClient,
  invoke,
  jobOf,
  queueCounts,
  receive,
  scriptedModel,
  submitTo,
  testConsumer,
  trackedLanes,
} from '../../../helpers/consumer-harness.js';

const newLane = trackedLanes();

describe('consumer: a settled original is deleted at once', () => {
  it('a re-send whose answer comes after the deadline: the record is reported failed, then its original is deleted once the send is confirmed', async () => {
    // Prepare: one job; SQS takes the re-send at once but answers 2.5 s later (a slow network or machine)
    const t = await newLane();
    await submitTo(
      t,
      englishDocuments(1).map((d) => ({ text: d.text, sourceId: `${d.sourceId}#early-release-late` })),
    );
    const sqs = freshSqsClient(t);
    sqs.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'SendMessageCommand') await sleep(2_500);
        return out;
      },
      { step: 'initialize', name: 'slowSendAnswer' },
    );
    const { handler } = testConsumer(t, scriptedModel(), { sqs });
    const messages = await receive(t, { max: 1, waitSeconds: 2 });

    // Act: a 2 s invocation leaves no time for a model call: the record is deferred, its answer comes late
    const { response, elapsedMs } = await invoke(t, handler, messages, { timeoutMs: 2_000, ack: false });
    const atReturn = await queueCounts(t);
    await sleep(3_000);
    const afterSend = await queueCounts(t);

    // Assess: returned in time with the record failed (its fate was unknown); then only the copy is left
    assert.ok(elapsedMs < 2_000, `returned in ${elapsedMs} ms`);
    assert.deepEqual(
      response.batchItemFailures.map((f) => f.itemIdentifier),
      [messages[0]!.MessageId],
    );
    assert.deepEqual(atReturn, { visible: 1, notVisible: 1, delayed: 0 }, 'the copy (sent back at once) beside the original still in flight');
    assert.deepEqual(afterSend, { visible: 1, notVisible: 0, delayed: 0 }, 'the original is gone: it will not come back beside its copy');
    const [copy] = await receive(t, { max: 1 });
    assert.equal(jobOf(copy!).jobId, jobOf(messages[0]!).jobId);
    assert.equal(copy!.Attributes?.ApproximateReceiveCount, '1', 'no receive spent');
  });

  it("a redelivered record whose duplicate check is cut by the invocation's time is sent back to wait about a function timeout, not failed: no receive spent", async () => {
    // Prepare: one job received twice (receive count 2, so the consumer reads the results table first);
    // that read answers only after the record's work has stopped
    const t = await newLane();
    await submitTo(
      t,
      englishDocuments(1).map((d) => ({ text: d.text, sourceId: `${d.sourceId}#early-release-intake` })),
    );
    const [first] = await receive(t, { max: 1, waitSeconds: 2 });
    await t.clients.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: t.queueUrl, ReceiptHandle: first!.ReceiptHandle!, VisibilityTimeout: 0 }));
    const messages = await receive(t, { max: 1, waitSeconds: 2 });
    const slow = createAwsClients(t.lane.region, testEndpoints());
    slow.dynamodb.middlewareStack.add(
      (next, context) => async (args) => {
        if (/^Get(Item)?Command$/.test(context.commandName ?? '')) await sleep(1_500);
        return next(args);
      },
      { step: 'initialize', name: 'slowResultsRead' },
    );
    const results = new ResultStore({ dynamodb: slow.dynamodb, tableName: t.lane.resources.resultsTable });
    const model = scriptedModel();
    const { handler, sink } = testConsumer({ ...t, results }, model, { random: () => 0 });

    // Act: a 2 s invocation whose work stops about 0.5 s before its deadline (at 1.8 s)
    const { response } = await invoke(t, handler, messages, { timeoutMs: 2_000, ack: false });
    const counts = await queueCounts(t);

    // Assess: acknowledged (sent back), no model call; the copy waits about a function timeout (half of it at
    // jitter 0: the machine is slower than its invocations, coming back at once would loop), the original is gone
    assert.equal(messages[0]!.Attributes?.ApproximateReceiveCount, '2');
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(model.calls.length, 0);
    assert.deepEqual(counts, { visible: 0, notVisible: 0, delayed: 1 });
    const deferred = sink.lines.flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as Record<string, unknown>] : [])).find((l) => l.message === 'deferred');
    assert.equal(deferred?.reason, 'invocation_deadline');
    assert.equal(deferred?.delaySeconds, Math.ceil(t.lane.consumer.timeoutSeconds / 2));
    assert.equal(deferred?.deferrals, 0, 'no deferral counted');
  });
});
