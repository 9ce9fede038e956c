/**
 * A local stand-in for an API Gateway HTTP API (payload 2.0, IAM auth, `$default` stage) in front of a
 * Lambda function, on a loopback port, with AWS's documented rules
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html):
 *
 * - the event: lower-cased `headers` (repeats joined with commas, cookies moved to `cookies`), repeated
 *   query parameters joined with commas, `pathParameters`, `requestContext.authorizer.iam` (a fixed local
 *   caller, or the principal a request names in {@link LOCAL_CALLER_HEADER}: signatures are not checked). The body is text for `text/*`, `application/json`, `application/xml`
 *   and `application/javascript` only; anything else (no content type, form posts) is base64 (the docs
 *   list no types; the split was checked against AWS in https://github.com/ministackorg/ministack/pull/766);
 * - no route → 404 `{"message":"Not Found"}`; a handler error, function timeout or malformed result → 500
 *   `{"message":"Internal Server Error"}`; no answer within the integration timeout (30 s at most) → 503
 *   `{"message":"Service Unavailable"}`, while the function runs on to its own end or timeout;
 * - a result with `statusCode` is used as it is (`cookies` → `set-cookie`, body base64-decoded when
 *   `isBase64Encoded`); any other value is 200, application/json, the value as the body (a string as it
 *   is). Payload 2.0 has no `multiValueHeaders`: like API Gateway, this ignores them.
 *
 * Sizes: an HTTP API takes bodies up to 10 MB (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html),
 * a synchronous Lambda invocation at most 6 MB (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html)
 * counted on the whole event (headers, context, body, base64 adding a third): Lambda's limit is the one
 * AWS applies first. Both answer 413 `{"message":"Request Entity Too Large"}`, as AWS's own emulator maps
 * Lambda's `RequestEntityTooLargeException` for HTTP APIs (aws/aws-lambda-dotnet PR #1990).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayEventRequestContextIAMAuthorizer, APIGatewayEventRequestContextV2, APIGatewayProxyEventV2WithRequestContext } from 'aws-lambda';
import { PRINCIPAL_ARN_PATTERN } from '../../../lib/contract/job.js';
import type { LiveHttpHandler } from '../../../lib/lanes/live/handler.js';
import { RatelaneError, type ErrorKind } from '../../../lib/platform/errors.js';
import { LIVE_ROUTES } from '../../../lib/platform/resources.js';
import { createLambdaContext, FunctionTimeoutError, InvocationAbortError, runWithTimeout } from './invocation.js';

/** An HTTP API's largest request body (10 MB). */
const HTTP_API_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** The largest synchronous Lambda invocation request, the serialized event (6 MB = 6,291,456 bytes). */
export const LAMBDA_MAX_REQUEST_BYTES = 6 * 1024 * 1024;
/** An HTTP API's longest integration timeout (ms); also its default. */
const HTTP_API_MAX_INTEGRATION_TIMEOUT_MS = 30_000;
/** The live lane's route keys, as the stack declares them. */
const LIVE_ROUTE_KEYS: readonly string[] = [`POST ${LIVE_ROUTES.extractions}`, `GET ${LIVE_ROUTES.extraction}`, `DELETE ${LIVE_ROUTES.extraction}`];

/** Options AWS would refuse (`config`), or the port cannot be listened on (`unavailable`). */
export class LiveHttpAdapterError extends RatelaneError {
  override name = 'LiveHttpAdapterError';
  readonly retryable: boolean;
  constructor(
    message: string,
    readonly kind: ErrorKind = 'config',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.retryable = kind === 'unavailable';
  }
}

/**
 * The header a local client names its IAM principal with (an ARN), in place of a SigV4 signature API
 * Gateway would verify: the event's `authorizer.iam.userArn` is then that principal. Local only (the
 * adapter checks no signature); without it, the server's fixed caller.
 */
export const LOCAL_CALLER_HEADER = 'x-ratelane-local-caller';

/** The principal a request names with {@link LOCAL_CALLER_HEADER}, when it is an IAM or STS ARN. */
function localCaller(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && PRINCIPAL_ARN_PATTERN.test(value) ? value : undefined;
}

/** The principal of the server's fixed caller in `accountId` (the default account: `000000000000`). */
export function localCallerArn(accountId = '000000000000'): string {
  return `arn:aws:iam::${accountId}:user/ratelane-local`;
}

/** The IAM caller API Gateway puts on `requestContext.authorizer.iam` (a fixed local identity). */
type LocalIamCaller = Omit<APIGatewayEventRequestContextIAMAuthorizer['iam'], 'principalOrgId'> & { principalOrgId: string | null };

/** The event the adapter builds: payload 2.0 with the IAM authorizer's caller. */
export type LiveHttpEvent = APIGatewayProxyEventV2WithRequestContext<APIGatewayEventRequestContextV2 & { authorizer: { iam: LocalIamCaller } }>;

/** Options of {@link startLiveHttpServer}. */
export interface LiveHttpServerOptions {
  handler: LiveHttpHandler;
  /** Route keys served, `METHOD /path/{param}` (`ANY` matches every method); default {@link LIVE_ROUTE_KEYS}. */
  routes?: readonly string[];
  /** The function timeout (ms, 1..900,000): `getRemainingTimeInMillis()` counts down from it. */
  timeoutMs: number;
  /** API Gateway's integration timeout (ms, 50..30,000; default 30,000). */
  integrationTimeoutMs?: number;
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** Port (default 0: a free one). */
  port?: number;
  /** Region, account, API id (default random), function name and memory the event and context name. */
  awsRegion?: string;
  accountId?: string;
  apiId?: string;
  functionName?: string;
  memoryLimitInMB?: number;
  /** Overrides of the local caller identity. */
  caller?: Partial<LocalIamCaller>;
  /** Called with what a handler threw or a timeout (what CloudWatch Logs would show); its own errors are ignored. */
  onHandlerError?: (error: unknown, info: { requestId: string; routeKey: string }) => void;
}

/** The adapter's counters: requests, answers by status code, failures, invocations still running. */
type LiveHttpStats = {
  requests: number;
  byStatus: Record<number, number>;
  handlerErrors: number;
  functionTimeouts: number;
  integrationTimeouts: number;
  inFlight: number;
};

/** A running adapter. */
export interface LiveHttpServer {
  /** `http://host:port`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  /** A snapshot of the counters. */
  readonly stats: LiveHttpStats;
  /** Closes the server and its connections, aborts running invocations' signals, waits for them (at most their timeout). */
  stop(): Promise<void>;
}

/** What goes back to the client. */
export type HttpAnswer = { statusCode: number; headers: Record<string, string | string[]>; body: Buffer };

type Route = { key: string; method: string; segments: string[] };

const TEXT_TYPES = new Set(['application/json', 'application/xml', 'application/javascript']);

/** An API Gateway error answer (`{"message": ...}`). */
function gatewayAnswer(statusCode: number, message: string): HttpAnswer {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ message })) };
}

/** Whether API Gateway hands a body of this content type to Lambda as text (else base64). */
export function isTextContentType(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  return type.startsWith('text/') || TEXT_TYPES.has(type);
}

/** Parses route keys (`POST /v1/extractions`); the most literal segments first, as HTTP API prefers. */
function parseRoutes(keys: readonly string[]): Route[] {
  const routes = keys.map((key) => {
    const match = /^(ANY|GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (\/[^\s?#]*)$/.exec(key);
    if (!match) throw new LiveHttpAdapterError(`route key ${JSON.stringify(key)} is not "METHOD /path"`);
    return { key, method: match[1]!, segments: match[2]!.split('/').slice(1) };
  });
  const literals = (r: Route) => r.segments.filter((s) => !s.startsWith('{')).length;
  return routes.sort((a, b) => literals(b) - literals(a));
}

function matchRoute(routes: Route[], method: string, rawPath: string): { route: Route; params: Record<string, string> } | undefined {
  const segments = rawPath.split('/').slice(1);
  for (const route of routes) {
    if ((route.method !== 'ANY' && route.method !== method) || route.segments.length !== segments.length) continue;
    const params: Record<string, string> = Object.create(null);
    const fits = route.segments.every((want, i) => {
      const got = segments[i]!;
      if (!want.startsWith('{')) return want === got;
      if (got === '') return false;
      params[want.slice(1, -1)] = safeDecode(got);
      return true;
    });
    if (fits) return { route, params };
  }
  return undefined;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** `12/Mar/2020:19:03:58 +0000`, API Gateway's `requestContext.time` (from `Thu, 12 Mar 2020 19:03:58 GMT`). */
function gatewayTime(date: Date): string {
  const [, day, month, year, time] = date.toUTCString().split(' ');
  return `${day}/${month}/${year}:${time} +0000`;
}

type EventSettings = { accountId: string; apiId: string; awsRegion: string; caller: LocalIamCaller; port: number; requestId: string };

/** Builds the payload 2.0 event of one request (pure but for the ids and the clock). */
function buildEvent(req: IncomingMessage, match: { route: Route; params: Record<string, string> }, body: Buffer, settings: EventSettings): LiveHttpEvent {
  const target = req.url ?? '/';
  const queryAt = target.indexOf('?');
  const rawPath = queryAt === -1 ? target : target.slice(0, queryAt);
  const rawQueryString = queryAt === -1 ? '' : target.slice(queryAt + 1).split('#', 1)[0]!;
  const headers: Record<string, string> = Object.create(null); // no prototype: any header name is kept
  const cookies: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    const value = req.rawHeaders[i + 1]!;
    if (name === 'cookie') cookies.push(...value.split(';').flatMap((c) => (c.trim() ? [c.trim()] : [])));
    else headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  const sourceIp = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${headers['x-forwarded-for']},${sourceIp}` : sourceIp;
  headers['x-forwarded-port'] = String(settings.port);
  headers['x-forwarded-proto'] = 'http';
  headers['x-amzn-trace-id'] ??= `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
  const query: Record<string, string> = Object.create(null);
  for (const [name, value] of new URLSearchParams(rawQueryString)) query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  const now = new Date();
  const text = isTextContentType(headers['content-type']);
  const { route, params } = match;
  return {
    version: '2.0',
    routeKey: route.key,
    rawPath,
    rawQueryString,
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(rawQueryString !== '' ? { queryStringParameters: query } : {}),
    ...(Object.keys(params).length > 0 ? { pathParameters: params } : {}),
    requestContext: {
      accountId: settings.accountId,
      apiId: settings.apiId,
      authorizer: { iam: settings.caller },
      domainName: `${settings.apiId}.execute-api.${settings.awsRegion}.amazonaws.com`,
      domainPrefix: settings.apiId,
      http: { method: req.method ?? 'GET', path: rawPath, protocol: `HTTP/${req.httpVersion}`, sourceIp, userAgent: headers['user-agent'] ?? '' },
      requestId: settings.requestId,
      routeKey: route.key,
      stage: '$default',
      time: gatewayTime(now),
      timeEpoch: now.getTime(),
    },
    ...(body.length > 0 ? { body: body.toString(text ? 'utf8' : 'base64') } : {}),
    isBase64Encoded: body.length > 0 && !text,
  };
}

/**
 * What API Gateway makes of a handler's result (payload 2.0): a structured result (it has `statusCode`)
 * as it is, anything else as a 200 JSON body. A structured result it cannot use is a 500.
 */
export function toHttpAnswer(result: unknown): HttpAnswer {
  if (result === null || typeof result !== 'object' || Array.isArray(result) || !('statusCode' in result)) {
    let body: string | undefined;
    try {
      body = typeof result === 'string' ? result : JSON.stringify(result ?? null); // what Lambda serializes
    } catch {
      body = undefined;
    }
    return body === undefined
      ? gatewayAnswer(500, 'Internal Server Error')
      : { statusCode: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) };
  }
  const { statusCode, headers, body, isBase64Encoded, cookies } = result as Record<string, unknown>;
  const okStatus = Number.isInteger(statusCode) && (statusCode as number) >= 100 && (statusCode as number) <= 599;
  const okHeaders = headers == null || (typeof headers === 'object' && !Array.isArray(headers));
  const okCookies = cookies == null || (Array.isArray(cookies) && cookies.every((c) => typeof c === 'string'));
  if (!okStatus || !okHeaders || !okCookies || (body != null && typeof body !== 'string')) return gatewayAnswer(500, 'Internal Server Error');
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries((headers as Record<string, unknown> | null) ?? {})) {
    const lower = name.toLowerCase();
    if (lower === 'content-length' || lower === 'transfer-encoding' || value === undefined || value === null) continue;
    out[lower] = String(value);
  }
  if (Array.isArray(cookies) && cookies.length > 0) out['set-cookie'] = [...(cookies as string[])];
  const text = typeof body === 'string' ? body : '';
  return { statusCode: statusCode as number, headers: out, body: Buffer.from(text, isBase64Encoded === true ? 'base64' : 'utf8') };
}

/** Reads the body; past `limit` it keeps draining (so the client reads the answer) but keeps nothing. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > limit ? 'too_large' : Buffer.concat(chunks)));
    req.on('error', reject);
    req.on('close', () => (req.complete ? undefined : reject(new Error('the client went away before its body was read'))));
  });
}

/** `value` (default `max`) when it is an integer in min..max. */
function checkRange(name: string, value: number | undefined, min: number, max: number): number {
  const v = value ?? max;
  if (!Number.isInteger(v) || v < min || v > max) throw new LiveHttpAdapterError(`${name} must be an integer in ${min}..${max} (got ${v})`);
  return v;
}

const stoppedError = () => new InvocationAbortError('stopped', 'invocation aborted: the HTTP adapter was stopped');

/**
 * Starts the adapter on `host` (default 127.0.0.1), port `port` (default 0: a free one).
 *
 * @throws {@link LiveHttpAdapterError} for a route key or a timeout AWS would refuse, or when it cannot listen.
 */
export async function startLiveHttpServer(options: LiveHttpServerOptions): Promise<LiveHttpServer> {
  const routes = parseRoutes(options.routes ?? LIVE_ROUTE_KEYS);
  const timeoutMs = checkRange('timeoutMs', options.timeoutMs, 1, 900_000);
  const integrationTimeoutMs = checkRange('integrationTimeoutMs', options.integrationTimeoutMs, 50, HTTP_API_MAX_INTEGRATION_TIMEOUT_MS);
  const host = options.host ?? '127.0.0.1';
  const awsRegion = options.awsRegion ?? 'us-east-1';
  const accountId = options.accountId ?? '000000000000';
  const functionName = options.functionName ?? 'ratelane-local-live';
  const memoryLimitInMB = options.memoryLimitInMB ?? 512;
  const apiId = options.apiId ?? randomBytes(8).toString('hex').slice(0, 10);
  const user = { accessKey: 'ASIALOCALCALLER00000', callerId: 'AIDALOCALCALLER000000', userId: 'AIDALOCALCALLER000000', cognitoIdentity: null };
  const caller: LocalIamCaller = { ...user, accountId, principalOrgId: null, userArn: localCallerArn(accountId), ...options.caller };
  const stats: LiveHttpStats = { requests: 0, byStatus: {}, handlerErrors: 0, functionTimeouts: 0, integrationTimeouts: 0, inFlight: 0 };
  const running = new Set<AbortController>();
  const invocations = new Set<Promise<unknown>>();
  let port = 0;
  let stopping: Promise<void> | undefined;

  const report = (error: unknown, requestId: string, routeKey: string) => {
    try {
      options.onHandlerError?.(error, { requestId, routeKey });
    } catch {
      // A listener must not break the adapter.
    }
  };

  /** One invocation: the handler under the function timeout, the answer under the integration timeout. */
  const invoke = async (event: LiveHttpEvent): Promise<HttpAnswer> => {
    const controller = new AbortController();
    const deadline = Date.now() + timeoutMs; // Lambda's clock starts when the handler is called
    const context = createLambdaContext({ functionName, awsRegion, accountId, memoryLimitInMB, deadline, now: Date.now, abortSignal: controller.signal });
    if (stopping) controller.abort(stoppedError());
    running.add(controller);
    stats.inFlight++;
    const invocation = runWithTimeout(() => options.handler(event, context), deadline, controller).then(toHttpAnswer, (error: unknown) => {
      if (error instanceof FunctionTimeoutError) stats.functionTimeouts++;
      else stats.handlerErrors++;
      report(error, event.requestContext.requestId, event.routeKey);
      return gatewayAnswer(500, 'Internal Server Error');
    });
    const tracked = invocation.finally(() => {
      stats.inFlight--;
      running.delete(controller);
      invocations.delete(tracked);
    });
    invocations.add(tracked);
    let timer: NodeJS.Timeout | undefined;
    const integration = new Promise<HttpAnswer>((resolve) => {
      timer = setTimeout(() => {
        stats.integrationTimeouts++;
        resolve(gatewayAnswer(503, 'Service Unavailable'));
      }, integrationTimeoutMs);
    });
    try {
      return await Promise.race([invocation, integration]);
    } finally {
      clearTimeout(timer);
    }
  };

  const answer = (res: ServerResponse, requestId: string, out: HttpAnswer): void => {
    stats.byStatus[out.statusCode] = (stats.byStatus[out.statusCode] ?? 0) + 1;
    if (res.destroyed || res.headersSent) return;
    res.writeHead(out.statusCode, { ...out.headers, 'content-length': String(out.body.length), 'apigw-requestid': requestId });
    res.end(out.body);
  };

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    stats.requests++;
    const requestId = randomBytes(10).toString('base64');
    const rawPath = (req.url ?? '/').split('?', 1)[0]!;
    const match = matchRoute(routes, req.method ?? 'GET', rawPath);
    const body = await readBody(req, HTTP_API_MAX_BODY_BYTES).catch(() => undefined);
    if (body === undefined) return; // the client went away
    if (!match) return answer(res, requestId, gatewayAnswer(404, 'Not Found'));
    if (body === 'too_large') return answer(res, requestId, gatewayAnswer(413, 'Request Entity Too Large'));
    const as = localCaller(req.headers[LOCAL_CALLER_HEADER]);
    const event = buildEvent(req, match, body, { accountId, apiId, awsRegion, caller: as ? { ...caller, userArn: as } : caller, port, requestId });
    const payload = JSON.stringify(event); // the function gets what Lambda would: the event as parsed JSON
    if (Buffer.byteLength(payload) > LAMBDA_MAX_REQUEST_BYTES) return answer(res, requestId, gatewayAnswer(413, 'Request Entity Too Large'));
    answer(res, requestId, await invoke(JSON.parse(payload) as LiveHttpEvent));
  };

  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      report(error, '', '');
      answer(res, '', gatewayAnswer(500, 'Internal Server Error'));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new LiveHttpAdapterError(`cannot listen on ${host}:${options.port ?? 0}`, 'unavailable', { cause: error })));
    server.listen(options.port ?? 0, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    port,
    get stats(): LiveHttpStats {
      return { ...stats, byStatus: { ...stats.byStatus } };
    },
    stop(): Promise<void> {
      stopping ??= (async () => {
        for (const controller of running) controller.abort(stoppedError());
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await Promise.allSettled([...invocations]);
      })();
      return stopping;
    },
  };
}
