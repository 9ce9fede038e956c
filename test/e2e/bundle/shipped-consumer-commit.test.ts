/**
 * The shipped consumer bundle (the `cdk.out` of a real offline synth, run in its own Node process with
 * the function's synthesized environment on the local services: test/e2e/bundle/shipped-consumer-support.ts)
 * on a job: it commits once with the key from the lane's secret, and the same message delivered again
 * is suppressed as a duplicate without a second model call. The lane pause: shipped-consumer-pause.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Message } from '@aws-sdk/client-sqs';
import { secretValues } from '../../helpers/aws-stub.js';
import { englishDocuments, queueCounts, receive, submitTo } from '../../helpers/consumer-harness.js';
import {
  acknowledge,
  answered,
  assertStubCallsSane,
  type DeployedLane,
  deployLane,
  GOOD_KEY,
  invokeShipped,
  metric,
  problems,
  provider,
  stub,
  useShippedConsumer,
} from './shipped-consumer-support.js';

useShippedConsumer();

describe('the shipped consumer bundle (cdk.out) on local endpoints', () => {
  describe('a job', () => {
    let t: DeployedLane;
    let jobId: string;
    let firstDelivery: Message;

    before(async () => {
      t = await deployLane(secretValues.keys({ 'key-1': GOOD_KEY }));
    });
    after(() => t?.destroy());

    it('commits once through the bundle', async () => {
      const [doc] = englishDocuments(1);
      const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#shipped` }]);
      jobId = item!.jobId!;
      // Received with no visibility timeout, so SQS can deliver it again (the next test).
      const messages = await receive(t, { max: 1, waitSeconds: 1, visibilityTimeout: 0 });
      assert.equal(messages.length, 1);
      firstDelivery = messages[0]!;
      const before = provider.stats().perKey[GOOD_KEY]?.successes ?? 0;

      const invocation = await invokeShipped(t, messages);

      assert.deepEqual(answered(invocation).batchItemFailures, [], problems(invocation));
      const results = await t.results.scanAll();
      assert.equal(results.length, 1);
      assert.equal(results[0]?.jobId, jobId);
      assert.equal(results[0]?.modelCalls, 1);
      assert.equal((provider.stats().perKey[GOOD_KEY]?.successes ?? 0) - before, 1, 'one model call, with the key from the secret');
      assert.equal(metric(invocation, 'Completed'), 1);
      assert.ok(invocation.lines.some((l) => l.outcome === 'committed' && l.jobId === jobId));
      assert.deepEqual(
        stub.callsOf('secretsmanager').map((c) => [c.operation, c.input.SecretId]),
        [['GetSecretValue', t.secretArn]],
      );
      assert.deepEqual(stub.callsOf('scheduler'), []);
      assert.deepEqual(stub.callsOf('lambda'), []);
      assertStubCallsSane(t);
    });

    it('the same message delivered again is suppressed as a duplicate', async () => {
      assert.ok(firstDelivery, 'runs after the commit');
      const again = await receive(t, { max: 1, waitSeconds: 1 });
      assert.equal(again.length, 1);
      assert.equal(again[0]?.MessageId, firstDelivery.MessageId);
      assert.equal(again[0]?.Attributes?.ApproximateReceiveCount, '2');
      const calls = provider.stats().perKey[GOOD_KEY]?.requests ?? 0;

      const invocation = await invokeShipped(t, again);

      const response = answered(invocation);
      assert.deepEqual(response.batchItemFailures, [], problems(invocation));
      assert.equal(await t.results.count(), 1, 'the results table still holds one item');
      assert.equal(metric(invocation, 'DuplicateSuppressed'), 1);
      assert.equal(metric(invocation, 'Completed'), 0);
      assert.equal((provider.stats().perKey[GOOD_KEY]?.requests ?? 0) - calls, 0, 'no second model call');
      await acknowledge(t, again, response);
      assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
      assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
      assertStubCallsSane(t);
    });
  });
});
