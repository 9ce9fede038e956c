/**
 * The consumer's CloudWatch metrics as the stack sees them. Namespace, dimensions and metric names
 * come from `lib/shared/telemetry.ts`, the one module the consumer emits from too (infra imports that
 * plain-data module, never runtime code); `test/infra/telemetry.test.ts` checks that both sides agree.
 */
import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import type { LaneConfig } from '../config/lanes.js';
import { consumerDimensions, METRICS_NAMESPACE, type ConsumerMetricName } from '../shared/telemetry.js';

export { CONSUMER_METRICS, consumerDimensions, consumerServiceName, METRICS_NAMESPACE, type ConsumerMetricName } from '../shared/telemetry.js';

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
export const THROTTLE_SHARE_EXPRESSION = '100 * FILL(rateLimited, 0) / modelCalls';

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
