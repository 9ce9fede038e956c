/**
 * The live-lane Lambda behind the lane's HTTP API (IAM auth): `POST /v1/extractions` and
 * `GET /v1/extractions/{jobId}`. Thin on purpose: everything it does is in `lib/live` and `lib/extraction`.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';

/** The Lambda entry point (HTTP API, payload format 2.0). */
export const handler = async (_event: APIGatewayProxyEventV2, _context: Context): Promise<APIGatewayProxyStructuredResultV2> => ({
  statusCode: 503,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ error: 'not_ready' }),
});
