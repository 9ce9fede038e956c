/**
 * The batch reconciler's handler (what the lane's schedule invokes) on the local services and the fake
 * provider's OpenAI Batch API, with its dependencies built as the Lambda entry builds them (the key
 * read from the "secret" each invocation): invocations sweep a submitted batch to the end and send the
 * lane's batch metrics with the reconciler's dimensions (the unresolved-items gauge, the oldest open
 * batch, open batches, items settled in all and by state, sweep errors); an unusable secret fails the
 * invocation after a log line that names the key id and no secret, and counts a sweep error.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { ProviderSecretError } from '../../../../lib/admission/keys/key-ring.js';
import { createAwsClients } from '../../../../lib/platform/clients.js';
import { batchProviderFactory, createBatchReconcilerDeps } from '../../../../lib/lanes/batch/reconciler-deps.js';
import { type BatchSweepSummary, createBatchReconcilerHandler } from '../../../../lib/lanes/batch/reconciler-handler.js';
import { submitBatch } from '../../../../lib/lanes/batch/submit.js';
import { resolveLanes } from '../../../../lib/config/lanes.js';
import { BATCH_SETTLED_METRICS, batchDimensions, batchServiceName } from '../../../../lib/config/names.js';
import { startFakeProvider, type FakeProvider } from '../../../../workbench/fake-provider/index.js';
import { extractInvoice } from '../../../../workbench/fake-provider/extractors/invoice.js';
import { provisionLane } from '../../../../workbench/local-stack/services/provision.js';
import { METRICS_NAMESPACE } from '../../../../lib/platform/telemetry.js';
import { englishDocuments } from '../../../helpers/consumer-harness.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';
import { testEndpoints, uniqueLaneResources } from '../../../helpers/endpoints.js';

const KEY = 'sk-batch-handler-secret';
const providers: FakeProvider[] = [];
after(async () => {
  await Promise.all(providers.map((p) => p.stop()));
});

/** A Lambda context with `timeoutMs` left. */
function contextOf(timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'ratelane-us-batch-reconciler',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:ratelane-us-batch-reconciler',
    memoryLimitInMB: '512',
    awsRequestId: `req-${Date.now()}`,
    logGroupName: '/aws/lambda/ratelane-us-batch-reconciler',
    logStreamName: 'test',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The reconciler of a local lane whose secret holds `secret()`, with its EMF and log lines recorded; it and the fake provider on one virtual clock. */
async function reconcilerLane(secret: () => unknown) {
  const clock = virtualClock();
  const fake = await startFakeProvider({
    keys: [{ key: KEY }],
    extract: (text) => extractInvoice(text),
    minuteMs: 600,
    seed: 5,
    batch: { completionMs: 800, validationMs: 100, finalizingMs: 100, dropRate: 0.3 },
    now: clock.nowMs,
  });
  providers.push(fake);
  const lane = resolveLanes({ us: { resources: uniqueLaneResources(), provider: { baseUrl: fake.baseUrl } } }).us!;
  const clients = createAwsClients(lane.region, testEndpoints());
  const provisioned = await provisionLane(lane, clients);
  const logger = new Logger({ serviceName: batchServiceName(lane), persistentKeys: { lane: lane.name, region: lane.region } });
  const lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> = [];
  for (const level of ['info', 'warn', 'error'] as const) {
    logger[level] = (message: unknown, ...rest: unknown[]) =>
      void lines.push({ level, message: String(message), fields: (rest[0] ?? {}) as Record<string, unknown> });
  }
  const metrics = new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName: batchServiceName(lane),
    defaultDimensions: { lane: lane.name, region: lane.region },
  });
  const emf: Array<Record<string, any>> = [];
  metrics.publishStoredMetrics = () => {
    if (metrics.hasStoredMetrics()) emf.push(metrics.serializeMetrics() as unknown as Record<string, any>);
    metrics.clearMetrics();
    return metrics;
  };
  const provider = batchProviderFactory(lane, { s3: clients.s3, readSecret: async () => secret() });
  const deps = createBatchReconcilerDeps(lane, clients, { queueUrl: provisioned.queueUrl, provider, logger, metrics, now: clock.now });
  return { clock, lane, deps, handler: createBatchReconcilerHandler(deps), emf, lines };
}

describe('the batch reconciler handler', () => {
  it('sweeps a submitted batch to the end across invocations and sends the lane’s batch metrics with the reconciler’s dimensions', async () => {
    // Prepare
    const t = await reconcilerLane(() => JSON.stringify({ 'key-1': KEY }));
    const docs = englishDocuments(8).map((d, i) => ({ text: d.text, sourceId: `handler-${i}` }));
    const submitted = await submitBatch(docs, { ...t.deps, provider: await t.deps.provider() });
    assert.ok(submitted.batchId);
    const summaries: BatchSweepSummary[] = [];
    // Act: an invocation, then the clock moves on, until the batch is done
    await t.clock.until(
      'the batch is done',
      async () => {
        summaries.push(await t.handler({}, contextOf(60_000)));
        return summaries.at(-1)?.open === 0;
      },
      { everyMs: 300, timeoutMs: 30_000 },
    );
    // Assess
    const counts = await t.deps.manifest.counts(submitted.batchId);
    const last = summaries.at(-1)!;
    assert.equal(counts.committed + counts.unresolved, 8, JSON.stringify(counts));
    assert.deepEqual([last.batches, last.open, last.errors, last.unresolvedItems, last.oldestOpenAgeSeconds], [1, 0, 0, counts.unresolved, 0]);
    assert.equal(t.emf.length, summaries.length, 'one EMF line per invocation');
    const metric = (line: Record<string, any>, name: string) => line[name] as number | undefined;
    const lastEmf = t.emf.at(-1)!;
    const [directive] = lastEmf._aws.CloudWatchMetrics;
    assert.equal(directive.Namespace, METRICS_NAMESPACE);
    assert.deepEqual([...directive.Dimensions[0]].sort(), Object.keys(batchDimensions(t.lane)).sort());
    for (const [name, value] of Object.entries(batchDimensions(t.lane))) assert.equal(lastEmf[name], value);
    assert.deepEqual(
      ['BatchItemsUnresolved', 'BatchOldestAgeSeconds', 'BatchesOpen', 'BatchSweepErrors'].map((n) => metric(lastEmf, n)),
      [counts.unresolved, 0, 0, 0],
    );
    const sum = (name: string) => t.emf.reduce((total, line) => total + (metric(line, name) ?? 0), 0);
    assert.equal(sum('BatchItemsSettled'), 8, 'every item settled once across the invocations');
    assert.equal(sum(BATCH_SETTLED_METRICS.committed), counts.committed);
    assert.equal(sum(BATCH_SETTLED_METRICS.unresolved), counts.unresolved);
    assert.ok(counts.unresolved > 0, 'the fake dropped some lines');
    const done = t.lines.filter((l) => l.message === 'batch sweep done');
    assert.equal(done.length, summaries.length);
    assert.doesNotMatch(JSON.stringify(t.lines), new RegExp(KEY), 'the key is never logged');
  });

  it('fails the invocation on an unusable secret, after a log line naming the key id (never a secret) and a sweep error', async () => {
    // Prepare
    const t = await reconcilerLane(() => 'sk-not-json-and-not-to-be-logged');
    // Act / Assess
    await assert.rejects(t.handler({}, contextOf(60_000)), ProviderSecretError);
    const errors = t.lines.filter((l) => l.level === 'error');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.message, 'batch reconciler is not configured: no batch was reconciled');
    assert.equal(errors[0]?.fields.error, 'ProviderSecretError');
    assert.match(String(errors[0]?.fields.detail), /the batch lane uses key id key-1/);
    assert.doesNotMatch(JSON.stringify(t.lines), /sk-not-json/);
    assert.equal(t.emf.at(-1)?.BatchSweepErrors, 1);
  });
});
