/**
 * A lane's alarms, all sent to one encrypted, TLS-only SNS topic of the lane: oldest message age,
 * DLQ depth, region mismatches, 429 share and billing pauses.
 */
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { LaneConfig } from '../config/lanes.js';
import type { LaneQueues } from './queues.js';
import { consumerMetric, throttleShare } from './telemetry.js';

export interface LaneAlarmsProps {
  readonly lane: LaneConfig;
  readonly queues: LaneQueues;
  /** E-mail addresses subscribed to the lane's alarm topic (optional). */
  readonly alarmEmails?: readonly string[];
}

/** The alarms of one lane, by purpose. */
export interface LaneAlarmSet {
  readonly oldestMessageAge: Alarm;
  readonly deadLetters: Alarm;
  readonly regionMismatch: Alarm;
  readonly throttleShare: Alarm;
  readonly billingPause: Alarm;
}

export class LaneAlarms extends Construct {
  readonly topic: Topic;
  readonly topicKey: Key;
  readonly alarms: LaneAlarmSet;

  constructor(scope: Construct, id: string, props: LaneAlarmsProps) {
    super(scope, id);
    const { lane, queues } = props;
    const stack = Stack.of(this);
    const alarmArns = stack.formatArn({
      service: 'cloudwatch',
      resource: 'alarm',
      resourceName: `ratelane-${lane.name}-*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });

    // SNS has no service-managed encryption CloudWatch can publish through: a customer key that
    // CloudWatch (for this account's ratelane alarms only) may use.
    this.topicKey = new Key(this, 'TopicKey', {
      alias: `alias/ratelane-${lane.name}-alarms`,
      description: `Encrypts the ratelane ${lane.name} lane alarm topic`,
      enableKeyRotation: true,
    });
    this.topicKey.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account }, ArnLike: { 'aws:SourceArn': alarmArns } },
      }),
    );

    this.topic = new Topic(this, 'Topic', {
      topicName: `ratelane-${lane.name}-alarms`,
      displayName: `ratelane ${lane.name} alarms`,
      masterKey: this.topicKey,
      enforceSSL: true,
    });
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account }, ArnLike: { 'aws:SourceArn': alarmArns } },
      }),
    );
    for (const email of props.alarmEmails ?? []) this.topic.addSubscription(new EmailSubscription(email));

    const oldestMessageAge = new Alarm(this, 'OldestMessageAge', {
      alarmName: `ratelane-${lane.name}-oldest-message-age`,
      alarmDescription: `Jobs in ${lane.resources.queueName} wait longer than ${lane.alarms.oldestMessageAgeSeconds}s: the consumer is paused, throttled or failing.`,
      metric: queues.queue.metricApproximateAgeOfOldestMessage({ statistic: Stats.MAXIMUM, period: Duration.minutes(1) }),
      threshold: lane.alarms.oldestMessageAgeSeconds,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 5,
      datapointsToAlarm: 5,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const deadLetters = new Alarm(this, 'DeadLetters', {
      alarmName: `ratelane-${lane.name}-dlq-messages`,
      alarmDescription: `Jobs reached ${lane.resources.dlqName} after ${lane.queue.maxReceiveCount} receives: inspect and redrive.`,
      metric: queues.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period: Duration.minutes(1) }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const regionMismatch = new Alarm(this, 'RegionMismatch', {
      alarmName: `ratelane-${lane.name}-region-mismatch`,
      alarmDescription: `A job for another region reached the ${lane.name} lane (${lane.region}); it was rejected before any model call. This must read 0: check the producer.`,
      metric: consumerMetric(lane, 'RegionMismatch'),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const throttle = new Alarm(this, 'ThrottleShare', {
      alarmName: `ratelane-${lane.name}-429-share`,
      alarmDescription: `More than ${lane.alarms.throttleSharePercent}% of model calls in the ${lane.name} lane were rate limited (429) for 15 minutes: raise provider limits or lower concurrency.`,
      metric: throttleShare(lane, Duration.minutes(5)),
      threshold: lane.alarms.throttleSharePercent,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const billingPause = new Alarm(this, 'BillingPause', {
      alarmName: `ratelane-${lane.name}-billing-pause`,
      alarmDescription: `The ${lane.provider.kind} provider reported billing/out of credit in the ${lane.name} lane: keys are paused and jobs wait. A person must add credit.`,
      metric: consumerMetric(lane, 'BillingAlarm'),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    this.alarms = { oldestMessageAge, deadLetters, regionMismatch, throttleShare: throttle, billingPause };
    const action = new SnsAction(this.topic);
    for (const alarm of Object.values(this.alarms)) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }
}
