/**
 * A lane's live-API alarms, on the lane's alarm topic (the same actions as the queue lane's alarms):
 * the p95 answer time over the default deadline, answers the function gave as 5xx, 5xx the API itself
 * answered (the function's timeouts, crashes and throttles included), the live function's throttles
 * (Lambda refused to run it: the caller got a 5xx and no work was done), the share of requests handed
 * over to the queue ("pending"), and answers later than their deadline. Names start with
 * `ratelane-<lane>-` so the topic's policy lets CloudWatch publish them. Metric names and dimensions
 * come from `lib/platform/telemetry.ts` (`LIVE_METRICS`, `liveDimensions`).
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { LaneConfig } from '../../config/lanes.js';
import { liveFunctionName } from '../../platform/resources.js';
import type { LaneLive } from './live-api.js';
import { liveMetric, livePendingShare } from '../telemetry.js';

/** The period of every live alarm. */
const LIVE_ALARM_PERIOD = Duration.minutes(5);

/** Periods of the latency and pending-share alarms: 3 consecutive 5-minute periods (a burst passes, a lasting slowdown does not). */
const LIVE_DEGRADED_PERIODS = 3;

/** The live alarms of one lane, by purpose. */
export interface LaneLiveAlarmSet {
  readonly latency: Alarm;
  readonly serverErrors: Alarm;
  readonly apiServerErrors: Alarm;
  readonly functionThrottles: Alarm;
  readonly pendingShare: Alarm;
  readonly overDeadline: Alarm;
}

/** Live alarms that report an event, not a state: notified on ALARM only. */
const LIVE_EVENT_ALARMS = ['overDeadline'] as const satisfies ReadonlyArray<keyof LaneLiveAlarmSet>;

export interface LaneLiveAlarmsProps {
  readonly lane: LaneConfig;
  readonly live: LaneLive;
  /** The lane's alarm topic (`LaneAlarms.topic`), which every other alarm of the lane notifies. */
  readonly topic: ITopic;
}

/** The live API's alarms of one lane. */
export class LaneLiveAlarms extends Construct {
  readonly alarms: LaneLiveAlarmSet;

  constructor(scope: Construct, id: string, props: LaneLiveAlarmsProps) {
    super(scope, id);
    const { lane, live } = props;
    const settings = lane.live;
    const name = (suffix: string) => `ratelane-${lane.name}-live-${suffix}`;
    const period = LIVE_ALARM_PERIOD;
    const minutes = period.toMinutes();

    const latency = new Alarm(this, 'Latency', {
      alarmName: name('latency-p95'),
      alarmDescription: `The p95 answer time of the ${lane.name} live API was over the default deadline (${settings.defaultDeadlineMs} ms) for ${LIVE_DEGRADED_PERIODS * minutes} minutes: callers wait longer than they asked by default (or state long deadlines). Check the provider latency, the live function's duration and the pending share on the dashboard ratelane-${lane.name}.`,
      metric: liveMetric(lane, 'LiveLatencyMs', { statistic: Stats.percentile(95), period }),
      threshold: settings.defaultDeadlineMs,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: LIVE_DEGRADED_PERIODS,
      datapointsToAlarm: LIVE_DEGRADED_PERIODS,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const serverErrors = new Alarm(this, 'ServerErrors', {
      alarmName: name('server-errors'),
      alarmDescription: `The ${lane.name} live function answered ${settings.alarms.serverErrors} or more requests with 5xx in ${minutes} minutes (LiveServerError): a job could neither be answered nor handed over to ${lane.resources.queueName} (a table, the bucket or the queue unavailable, or a bug). Read the live function's log.`,
      metric: liveMetric(lane, 'LiveServerError', { period }),
      threshold: settings.alarms.serverErrors,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // API Gateway's own 5xx count includes what the function cannot count itself: its timeouts,
    // crashes and throttles (reserved or account concurrency), and integration failures.
    const apiServerErrors = new Alarm(this, 'ApiServerErrors', {
      alarmName: name('api-5xx'),
      alarmDescription: `The ${lane.name} live API answered ${settings.alarms.serverErrors} or more requests with 5xx in ${minutes} minutes, counted by API Gateway: the function's own 5xx plus its timeouts, crashes and throttles. If ${name('server-errors')} is quiet, look at the live function's errors, duration and throttles and the access log's integrationError.`,
      metric: live.stage.metricServerError({ statistic: Stats.SUM, period }),
      threshold: settings.alarms.serverErrors,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // A throttled invocation never runs: the function cannot count it, and API Gateway counts it among
    // its 5xx only once enough of them pile up to cross that alarm's threshold. Any throttle is a caller refused.
    const throttleAdvice =
      settings.reservedConcurrency === undefined
        ? `the account's concurrency is exhausted (the consumers' maximumConcurrency, other functions): request a higher "Concurrent executions" quota, lower consumer.maximumConcurrency, or reserve concurrency for the live function (live.reservedConcurrency, where the quota has room above the 10 AWS keeps unreserved)`
        : `the live function's reserved concurrency (live.reservedConcurrency ${settings.reservedConcurrency}) is below the stage's traffic (live.throttle rate ${settings.throttle.rateLimit}/s, burst ${settings.throttle.burstLimit}): raise it, or lower the stage throttle to what the function can run`;
    const functionThrottles = new Alarm(this, 'FunctionThrottles', {
      alarmName: name('throttles'),
      alarmDescription: `Lambda throttled invocations of the ${lane.name} live function (${liveFunctionName(lane.name)}) in ${minutes} minutes: those callers got a 5xx from the API and nothing was done for them (a retry of the same request is safe: a job is committed once). Likely ${throttleAdvice}.`,
      metric: live.function.metricThrottles({ statistic: Stats.SUM, period }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const pendingShare = new Alarm(this, 'PendingShare', {
      alarmName: name('pending-share'),
      alarmDescription: `More than ${settings.alarms.pendingSharePercent}% of the ${lane.name} live API's answers were 202 pending (the job handed over to ${lane.resources.queueName}) for ${LIVE_DEGRADED_PERIODS * minutes} minutes: the model is slower than callers' deadlines, or admission had no room (raise live.reserveShare or the provider limits).`,
      metric: livePendingShare(lane, period),
      threshold: settings.alarms.pendingSharePercent,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: LIVE_DEGRADED_PERIODS,
      datapointsToAlarm: LIVE_DEGRADED_PERIODS,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const overDeadline = new Alarm(this, 'OverDeadline', {
      alarmName: name('over-deadline'),
      alarmDescription: `The ${lane.name} live function answered a request after its deadline (LiveOverDeadline): the hand-over margin (live.handoverMarginMs ${settings.handoverMarginMs} ms) did not hold. Its log line names the job; raise the margin if it recurs.`,
      metric: liveMetric(lane, 'LiveOverDeadline', { period }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    this.alarms = { latency, serverErrors, apiServerErrors, functionThrottles, pendingShare, overDeadline };
    const action = new SnsAction(props.topic);
    for (const [key, alarm] of Object.entries(this.alarms) as Array<[keyof LaneLiveAlarmSet, Alarm]>) {
      alarm.addAlarmAction(action);
      if (!(LIVE_EVENT_ALARMS as readonly string[]).includes(key)) alarm.addOkAction(action);
    }
  }
}
