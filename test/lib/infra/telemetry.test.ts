/**
 * The stack's view of the consumer (metric namespace, dimensions, metric names, document prefix,
 * environment) must match what the consumer really writes and reads, or alarms watch metrics nobody
 * emits. Both sides import `lib/platform/`; these tests check the synthesized stacks and the consumer's
 * own telemetry against it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { DEFAULT_LANES } from '../../../lib/config/lanes.js';
import { createConsumerTelemetry } from '../../../lib/lanes/queue/deps.js';
import { buildLaneApp } from '../../../lib/infra/app.js';
import { CONSUMER_ENV, ConsumerEnvironmentSchema } from '../../../lib/platform/environment.js';
import { consumerFunctionName, DOCUMENT_PREFIX } from '../../../lib/platform/resources.js';
import { CONSUMER_METRICS, consumerDimensions, LIVE_METRICS, METRICS_NAMESPACE } from '../../../lib/platform/telemetry.js';
import { BatchReconcilerEnvironmentSchema, createBatchReconcilerDeps } from '../../../lib/lanes/batch/reconciler-deps.js';
import { BATCH_METRICS, batchDimensions, batchReconcilerFunctionName } from '../../../lib/config/names.js';
import { documentKeyFor } from '../../../lib/store/documents.js';
import { LANE_APP_CONTEXT } from './support.js';

// Prepare (shared): both lane stacks, bundling skipped.
const app = new App({ context: { ...LANE_APP_CONTEXT, account: '123456789012' } });
const stacks = buildLaneApp(app);

/** Every `{ Namespace, MetricName, service }` the template's alarms and dashboards name (`service`: the dimension, when an alarm names it). */
function metricsNamed(json: Record<string, any>): { namespace: string; name: string; service?: string }[] {
  const found: { namespace: string; name: string; service?: string }[] = [];
  const serviceOf = (dimensions: Array<{ Name: string; Value: unknown }> | undefined) => {
    const value = dimensions?.find((d) => d.Name === 'service')?.Value;
    return typeof value === 'string' ? { service: value } : {};
  };
  for (const resource of Object.values<any>(json.Resources)) {
    if (resource.Type === 'AWS::CloudWatch::Alarm') {
      const p = resource.Properties;
      if (p.MetricName) found.push({ namespace: p.Namespace, name: p.MetricName, ...serviceOf(p.Dimensions) });
      for (const m of p.Metrics ?? []) {
        if (m.MetricStat)
          found.push({ namespace: m.MetricStat.Metric.Namespace, name: m.MetricStat.Metric.MetricName, ...serviceOf(m.MetricStat.Metric.Dimensions) });
      }
    }
    if (resource.Type === 'AWS::CloudWatch::Dashboard') {
      const body = JSON.stringify(resource.Properties.DashboardBody);
      for (const m of body.matchAll(/\\"(ratelane)\\",\\"([A-Za-z]+)\\"/g)) found.push({ namespace: m[1]!, name: m[2]! });
    }
  }
  return found;
}

describe('infra telemetry contract', () => {
  for (const lane of Object.values(DEFAULT_LANES)) {
    it(`the ${lane.name} consumer emits on the shared namespace with the exact dimension set`, () => {
      // Prepare
      const { metrics } = createConsumerTelemetry(lane);
      metrics.addMetric('RegionMismatch', MetricUnit.Count, 1);
      // Act
      const emf = metrics.serializeMetrics() as unknown as Record<string, unknown> & {
        _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][] }> };
      };
      metrics.clearMetrics();
      // Assess
      const [directive] = emf._aws.CloudWatchMetrics;
      assert.ok(directive);
      assert.equal(directive.Namespace, METRICS_NAMESPACE);
      const expected = consumerDimensions(lane);
      assert.deepEqual([...(directive.Dimensions[0] ?? [])].sort(), Object.keys(expected).sort());
      for (const [name, value] of Object.entries(expected)) assert.equal(emf[name], value, `dimension ${name}`);
    });

    it(`the ${lane.name} stack's alarms and dashboard name only metrics the consumer, the live function or the batch reconciler emits, under its service`, () => {
      // Act
      const json = Template.fromStack(stacks[lane.name]!).toJSON();
      const named = metricsNamed(json).filter((m) => m.namespace === METRICS_NAMESPACE);
      // Assess
      assert.ok(named.length >= 5, `found ${named.length} ratelane metrics in the template`);
      const emitted = [...CONSUMER_METRICS, ...LIVE_METRICS, ...BATCH_METRICS] as readonly string[];
      for (const { name } of named) assert.ok(emitted.includes(name), `${name} is a metric the consumer, the live function or the batch reconciler emits`);
      const serviceOf = (name: string) =>
        (LIVE_METRICS as readonly string[]).includes(name)
          ? `ratelane-live-${lane.name}`
          : (BATCH_METRICS as readonly string[]).includes(name)
            ? `ratelane-batch-${lane.name}`
            : `ratelane-consumer-${lane.name}`;
      // The extraction core's EndpointMismatch is emitted by all three functions, each under its own service.
      const everywhere = new Set([`ratelane-consumer-${lane.name}`, `ratelane-live-${lane.name}`, `ratelane-batch-${lane.name}`]);
      for (const { name, service } of named.filter((m) => m.service !== undefined)) {
        if (name === 'EndpointMismatch') assert.ok(everywhere.has(service!), `${name} is watched under ${service}`);
        else assert.equal(service, serviceOf(name), `${name} is watched under the service that emits it`);
      }
      assert.ok(
        named.some((m) => m.service === `ratelane-batch-${lane.name}`),
        'the batch alarms are among them',
      );
      assert.ok(
        named.some((m) => m.service === `ratelane-live-${lane.name}`),
        'the live alarms are among them',
      );
    });

    it(`the ${lane.name} stack sets an environment the consumer's schema accepts`, () => {
      // Prepare
      const json = Template.fromStack(stacks[lane.name]!).toJSON();
      const fn = Object.values<any>(json.Resources).find(
        (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.FunctionName === consumerFunctionName(lane.name),
      );
      assert.ok(fn, 'the consumer function');
      const variables = fn.Properties.Environment.Variables as Record<string, unknown>;
      // Act: tokens become placeholders of the right shape (queue URLs; the lane's own senders, role unique ids)
      const placeholder = (name: string) =>
        name === CONSUMER_ENV.laneSenders ? 'AROAEXAMPLECONSUMER01,AROAEXAMPLELIVE00001' : 'https://sqs.example.amazonaws.com/123456789012/q';
      const resolved = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, typeof v === 'string' ? v : placeholder(k)]));
      const parsed = ConsumerEnvironmentSchema.safeParse(resolved);
      // Assess
      assert.ok(parsed.success, parsed.success ? '' : parsed.error.message);
      assert.equal(variables[CONSUMER_ENV.metricsNamespace], METRICS_NAMESPACE);
    });
  }

  for (const lane of Object.values(DEFAULT_LANES)) {
    it(`the ${lane.name} batch reconciler emits on the shared namespace with the exact dimension set, and gets an environment its schema accepts`, () => {
      // Prepare
      const deps = createBatchReconcilerDeps(lane, {} as never, {
        queueUrl: 'https://sqs.example.amazonaws.com/123456789012/q',
        provider: async () => ({}) as never,
      });
      deps.metrics.addMetric('BatchItemsUnresolved', MetricUnit.Count, 1);
      const json = Template.fromStack(stacks[lane.name]!).toJSON();
      const fn = Object.values<any>(json.Resources).find(
        (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.FunctionName === batchReconcilerFunctionName(lane.name),
      );
      assert.ok(fn, 'the batch reconciler function');
      const variables = fn.Properties.Environment.Variables as Record<string, unknown>;
      // Act
      const emf = deps.metrics.serializeMetrics() as unknown as Record<string, unknown> & {
        _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][] }> };
      };
      deps.metrics.clearMetrics();
      const resolved = Object.fromEntries(
        Object.entries(variables).map(([k, v]) => [k, typeof v === 'string' ? v : 'https://sqs.example.amazonaws.com/123456789012/q']),
      );
      const parsed = BatchReconcilerEnvironmentSchema.safeParse(resolved);
      // Assess
      const [directive] = emf._aws.CloudWatchMetrics;
      assert.equal(directive?.Namespace, METRICS_NAMESPACE);
      const expected = batchDimensions(lane);
      assert.deepEqual([...(directive?.Dimensions[0] ?? [])].sort(), Object.keys(expected).sort());
      for (const [name, value] of Object.entries(expected)) assert.equal(emf[name], value, `dimension ${name}`);
      assert.equal(variables.POWERTOOLS_SERVICE_NAME, expected.service);
      assert.ok(parsed.success, parsed.success ? '' : parsed.error.message);
    });
  }

  it('stores documents under the prefix the stack grants reads on', () => {
    // Act
    const key = documentKeyFor('a'.repeat(64));
    // Assess
    assert.ok(key.startsWith(DOCUMENT_PREFIX));
  });
});
