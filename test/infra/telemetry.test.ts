/**
 * The stack's view of the consumer (metric namespace, dimensions, metric names, document prefix)
 * must match what the consumer really writes, or alarms watch metrics nobody emits.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { DEFAULT_LANES } from '../../lib/config/lanes.js';
import { METRICS_NAMESPACE as CONSUMER_NAMESPACE, createConsumerTelemetry } from '../../lib/consumer/handler.js';
import { DOCUMENT_PREFIX } from '../../lib/infra/storage.js';
import { CONSUMER_METRICS, METRICS_NAMESPACE, consumerDimensions } from '../../lib/infra/telemetry.js';
import { DOCUMENT_KEY_PREFIX } from '../../lib/store/documents.js';

describe('infra telemetry contract', () => {
  for (const lane of Object.values(DEFAULT_LANES)) {
    it(`alarms on the namespace and exact dimension set the ${lane.name} consumer emits`, () => {
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
  }

  it('uses the consumer namespace and knows every metric the consumer emits', () => {
    // Prepare
    const source = readFileSync(new URL('../../lib/consumer/process-record.ts', import.meta.url), 'utf8');
    // Act
    const emitted = new Set([...source.matchAll(/count\(deps, '([A-Za-z]+)'\)|addMetric\('([A-Za-z]+)'/g)].map((m) => m[1] ?? m[2]));
    // Assess
    assert.equal(METRICS_NAMESPACE, CONSUMER_NAMESPACE);
    assert.ok(emitted.size >= 10);
    for (const name of emitted) assert.ok((CONSUMER_METRICS as readonly string[]).includes(name as string), `${name} is known to infra`);
  });

  it('grants reads on the prefix documents are stored under', () => {
    // Act / Assess
    assert.equal(DOCUMENT_PREFIX, DOCUMENT_KEY_PREFIX);
  });
});
