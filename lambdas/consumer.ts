/**
 * The queue-lane consumer Lambda entry (SQS event source with ReportBatchItemFailures): its handler is built once, in INIT, from the function's environment
 * (`lib/lanes/queue/from-environment.ts`, which lists the variables the lane stack sets).
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { buildInInit } from '../lib/platform/lambda-init.js';
import { consumerHandlerFromEnvironment } from '../lib/lanes/queue/from-environment.js';

// Built in the environment's INIT (at import), once: see `lib/platform/lambda-init.ts`.
const built = buildInInit(consumerHandlerFromEnvironment);

/** The Lambda entry point (SQS event source with ReportBatchItemFailures). */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => (await built())(event, context);
