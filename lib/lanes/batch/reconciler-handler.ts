/**
 * The batch reconciler's Lambda handler (invoked by the lane's EventBridge Scheduler schedule, every
 * `lane.batch.reconcileEveryMinutes`; the event carries nothing it reads): one sweep of the lane's
 * batches (`sweep.ts`) inside the invocation's time, then the lane's batch gauges and counts as EMF
 * metrics — `BatchItemsUnresolved`, `BatchOldestAgeSeconds`, `BatchesOpen`, `BatchItemsSettled` (and
 * per state), `BatchSweepErrors` — and one summary log line. middy with Powertools Logger and Metrics
 * around it, as the other lane functions.
 *
 * A reconciler that cannot run (no usable provider secret, no batch client for the provider) or cannot
 * list the batches throws after its log line and a `BatchSweepErrors`: the invocation fails (the
 * function's `Errors` alarm) and the next schedule tick tries again. A batch whose own pass fails does
 * not fail the invocation (it counts in `BatchSweepErrors`).
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import middy from '@middy/core';
import { traceInvocation } from '../../platform/tracing.js';
import type { Context } from 'aws-lambda';
import { ProviderSecretError } from '../../admission/keys/key-ring.js';
import { BATCH_SETTLED_METRICS, type BatchMetricName } from '../../config/names.js';
import { errorName } from '../../platform/errors.js';
import type { ItemState } from '../../store/manifest-model.js';
import type { BatchProvider } from './providers/provider.js';
import { BatchReconcilerConfigurationError, type BatchReconcilerDeps } from './reconciler-deps.js';
import { refuseUnapprovedEndpoint } from './submit.js';
import { type SweepReport, sweepBatches } from './sweep.js';

/** What one invocation returns (and logs): counts only. */
export type BatchSweepSummary = Omit<SweepReport, 'batches'> & { batches: number };

/** A Lambda-shaped handler of the schedule's invocations. */
export type BatchReconcilerHandler = (event: unknown, context: Context) => Promise<BatchSweepSummary>;

/** Builds the handler from its dependencies. */
export function createBatchReconcilerHandler(deps: BatchReconcilerDeps, options: { tracer?: Tracer | undefined } = {}): BatchReconcilerHandler {
  const count = (name: BatchMetricName, value: number, unit: (typeof MetricUnit)[keyof typeof MetricUnit] = MetricUnit.Count) =>
    deps.metrics.addMetric(name, unit, value);
  const base = async (_event: unknown, context: Context): Promise<BatchSweepSummary> => {
    let provider: BatchProvider;
    let report: SweepReport;
    try {
      provider = await deps.provider();
    } catch (error) {
      count('BatchSweepErrors', 1);
      const configuration = error instanceof ProviderSecretError || error instanceof BatchReconcilerConfigurationError;
      deps.logger.error(configuration ? 'batch reconciler is not configured: no batch was reconciled' : 'batch client could not be made', {
        lane: deps.lane.name,
        error: errorName(error) ?? 'Error',
        // These messages name key ids, variables and the provider kind, never a secret.
        ...(configuration
          ? { detail: `${(error as Error).message}. The secret holds {"<key id>": "<api key>"}; the batch lane uses key id ${deps.lane.provider.keys[0]?.id}` }
          : {}),
      });
      throw error;
    }
    try {
      refuseUnapprovedEndpoint(deps.lane, provider);
    } catch (error) {
      count('EndpointMismatch', 1);
      deps.logger.error('batch client host not approved for the lane: no batch was reconciled or sent', {
        lane: deps.lane.name,
        host: provider.host,
        detail: (error as Error).message,
      });
      throw error;
    }
    try {
      report = await sweepBatches({ ...deps, provider, timeLeftMs: () => context.getRemainingTimeInMillis() });
    } catch (error) {
      count('BatchSweepErrors', 1);
      deps.logger.error('listing the batches failed: no batch was reconciled', { lane: deps.lane.name, error: errorName(error) ?? 'Error' });
      throw error;
    }
    count('BatchItemsUnresolved', report.unresolvedItems);
    count('BatchOldestAgeSeconds', report.oldestOpenAgeSeconds, MetricUnit.Seconds);
    count('BatchesOpen', report.open);
    count('BatchItemsSettled', report.settled);
    for (const [state, n] of Object.entries(report.moved) as Array<[ItemState, number]>) {
      const metric = BATCH_SETTLED_METRICS[state as keyof typeof BATCH_SETTLED_METRICS];
      if (metric && n > 0) count(metric, n);
    }
    count('BatchSweepErrors', report.errors);
    const { batches, ...totals } = report;
    const summary: BatchSweepSummary = { ...totals, batches: batches.length };
    deps.logger.info('batch sweep done', {
      ...summary,
      failed: batches.filter((b) => b.outcome === 'failed').map((b) => ({ batchId: b.batchId, error: b.error })),
    });
    return summary;
  };
  const handler = middy(base);
  if (options.tracer) handler.use(traceInvocation(options.tracer));
  return handler.use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics)) as unknown as BatchReconcilerHandler;
}
