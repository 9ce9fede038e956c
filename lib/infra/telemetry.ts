/**
 * The consumer's CloudWatch metrics as the stack sees them: namespace, dimensions and names of the
 * EMF metrics the consumer emits (Powertools Metrics with `service`, `lane` and `region` as
 * dimensions). Kept here, not imported from the consumer, because infra imports config and never
 * runtime code; `test/infra/telemetry.test.ts` checks that both sides agree.
 */
import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import type { LaneConfig } from '../config/lanes.js';

/** The metrics namespace of every ratelane consumer (`POWERTOOLS_METRICS_NAMESPACE`). */
export const METRICS_NAMESPACE = 'ratelane';

/** The EMF metrics the consumer emits (all counts unless noted). */
export const CONSUMER_METRICS = [
  'Completed',
  'ModelCalls',
  'RateLimited',
  'Deferred',
  'EligibilityHops',
  'DuplicateSuppressed',
  'ValidationFailed',
  'NeedsReview',
  'Rejected',
  'RegionMismatch',
  'QueueAgeMs',
  'AttemptsPerCompletion',
  'Failed',
  'DeadLettered',
  'BillingAlarm',
  'AdmissionDenied',
  'KeyCooldown',
  'KeyCooldownRateLimit',
  'KeyCooldownQuotaExhausted',
  'KeyCooldownBilling',
  'LanePaused',
] as const;

export type ConsumerMetricName = (typeof CONSUMER_METRICS)[number];

/** The Powertools service name of a lane's consumer (`POWERTOOLS_SERVICE_NAME`, a metric dimension). */
export function consumerServiceName(lane: Pick<LaneConfig, 'name'>): string {
  return `ratelane-consumer-${lane.name}`;
}

/** The dimensions every consumer metric carries: Powertools' `service` plus the lane and its region. */
export function consumerDimensions(lane: Pick<LaneConfig, 'name' | 'region'>): Record<string, string> {
  return { service: consumerServiceName(lane), lane: lane.name, region: lane.region };
}

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
