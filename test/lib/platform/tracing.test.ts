/**
 * Following one job with X-Ray: trace headers from outside are checked; the producer sends each job's
 * message with its trace header (`AWSTraceHeader`); the consumer reads the record's header (as Lambda's
 * event has it: fauxqs does not keep message system attributes, so the test sets the record's attribute as
 * SQS would) and carries it to the job's log lines, ledger entries, committed result and every message it
 * sends on for the job (a deferral's re-send).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { DEFAULT_PROMPT_VERSION, DEFAULT_SCHEMA_VERSION, isKnownPromptVersion } from '../../../lib/contract/schemas/registry.js';
import { submitDocuments } from '../../../lib/intake/producer.js';
import { traceHeaderOf, traceIdOf, traceSystemAttributes } from '../../../lib/platform/tracing.js';
import { englishDocuments, invoke, receive, scriptedModel, testConsumer, throttle, trackedLanes } from '../../helpers/consumer-harness.js';

const newLane = trackedLanes();
const HEADER = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
const TRACE_ID = '1-5759e988-bd862e3fe1be46a994272793';

/** Every SQS command input `sqs` sends from now on, by command name. */
function recordSends(sqs: SQSClient): Array<{ command: string; input: Record<string, unknown> }> {
  const seen: Array<{ command: string; input: Record<string, unknown> }> = [];
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      seen.push({ command: String(context.commandName), input: args.input as Record<string, unknown> });
      return next(args);
    },
    { step: 'initialize', name: `record-sends-${Math.random()}` },
  );
  return seen;
}

describe('tracing: a job followed from producer to commit', () => {
  it('checks headers from outside: a well-formed one is kept, anything else is dropped', () => {
    assert.equal(traceHeaderOf(HEADER), HEADER);
    assert.equal(traceIdOf(HEADER), TRACE_ID);
    assert.deepEqual(traceSystemAttributes(HEADER), { MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: HEADER } } });
    for (const bad of [
      '',
      'Root=2-5759e988-bd862e3fe1be46a994272793',
      `${HEADER};Note=${'x'.repeat(300)}`,
      'Root=1-5759e988-bd862e3fe1be46a99427279\nX',
      undefined,
    ]) {
      assert.equal(traceHeaderOf(bad), undefined, String(bad));
      assert.deepEqual(traceSystemAttributes(bad), {});
    }
  });

  it("the producer's header goes with each message; the consumer carries it to the logs, the ledger, the result and a re-send", async () => {
    // Prepare: two jobs submitted with the producer's trace header
    const t = await newLane();
    const sends = recordSends(t.clients.sqs);
    const docs = englishDocuments(2).map((d, i) => ({ text: d.text, sourceId: `${d.sourceId}#trace-${i}`, region: 'us' }));
    const submitted = await submitDocuments(
      { documents: docs },
      {
        lanes: { us: t.lane },
        clientsFor: () => ({ sqs: t.clients.sqs, s3: t.clients.s3 }),
        queueUrlFor: () => t.queueUrl,
        now: () => new Date(),
        isKnownVersion: isKnownPromptVersion,
        defaultVersions: { schemaVersion: DEFAULT_SCHEMA_VERSION, promptVersion: DEFAULT_PROMPT_VERSION },
        traceHeader: HEADER,
      },
    );
    const [committed, deferred] = submitted.results;
    // The records as Lambda hands them over: SQS's AWSTraceHeader among their attributes
    const messages = (await receive(t, { max: 2, waitSeconds: 1 })).map((m) => ({ ...m, Attributes: { ...m.Attributes, AWSTraceHeader: HEADER } }));
    const byJob = (jobId: string) => messages.filter((m) => m.Body?.includes(jobId));

    // Act: one job commits, the other is deferred by a rate limit
    const ok = testConsumer(t, scriptedModel());
    await invoke(t, ok.handler, byJob(committed!.jobId));
    const limited = testConsumer(
      t,
      scriptedModel(() => throttle({ kind: 'rate_limit', retryAfterMs: 30_000 })),
    );
    await invoke(t, limited.handler, byJob(deferred!.jobId));

    // Assess: the producer's sends
    const batches = sends.filter((s) => s.command === 'SendMessageBatchCommand');
    assert.ok(batches.length > 0);
    for (const batch of batches) {
      for (const entry of batch.input.Entries as Array<Record<string, unknown>>) {
        assert.deepEqual(entry.MessageSystemAttributes, { AWSTraceHeader: { DataType: 'String', StringValue: HEADER } });
      }
    }
    // Assess: the committed result, the ledger, the re-send, the log lines
    assert.equal((await t.results.get(committed!.idempotencyKey))?.traceId, TRACE_ID);
    const [entry] = await t.ledger.entriesFor(deferred!.jobId);
    assert.deepEqual([entry?.kind, entry?.traceId], ['deferred', TRACE_ID]);
    const resend = sends.find((s) => s.command === 'SendMessageCommand' && String(s.input.MessageBody).includes(deferred!.jobId));
    assert.deepEqual(resend?.input.MessageSystemAttributes, { AWSTraceHeader: { DataType: 'String', StringValue: HEADER } }, 'the re-send carries the header');
    const lines = [...ok.sink.lines, ...limited.sink.lines].filter((l) => l.includes('"jobId"'));
    assert.ok(lines.length > 0 && lines.every((l) => l.includes(`"traceId":"${TRACE_ID}"`)), 'every log line of the jobs names the trace');
  });
});
