/**
 * The live lane's handler as the live function runs it, for the unit and contract tier: the lane's real
 * stores and queue (a {@link TestLane}), a given model, Powertools output captured, the lane's clock and
 * sleep from a virtual clock; and the API Gateway events and Lambda context it is invoked with.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { roundRobinKeys } from '../../lib/admission/keys/key-pool.js';
import { createLaneTelemetry } from '../../lib/extraction/deps.js';
import { createLiveDeps, type LiveDeps } from '../../lib/lanes/live/deps.js';
import { createLiveHandler, type LiveHttpHandler } from '../../lib/lanes/live/handler.js';
import { LIVE_ROUTES } from '../../lib/platform/resources.js';
import { liveServiceName } from '../../lib/platform/telemetry.js';
import type { ModelAdapter } from '../../lib/providers/model.js';
import { createLambdaContext } from '../../workbench/local-stack/lambda/invocation.js';
import { redirectPowertoolsConsole } from '../../workbench/local-stack/lambda/telemetry.js';
import { CapturingSink, type TestLane } from './consumer-harness.js';
import type { VirtualClock } from './virtual-clock.js';

/** Options of {@link testLiveHandler}. */
export interface TestLiveOptions {
  model: ModelAdapter;
  clock: VirtualClock;
  /** Where its logs and metrics go (default: a new sink). */
  sink?: CapturingSink;
  /** The one key's id (default `key-1`). */
  keyId?: string;
  queueUrl?: string;
  s3?: S3Client;
}

/** A live handler of `t`'s lane (see the module's description), its deps and its telemetry sink. */
export function testLiveHandler(t: TestLane, options: TestLiveOptions): { handler: LiveHttpHandler; deps: LiveDeps; sink: CapturingSink } {
  const sink = options.sink ?? new CapturingSink();
  const { logger, metrics } = createLaneTelemetry(t.lane, { serviceName: liveServiceName(t.lane) });
  redirectPowertoolsConsole(logger, sink.console());
  redirectPowertoolsConsole(metrics, sink.console());
  const keyId = options.keyId ?? 'key-1';
  const deps = createLiveDeps(
    t.lane,
    { ...t.clients, ...(options.s3 ? { s3: options.s3 } : {}) },
    {
      queueUrl: options.queueUrl ?? t.queueUrl,
      results: t.results,
      ledger: t.ledger,
      model: options.model,
      keys: roundRobinKeys([{ id: keyId, quotaOwner: 'us-org', secret: `sk-test-${keyId}` }]),
      logger,
      metrics,
      now: options.clock.now,
      sleep: options.clock.sleep,
    },
  );
  return { handler: createLiveHandler(deps), deps, sink };
}

/** The Lambda context of one live invocation (30 s left). */
export function liveContext(t: TestLane): Context {
  return createLambdaContext({
    functionName: `ratelane-${t.lane.name}-live`,
    awsRegion: t.lane.region,
    accountId: '000000000000',
    memoryLimitInMB: 512,
    deadline: Date.now() + 30_000,
    now: Date.now,
  });
}

/** The IAM principal of a test's calls unless it names one: a session of a role. */
export const TEST_PRINCIPAL = 'arn:aws:sts::000000000000:assumed-role/service-a/session-1';

/** What API Gateway's IAM authorizer puts on the request context for `userArn` (`null`: no authorizer). */
function authorizerOf(userArn: string | null): object {
  return userArn === null ? {} : { authorizer: { iam: { userArn, accountId: '000000000000', callerId: 'AROATEST:session', userId: 'AROATEST:session' } } };
}

/** Options of a test's request: headers, request id, the caller's principal (`null`: none). */
interface LiveRequestOptions {
  headers?: Record<string, string>;
  requestId?: string;
  principal?: string | null;
}

/**
 * `POST /v1/extractions` as API Gateway's HTTP API hands it over: a text body as a string (an object is
 * sent as its JSON), any other as base64; the caller {@link TEST_PRINCIPAL} unless the options name one.
 */
export function livePost(body: string | Buffer | object, options: LiveRequestOptions = {}): APIGatewayProxyEventV2 {
  const text = Buffer.isBuffer(body) ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return {
    version: '2.0',
    routeKey: `POST ${LIVE_ROUTES.extractions}`,
    rawPath: LIVE_ROUTES.extractions,
    rawQueryString: '',
    headers: options.headers ?? { 'content-type': 'application/json' },
    requestContext: {
      http: { method: 'POST', path: LIVE_ROUTES.extractions },
      requestId: options.requestId ?? 'req-live-test',
      ...authorizerOf(options.principal === undefined ? TEST_PRINCIPAL : options.principal),
    },
    body: text ?? (body as Buffer).toString('base64'),
    isBase64Encoded: text === undefined,
  } as unknown as APIGatewayProxyEventV2;
}

/** `GET /v1/extractions/{jobId}` by a principal ({@link TEST_PRINCIPAL} unless named; `null`: none). */
export function liveGet(jobId: string, options: Pick<LiveRequestOptions, 'principal'> = {}): APIGatewayProxyEventV2 {
  return jobRequest('GET', jobId, options);
}

/** `DELETE /v1/extractions/{jobId}` by a principal ({@link TEST_PRINCIPAL} unless named; `null`: none). */
export function liveDelete(jobId: string, options: Pick<LiveRequestOptions, 'principal'> = {}): APIGatewayProxyEventV2 {
  return jobRequest('DELETE', jobId, options);
}

/** `POST /v1/extractions/{jobId}/cancel` by a principal ({@link TEST_PRINCIPAL} unless named; `null`: none). */
export function liveCancel(jobId: string, options: Pick<LiveRequestOptions, 'principal'> = {}): APIGatewayProxyEventV2 {
  return jobRequest('POST', jobId, options, LIVE_ROUTES.cancel);
}

/** A request on one job's route (`/v1/extractions/{jobId}`, or one under it), without a body. */
function jobRequest(
  method: 'GET' | 'DELETE' | 'POST',
  jobId: string,
  options: Pick<LiveRequestOptions, 'principal'>,
  route: string = LIVE_ROUTES.extraction,
): APIGatewayProxyEventV2 {
  const path = route.replace('{jobId}', encodeURIComponent(jobId));
  return {
    version: '2.0',
    routeKey: `${method} ${route}`,
    rawPath: path,
    rawQueryString: '',
    headers: {},
    pathParameters: { jobId },
    requestContext: {
      http: { method, path },
      requestId: `req-live-${method.toLowerCase()}`,
      ...authorizerOf(options.principal === undefined ? TEST_PRINCIPAL : options.principal),
    },
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2;
}
