/**
 * The live API's row on a lane's dashboard: requests by the state they were answered in (with API
 * Gateway's own 4xx/5xx and the live function's throttles beside), the answer time's p50 and p95 against the default
 * deadline, and the share of requests handed over to the queue ("pending") against its alarm.
 */
import { Duration } from 'aws-cdk-lib';
import { GraphWidget, type IWidget, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import type { LaneConfig } from '../../config/lanes.js';
import type { LaneLive } from './live-api.js';
import { liveMetric, livePendingShare } from '../telemetry.js';

/** Titles of the live widgets, in order, after the queue lane's (tests read them off the template). */
export const LIVE_DASHBOARD_WIDGET_TITLES = ['Live requests by state', 'Live answer time (ms)', 'Live pending share (%)'] as const;

/** The live API's widgets of a lane's dashboard, one row. */
export function liveDashboardWidgets(lane: LaneConfig, live: LaneLive): IWidget[] {
  const period = Duration.minutes(1);
  const fiveMinutes = Duration.minutes(5);
  const [requestsTitle, latencyTitle, pendingTitle] = LIVE_DASHBOARD_WIDGET_TITLES;
  return [
    new GraphWidget({
      region: lane.region,
      title: requestsTitle,
      width: 8,
      left: [
        liveMetric(lane, 'LiveRequests', { period, label: 'requests' }),
        liveMetric(lane, 'LiveCommitted', { period, label: 'committed (200)' }),
        liveMetric(lane, 'LivePending', { period, label: 'pending (202, handed over)' }),
        liveMetric(lane, 'LiveNeedsReview', { period, label: 'needs review' }),
        liveMetric(lane, 'LiveRejected', { period, label: 'rejected (4xx)' }),
        liveMetric(lane, 'LiveServerError', { period, label: 'server error (5xx)' }),
      ],
      right: [
        live.stage.metricClientError({ statistic: Stats.SUM, period, label: 'API 4xx (auth, throttling included)' }),
        live.stage.metricServerError({ statistic: Stats.SUM, period, label: 'API 5xx (timeouts, crashes included)' }),
        live.function.metricThrottles({ statistic: Stats.SUM, period, label: 'function throttles (alarm > 0)' }),
      ],
    }),
    new GraphWidget({
      region: lane.region,
      title: latencyTitle,
      width: 8,
      left: [
        liveMetric(lane, 'LiveLatencyMs', { statistic: Stats.percentile(50), period, label: 'p50' }),
        liveMetric(lane, 'LiveLatencyMs', { statistic: Stats.percentile(95), period, label: 'p95' }),
      ],
      right: [liveMetric(lane, 'LiveOverDeadline', { period, label: 'over deadline' })],
      leftAnnotations: [
        { value: lane.live.defaultDeadlineMs, label: 'default deadline (p95 alarm)' },
        { value: lane.live.maxDeadlineMs, label: 'longest deadline' },
      ],
    }),
    new GraphWidget({
      region: lane.region,
      title: pendingTitle,
      width: 8,
      left: [livePendingShare(lane, fiveMinutes)],
      right: [liveMetric(lane, 'LiveInRequestRetries', { period, label: 'in-request retries' })],
      leftAnnotations: [{ value: lane.live.alarms.pendingSharePercent, label: 'alarm' }],
    }),
  ];
}
