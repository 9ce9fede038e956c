/**
 * The consumer's Lambda handler, built from its dependencies: middy with Powertools Logger and
 * Metrics middlewares around Powertools' `BatchProcessor`, so failed records are reported as
 * `batchItemFailures` (ReportBatchItemFailures) and every other record is acknowledged.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { LaneConfig } from '../config/lanes.js';
import { processRecord, type ConsumerDeps } from './process-record.js';

/** The metrics namespace of every ratelane consumer. */
export const METRICS_NAMESPACE = 'ratelane';

/** A Lambda-shaped SQS handler. */
export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * Powertools Logger and Metrics for one lane's consumer, with the lane and region as metric
 * dimensions and as keys on every log line.
 */
export function createConsumerTelemetry(lane: LaneConfig, options: { serviceName?: string; logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' } = {}): {
  logger: Logger;
  metrics: Metrics;
} {
  const serviceName = options.serviceName ?? `ratelane-consumer-${lane.name}`;
  const logger = new Logger({
    serviceName,
    logLevel: options.logLevel ?? 'INFO',
    persistentKeys: { lane: lane.name, region: lane.region },
  });
  const metrics = new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName,
    defaultDimensions: { lane: lane.name, region: lane.region },
  });
  return { logger, metrics };
}

/**
 * Builds the handler. Records are processed in parallel within a batch (as one Lambda invocation
 * would); a batch whose every record failed is returned as all failures rather than thrown.
 */
export function createConsumerHandler(deps: ConsumerDeps): SqsHandler {
  const processor = new BatchProcessor(EventType.SQS);
  const recordHandler = async (record: SQSRecord): Promise<void> => processRecord(record, deps);
  const base = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    processPartialResponse(event, recordHandler, processor, { context, throwOnFullBatchFailure: false });
  return middy(base).use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics)) as unknown as SqsHandler;
}
