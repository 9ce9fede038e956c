/**
 * The shipped consumer bundle (the `cdk.out` of a real offline synth, run in its own Node process with
 * the function's synthesized environment on the local services: test/e2e/bundle/shipped-consumer-support.ts)
 * pausing its lane: the synthesized environment names the template's own pause resources, and a
 * billing 429 on the lane's only key, or a provider secret that is unset or malformed, pauses the lane
 * through the (stubbed) Scheduler and Lambda APIs — resume scheduled, then the mapping disabled — with
 * the job kept in its queue. A job committed once: shipped-consumer-commit.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONSUMER_ENV } from '../../../lib/platform/environment.js';
import { secretValues } from '../../helpers/aws-stub.js';
import { englishDocuments, queueCounts, receive, submitTo } from '../../helpers/consumer-harness.js';
import {
  acknowledge,
  answered,
  assertPausedThroughStub,
  assertStubCallsSane,
  BROKE_KEY,
  deployLane,
  invokeShipped,
  metric,
  problems,
  provider,
  shipped,
  useShippedConsumer,
} from './shipped-consumer-support.js';

useShippedConsumer();

describe('the shipped consumer bundle (cdk.out) on local endpoints', () => {
  it("the synthesized environment names the template's own pause resources", () => {
    const env = shipped.function.environment;
    const resources = Object.values(shipped.template.Resources);
    const group = resources.find((r) => r.Type === 'AWS::Scheduler::ScheduleGroup');
    assert.equal(env[CONSUMER_ENV.pauseScheduleGroup], group?.Properties?.Name);
    const parameter = resources.find((r) => r.Type === 'AWS::SSM::Parameter' && r.Properties?.Name === env[CONSUMER_ENV.mappingIdParameter]);
    const mappingRef = (parameter?.Properties?.Value as { Ref?: string } | undefined)?.Ref;
    assert.equal(shipped.template.Resources[mappingRef ?? '']?.Type, 'AWS::Lambda::EventSourceMapping', 'the parameter holds the mapping id');
    const roleRef = (env[CONSUMER_ENV.pauseSchedulerRoleArn] as { 'Fn::GetAtt'?: string[] })['Fn::GetAtt']?.[0] ?? '';
    const role = shipped.template.Resources[roleRef];
    assert.equal(role?.Type, 'AWS::IAM::Role');
    assert.match(JSON.stringify(role?.Properties?.AssumeRolePolicyDocument), /scheduler\.amazonaws\.com/, 'the role the resume runs as is the scheduler role');
    const groupId = Object.entries(shipped.template.Resources).find(
      ([, r]) => r.Type === 'AWS::Scheduler::ScheduleGroup' && r.Properties?.Name === env[CONSUMER_ENV.pauseScheduleGroup],
    )?.[0];
    const trust = role?.Properties?.AssumeRolePolicyDocument as { Statement: Array<{ Condition?: { StringEquals?: Record<string, unknown> } }> };
    assert.deepEqual(
      trust.Statement[0]?.Condition?.StringEquals?.['aws:SourceArn'],
      { 'Fn::GetAtt': [groupId, 'Arn'] },
      'only schedules of that group may assume it',
    );
    assert.equal(shipped.function.handler, 'index.handler');
  });

  it('a billing 429 with the lane’s only key out of credit pauses the lane: schedule the resume, then disable the mapping', async () => {
    const t = await deployLane(secretValues.keys({ 'key-1': BROKE_KEY }));
    try {
      const [doc] = englishDocuments(1);
      await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#billing` }]);
      const messages = await receive(t, { max: 1, waitSeconds: 1 });
      assert.equal(messages.length, 1);
      const refusedBefore = provider.stats().perKey[BROKE_KEY]?.rateLimited.insufficient_quota ?? 0;
      const invokedAt = Date.now();

      const invocation = await invokeShipped(t, messages);

      const response = answered(invocation);
      assert.deepEqual(response.batchItemFailures, [], `no record failed; ${problems(invocation)}`);
      assert.equal((provider.stats().perKey[BROKE_KEY]?.rateLimited.insufficient_quota ?? 0) - refusedBefore, 1, 'one call, answered 429 out of credit');
      const { schedule } = assertPausedThroughStub(t, invokedAt);
      assert.match(String(schedule.input.Description), /billing/);
      assert.equal((await t.rateState.readPause())?.reason, 'billing');
      assert.equal(metric(invocation, 'BillingAlarm'), 1);
      assert.ok(invocation.lines.some((l) => l.outcome === 'lane_paused'));
      await acknowledge(t, messages, response);
      assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 1 }, 'the job waits in its queue (re-sent for later)');
      assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 }, 'nothing dead-lettered');
      assert.equal(await t.results.count(), 0);
      assertStubCallsSane(t);
    } finally {
      t.destroy();
    }
  });

  for (const [what, secret] of [
    ['unset (the generated password a fresh stack holds)', secretValues.unset],
    ['malformed (JSON without the key ids)', secretValues.malformed],
  ] as const) {
    it(`a provider secret that is ${what} pauses the lane (reason configuration) instead of failing`, async () => {
      const t = await deployLane(secret());
      try {
        const [doc] = englishDocuments(1);
        await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#config` }]);
        const messages = await receive(t, { max: 1, waitSeconds: 1 });
        assert.equal(messages.length, 1);
        const requestsBefore = provider.stats().requests;
        const invokedAt = Date.now();

        const invocation = await invokeShipped(t, messages);

        const response = answered(invocation);
        const { schedule } = assertPausedThroughStub(t, invokedAt);
        assert.match(String(schedule.input.Description), /configuration/);
        assert.equal((await t.rateState.readPause())?.reason, 'configuration');
        assert.equal(metric(invocation, 'ConfigurationError') >= 1, true);
        assert.equal(provider.stats().requests - requestsBefore, 0, 'no model call without a key');
        await acknowledge(t, messages, response);
        const counts = await queueCounts(t);
        assert.equal(counts.visible + counts.notVisible + counts.delayed, 1, 'the job stays in its queue');
        assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 }, 'nothing dead-lettered');
        assert.equal(await t.results.count(), 0);
        assertStubCallsSane(t);
      } finally {
        t.destroy();
      }
    });
  }
});
