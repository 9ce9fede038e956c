/**
 * The live-lane Lambda entry behind the lane's HTTP API (IAM auth): its handler is built once, in INIT, from the function's environment
 * (`lib/lanes/live/from-environment.ts`, which lists the variables the lane stack sets).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { buildInInit } from '../lib/platform/lambda-init.js';
import { liveHandlerFromEnvironment } from '../lib/lanes/live/from-environment.js';

// Built in the environment's INIT (at import), once: see `lib/platform/lambda-init.ts`.
const built = buildInInit(liveHandlerFromEnvironment);

/** The Lambda entry point (HTTP API, payload format 2.0). */
export const handler = async (event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyStructuredResultV2> => (await built())(event, context);
