/**
 * A lane's CloudWatch dashboard: the state of the lane's alarms; the age of the oldest message (SQS)
 * beside the age of the oldest job (the consumer's, across re-sends) and queue depth; completions and
 * the 429 share; the age of jobs at completion, record failures by reason and the consumer function's
 * errors and throttles; deferrals, what waits for a person, attempts per completion and duplicates
 * suppressed; validation failures; for a lane with the live API, its requests by state, answer
 * time against the deadline and pending share (lib/infra/live/dashboard.ts); and for a lane that takes
 * batches, its unresolved items, oldest open batch and reconciler (lib/infra/batch/dashboard.ts).
 */
import { Duration } from 'aws-cdk-lib';
import { AlarmStatusWidget, Dashboard, GraphWidget, type HorizontalAnnotation, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { LaneConfig } from '../config/lanes.js';
import type { LaneAlarms } from './alarms.js';
import type { LaneBatch } from './batch/batch-lane.js';
import type { LaneBatchAlarms } from './batch/alarms.js';
import { batchDashboardWidgets } from './batch/dashboard.js';
import type { LaneLive } from './live/live-api.js';
import type { LaneLiveAlarms } from './live/alarms.js';
import { liveDashboardWidgets } from './live/dashboard.js';
import type { LaneQueues } from './queues.js';
import { RECORD_FAILED_METRICS, RECORD_FAILURE_REASONS } from '../platform/telemetry.js';
import { admissionDenialShare, consumerMetric, consumerSeconds, throttleShare } from './telemetry.js';

export interface LaneDashboardProps {
  readonly lane: LaneConfig;
  readonly queues: LaneQueues;
  readonly alarms: LaneAlarms;
  /** The consumer function (its Lambda `Errors`, `Throttles` and `Invocations`). */
  readonly consumerFunction: IFunction;
  /** The lane's live API and its alarms, when the lane has one. */
  readonly live?: { readonly api: LaneLive; readonly alarms: LaneLiveAlarms };
  /** The lane's batch lane and its alarms, when the lane takes batches. */
  readonly batch?: { readonly lane: LaneBatch; readonly alarms: LaneBatchAlarms };
}

/** Titles of the dashboard's widgets, in order (tests read them off the template). */
export const DASHBOARD_WIDGET_TITLES = [
  'Alarms',
  'Age: oldest message vs oldest job (s)',
  'Queue depth',
  'Completions',
  '429 share (%)',
  'Job age at completion (s)',
  'Record failures by reason',
  'Consumer function',
  'Deferrals',
  'Waiting for a person',
  'Attempts per completion',
  'Duplicates suppressed',
  'Validation failures',
] as const;

export class LaneDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: LaneDashboardProps) {
    super(scope, id);
    const { lane, queues, alarms, consumerFunction } = props;
    const period = Duration.minutes(1);
    const fiveMinutes = Duration.minutes(5);
    const [
      alarmTitle,
      ageTitle,
      depthTitle,
      completionsTitle,
      shareTitle,
      completionAgeTitle,
      failuresTitle,
      functionTitle,
      deferralsTitle,
      waitingTitle,
      attemptsTitle,
      duplicatesTitle,
      validationTitle,
    ] = DASHBOARD_WIDGET_TITLES;
    const threshold = (value: number, label: string): HorizontalAnnotation => ({ value, label });

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `ratelane-${lane.name}`,
      defaultInterval: Duration.hours(3),
    });
    const allAlarms = [...Object.values(alarms.alarms), ...Object.values(props.live?.alarms.alarms ?? {}), ...Object.values(props.batch?.alarms.alarms ?? {})];
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: alarmTitle, alarms: allAlarms, width: 24, height: 4 }));
    this.dashboard.addWidgets(
      new GraphWidget({
        region: lane.region,
        title: ageTitle,
        width: 12,
        left: [
          queues.queue.metricApproximateAgeOfOldestMessage({ statistic: Stats.MAXIMUM, period, label: `oldest message (SQS, restarts on re-send)` }),
          consumerSeconds(lane, 'OldestJobAgeMs', { statistic: Stats.MAXIMUM, period, label: 'oldest job (since submitted)' }),
        ],
        leftAnnotations: [threshold(lane.alarms.oldestMessageAgeSeconds, 'message age alarm'), threshold(lane.alarms.oldestJobAgeSeconds, 'job age alarm')],
      }),
      new GraphWidget({
        region: lane.region,
        title: depthTitle,
        width: 12,
        left: [
          queues.queue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period, label: 'visible' }),
          queues.queue.metricApproximateNumberOfMessagesNotVisible({ statistic: Stats.MAXIMUM, period, label: 'in flight' }),
          queues.queue.metric('ApproximateNumberOfMessagesDelayed', { statistic: Stats.MAXIMUM, period, label: 'delayed (deferred)' }),
        ],
        right: [queues.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period, label: 'DLQ visible' })],
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        region: lane.region,
        title: completionsTitle,
        width: 12,
        left: [
          consumerMetric(lane, 'Completed', { period, label: 'completed' }),
          consumerMetric(lane, 'Failed', { period, label: 'failed (retry)' }),
          consumerMetric(lane, 'DeadLettered', { period, label: 'dead-lettered' }),
          consumerMetric(lane, 'Rejected', { period, label: 'rejected' }),
        ],
      }),
      new GraphWidget({
        region: lane.region,
        title: shareTitle,
        width: 12,
        left: [throttleShare(lane, fiveMinutes)],
        right: [
          consumerMetric(lane, 'ModelCalls', { period, label: 'model calls' }),
          consumerMetric(lane, 'RateLimited', { period, label: 'rate limited' }),
          consumerMetric(lane, 'RateCut', { period, label: "owners' rates cut (429s again)" }),
          consumerMetric(lane, 'ProviderLimitsBelowConfig', { period, label: 'answers stating lower limits than the config' }),
        ],
        leftAnnotations: [threshold(lane.alarms.throttleSharePercent, 'alarm')],
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        region: lane.region,
        title: completionAgeTitle,
        width: 8,
        left: [
          consumerSeconds(lane, 'JobAgeAtCompletionMs', { statistic: Stats.percentile(50), period: fiveMinutes, label: 'p50' }),
          consumerSeconds(lane, 'JobAgeAtCompletionMs', { statistic: Stats.percentile(95), period: fiveMinutes, label: 'p95' }),
          consumerSeconds(lane, 'JobAgeAtCompletionMs', { statistic: Stats.MAXIMUM, period: fiveMinutes, label: 'maximum' }),
        ],
      }),
      new GraphWidget({
        region: lane.region,
        title: failuresTitle,
        width: 8,
        left: [consumerMetric(lane, 'RecordFailed', { period: fiveMinutes, label: 'all reasons' })],
        right: RECORD_FAILURE_REASONS.map((reason) => consumerMetric(lane, RECORD_FAILED_METRICS[reason], { period: fiveMinutes, label: reason })),
      }),
      new GraphWidget({
        region: lane.region,
        title: functionTitle,
        width: 8,
        left: [
          consumerFunction.metricErrors({ statistic: Stats.SUM, period, label: 'errors' }),
          consumerFunction.metricThrottles({ statistic: Stats.SUM, period, label: 'throttles' }),
        ],
        right: [consumerFunction.metricInvocations({ statistic: Stats.SUM, period, label: 'invocations' })],
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        region: lane.region,
        title: deferralsTitle,
        width: 6,
        left: [
          consumerMetric(lane, 'Deferred', { period, label: 'deferred (throttle/admission)' }),
          consumerMetric(lane, 'EligibilityHops', { period, label: 'eligibility hops' }),
          consumerMetric(lane, 'AdmissionDenied', { period, label: 'admission denied (no key/budget)' }),
          consumerMetric(lane, 'InvocationDeadlineDeferred', { period, label: 'no time left in the invocation' }),
          consumerMetric(lane, 'KeyCooldown', { period, label: 'key cooldowns' }),
          consumerMetric(lane, 'LanePaused', { period, label: 'lane paused' }),
        ],
        right: [admissionDenialShare(lane, fiveMinutes)],
        rightAnnotations: [threshold(lane.alarms.admissionDenialSharePercent, 'denial share alarm')],
      }),
      new GraphWidget({
        region: lane.region,
        title: waitingTitle,
        width: 6,
        left: [consumerMetric(lane, 'LaneWaitingForPerson', { period, statistic: Stats.MAXIMUM, label: 'waiting for a person (1 = yes)' })],
        right: [
          consumerMetric(lane, 'ConfigurationError', { period, label: 'secret unset or malformed' }),
          consumerMetric(lane, 'AuthAlarm', { period, label: 'key refused (auth)' }),
          consumerMetric(lane, 'BillingAlarm', { period, label: 'out of credit (billing)' }),
        ],
      }),
      new GraphWidget({
        region: lane.region,
        title: attemptsTitle,
        width: 6,
        left: [
          consumerMetric(lane, 'AttemptsPerCompletion', { period, statistic: Stats.AVERAGE, label: 'average' }),
          consumerMetric(lane, 'AttemptsPerCompletion', { period, statistic: Stats.MAXIMUM, label: 'maximum' }),
        ],
      }),
      new GraphWidget({
        region: lane.region,
        title: duplicatesTitle,
        width: 6,
        left: [consumerMetric(lane, 'DuplicateSuppressed', { period, label: 'duplicates suppressed' })],
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        region: lane.region,
        title: validationTitle,
        width: 24,
        left: [
          consumerMetric(lane, 'ValidationFailed', { period, label: 'validation failed' }),
          consumerMetric(lane, 'NeedsReview', { period, label: 'needs review' }),
        ],
      }),
    );
    if (props.live) this.dashboard.addWidgets(...liveDashboardWidgets(lane, props.live.api));
    if (props.batch) this.dashboard.addWidgets(...batchDashboardWidgets(lane, props.batch.lane));
  }
}
