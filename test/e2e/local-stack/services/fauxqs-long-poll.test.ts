/**
 * The local SQS long poll behaves as AWS documents it: a waiting receive answers when a message is
 * there for it, or empty when its wait time ends — one arrival does not answer every waiting receive
 * (`workbench/local-stack/services/fauxqs-long-poll.ts`). Runs against the test run's fauxqs, over the
 * real seconds of its long polls (the e2e tier).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CreateQueueCommand, DeleteQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { createAwsClients } from '../../../../lib/platform/clients.js';
import { testEndpoints, uniqueName } from '../../../helpers/endpoints.js';

describe('local SQS long polling', () => {
  it('one message answers one of three waiting receives; the others wait out their wait time', async () => {
    // Prepare: a queue and three receives waiting 2 s on it
    const clients = createAwsClients('us-east-1', testEndpoints());
    const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('long-poll') }));
    try {
      const started = Date.now();
      const receives = [0, 1, 2].map(async () => {
        const out = await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 2 }));
        return { messages: out.Messages?.length ?? 0, afterMs: Date.now() - started };
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Act
      await clients.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'one' }));
      const answers = await Promise.all(receives);
      // Assess
      const got = answers.filter((a) => a.messages > 0);
      const empty = answers.filter((a) => a.messages === 0);
      assert.equal(got.length, 1);
      assert.ok(got[0]!.afterMs < 1_500, `the message was received ${got[0]!.afterMs} ms in`);
      assert.equal(empty.length, 2);
      for (const a of empty) assert.ok(a.afterMs >= 1_900, `an empty receive answered ${a.afterMs} ms in, before its 2 s wait`);
    } finally {
      await clients.sqs.send(new DeleteQueueCommand({ QueueUrl }));
      clients.destroy();
    }
  });

  it('a burst of messages is spread over the waiting receives until none is left', async () => {
    // Prepare: two receives waiting, each taking at most one message
    const clients = createAwsClients('us-east-1', testEndpoints());
    const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('long-poll') }));
    try {
      const started = Date.now();
      const receives = [0, 1].map(async () => {
        const out = await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 2 }));
        return { messages: out.Messages?.length ?? 0, afterMs: Date.now() - started };
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Act: two messages at once
      await Promise.all(['a', 'b'].map((body) => clients.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body }))));
      const answers = await Promise.all(receives);
      // Assess: each receive got one, soon
      assert.deepEqual(
        answers.map((a) => a.messages),
        [1, 1],
      );
      for (const a of answers) assert.ok(a.afterMs < 1_500, `answered ${a.afterMs} ms in`);
    } finally {
      await clients.sqs.send(new DeleteQueueCommand({ QueueUrl }));
      clients.destroy();
    }
  });
});
