/**
 * A lane's batch alarms, on the lane's alarm topic (the same actions as its other alarms; names start
 * with `ratelane-<lane>-` so the topic's policy lets CloudWatch publish them):
 * - `batch-unresolved`: a batch left items unresolved (an error line or no line at all for them): a
 *   person resubmits them or hands them to the queue lane (`BatchItemsUnresolved` > 0);
 * - `batch-age`: a batch is still open `lane.batch.maxBatchAgeHours` after its creation (`BatchOldestAgeSeconds`);
 * - `batch-reconciler-errors`: an invocation of the reconciler failed as a whole (its Lambda `Errors`);
 * - `batch-sweep-errors`: a batch's pass kept failing for three intervals (`BatchSweepErrors`);
 * - `batch-reconciler-stalled`: the reconciler did not run for three intervals (schedule disabled or
 *   failing to deliver, function throttled): the schedule's ticks have no DLQ, this is what shows them lost.
 * The reconciler's gauges are sent each sweep; while it does not run they keep their alarm's state.
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { LaneConfig } from '../../config/lanes.js';
import { batchDimensions, type BatchMetricName, batchReconcilerFunctionName } from '../../config/names.js';
import { METRICS_NAMESPACE } from '../../platform/telemetry.js';
import type { LaneBatch } from './batch-lane.js';

/** Consecutive intervals of sweep errors, or of no invocation, before an alarm. */
const BATCH_DEGRADED_INTERVALS = 3;

/** One batch reconciler metric of a lane, with the exact dimension set the reconciler writes. */
export function batchMetric(
  lane: Pick<LaneConfig, 'name' | 'region'>,
  name: BatchMetricName,
  options: { statistic?: string; period?: Duration; label?: string } = {},
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: batchDimensions(lane),
    statistic: options.statistic ?? Stats.SUM,
    period: options.period ?? Duration.minutes(5),
    ...(options.label ? { label: options.label } : {}),
  });
}

/** The period of the batch alarms: the reconcile interval, at least 5 minutes (each period sees a sweep). */
export function batchAlarmPeriod(lane: Pick<LaneConfig, 'batch'>): Duration {
  return Duration.minutes(Math.max(5, lane.batch.reconcileEveryMinutes));
}

/** The batch alarms of one lane, by purpose. */
export interface LaneBatchAlarmSet {
  readonly unresolved: Alarm;
  readonly age: Alarm;
  readonly reconcilerErrors: Alarm;
  readonly sweepErrors: Alarm;
  readonly stalled: Alarm;
}

export interface LaneBatchAlarmsProps {
  readonly lane: LaneConfig;
  readonly batch: LaneBatch;
  /** The lane's alarm topic (`LaneAlarms.topic`), which every other alarm of the lane notifies. */
  readonly topic: ITopic;
}

/** The batch lane's alarms of one lane; all are states (notified when they start and when they end). */
export class LaneBatchAlarms extends Construct {
  readonly alarms: LaneBatchAlarmSet;

  constructor(scope: Construct, id: string, props: LaneBatchAlarmsProps) {
    super(scope, id);
    const { lane, batch } = props;
    const name = (suffix: string) => `ratelane-${lane.name}-batch-${suffix}`;
    const period = batchAlarmPeriod(lane);
    const minutes = period.toMinutes();
    const reconciler = `the ${lane.name} batch reconciler (${batchReconcilerFunctionName(lane.name)})`;

    const unresolved = new Alarm(this, 'Unresolved', {
      alarmName: name('unresolved'),
      alarmDescription: `Items of a ${lane.name} lane batch are unresolved: the provider answered them with an error, or not at all. Nothing was committed for them; resubmit them or hand them to the queue lane (the batch status lists them with their reason). Stays in ALARM while any batch not cancelled holds one.`,
      metric: batchMetric(lane, 'BatchItemsUnresolved', { statistic: Stats.MAXIMUM, period }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.IGNORE,
    });

    const age = new Alarm(this, 'Age', {
      alarmName: name('age'),
      alarmDescription: `A ${lane.name} lane batch is still open ${lane.batch.maxBatchAgeHours} h after its creation (its provider window is ${lane.batch.completionWindowHours} h): a provider job is stuck, a part keeps waiting after submission throttles, or the reconciler cannot finish it. Check its parts in the batch status and the reconciler's log.`,
      metric: batchMetric(lane, 'BatchOldestAgeSeconds', { statistic: Stats.MAXIMUM, period }),
      threshold: lane.batch.maxBatchAgeHours * 3600,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.IGNORE,
    });

    const reconcilerErrors = new Alarm(this, 'ReconcilerErrors', {
      alarmName: name('reconciler-errors'),
      alarmDescription: `Invocations of ${reconciler} failed as a whole (its provider secret unusable, the manifest unreadable, a timeout or a crash): no batch was reconciled in them. Read the function's log; the next tick tries again.`,
      metric: batch.function.metricErrors({ statistic: Stats.SUM, period }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const sweepErrors = new Alarm(this, 'SweepErrors', {
      alarmName: name('sweep-errors'),
      alarmDescription: `A ${lane.name} lane batch's reconcile pass failed in every sweep for ${BATCH_DEGRADED_INTERVALS * minutes} minutes (BatchSweepErrors: the provider or a table unavailable, a bug); the other batches went on. The reconciler's log names the batch and the error.`,
      metric: batchMetric(lane, 'BatchSweepErrors', { period }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: BATCH_DEGRADED_INTERVALS,
      datapointsToAlarm: BATCH_DEGRADED_INTERVALS,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const stalled = new Alarm(this, 'Stalled', {
      alarmName: name('reconciler-stalled'),
      alarmDescription: `The ${reconciler.slice(4)} has not run for ${BATCH_DEGRADED_INTERVALS * minutes} minutes although its schedule runs it every ${lane.batch.reconcileEveryMinutes} min: the schedule is disabled or cannot invoke it, or it is throttled. Open batches are not reconciled meanwhile.`,
      metric: batch.function.metricInvocations({ statistic: Stats.SUM, period }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: BATCH_DEGRADED_INTERVALS,
      datapointsToAlarm: BATCH_DEGRADED_INTERVALS,
      treatMissingData: TreatMissingData.BREACHING,
    });

    this.alarms = { unresolved, age, reconcilerErrors, sweepErrors, stalled };
    const action = new SnsAction(props.topic);
    for (const alarm of Object.values(this.alarms)) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }
}
