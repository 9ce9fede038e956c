/**
 * Re-send and visibility changes against the run's fauxqs. fauxqs is looser than SQS (it accepts a
 * DelaySeconds of 901), so the clamp is checked on the request actually put on the wire. A delay or a
 * visibility timeout is not waited out: it is read from fauxqs's own record of the message (when it
 * becomes visible), through its inspection endpoint (`test/helpers/queue-time.ts`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { idempotencyKeyFor, jobMessageAttributes, parseJob, sha256Hex, type Job } from '../../../../lib/contract/job.js';
import { createAwsClients, LOCAL_CREDENTIALS, type AwsClients } from '../../../../lib/platform/clients.js';
import { ResendFailedError, VisibilityChangeFailedError } from '../../../../lib/platform/sqs-errors.js';
import { clampDelaySeconds, clampVisibilityTimeoutSeconds, extendVisibility, resendDeferred } from '../../../../lib/lanes/queue/reschedule.js';
import { testEndpoints, uniqueName } from '../../../helpers/endpoints.js';
import { inspectQueue } from '../../../helpers/queue-time.js';

function sampleJob(): Job {
  const contentSha256 = sha256Hex('document');
  const schemaVersion = 'invoice@1';
  const promptVersion = 'invoice-extract@3';
  const sourceId = 's3://inbox/doc.txt';
  return {
    contractVersion: 1,
    jobId: uniqueName('job'),
    idempotencyKey: idempotencyKeyFor({ sourceId, contentSha256, promptVersion, schemaVersion }),
    region: 'us',
    input: { bucket: 'ratelane-us-source', key: 'in/doc.txt', sourceId, contentSha256, bytes: 1200, estimatedTokens: 300 },
    schemaVersion,
    promptVersion,
    attempt: 1,
    deferrals: 0,
    eligibleAt: '2030-01-01T00:00:00.000Z',
    createdAt: '2030-01-01T00:00:00.000Z',
  };
}

/** The job as the consumer would re-send it after a throttle. */
function deferredOnce(job: Job, eligibleAt: Date): Job {
  return { ...job, deferrals: job.deferrals + 1, eligibleAt: eligibleAt.toISOString() };
}

/** Records the JSON body of every request of `commandName` as sent over HTTP. */
function captureRequests(sqs: SQSClient, commandName: string): Array<Record<string, unknown>> {
  const bodies: Array<Record<string, unknown>> = [];
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const body = (args.request as { body?: unknown }).body;
      // The JSON protocol serializes to bytes (a Uint8Array); older versions used a string.
      const text =
        body instanceof Uint8Array ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8') : typeof body === 'string' ? body : undefined;
      if (context.commandName === commandName && text !== undefined) bodies.push(JSON.parse(text) as Record<string, unknown>);
      return next(args);
    },
    { step: 'finalizeRequest', name: `capture${commandName}` },
  );
  return bodies;
}

describe('queue re-scheduling on fauxqs', () => {
  let clients: AwsClients;

  before(() => {
    clients = createAwsClients('us-east-1', testEndpoints());
  });
  after(() => clients.destroy());

  async function newQueue(): Promise<string> {
    const out = await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('jobs') }));
    assert.ok(out.QueueUrl);
    return out.QueueUrl;
  }

  async function receiveOne(queueUrl: string, options: { visibilityTimeout?: number } = {}): Promise<Message | undefined> {
    const out = await clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 1,
        WaitTimeSeconds: 0,
        ...(options.visibilityTimeout !== undefined ? { VisibilityTimeout: options.visibilityTimeout } : {}),
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    return out.Messages?.[0];
  }

  /** When fauxqs makes the received `message` visible again (epoch ms). */
  async function visibilityDeadline(queueUrl: string, message: Message): Promise<number> {
    const held = (await inspectQueue(queueUrl)).inflight.find((m) => m.receiptHandle === message.ReceiptHandle);
    assert.ok(held, 'in flight');
    return held.visibilityDeadline;
  }

  async function sendOriginal(queueUrl: string, job: Job): Promise<void> {
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job), MessageAttributes: jobMessageAttributes(job) }));
  }

  describe('resendDeferred', () => {
    it('hides the new message until its delay, with the same job, its attributes and no receive yet', async () => {
      // Prepare: the original has been delivered twice
      const queueUrl = await newQueue();
      const job = sampleJob();
      await sendOriginal(queueUrl, job);
      await receiveOne(queueUrl, { visibilityTimeout: 0 });
      const original = await receiveOne(queueUrl, { visibilityTimeout: 60 });
      assert.equal(original?.Attributes?.ApproximateReceiveCount, '2');
      const next = deferredOnce(job, new Date(Date.now() + 2000));

      // Act
      const sent = await resendDeferred({ sqs: clients.sqs, queueUrl, job: next, delaySeconds: 2 });
      await clients.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: original!.ReceiptHandle! }));

      // Assess: not receivable now; fauxqs holds it delayed 2 s from its sending (the delay is not waited out)
      assert.equal(sent.delaySeconds, 2);
      assert.ok(sent.messageId.length > 0);
      assert.equal(await receiveOne(queueUrl), undefined, 'not visible right away');
      const held = await inspectQueue(queueUrl);
      assert.deepEqual([held.ready.length, held.inflight.length], [0, 0], 'the original deleted, the new message not ready');
      const [delayed] = held.delayed;
      assert.ok(delayed, 'held back');
      assert.equal(delayed.delayUntil! - delayed.sentTimestamp, 2000, 'until 2 s after its sending');
      assert.equal(delayed.messageId, sent.messageId);
      assert.deepEqual(parseJob(delayed.body), next);
      assert.equal(delayed.approximateReceiveCount, 0, 'a new message: its first receive counts 1');
      const attributes = delayed.messageAttributes;
      for (const [name, value] of Object.entries(jobMessageAttributes(next))) {
        assert.equal(attributes[name]?.StringValue, value.StringValue, `attribute ${name}`);
        assert.equal(attributes[name]?.DataType, value.DataType, `attribute ${name} type`);
      }
      assert.equal(attributes.deferrals?.StringValue, '1');
      assert.equal(attributes.attempt?.StringValue, '1');
    });

    it('sends at most 900 s and whole seconds, rounding up', async () => {
      // Prepare
      const queueUrl = await newQueue();
      const sqs = new SQSClient({
        region: 'us-east-1',
        endpoint: testEndpoints().sqs,
        useQueueUrlAsEndpoint: false,
        credentials: LOCAL_CREDENTIALS,
        maxAttempts: 1,
      });
      const sentBodies = captureRequests(sqs, 'SendMessageCommand');
      const job = deferredOnce(sampleJob(), new Date(Date.now() + 3600_000));

      // Act
      const long = await resendDeferred({ sqs, queueUrl, job, delaySeconds: 3600 });
      const fractional = await resendDeferred({ sqs, queueUrl, job, delaySeconds: 1.2 });
      const negative = await resendDeferred({ sqs, queueUrl, job, delaySeconds: -5 });
      sqs.destroy();

      // Assess: what went over the wire, and what the caller is told
      assert.deepEqual(
        sentBodies.map((b) => b.DelaySeconds),
        [900, 2, 0],
      );
      assert.deepEqual([long.delaySeconds, fractional.delaySeconds, negative.delaySeconds], [900, 2, 0]);
      assert.equal(clampDelaySeconds(Number.POSITIVE_INFINITY), 900);
      assert.equal(clampDelaySeconds(901), 900);
      assert.equal(clampDelaySeconds(900), 900);
    });

    it('refuses an invalid job or a NaN delay without sending anything', async () => {
      // Prepare
      const queueUrl = await newQueue();
      const sqs = new SQSClient({
        region: 'us-east-1',
        endpoint: testEndpoints().sqs,
        useQueueUrlAsEndpoint: false,
        credentials: LOCAL_CREDENTIALS,
        maxAttempts: 1,
      });
      const sentBodies = captureRequests(sqs, 'SendMessageCommand');
      const invalid = { ...sampleJob(), deferrals: -1 };

      // Act + Assess
      await assert.rejects(
        resendDeferred({ sqs, queueUrl, job: invalid, delaySeconds: 5 }),
        (e: unknown) => e instanceof ResendFailedError && e.reason === 'invalid_job',
      );
      await assert.rejects(
        resendDeferred({ sqs, queueUrl, job: sampleJob(), delaySeconds: Number.NaN }),
        (e: unknown) => e instanceof ResendFailedError && e.reason === 'invalid_delay',
      );
      assert.equal(sentBodies.length, 0);
      sqs.destroy();
    });

    it('throws ResendFailedError with the cause when SQS cannot be reached', async () => {
      // Prepare
      const dead = new SQSClient({
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:1',
        useQueueUrlAsEndpoint: false,
        credentials: LOCAL_CREDENTIALS,
        maxAttempts: 1,
      });

      // Act
      const error = await resendDeferred({ sqs: dead, queueUrl: 'http://127.0.0.1:1/000000000000/jobs', job: sampleJob(), delaySeconds: 5 }).then(
        () => assert.fail('resendDeferred should have failed'),
        (e: unknown) => e,
      );
      dead.destroy();

      // Assess
      assert.ok(error instanceof ResendFailedError);
      assert.equal(error.name, 'ResendFailedError');
      assert.equal(error.reason, 'send_failed');
      assert.ok(error.cause, 'keeps the SDK error as cause');
    });
  });

  describe('extendVisibility', () => {
    it('shortens the visibility timeout so the message reappears sooner', async () => {
      // Prepare
      const queueUrl = await newQueue();
      await sendOriginal(queueUrl, sampleJob());
      const first = await receiveOne(queueUrl, { visibilityTimeout: 60 });
      assert.ok(first?.ReceiptHandle);

      // Act
      const changedAt = Date.now();
      const applied = await extendVisibility({ sqs: clients.sqs, queueUrl, receiptHandle: first.ReceiptHandle, visibilityTimeoutSeconds: 1 });
      const changedBy = Date.now();

      // Assess: still hidden, but only until 1 s after the change, long before the original 60 s (as fauxqs holds it)
      assert.deepEqual(applied, { visibilityTimeoutSeconds: 1 });
      assert.equal(await receiveOne(queueUrl), undefined, 'still hidden right after the change');
      const deadline = await visibilityDeadline(queueUrl, first);
      assert.ok(deadline >= changedAt + 1000 && deadline <= changedBy + 1000, `visible again ${deadline - changedAt} ms after the change`);
    });

    it('lengthens the visibility timeout so the message stays hidden', async () => {
      // Prepare
      const queueUrl = await newQueue();
      await sendOriginal(queueUrl, sampleJob());
      const first = await receiveOne(queueUrl, { visibilityTimeout: 1 });
      assert.ok(first?.ReceiptHandle);

      // Act
      const changedAt = Date.now();
      await extendVisibility({ sqs: clients.sqs, queueUrl, receiptHandle: first.ReceiptHandle, visibilityTimeoutSeconds: 4 });
      const changedBy = Date.now();

      // Assess: hidden until 4 s after the change, past the original 1 s (as fauxqs holds it)
      const deadline = await visibilityDeadline(queueUrl, first);
      assert.ok(deadline >= changedAt + 4000 && deadline <= changedBy + 4000, `visible again ${deadline - changedAt} ms after the change`);
    });

    it('clamps to SQS range on the wire', async () => {
      // Prepare
      const queueUrl = await newQueue();
      await sendOriginal(queueUrl, sampleJob());
      const first = await receiveOne(queueUrl, { visibilityTimeout: 30 });
      const sqs = new SQSClient({
        region: 'us-east-1',
        endpoint: testEndpoints().sqs,
        useQueueUrlAsEndpoint: false,
        credentials: LOCAL_CREDENTIALS,
        maxAttempts: 1,
      });
      const sentBodies = captureRequests(sqs, 'ChangeMessageVisibilityCommand');

      // Act
      const applied = await extendVisibility({ sqs, queueUrl, receiptHandle: first!.ReceiptHandle!, visibilityTimeoutSeconds: 50_000 });
      sqs.destroy();

      // Assess
      assert.equal(applied.visibilityTimeoutSeconds, 43_200);
      assert.deepEqual(
        sentBodies.map((b) => b.VisibilityTimeout),
        [43_200],
      );
      assert.equal(clampVisibilityTimeoutSeconds(-3), 0);
      assert.equal(clampVisibilityTimeoutSeconds(2.1), 3);
      const attrs = await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessagesNotVisible'] }));
      assert.equal(attrs.Attributes?.ApproximateNumberOfMessagesNotVisible, '1');
    });

    it('throws VisibilityChangeFailedError with the cause when SQS cannot be reached', async () => {
      // Prepare
      const dead = new SQSClient({
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:1',
        useQueueUrlAsEndpoint: false,
        credentials: LOCAL_CREDENTIALS,
        maxAttempts: 1,
      });

      // Act + Assess
      await assert.rejects(
        extendVisibility({ sqs: dead, queueUrl: 'http://127.0.0.1:1/000000000000/jobs', receiptHandle: 'handle', visibilityTimeoutSeconds: 30 }),
        (e: unknown) => e instanceof VisibilityChangeFailedError && e.name === 'VisibilityChangeFailedError' && e.cause !== undefined,
      );
      dead.destroy();
    });
  });
});
