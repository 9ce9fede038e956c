/**
 * `ExtractionLane` (`ratelane/cdk`) in a stack of someone else's app: a whole lane from a declaration
 * of its name, region and what differs from the defaults, validated at synth with the field named; the
 * region, the alarm destination and the deploy checks refused from the props as the lane stacks refuse them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { LaneConfigError } from '../../../lib/config/lanes.js';
import { AlarmDestinationError } from '../../../lib/infra/alarm-destination.js';
import { ExtractionLane, LaneRegionError } from '../../../lib/infra/extraction-lane.js';
import { ACCOUNT, EMAIL_ALARMS, NO_BUNDLING } from './support.js';

function platformStack(region?: string): Stack {
  return new Stack(new App({ context: NO_BUNDLING }), 'PlatformTeam', region ? { env: { account: ACCOUNT, region } } : {});
}

describe('ExtractionLane', () => {
  it('puts a whole lane into any stack of its region, from a declaration with overrides', () => {
    // Prepare
    const stack = platformStack('eu-west-1');
    // Act
    const lane = new ExtractionLane(stack, 'Lane', {
      lane: { name: 'emea', region: 'eu-west-1', provider: { limits: { requestsPerMinute: 120 } }, consumer: { maximumConcurrency: 4 } },
      alarmDestination: EMAIL_ALARMS,
    });
    // Assess
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::Lambda::Function', 3);
    template.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'ratelane-emea-consumer' });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 4 } });
    template.hasResourceProperties('AWS::SQS::Queue', { QueueName: 'ratelane-emea-jobs' });
    assert.equal(lane.lane.provider.limits.requestsPerMinute, 120);
    assert.equal(lane.lane.resources.bucketName, `ratelane-emea-source-${ACCOUNT}-eu-west-1`, "the bucket is the account's");
    assert.ok(
      Object.keys(template.toJSON().Outputs ?? {}).some((id) => id.includes('QueueUrl')),
      'outputs by default',
    );
  });

  it('refuses a stack without a region or in another region, a wrong field by name, and no alarm destination', () => {
    // Act / Assess
    const declared = { name: 'emea', region: 'eu-west-1' };
    assert.throws(
      () => new ExtractionLane(platformStack(), 'Lane', { lane: declared, alarmDestination: EMAIL_ALARMS }),
      (e: unknown) => e instanceof LaneRegionError && /explicit region/.test(e.message),
    );
    assert.throws(() => new ExtractionLane(platformStack('us-east-1'), 'Lane', { lane: declared, alarmDestination: EMAIL_ALARMS }), LaneRegionError);
    assert.throws(
      () => new ExtractionLane(platformStack('eu-west-1'), 'Lane', { lane: { ...declared, queue: { batchSize: 11 } }, alarmDestination: EMAIL_ALARMS }),
      (e: unknown) => e instanceof LaneConfigError && /lane "emea"/.test(e.message) && /queue\.batchSize/.test(e.message),
    );
    assert.throws(
      () => new ExtractionLane(platformStack('eu-west-1'), 'Lane', { lane: { ...declared, name: 'EMEA' }, alarmDestination: EMAIL_ALARMS }),
      LaneConfigError,
    );
    assert.throws(
      () => new ExtractionLane(platformStack('eu-west-1'), 'Lane', { lane: declared, alarmDestination: undefined as never }),
      AlarmDestinationError,
    );
  });

  it('leaves the outputs to the stack when told to', () => {
    // Prepare
    const stack = platformStack('eu-west-1');
    // Act
    new ExtractionLane(stack, 'Lane', { lane: { name: 'emea', region: 'eu-west-1' }, alarmDestination: EMAIL_ALARMS, outputs: false });
    // Assess
    assert.deepEqual(Object.keys(Template.fromStack(stack).toJSON().Outputs ?? {}), []);
  });
});
