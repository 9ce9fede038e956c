/**
 * The consumer's Lambda handler, built from its dependencies: middy with Powertools Logger and
 * Metrics middlewares around Powertools' `BatchProcessor`, so failed records are reported as
 * `batchItemFailures` (ReportBatchItemFailures) and every other record is acknowledged.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import middy from '@middy/core';
import { traceInvocation } from '../../platform/tracing.js';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type ConfigurationCheck, pauseForConfiguration } from './configuration.js';
import { settleMarginMs } from '../../extraction/budget.js';
import { startInvocation } from './invocation.js';
import { SettleClock } from './settle-clock.js';
import { processRecord, type ConsumerDeps, type InvocationScope } from './process-record.js';

/** A Lambda-shaped SQS handler. */
export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * Builds the handler. Records are processed in parallel within a batch (as one Lambda invocation
 * would); a batch whose every record failed is returned as all failures rather than thrown. Each
 * invocation keeps its own deadline a little before Lambda's (`invocation.ts`): the batch returns in
 * time, failing only the records that were not settled. Per invocation it reports the age of the
 * oldest job it saw (`OldestJobAgeMs`) and whether the lane waits for a person (`LaneWaitingForPerson`).
 * `checkConfiguration` runs first: when the lane's configuration is unusable the batch is sent back
 * and the lane paused instead (`configuration.ts`).
 */
export function createConsumerHandler(
  deps: ConsumerDeps,
  options: { checkConfiguration?: ConfigurationCheck | undefined; tracer?: Tracer | undefined } = {},
): SqsHandler {
  const processor = new BatchProcessor(EventType.SQS);
  const settleClock = new SettleClock();
  const base = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    const problem = await options.checkConfiguration?.();
    if (problem !== undefined) return pauseForConfiguration(event, deps, problem);
    const invocation = startInvocation(
      context,
      () => deps.now().getTime(),
      (invocationMs) => settleClock.marginMs(settleMarginMs(deps.lane), invocationMs),
    );
    const timeoutMs = deps.lane.consumer.timeoutSeconds * 1000;
    const scope: InvocationScope = {
      invocation,
      oldestJobAgeMs: -1,
      waitingForPerson: false,
      settleClock,
      // Jittered between half and all of a function timeout, so jobs cut off together do not come back together.
      cutOffWaitMs: () => Math.round(timeoutMs * (0.5 + 0.5 * deps.random())),
    };
    try {
      const recordHandler = async (record: SQSRecord): Promise<void> => processRecord(record, deps, scope);
      return await processPartialResponse(event, recordHandler, processor, { context, throwOnFullBatchFailure: false });
    } finally {
      invocation.dispose();
      if (scope.oldestJobAgeMs >= 0) deps.metrics.addMetric('OldestJobAgeMs', MetricUnit.Milliseconds, scope.oldestJobAgeMs);
      deps.metrics.addMetric('LaneWaitingForPerson', MetricUnit.Count, scope.waitingForPerson ? 1 : 0);
    }
  };
  const handler = middy(base);
  if (options.tracer) handler.use(traceInvocation(options.tracer));
  return handler.use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics)) as unknown as SqsHandler;
}
