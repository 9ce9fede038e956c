/**
 * The first model call's admission is taken beside the document read: one round
 * trip before the call instead of two. The take is priced at what the job declares plus its prompt's
 * own tokens; a record whose declared size falls short of its text, or that ends before its call,
 * gives the grant back. Real handler, DynamoDB Local and fauxqs; the key pool records what it is asked.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { roundRobinKeys, type KeyAdmission, type KeyPool, type KeyRequest, type KeyUsage } from '../../../../lib/admission/keys/key-pool.js';
import { estimateTokens } from '../../../../lib/contract/job.js';
import { getExtractionPrompt } from '../../../../lib/contract/schemas/registry.js';
import { declaredCallTokens } from '../../../../lib/extraction/admit.js';
import { englishDocuments, invoke, jobOf, receive, scriptedModel, sendRaw, submitTo, testConsumer, trackedLanes } from '../../../helpers/consumer-harness.js';

const newLane = trackedLanes();

/** A key pool that admits every call and records each take and how its grant was settled. */
function recordingKeys(): KeyPool & { takes: KeyRequest[]; settled: Array<KeyUsage | null | 'never'> } {
  const inner = roundRobinKeys([{ id: 'key-1', quotaOwner: 'us-org', secret: 'sk-test-key-1' }]);
  const takes: KeyRequest[] = [];
  const settled: Array<KeyUsage | null | 'never'> = [];
  return {
    ...inner,
    takes,
    settled,
    async acquire(request: KeyRequest): Promise<KeyAdmission> {
      const index = takes.push(request) - 1;
      settled[index] = 'never';
      const grant = await inner.acquire(request);
      if (!grant.admitted) return grant;
      return {
        ...grant,
        settle: async (usage) => {
          settled[index] = usage;
        },
      };
    },
  };
}

/** The tokens admission prices the first call of `text` at once its prompt is built. */
function promptTokens(text: string, job: { schemaVersion: string; promptVersion: string }): number {
  const prompt = getExtractionPrompt(job.schemaVersion, job.promptVersion)!;
  return estimateTokens(
    prompt
      .buildMessages(text)
      .map((m) => m.content)
      .join('\n'),
  );
}

/** A new lane with the `index`-th English document submitted by the real producer, its message received (not processed). */
async function queuedJob(index: number) {
  const t = await newLane();
  const doc = englishDocuments(index + 1)[index]!;
  await submitTo(t, [{ text: doc.text, sourceId: doc.sourceId }]);
  const messages = await receive(t, { max: 1, waitSeconds: 2 });
  return { t, doc, messages, job: jobOf(messages[0]!) };
}

describe('the first call is admitted beside the document read', () => {
  it('takes once, at the declared tokens plus the prompt’s own (never less than the built prompt), and the call uses that grant', async () => {
    // Prepare: one job from the real producer
    const { t, doc, messages, job } = await queuedJob(0);
    const keys = recordingKeys();
    const { handler, sink } = testConsumer(t, scriptedModel(), { keys });
    // Act
    await invoke(t, handler, messages);
    // Assess
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(keys.takes.length, 1);
    assert.equal(keys.takes[0]!.estimatedTokens, declaredCallTokens(job));
    assert.ok(declaredCallTokens(job) >= promptTokens(doc.text, job), 'the early price covers the built prompt');
    assert.notEqual(keys.settled[0], null, 'settled with the call’s usage');
    assert.notEqual(keys.settled[0], 'never');
  });

  it('a job declaring fewer tokens than its text gives the early grant back and takes again for what its prompt needs', async () => {
    // Prepare: the real job, its declared size cut to one token
    const { t, doc, messages, job } = await queuedJob(1);
    const { DeleteMessageCommand } = await import('@aws-sdk/client-sqs');
    await t.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: t.queueUrl, ReceiptHandle: messages[0]!.ReceiptHandle! }));
    await sendRaw(t, JSON.stringify({ ...job, input: { ...job.input, estimatedTokens: 1 } }));
    const keys = recordingKeys();
    const { handler, sink } = testConsumer(t, scriptedModel(), { keys });
    // Act
    await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 2 }));
    // Assess
    assert.equal(sink.totals.total.Completed, 1);
    assert.deepEqual(
      keys.takes.map((r) => r.estimatedTokens),
      [declaredCallTokens({ ...job, input: { ...job.input, estimatedTokens: 1 } }), promptTokens(doc.text, job)],
    );
    assert.equal(keys.settled[0], null, 'the early grant given back unused');
    assert.notEqual(keys.settled[1], null);
  });

  it('a record that ends before its call (its document is gone) gives the early grant back', async () => {
    // Prepare: a job whose document is deleted before the consumer reads it
    const { t, messages, job } = await queuedJob(2);
    const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
    await t.clients.s3.send(new DeleteObjectCommand({ Bucket: job.input.bucket, Key: job.input.key }));
    const keys = recordingKeys();
    const model = scriptedModel();
    const { handler } = testConsumer(t, model, { keys });
    // Act
    await invoke(t, handler, messages);
    // Assess
    assert.equal(model.calls.length, 0);
    assert.equal(keys.takes.length, 1);
    assert.equal(keys.settled[0], null, 'given back');
  });
});
