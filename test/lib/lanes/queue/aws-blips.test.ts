/**
 * AWS calls that survive a blip: the consumer's DynamoDB and SQS clients retry a throttle or a 5xx in
 * the SDK's standard mode (lib/platform/retry.ts), so one transient error neither fails the record nor
 * wastes the model call already paid for. Real stores and queues on the run's DynamoDB Local and fauxqs,
 * reached through a proxy that answers chosen operations with AWS errors (test/helpers/fault-proxy.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sha256Hex } from '../../../../lib/contract/job.js';
import { createAwsClients } from '../../../../lib/platform/clients.js';
import { provisionLane } from '../../../../workbench/local-stack/services/provision.js';
import {
  englishDocuments,
  invoke,
  receive,
  scriptedModel,
  submitTo,
  testConsumer,
  testLaneConfig,
  testLaneOf,
  throttle,
  type TestLane,
} from '../../../helpers/consumer-harness.js';
import { testEndpoints } from '../../../helpers/endpoints.js';
import { DYNAMODB_5XX, DYNAMODB_THROTTLED, type FaultProxy, SQS_5XX, startFaultProxy } from '../../../helpers/fault-proxy.js';
import { inspectQueue } from '../../../helpers/queue-time.js';

let dynamodb: FaultProxy;
let sqs: FaultProxy;
const lanes: TestLane[] = [];

before(async () => {
  const real = testEndpoints();
  [dynamodb, sqs] = await Promise.all([startFaultProxy(real.dynamodb), startFaultProxy(real.sqs)]);
});
after(async () => {
  for (const t of lanes) t.destroy();
  await Promise.all([dynamodb.stop(), sqs.stop()]);
});

/** A fresh lane whose clients reach DynamoDB and SQS through the fault proxies. */
async function laneBehindProxies(): Promise<TestLane> {
  const lane = testLaneConfig();
  const real = testEndpoints();
  const direct = createAwsClients(lane.region, real);
  const provisioned = await provisionLane(lane, direct);
  direct.destroy();
  const t = testLaneOf(lane, createAwsClients(lane.region, { ...real, dynamodb: dynamodb.endpoint, sqs: sqs.endpoint }), provisioned);
  lanes.push(t);
  return t;
}

describe('consumer: AWS calls that survive a blip', () => {
  it('a throttled and then failing DynamoDB write after the model call is retried in-process: committed, one model call, the record not failed', async () => {
    // Prepare: one job; the next two PutItems (the job-id claim beside the call, or the commit) answer a throttle, then a 5xx
    const t = await laneBehindProxies();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#${t.lane.resources.queueName}` }]);
    const model = scriptedModel();
    const { handler } = testConsumer(t, model);
    const messages = await receive(t, { max: 1 });
    dynamodb.fail('PutItem', DYNAMODB_THROTTLED, DYNAMODB_5XX);

    // Act
    const { response } = await invoke(t, handler, messages);

    // Assess: both errors were answered, and retried past
    assert.equal(dynamodb.injected.get('PutItem'), 2);
    assert.deepEqual(response.batchItemFailures, [], 'the record is not failed');
    assert.equal(model.calls.length, 1, 'one model call: none wasted');
    assert.equal((await t.results.get(item!.idempotencyKey))?.jobId, item!.jobId, 'committed');
  });

  it('a re-send whose SendMessage meets a 5xx is retried in-process: the job is re-sent once, the record acknowledged', async () => {
    // Prepare: one job the model throttles (a 429 with a stated wait): the consumer re-sends it for later; SendMessage fails once
    const t = await laneBehindProxies();
    const [doc] = englishDocuments(1);
    await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#${t.lane.resources.queueName}` }]);
    const sha = sha256Hex(doc!.text);
    const model = scriptedModel((call) => (call.sha === sha ? throttle({ kind: 'rate_limit', retryAfterMs: 30_000 }) : undefined));
    const { handler } = testConsumer(t, model);
    const messages = await receive(t, { max: 1 });
    const sendsBefore = sqs.seen.get('SendMessage') ?? 0;
    sqs.fail('SendMessage', SQS_5XX);

    // Act
    const { response } = await invoke(t, handler, messages);

    // Assess: one injected error, one retried send, the record acknowledged, exactly one delayed copy waiting
    assert.equal(sqs.injected.get('SendMessage'), 1);
    assert.equal((sqs.seen.get('SendMessage') ?? 0) - sendsBefore, 2, 'the failed send and its retry');
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(model.calls.length, 1);
    const queue = await inspectQueue(t.queueUrl);
    assert.equal(queue.delayed.length, 1, 'one re-sent copy, delayed');
  });
});
