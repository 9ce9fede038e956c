/**
 * Where a lane's alarms go: a lane app without an alarm destination is refused at synth with what to
 * add; an e-mail subscribes to the lane's topic, an existing topic of the lane's region receives every
 * alarm (the stack creates no topic), and `none` said explicitly keeps the lane's topic without a
 * subscriber. Malformed, conflicting or misplaced destinations are refused.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { DEFAULT_LANES } from '../../../lib/config/lanes.js';
import { AlarmDestinationError } from '../../../lib/infra/alarm-destination.js';
import { AppContextError, buildLaneApp } from '../../../lib/infra/app.js';
import { LaneStack, type LaneStackProps } from '../../../lib/infra/lane-stack.js';
import { ACCOUNT, ALARM_EMAIL, alarmsByName, LANES, logicalId, NO_BUNDLING, synthDefaultLanes } from './support.js';

/** Alarms that report an event: notified on ALARM only. */
const EVENT_ALARM = /-(region-mismatch|endpoint-mismatch|key-auth|billing|live-over-deadline)$/;

/** The lane stacks of an app with this context (bundling skipped, ACCOUNT). */
function lanesWith(context: Record<string, unknown>): Record<string, LaneStack> {
  return buildLaneApp(new App({ context: { ...NO_BUNDLING, account: ACCOUNT, ...context } }));
}

/** Asserts that every alarm of `stack` notifies `action` (ALARM; and OK for the states). */
function assertAlarmsNotify(stack: Stack, action: unknown): void {
  const alarms = alarmsByName(Template.fromStack(stack).toJSON());
  assert.ok(alarms.size >= 23, `the lane's alarms: ${alarms.size}`);
  for (const [name, alarm] of alarms) {
    assert.deepEqual(alarm.AlarmActions, [action], name);
    assert.deepEqual(alarm.OKActions, EVENT_ALARM.test(name) ? undefined : [action], name);
  }
}

const topicArnIn = (region: string) => `arn:aws:sns:${region}:210987654321:ops-alarms`;

describe('alarm destination', () => {
  it('refuses to synthesize a lane app without one, saying exactly what to add', () => {
    // Act / Assess
    assert.throws(
      () => buildLaneApp(new App({ context: NO_BUNDLING })),
      (error: unknown) => {
        assert.ok(error instanceof AlarmDestinationError, String(error));
        assert.match(error.message, /^lane us \(us-east-1\) has no alarm destination: its alarms would reach no one/);
        assert.ok(error.message.includes('-c alarmEmail=<address>'), error.message);
        assert.ok(error.message.includes('-c usAlarmTopicArn=arn:aws:sns:us-east-1:<account>:<topic>'), error.message);
        assert.ok(error.message.includes('-c alarmDestination=none'), error.message);
        return true;
      },
    );
    // a destination for one lane only: the other one is refused by name
    assert.throws(
      () => lanesWith({ usAlarmTopicArn: topicArnIn('us-east-1') }),
      /^AlarmDestinationError: lane eu \(eu-central-1\) has no alarm destination.*-c euAlarmTopicArn=arn:aws:sns:eu-central-1:<account>:<topic>/,
    );
  });

  it('refuses a lane stack built without one in code', () => {
    // Prepare
    const lane = DEFAULT_LANES.us;
    assert.ok(lane);
    const props = { lane, env: { region: lane.region, account: ACCOUNT } } as unknown as LaneStackProps;
    // Act / Assess
    assert.throws(() => new LaneStack(new App({ context: NO_BUNDLING }), 'Unheard', props), AlarmDestinationError);
  });

  it('e-mail: subscribes the address to the lane topic, which every alarm notifies', () => {
    // Prepare
    const of = synthDefaultLanes();
    for (const lane of LANES) {
      const { stack, template, json } = of(lane);
      const topic = { Ref: logicalId(stack, stack.alarms.topic) };
      // Act
      const subscriptions = Object.values<any>(template.findResources('AWS::SNS::Subscription')).map((r) => r.Properties);
      // Assess
      assert.deepEqual(subscriptions, [{ Protocol: 'email', Endpoint: ALARM_EMAIL, TopicArn: topic }]);
      assertAlarmsNotify(stack, topic);
      assert.deepEqual(json.Outputs.AlarmTopicArn.Value, topic);
    }
  });

  it('an existing topic: every alarm notifies it, the stack creates no topic, key or subscription, and cdk-nag passes', () => {
    // Prepare
    const app = new App({
      context: { ...NO_BUNDLING, account: ACCOUNT, usAlarmTopicArn: topicArnIn('us-east-1'), euAlarmTopicArn: topicArnIn('eu-central-1') },
    });
    // Act
    const stacks = buildLaneApp(app);
    // Assess
    for (const lane of LANES) {
      const stack = stacks[lane.name];
      assert.ok(stack);
      const template = Template.fromStack(stack);
      for (const type of ['AWS::SNS::Topic', 'AWS::SNS::TopicPolicy', 'AWS::SNS::Subscription', 'AWS::KMS::Key', 'AWS::KMS::Alias'])
        template.resourceCountIs(type, 0);
      assertAlarmsNotify(stack, topicArnIn(lane.region));
      assert.equal(template.toJSON().Outputs.AlarmTopicArn.Value, topicArnIn(lane.region));
      assert.equal(stack.alarms.topicKey, undefined);
    }
    const report = new AwsSolutionsChecks(app).validateScope(app);
    assert.deepEqual(
      report.violations.map((v) => v.ruleName),
      [],
    );
  });

  it('none, said explicitly: the lane topic with no subscriber, which every alarm notifies', () => {
    // Act
    const stacks = lanesWith({ alarmDestination: 'none' });
    // Assess
    for (const lane of LANES) {
      const stack = stacks[lane.name];
      assert.ok(stack);
      const template = Template.fromStack(stack);
      template.resourceCountIs('AWS::SNS::Topic', 1);
      template.resourceCountIs('AWS::SNS::Subscription', 0);
      assertAlarmsNotify(stack, { Ref: logicalId(stack, stack.alarms.topic) });
    }
  });

  it('refuses a topic of another region or partition, a malformed ARN or e-mail, and conflicting or unknown context', () => {
    // Act / Assess
    assert.throws(
      () => lanesWith({ alarmEmail: ALARM_EMAIL, usAlarmTopicArn: topicArnIn('eu-central-1') }),
      /^AlarmDestinationError: lane us: context alarmEmail and usAlarmTopicArn both apply to it/,
    );
    assert.throws(
      () => lanesWith({ usAlarmTopicArn: topicArnIn('eu-central-1'), euAlarmTopicArn: topicArnIn('eu-central-1') }),
      (error: unknown) =>
        error instanceof AlarmDestinationError && /lane us lives in us-east-1, but usAlarmTopicArn names a topic in eu-central-1/.test(error.message),
    );
    assert.throws(
      () => lanesWith({ alarmDestination: 'none', euAlarmTopicArn: 'arn:aws-cn:sns:eu-central-1:210987654321:ops' }),
      (error: unknown) => error instanceof AlarmDestinationError && /both apply/.test(error.message),
    );
    assert.throws(
      () => lanesWith({ usAlarmTopicArn: 'arn:aws-cn:sns:us-east-1:210987654321:ops', euAlarmTopicArn: topicArnIn('eu-central-1') }),
      (error: unknown) => error instanceof AlarmDestinationError && /partition aws-cn, but us-east-1 is in aws/.test(error.message),
    );
    for (const arn of [
      'ops-alarms',
      'arn:aws:sqs:us-east-1:210987654321:ops',
      'arn:aws:sns:us-east-1:2109:ops',
      'arn:aws:sns:us-east-1:210987654321:ops.fifo',
    ]) {
      assert.throws(
        () => lanesWith({ usAlarmTopicArn: arn, euAlarmTopicArn: topicArnIn('eu-central-1') }),
        (error: unknown) => error instanceof AlarmDestinationError && /is not an SNS topic ARN/.test(error.message),
        arn,
      );
    }
    assert.throws(
      () => lanesWith({ alarmEmail: 'ops' }),
      (error: unknown) => error instanceof AlarmDestinationError && /"ops" is not an e-mail address/.test(error.message),
    );
    assert.throws(() => lanesWith({ alarmDestination: 'email' }), AppContextError);
    assert.throws(() => lanesWith({ alarmTopicArn: topicArnIn('us-east-1') }), AppContextError);
    assert.throws(() => lanesWith({ alarmDestination: true }), AppContextError);
  });
});
