/**
 * The consumer's Lambda handler, built from its dependencies: middy with Powertools Logger and
 * Metrics middlewares around Powertools' `BatchProcessor`, so failed records are reported as
 * `batchItemFailures` (ReportBatchItemFailures) and every other record is acknowledged.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { processRecord, type ConsumerDeps } from './process-record.js';

export { createConsumerTelemetry } from './deps.js';

/** A Lambda-shaped SQS handler. */
export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

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
