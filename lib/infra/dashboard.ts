/**
 * A lane's CloudWatch dashboard: queue age and depth, completions, 429 share, deferrals, attempts per
 * completion, duplicates suppressed, validation failures, and the state of the lane's alarms.
 */
import { Duration } from 'aws-cdk-lib';
import { AlarmStatusWidget, Dashboard, GraphWidget, type HorizontalAnnotation, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import type { LaneConfig } from '../config/lanes.js';
import type { LaneAlarms } from './alarms.js';
import type { LaneQueues } from './queues.js';
import { consumerMetric, throttleShare } from './telemetry.js';

export interface LaneDashboardProps {
  readonly lane: LaneConfig;
  readonly queues: LaneQueues;
  readonly alarms: LaneAlarms;
}

/** Titles of the dashboard's widgets, in order (tests read them off the template). */
export const DASHBOARD_WIDGET_TITLES = [
  'Alarms',
  'Queue age (oldest message, s)',
  'Queue depth',
  'Completions',
  '429 share (%)',
  'Deferrals',
  'Attempts per completion',
  'Duplicates suppressed',
  'Validation failures',
] as const;

export class LaneDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: LaneDashboardProps) {
    super(scope, id);
    const { lane, queues, alarms } = props;
    const period = Duration.minutes(1);
    const [alarmTitle, ageTitle, depthTitle, completionsTitle, shareTitle, deferralsTitle, attemptsTitle, duplicatesTitle, validationTitle] =
      DASHBOARD_WIDGET_TITLES;
    const threshold = (value: number, label: string): HorizontalAnnotation => ({ value, label });

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `ratelane-${lane.name}`,
      defaultInterval: Duration.hours(3),
    });
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: alarmTitle, alarms: Object.values(alarms.alarms), width: 24, height: 3 }));
    this.dashboard.addWidgets(
      new GraphWidget({
        region: lane.region,
        title: ageTitle,
        width: 12,
        left: [queues.queue.metricApproximateAgeOfOldestMessage({ statistic: Stats.MAXIMUM, period, label: lane.resources.queueName })],
        leftAnnotations: [threshold(lane.alarms.oldestMessageAgeSeconds, 'alarm')],
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
        left: [throttleShare(lane, Duration.minutes(5))],
        right: [consumerMetric(lane, 'ModelCalls', { period, label: 'model calls' }), consumerMetric(lane, 'RateLimited', { period, label: 'rate limited' })],
        leftAnnotations: [threshold(lane.alarms.throttleSharePercent, 'alarm')],
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        region: lane.region,
        title: deferralsTitle,
        width: 8,
        left: [
          consumerMetric(lane, 'Deferred', { period, label: 'deferred (throttle/admission)' }),
          consumerMetric(lane, 'EligibilityHops', { period, label: 'eligibility hops' }),
          consumerMetric(lane, 'BillingAlarm', { period, label: 'billing pauses' }),
          consumerMetric(lane, 'AdmissionDenied', { period, label: 'admission denied (no key/budget)' }),
          consumerMetric(lane, 'KeyCooldown', { period, label: 'key cooldowns' }),
          consumerMetric(lane, 'LanePaused', { period, label: 'lane paused' }),
        ],
      }),
      new GraphWidget({
        region: lane.region,
        title: attemptsTitle,
        width: 8,
        left: [
          consumerMetric(lane, 'AttemptsPerCompletion', { period, statistic: Stats.AVERAGE, label: 'average' }),
          consumerMetric(lane, 'AttemptsPerCompletion', { period, statistic: Stats.MAXIMUM, label: 'maximum' }),
        ],
      }),
      new GraphWidget({
        region: lane.region,
        title: duplicatesTitle,
        width: 8,
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
  }
}
