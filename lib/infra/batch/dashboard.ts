/**
 * The batch lane's row on a lane's dashboard: the items left unresolved (the gauge its alarm watches)
 * beside the items the sweeps settled, by state; the age of the oldest open batch against the
 * `maxBatchAgeHours` alarm; and the reconciler itself (invocations, errors, sweep errors, duration).
 */
import { Duration } from 'aws-cdk-lib';
import { GraphWidget, type IWidget, MathExpression, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import type { LaneConfig } from '../../config/lanes.js';
import { BATCH_SETTLED_METRICS } from '../../config/names.js';
import type { LaneBatch } from './batch-lane.js';
import { batchAlarmPeriod, batchMetric } from './alarms.js';

/** Titles of the batch widgets, in order, after the other rows (tests read them off the template). */
export const BATCH_DASHBOARD_WIDGET_TITLES = ['Batch items', 'Oldest open batch (h)', 'Batch reconciler'] as const;

/** The batch lane's widgets of a lane's dashboard, one row. */
export function batchDashboardWidgets(lane: LaneConfig, batch: LaneBatch): IWidget[] {
  const period = batchAlarmPeriod(lane);
  const minute = Duration.minutes(1);
  const [itemsTitle, ageTitle, reconcilerTitle] = BATCH_DASHBOARD_WIDGET_TITLES;
  return [
    new GraphWidget({
      region: lane.region,
      title: itemsTitle,
      width: 8,
      left: [batchMetric(lane, 'BatchItemsUnresolved', { statistic: Stats.MAXIMUM, period, label: 'unresolved (alarm > 0)' })],
      right: [
        batchMetric(lane, 'BatchItemsSettled', { period, label: 'settled' }),
        ...Object.entries(BATCH_SETTLED_METRICS).map(([state, name]) => batchMetric(lane, name, { period, label: state.replace('_', ' ') })),
      ],
    }),
    new GraphWidget({
      region: lane.region,
      title: ageTitle,
      width: 8,
      left: [
        new MathExpression({
          expression: 'oldestBatchAge / 3600',
          usingMetrics: { oldestBatchAge: batchMetric(lane, 'BatchOldestAgeSeconds', { statistic: Stats.MAXIMUM, period }) },
          period,
          label: 'oldest open batch',
        }),
      ],
      right: [batchMetric(lane, 'BatchesOpen', { statistic: Stats.MAXIMUM, period, label: 'open batches' })],
      leftAnnotations: [
        { value: lane.batch.completionWindowHours, label: 'provider window' },
        { value: lane.batch.maxBatchAgeHours, label: 'age alarm' },
      ],
    }),
    new GraphWidget({
      region: lane.region,
      title: reconcilerTitle,
      width: 8,
      left: [
        batch.function.metricInvocations({ statistic: Stats.SUM, period: minute, label: 'invocations' }),
        batch.function.metricErrors({ statistic: Stats.SUM, period: minute, label: 'errors' }),
        batchMetric(lane, 'BatchSweepErrors', { period: minute, label: 'batches whose pass failed' }),
      ],
      right: [batch.function.metricDuration({ statistic: Stats.MAXIMUM, period: minute, label: 'duration (max)' })],
    }),
  ];
}
