/**
 * The batch lane's reconciler Lambda entry, invoked by the lane's schedule: its handler is built once, in INIT, from the function's environment
 * (`lib/lanes/batch/from-environment.ts`, which lists the variables the lane stack sets).
 */
import type { Context } from 'aws-lambda';
import type { BatchSweepSummary } from '../lib/lanes/batch/reconciler-handler.js';
import { buildInInit } from '../lib/platform/lambda-init.js';
import { batchReconcilerHandlerFromEnvironment } from '../lib/lanes/batch/from-environment.js';

// Built in the environment's INIT (at import), once: see `lib/platform/lambda-init.ts`.
const built = buildInInit(batchReconcilerHandlerFromEnvironment);

/** The Lambda entry point (an EventBridge Scheduler invocation; its event is not read). */
export const handler = async (event: unknown, context: Context): Promise<BatchSweepSummary> => (await built())(event, context);
