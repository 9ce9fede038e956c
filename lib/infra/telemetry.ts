/**
 * The consumer's and the live function's CloudWatch metrics as the stack sees them. Namespace, dimensions and metric names
 * come from `lib/platform/telemetry.ts`, the one module the consumer emits from too (infra imports that
 * plain-data module, never runtime code); `test/lib/infra/telemetry.test.ts` checks that both sides agree.
 */
import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import type { LaneConfig } from '../config/lanes.js';
import { batchDimensions } from '../config/names.js';
import { consumerDimensions, type LiveMetricName, liveDimensions, METRICS_NAMESPACE, type ConsumerMetricName } from '../platform/telemetry.js';

export type { ConsumerMetricName } from '../platform/telemetry.js';
export type { LiveMetricName } from '../platform/telemetry.js';

/** One consumer metric of a lane, with the exact dimension set the consumer writes. */
export function consumerMetric(
  lane: Pick<LaneConfig, 'name' | 'region'>,
  name: ConsumerMetricName,
  options: { statistic?: string; period?: Duration; label?: string } = {},
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: consumerDimensions(lane),
    statistic: options.statistic ?? Stats.SUM,
    period: options.period ?? Duration.minutes(1),
    ...(options.label ? { label: options.label } : {}),
  });
}

/** The metric-math expression of the 429 share (percent of model calls that were rate limited). */
const THROTTLE_SHARE_EXPRESSION = '100 * FILL(rateLimited, 0) / modelCalls';

/**
 * The metric-math expression of the admission denial share: percent of admission decisions (a model call
 * started, or a job deferred because no key could take it) that deferred the job.
 */
const ADMISSION_DENIAL_SHARE_EXPRESSION = '100 * FILL(admissionDenied, 0) / (FILL(admissionDenied, 0) + FILL(modelCalls, 0))';

/** The share of admission decisions that deferred the job, in percent, per `period`. */
export function admissionDenialShare(lane: Pick<LaneConfig, 'name' | 'region'>, period: Duration = Duration.minutes(5)): MathExpression {
  return new MathExpression({
    expression: ADMISSION_DENIAL_SHARE_EXPRESSION,
    usingMetrics: {
      admissionDenied: consumerMetric(lane, 'AdmissionDenied', { period }),
      modelCalls: consumerMetric(lane, 'ModelCalls', { period }),
    },
    period,
    label: 'admission denial share (%)',
  });
}

/** The share of model calls answered with a rate limit (429), in percent, per `period`. */
export function throttleShare(lane: Pick<LaneConfig, 'name' | 'region'>, period: Duration = Duration.minutes(5)): MathExpression {
  return new MathExpression({
    expression: THROTTLE_SHARE_EXPRESSION,
    usingMetrics: {
      rateLimited: consumerMetric(lane, 'RateLimited', { period }),
      modelCalls: consumerMetric(lane, 'ModelCalls', { period }),
    },
    period,
    label: '429 share (%)',
  });
}

/** A consumer metric in milliseconds shown in seconds (beside SQS's ages, which are in seconds). */
export function consumerSeconds(
  lane: Pick<LaneConfig, 'name' | 'region'>,
  name: Extract<ConsumerMetricName, `${string}Ms`>,
  options: { statistic: string; period: Duration; label: string },
): MathExpression {
  // One id per metric and statistic: several of these may share a graph.
  const id = `${name.charAt(0).toLowerCase()}${name.slice(1)}_${options.statistic.replace(/[^A-Za-z0-9]/g, '_')}`;
  return new MathExpression({
    expression: `${id} / 1000`,
    usingMetrics: { [id]: consumerMetric(lane, name, { statistic: options.statistic, period: options.period }) },
    period: options.period,
    label: options.label,
  });
}

/** One live-function metric of a lane, with the exact dimension set the live function writes. */
export function liveMetric(
  lane: Pick<LaneConfig, 'name' | 'region'>,
  name: LiveMetricName,
  options: { statistic?: string; period?: Duration; label?: string } = {},
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: liveDimensions(lane),
    statistic: options.statistic ?? Stats.SUM,
    period: options.period ?? Duration.minutes(1),
    ...(options.label ? { label: options.label } : {}),
  });
}

/** The metric-math expression of the live pending share (percent of live answers that were 202 pending, handed over to the queue). */
const LIVE_PENDING_SHARE_EXPRESSION = '100 * FILL(livePending, 0) / liveRequests';

/** The share of live requests answered "pending" (handed over to the queue lane), in percent, per `period`. */
export function livePendingShare(lane: Pick<LaneConfig, 'name' | 'region'>, period: Duration = Duration.minutes(5)): MathExpression {
  return new MathExpression({
    expression: LIVE_PENDING_SHARE_EXPRESSION,
    usingMetrics: {
      livePending: liveMetric(lane, 'LivePending', { period }),
      liveRequests: liveMetric(lane, 'LiveRequests', { period }),
    },
    period,
    label: 'pending share (%)',
  });
}

/**
 * Jobs and batches kept from a model endpoint not approved for the lane's geography (`EndpointMismatch`),
 * summed over the consumer and, where the lane has them, the live function and the batch reconciler, per minute.
 */
export function endpointMismatches(lane: Pick<LaneConfig, 'name' | 'region' | 'live' | 'batch'>): MathExpression {
  const of = (dimensionsMap: Record<string, string>) =>
    new Metric({ namespace: METRICS_NAMESPACE, metricName: 'EndpointMismatch', dimensionsMap, statistic: Stats.SUM, period: Duration.minutes(1) });
  const usingMetrics: Record<string, Metric> = {
    queue: of(consumerDimensions(lane)),
    ...(lane.live.enabled ? { live: of(liveDimensions(lane)) } : {}),
    ...(lane.batch.enabled ? { batch: of(batchDimensions(lane)) } : {}),
  };
  return new MathExpression({
    expression: Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics,
    period: Duration.minutes(1),
    label: 'kept from an unapproved endpoint',
  });
}
