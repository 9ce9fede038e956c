/**
 * A lane's alarms, all sent to one SNS topic: the lane's own (encrypted, TLS-only; with e-mail
 * subscriptions, or none when the stack was told so), or an existing topic of the lane's region
 * (`alarm-destination.ts`). States (notified when they start and when they end): the oldest message and
 * the oldest job, DLQ depth, the 429 share, the admission denial share, provider limits below the config,
 * the lane waiting for a person, consumer errors, throttles and record failures. Events (notified when
 * they happen, never "OK" a minute later): a region mismatch, a key refused by the provider, a billing
 * refusal. docs/operations.md says what to do for each.
 */
import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { type LaneConfig, providerNeedsKeySecrets } from '../config/lanes.js';
import type { AlarmDestination } from './alarm-destination.js';
import type { LaneQueues } from './queues.js';
import { admissionDenialShare, consumerMetric, endpointMismatches, throttleShare } from './telemetry.js';

/** The period of the job-age alarm: a job waiting for its `eligibleAt` comes back (hops) at least every 900 s, so each period sees it. */
const JOB_AGE_ALARM_PERIOD = Duration.minutes(15);

/** Periods of the record-failure alarm: failures in each of 3 consecutive 5-minute periods (provider blips pass, a lasting fault does not). */
const RECORD_FAILURE_ALARM_PERIODS = 3;

export interface LaneAlarmsProps {
  readonly lane: LaneConfig;
  readonly queues: LaneQueues;
  /** The consumer function (its Lambda `Errors` and `Throttles`). */
  readonly consumerFunction: IFunction;
  /** Where the alarms go (checked by the stack: `checkAlarmDestination`). */
  readonly destination: AlarmDestination;
}

/** The alarms of one lane, by purpose. */
export interface LaneAlarmSet {
  readonly oldestMessageAge: Alarm;
  readonly oldestJobAge: Alarm;
  readonly deadLetters: Alarm;
  readonly regionMismatch: Alarm;
  readonly endpointMismatch: Alarm;
  readonly throttleShare: Alarm;
  readonly admissionDenialShare: Alarm;
  readonly providerLimitsBelowConfig: Alarm;
  readonly waitingForPerson: Alarm;
  readonly keyAuth: Alarm;
  readonly billing: Alarm;
  readonly consumerErrors: Alarm;
  readonly consumerThrottles: Alarm;
  readonly recordFailures: Alarm;
}

/** Alarms that report an event, not a state: notified on ALARM only (an "OK" a minute later would read as "fixed"). */
const EVENT_ALARMS = ['regionMismatch', 'endpointMismatch', 'keyAuth', 'billing'] as const satisfies ReadonlyArray<keyof LaneAlarmSet>;

export class LaneAlarms extends Construct {
  /** The topic every alarm of the lane notifies: the lane's own, or the existing one it was given. */
  readonly topic: ITopic;
  /** The key of the lane's own topic; undefined when the alarms go to an existing topic. */
  readonly topicKey: Key | undefined;
  readonly alarms: LaneAlarmSet;

  constructor(scope: Construct, id: string, props: LaneAlarmsProps) {
    super(scope, id);
    const { lane, queues, consumerFunction, destination } = props;
    if (destination.kind === 'topic') {
      // An existing topic: its owner keeps its policy and subscriptions; the stack creates none.
      this.topic = Topic.fromTopicArn(this, 'Topic', destination.topicArn);
      this.topicKey = undefined;
    } else {
      const own = laneTopic(this, lane);
      this.topic = own.topic;
      this.topicKey = own.key;
      if (destination.kind === 'email') for (const email of destination.addresses) own.topic.addSubscription(new EmailSubscription(email));
    }

    const name = (suffix: string) => `ratelane-${lane.name}-${suffix}`;
    const fiveMinutes = Duration.minutes(5);

    const oldestMessageAge = new Alarm(this, 'OldestMessageAge', {
      alarmName: name('oldest-message-age'),
      alarmDescription: `A message in ${lane.resources.queueName} has waited longer than ${lane.alarms.oldestMessageAgeSeconds}s since it was sent or last re-sent: the consumer is paused, throttled or failing. See also ${name('oldest-job-age')}.`,
      metric: queues.queue.metricApproximateAgeOfOldestMessage({ statistic: Stats.MAXIMUM, period: Duration.minutes(1) }),
      threshold: lane.alarms.oldestMessageAgeSeconds,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 5,
      datapointsToAlarm: 5,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // SQS's message age restarts with every re-send (a deferral is a new message) and stops counting
    // messages received three or more times; the consumer's OldestJobAgeMs counts from the job's
    // createdAt across all of them. Missing data (no invocation: an empty queue, or a paused lane,
    // which the message-age and waiting-for-person alarms cover) is not an old job.
    const oldestJobAge = new Alarm(this, 'OldestJobAge', {
      alarmName: name('oldest-job-age'),
      alarmDescription: `A job in the ${lane.name} lane is older than ${lane.alarms.oldestJobAgeSeconds}s since it was submitted, counted across every deferral and re-send: it keeps being deferred (provider limits too low for the intake, a long quota reset) or failing. Check the 429 share, deferrals and record failures on the dashboard ratelane-${lane.name}.`,
      metric: consumerMetric(lane, 'OldestJobAgeMs', { statistic: Stats.MAXIMUM, period: JOB_AGE_ALARM_PERIOD }),
      threshold: lane.alarms.oldestJobAgeSeconds * 1000,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const deadLetters = new Alarm(this, 'DeadLetters', {
      alarmName: name('dlq-messages'),
      alarmDescription: `Jobs reached ${lane.resources.dlqName} after ${lane.queue.maxReceiveCount} receives: inspect and redrive.`,
      metric: queues.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period: Duration.minutes(1) }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const regionMismatch = new Alarm(this, 'RegionMismatch', {
      alarmName: name('region-mismatch'),
      alarmDescription: `A job for another region reached the ${lane.name} lane (${lane.region}); it was rejected before any model call. This must read 0: check the producer.`,
      metric: consumerMetric(lane, 'RegionMismatch'),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const endpointMismatch = new Alarm(this, 'EndpointMismatch', {
      alarmName: name('endpoint-mismatch'),
      alarmDescription: `The ${lane.name} lane (${lane.region}) was configured to send text to a model endpoint not approved for its geography; no call was made and its jobs wait (EndpointMismatch, the log line names the host). Fix provider.baseUrl or modelEndpoints in the lane config and deploy; the jobs then run.`,
      metric: endpointMismatches(lane),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const throttle = new Alarm(this, 'ThrottleShare', {
      alarmName: name('429-share'),
      alarmDescription: `More than ${lane.alarms.throttleSharePercent}% of model calls in the ${lane.name} lane were rate limited (429) for 15 minutes: raise provider limits or lower concurrency.`,
      metric: throttleShare(lane, fiveMinutes),
      threshold: lane.alarms.throttleSharePercent,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // A sustained share of jobs deferred by admission means the mapping pulls more records than the
    // lane's keys can start (a key out of credit or of its daily quota, or a mapping sized beyond the
    // quota): each such record is a re-send. Nothing is lost, so it waits 30 minutes before it tells.
    const denialShare = new Alarm(this, 'AdmissionDenialShare', {
      alarmName: name('admission-denial-share'),
      alarmDescription: `More than ${lane.alarms.admissionDenialSharePercent}% of admission decisions in the ${lane.name} lane deferred the job for 30 minutes: the consumers receive more jobs than the lane's keys can start (mostly consumer.maximumConcurrency x queue.batchSize beyond the quota; keys out of credit or of their daily quota limit the lane's concurrency instead: LaneLimited), and each is re-sent. Nothing is lost. Lower consumer.maximumConcurrency (the synth warning ratelane:mapping-oversized gives an upper bound) or add quota; check key-auth and billing.`,
      metric: admissionDenialShare(lane, fiveMinutes),
      threshold: lane.alarms.admissionDenialSharePercent,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 6,
      datapointsToAlarm: 6,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // Admission keeps to the limits a provider states (`x-ratelimit-limit-*`); what it cannot change is the
    // mapping, sized from the config: a config above the provider's limits pulls records only to re-send them.
    const providerLimits = new Alarm(this, 'ProviderLimitsBelowConfig', {
      alarmName: name('provider-limits-below-config'),
      alarmDescription: `For 15 minutes the provider's answers in the ${lane.name} lane stated lower per-minute limits than its config (provider.limits: ${lane.provider.limits.requestsPerMinute} requests, ${lane.provider.limits.tokensPerMinute} tokens a minute per quota owner). Admission keeps to the provider's figures, but the mapping is sized from the config and receives more jobs than the keys can start, re-sending each. The consumer's log line "the provider states lower limits" gives the figures: set provider.limits to them and deploy, or raise the tier with the provider.`,
      metric: consumerMetric(lane, 'ProviderLimitsBelowConfig', { period: fiveMinutes }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // The consumer reports LaneWaitingForPerson (1 or 0) on every invocation and nothing while the
    // lane is paused (its mapping is off). With missing data ignored, the alarm keeps its state: it
    // goes to ALARM when a pause starts that only a person can end (every key out for billing or
    // auth, or the secret unset or malformed: ConfigurationError) and stays there until an
    // invocation reports 0 again.
    const waitingForPerson = new Alarm(this, 'WaitingForPerson', {
      alarmName: name('waiting-for-person'),
      alarmDescription: waitingForPersonDescription(lane),
      metric: consumerMetric(lane, 'LaneWaitingForPerson', { statistic: Stats.MAXIMUM, period: Duration.minutes(1) }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.IGNORE,
    });

    const keyAuth = new Alarm(this, 'KeyAuth', {
      alarmName: name('key-auth'),
      alarmDescription: `The provider refused a key of the ${lane.name} lane as invalid, revoked or without permission (401/403). The key is cooled for a day and the lane goes on with its other keys: put a working key in the secret (a changed secret value lifts the cooldown).`,
      metric: consumerMetric(lane, 'AuthAlarm'),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const billing = new Alarm(this, 'Billing', {
      alarmName: name('billing'),
      alarmDescription: `The ${lane.provider.kind} provider reported billing/out of credit in the ${lane.name} lane: that quota owner's keys are paused and its jobs wait. A person must add credit; when every key is out, ${name('waiting-for-person')} holds until the lane is resumed.`,
      metric: consumerMetric(lane, 'BillingAlarm'),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const consumerErrors = new Alarm(this, 'ConsumerErrors', {
      alarmName: name('consumer-errors'),
      alarmDescription: `Invocations of the ${lane.name} consumer failed as a whole (an exception out of the handler, a timeout or a crash): their whole batch comes back. Read the function's log.`,
      metric: consumerFunction.metricErrors({ statistic: Stats.SUM, period: fiveMinutes }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const consumerThrottles = new Alarm(this, 'ConsumerThrottles', {
      alarmName: name('consumer-throttles'),
      alarmDescription: `Lambda throttled invocations of the ${lane.name} consumer (account concurrency exhausted, or reserved concurrency below the mapping's MaximumConcurrency); a throttled batch counts as a receive towards the DLQ.`,
      metric: consumerFunction.metricThrottles({ statistic: Stats.SUM, period: fiveMinutes }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const recordFailures = new Alarm(this, 'RecordFailures', {
      alarmName: name('record-failures'),
      alarmDescription: `Records of the ${lane.name} lane kept failing for ${RECORD_FAILURE_ALARM_PERIODS * 5} minutes (RecordFailed: provider 5xx or timeouts, a store or queue unavailable, a bug); they come back after a backoff and go to the DLQ when their budget is spent. The dashboard shows the reasons; the log line of each failure has its error.`,
      metric: consumerMetric(lane, 'RecordFailed', { period: fiveMinutes }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: RECORD_FAILURE_ALARM_PERIODS,
      datapointsToAlarm: RECORD_FAILURE_ALARM_PERIODS,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    this.alarms = {
      oldestMessageAge,
      oldestJobAge,
      deadLetters,
      regionMismatch,
      endpointMismatch,
      throttleShare: throttle,
      admissionDenialShare: denialShare,
      providerLimitsBelowConfig: providerLimits,
      waitingForPerson,
      keyAuth,
      billing,
      consumerErrors,
      consumerThrottles,
      recordFailures,
    };
    const action = new SnsAction(this.topic);
    for (const [key, alarm] of Object.entries(this.alarms) as Array<[keyof LaneAlarmSet, Alarm]>) {
      alarm.addAlarmAction(action);
      if (!(EVENT_ALARMS as readonly string[]).includes(key)) alarm.addOkAction(action);
    }
  }
}

/** What the waiting-for-person alarm says: the causes this lane's provider can have, and what to do for each. */
function waitingForPersonDescription(lane: LaneConfig): string {
  const causes = providerNeedsKeySecrets(lane.provider)
    ? [
        `the provider secret ${lane.resources.providerSecretName} is unset or malformed (ConfigurationError: the consumer log says what to put in it; the lane resumes by itself once it is right)`,
        'every key was refused (AuthAlarm: put working keys in the secret)',
      ]
    : ['every call was refused for lack of permission (AuthAlarm: check the function role and the model access in the provider console)'];
  causes.push(`every quota owner is out of credit (BillingAlarm: add credit, then npm run resume -- --lane ${lane.name})`);
  return `The ${lane.name} lane is paused until a person acts; its jobs wait in ${lane.resources.queueName} and none is dead-lettered. Causes: ${causes.join('; ')}. Stays in ALARM until the lane runs again.`;
}

/**
 * The lane's own alarm topic (`ratelane-<lane>-alarms`), encrypted with a key of its own, TLS-only,
 * that CloudWatch may publish to for this account's alarms of the lane only.
 */
function laneTopic(scope: Construct, lane: LaneConfig): { topic: Topic; key: Key } {
  const stack = Stack.of(scope);
  const alarmArns = stack.formatArn({
    service: 'cloudwatch',
    resource: 'alarm',
    resourceName: `ratelane-${lane.name}-*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });

  // SNS has no service-managed encryption CloudWatch can publish through: a customer key that
  // CloudWatch (for this account's ratelane alarms only) may use. It encrypts only notifications in
  // flight, so it goes with the stack (after KMS's waiting period) instead of outliving it.
  const key = new Key(scope, 'TopicKey', {
    alias: `alias/ratelane-${lane.name}-alarms`,
    description: `Encrypts the ratelane ${lane.name} lane alarm topic`,
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.DESTROY,
    pendingWindow: Duration.days(7),
  });
  key.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: { StringEquals: { 'aws:SourceAccount': stack.account }, ArnLike: { 'aws:SourceArn': alarmArns } },
    }),
  );

  const topic = new Topic(scope, 'Topic', {
    topicName: `ratelane-${lane.name}-alarms`,
    displayName: `ratelane ${lane.name} alarms`,
    masterKey: key,
    enforceSSL: true,
  });
  topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: { StringEquals: { 'aws:SourceAccount': stack.account }, ArnLike: { 'aws:SourceArn': alarmArns } },
    }),
  );
  return { topic, key };
}
