/**
 * The live lane's HTTP handler (API Gateway HTTP API payload 2.0). Work in progress: answers 503
 * until the live executor lands.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';

/** A live API handler. */
export type LiveHttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
