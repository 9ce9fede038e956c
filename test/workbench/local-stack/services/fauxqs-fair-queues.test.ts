/**
 * SQS fair queues as the local stack's fauxqs delivers them (`fauxqs-fair-queues.ts`): which visible
 * messages a receive takes, by the rules of "How Amazon SQS fair queues work".
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { fairPicks, isNoisy, type TenantLoad } from '../../../../workbench/local-stack/services/fauxqs-fair-queues.js';
import { startFauxqsLocal } from '../../../../workbench/local-stack/services/services.js';

const load = (inFlight: Record<string, number>, processingMs: Record<string, number>): TenantLoad => ({
  inFlight: new Map(Object.entries(inFlight)),
  processingMs: new Map(Object.entries(processingMs)),
});

describe('local stack: SQS fair queues', () => {
  it('marks a tenant noisy by more than 10 % of in-flight with at least 30, or more than 10 % of recent processing time', () => {
    // Prepare / Act / Assess
    assert.equal(isNoisy('a', load({ a: 30, b: 200 }, {})), true, '13 % and 30 in flight');
    assert.equal(isNoisy('a', load({ a: 29, b: 20 }, {})), false, 'fewer than 30 in flight');
    assert.equal(isNoisy('a', load({ a: 5 }, { a: 1_000, b: 9_000 })), false, 'exactly 10 % of processing time');
    assert.equal(isNoisy('a', load({ a: 5 }, { a: 1_100, b: 9_000 })), true);
    assert.equal(isNoisy('c', load({}, {})), false, 'nothing processed yet');
  });

  it('delivers the oldest while no waiting tenant is noisy', () => {
    // Prepare: two tenants, neither noisy
    const waiting = ['a', 'b', 'a', 'b'];
    // Act
    const picks = fairPicks(waiting, load({}, {}), 3);
    // Assess
    assert.deepEqual(picks, [0, 1, 2]);
  });

  it("delivers a quiet tenant's messages first while another is noisy, then the noisy one's", () => {
    // Prepare: tenant a's backlog is noisy (all the processing time); b's two messages wait behind it
    const waiting = ['a', 'a', 'a', 'b', 'a', 'b'];
    // Act
    const picks = fairPicks(waiting, load({ a: 10 }, { a: 50_000 }), 4);
    // Assess
    assert.deepEqual(picks, [3, 5, 0, 1]);
  });

  it('among noisy tenants, takes from the one with the fewest in flight first', () => {
    // Prepare: both noisy by processing time; a holds 8 in flight, b 6
    const waiting = ['a', 'a', 'a', 'b', 'b', 'b'];
    // Act
    const picks = fairPicks(waiting, load({ a: 8, b: 6 }, { a: 40_000, b: 20_000 }), 4);
    // Assess: b until it holds as many as a, then by the fewest; a tie goes to b, which has processed less
    assert.deepEqual(picks, [3, 4, 5, 0]);
  });

  it('between noisy tenants with as many in flight, takes from the one with less recent processing time, then the oldest', () => {
    // Prepare: a backlog (a, oldest) and a later tenant (b), both noisy, two in flight each
    const waiting = ['a', 'a', 'b', 'b'];
    // Act
    const later = fairPicks(waiting, load({ a: 2, b: 2 }, { a: 60_000, b: 12_000 }), 1);
    const even = fairPicks(waiting, load({ a: 2, b: 2 }, { a: 30_000, b: 30_000 }), 1);
    // Assess
    assert.deepEqual(later, [2], 'the tenant that processed less');
    assert.deepEqual(even, [0], 'the oldest message on a full tie');
  });

  it("on the local stack's fauxqs: a later tenant's messages are received before a backlog's, as an SQS fair queue delivers them", async () => {
    // Prepare: tenant a's 20 messages on a standard queue, 5 of them in flight; then tenant b's 2 (one batch, one single send)
    const fauxqs = await startFauxqsLocal();
    try {
      const sqs = new SQSClient({ endpoint: fauxqs.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'fair' }));
      for (let b = 0; b < 2; b++) {
        const Entries = Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, MessageBody: `a-${b * 10 + i}`, MessageGroupId: 'a' }));
        await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries }));
      }
      const first = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 5 }));
      await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries: [{ Id: 'b1', MessageBody: 'b-1', MessageGroupId: 'b' }] }));
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'b-2', MessageGroupId: 'b' }));
      // Act
      const second = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 4 }));
      // Assess
      assert.deepEqual(
        first.Messages?.map((m) => m.Body),
        ['a-0', 'a-1', 'a-2', 'a-3', 'a-4'],
      );
      assert.deepEqual(
        second.Messages?.map((m) => m.Body),
        ['b-1', 'b-2', 'a-5', 'a-6'],
      );
    } finally {
      await fauxqs.stop();
    }
  });
});
