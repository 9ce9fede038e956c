/**
 * The local API Gateway HTTP API + Lambda adapter of the live lane: the payload 2.0 event it builds,
 * base64 bodies, API Gateway's own answers (404, 413, 500, 503), the function's context and its
 * countdown, the result mapping, and a clean stop. Real loopback HTTP, no AWS.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { afterEach, describe, it } from 'node:test';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { LiveHttpHandler } from '../../../../lib/lanes/live/handler.js';
import {
  isTextContentType,
  LAMBDA_MAX_REQUEST_BYTES,
  LiveHttpAdapterError,
  type LiveHttpEvent,
  type LiveHttpServer,
  type LiveHttpServerOptions,
  startLiveHttpServer,
  toHttpAnswer,
} from '../../../../workbench/local-stack/lambda/http-adapter.js';
import { invocationAbortSignalOf } from '../../../../lib/platform/invocation.js';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request on a fresh connection (no keep-alive), raw headers as given (an array repeats a header). */
function send(
  url: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string | string[]>; body?: Buffer | string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const json = (reply: Reply): unknown => JSON.parse(reply.body.toString('utf8'));

/** Runs turns of the event loop (not timers: they may be mocked) until `holds`; real I/O gets its turns meanwhile. */
async function turnsUntil(holds: () => boolean): Promise<void> {
  for (let turn = 0; turn === 0 || !holds(); turn++) {
    assert.ok(turn < 1_000_000, 'never held');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Whether `promise` has settled after a few turns of the event loop. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  return settled;
}
const ok = (body: unknown): APIGatewayProxyStructuredResultV2 => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('the live HTTP adapter (API Gateway HTTP API + Lambda, locally)', () => {
  let server: LiveHttpServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  const start = async (handler: LiveHttpHandler, options: Partial<LiveHttpServerOptions> = {}): Promise<LiveHttpServer> => {
    server = await startLiveHttpServer({ handler, timeoutMs: 5_000, ...options });
    return server;
  };

  it('builds the payload 2.0 event of a POST as AWS does', async () => {
    // Prepare
    const seen: LiveHttpEvent[] = [];
    const { url, port } = await start(async (event) => {
      seen.push(event as LiveHttpEvent);
      return { statusCode: 202, headers: { 'content-type': 'application/json', 'x-job': 'j-1' }, body: '{"jobId":"j-1"}' };
    });
    const body = JSON.stringify({ document: 'é' });

    // Act
    const reply = await send(url, 'POST', '/v1/extractions', {
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'X-Multi': ['a', 'b'],
        Cookie: 'session=1; theme=dark',
        'User-Agent': 'unit/1',
        Constructor: 'yes',
      },
      body,
    });

    // Assess
    assert.equal(reply.status, 202);
    assert.equal(reply.headers['x-job'], 'j-1');
    assert.ok(reply.headers['apigw-requestid']);
    assert.deepEqual(json(reply), { jobId: 'j-1' });
    const event = seen[0]!;
    assert.equal(event.version, '2.0');
    assert.equal(event.routeKey, 'POST /v1/extractions');
    assert.equal(event.rawPath, '/v1/extractions');
    assert.equal(event.rawQueryString, '');
    assert.equal(event.queryStringParameters, undefined);
    assert.equal(event.pathParameters, undefined);
    assert.equal(event.body, body);
    assert.equal(event.isBase64Encoded, false);
    assert.equal(event.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(event.headers['x-multi'], 'a,b');
    assert.equal(event.headers['user-agent'], 'unit/1');
    assert.equal(event.headers.constructor, 'yes', 'a header named like an Object member is kept');
    assert.equal(event.headers['content-length'], String(Buffer.byteLength(body)));
    assert.equal(event.headers.cookie, undefined);
    assert.deepEqual(event.cookies, ['session=1', 'theme=dark']);
    assert.equal(event.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(event.headers['x-forwarded-port'], String(port));
    for (const name of Object.keys(event.headers)) assert.equal(name, name.toLowerCase());
    const rc = event.requestContext;
    assert.equal(rc.routeKey, 'POST /v1/extractions');
    assert.equal(rc.stage, '$default');
    assert.equal(rc.accountId, '000000000000');
    assert.equal(rc.domainName, `${rc.apiId}.execute-api.us-east-1.amazonaws.com`);
    assert.equal(rc.domainPrefix, rc.apiId);
    assert.deepEqual(rc.http, { method: 'POST', path: '/v1/extractions', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'unit/1' });
    assert.equal(rc.requestId, reply.headers['apigw-requestid']);
    assert.match(rc.time, /^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    assert.ok(Math.abs(rc.timeEpoch - Date.now()) < 5_000);
    assert.deepEqual(rc.authorizer.iam, {
      accessKey: 'ASIALOCALCALLER00000',
      accountId: '000000000000',
      callerId: 'AIDALOCALCALLER000000',
      cognitoIdentity: null,
      principalOrgId: null,
      userArn: 'arn:aws:iam::000000000000:user/ratelane-local',
      userId: 'AIDALOCALCALLER000000',
    });
  });

  it('builds a GET event with the path parameter and the query string (repeats joined with commas)', async () => {
    // Prepare
    const seen: APIGatewayProxyEventV2[] = [];
    const { url } = await start(async (event) => {
      seen.push(event);
      return ok({ state: 'received' });
    });

    // Act
    const reply = await send(url, 'GET', '/v1/extractions/job%2042?wait=2&tag=a&tag=b&empty=&toString=x');

    // Assess
    assert.equal(reply.status, 200);
    const event = seen[0]!;
    assert.equal(event.routeKey, 'GET /v1/extractions/{jobId}');
    assert.equal(event.requestContext.routeKey, 'GET /v1/extractions/{jobId}');
    assert.equal(event.rawPath, '/v1/extractions/job%2042');
    assert.equal(event.rawQueryString, 'wait=2&tag=a&tag=b&empty=&toString=x');
    assert.deepEqual(event.pathParameters, { jobId: 'job 42' });
    assert.deepEqual(event.queryStringParameters, { wait: '2', tag: 'a,b', empty: '', toString: 'x' });
    assert.equal(event.body, undefined);
    assert.equal(event.isBase64Encoded, false);
    assert.equal(event.requestContext.http.method, 'GET');
  });

  it('base64-encodes a body whose content type is not text, and decodes a base64 result', async () => {
    // Prepare
    const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
    const seen: APIGatewayProxyEventV2[] = [];
    const { url } = await start(async (event) => {
      seen.push(event);
      return { statusCode: 200, headers: { 'content-type': 'application/octet-stream' }, body: event.body ?? '', isBase64Encoded: true };
    });

    // Act
    const reply = await send(url, 'POST', '/v1/extractions', { headers: { 'content-type': 'application/octet-stream' }, body: bytes });

    // Assess
    assert.equal(seen[0]!.isBase64Encoded, true);
    assert.equal(seen[0]!.body, bytes.toString('base64'));
    assert.deepEqual(reply.body, bytes);
    for (const text of ['text/plain', 'application/json', 'application/xml', 'application/javascript', 'TEXT/CSV; charset=utf-8'])
      assert.ok(isTextContentType(text), text);
    for (const binary of [undefined, '', 'application/octet-stream', 'application/pdf', 'application/x-www-form-urlencoded', 'image/png']) {
      assert.equal(isTextContentType(binary), false, String(binary));
    }
  });

  it('answers 404 as API Gateway does for a path or method no route has, without calling the function', async () => {
    // Prepare
    let calls = 0;
    const { url } = await start(async () => {
      calls++;
      return ok({});
    });

    // Act
    const replies = await Promise.all([
      send(url, 'GET', '/v1/unknown'),
      send(url, 'DELETE', '/v1/extractions'),
      send(url, 'GET', '/v1/extractions/'),
      send(url, 'GET', '/v1/extractions/a/b'),
    ]);

    // Assess
    for (const reply of replies) {
      assert.equal(reply.status, 404);
      assert.deepEqual(json(reply), { message: 'Not Found' });
    }
    assert.equal(calls, 0);
    assert.deepEqual(server!.stats.byStatus, { 404: 4 });
  });

  it('answers 500 when the handler throws, and reports the error', async () => {
    // Prepare
    const errors: unknown[] = [];
    const { url } = await start(
      async () => {
        throw new Error('boom');
      },
      { onHandlerError: (error) => errors.push(error) },
    );

    // Act
    const reply = await send(url, 'POST', '/v1/extractions', { headers: { 'content-type': 'application/json' }, body: '{}' });

    // Assess
    assert.equal(reply.status, 500);
    assert.deepEqual(json(reply), { message: 'Internal Server Error' });
    assert.equal((errors[0] as Error).message, 'boom');
    assert.equal(server!.stats.handlerErrors, 1);
  });

  it('answers 503 at the integration timeout while the function runs on to its own timeout', async (t) => {
    // Prepare: the adapter's timers on mocked time (moved by hand, nothing waited out)
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    let signal: AbortSignal | undefined;
    const { url } = await start(
      (_event, context) =>
        new Promise<never>(() => {
          signal = invocationAbortSignalOf(context);
        }),
      { integrationTimeoutMs: 100, timeoutMs: 600 },
    );

    // Act: the handler is called; no answer before the integration timeout, then the gateway's
    const replying = send(url, 'GET', '/v1/extractions/j-1');
    await turnsUntil(() => signal !== undefined);
    t.mock.timers.tick(99);
    const early = await settledYet(replying);
    t.mock.timers.tick(1);
    const reply = await replying;

    // Assess
    assert.equal(early, false, 'not answered before the integration timeout');
    assert.equal(reply.status, 503);
    assert.deepEqual(json(reply), { message: 'Service Unavailable' });
    assert.equal(signal?.aborted, false, 'the function still runs');
    assert.equal(server!.stats.inFlight, 1);
    t.mock.timers.tick(499);
    await turnsUntil(() => true);
    assert.equal(signal?.aborted, false, 'still runs just before its own timeout');
    t.mock.timers.tick(1);
    await turnsUntil(() => server!.stats.inFlight === 0);
    assert.equal(signal?.aborted, true, 'the function timeout ended it');
    assert.equal(server!.stats.inFlight, 0);
    assert.equal(server!.stats.integrationTimeouts, 1);
    assert.equal(server!.stats.functionTimeouts, 1);
  });

  it('answers 500 when the function times out before the integration does', async () => {
    // Prepare
    const { url } = await start(() => new Promise<never>(() => undefined), { integrationTimeoutMs: 2_000, timeoutMs: 100 });

    // Act
    const reply = await send(url, 'GET', '/v1/extractions/j-1');

    // Assess
    assert.equal(reply.status, 500);
    assert.equal(server!.stats.functionTimeouts, 1);
  });

  it('gives the handler a Lambda context whose remaining time counts down from the function timeout', async (t) => {
    // Prepare: the clock and the handler's pause on mocked time (moved by hand, nothing waited out)
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const readings: number[] = [];
    let seen: Context | undefined;
    const { url } = await start(
      async (_event, context) => {
        seen = context;
        readings.push(context.getRemainingTimeInMillis());
        await new Promise((resolve) => setTimeout(resolve, 150));
        readings.push(context.getRemainingTimeInMillis());
        return ok({});
      },
      { timeoutMs: 2_000, functionName: 'ratelane-us-live' },
    );

    // Act: the handler reads its time, pauses 150 ms, reads it again
    const replying = send(url, 'GET', '/v1/extractions/j-1');
    await turnsUntil(() => readings.length === 1);
    t.mock.timers.tick(150);
    await replying;

    // Assess
    const [first, second] = readings as [number, number];
    assert.ok(first <= 2_000 && first > 1_900, `first reading ${first}`);
    assert.equal(first - second, 150, 'counted down as the clock moved');
    assert.equal(seen?.functionName, 'ratelane-us-live');
    assert.equal(seen?.invokedFunctionArn, 'arn:aws:lambda:us-east-1:000000000000:function:ratelane-us-live');
  });

  it('maps results as payload 2.0 does: defaults, cookies, and values without a statusCode', async () => {
    // Prepare
    const results: unknown[] = [
      { statusCode: 201, cookies: ['a=1', 'b=2'], body: 'made' },
      { message: 'plain object' },
      'plain string',
      { statusCode: 'nope' },
    ];
    const { url } = await start(async () => results.shift() as APIGatewayProxyStructuredResultV2);

    // Act
    const [cookies, object, text, malformed] = [
      await send(url, 'GET', '/v1/extractions/a'),
      await send(url, 'GET', '/v1/extractions/b'),
      await send(url, 'GET', '/v1/extractions/c'),
      await send(url, 'GET', '/v1/extractions/d'),
    ];

    // Assess
    assert.equal(cookies.status, 201);
    assert.deepEqual(cookies.headers['set-cookie'], ['a=1', 'b=2']);
    assert.equal(cookies.body.toString(), 'made');
    assert.equal(object.status, 200);
    assert.equal(object.headers['content-type'], 'application/json');
    assert.deepEqual(json(object), { message: 'plain object' });
    assert.equal(text.body.toString(), 'plain string');
    assert.equal(malformed.status, 500);
    assert.deepEqual(toHttpAnswer({ statusCode: 204 }), { statusCode: 204, headers: {}, body: Buffer.alloc(0) });
  });

  it("answers 413 when the event would pass Lambda's 6 MB request limit", async () => {
    // Prepare
    let calls = 0;
    const { url } = await start(async () => {
      calls++;
      return ok({});
    });

    // Act
    const reply = await send(url, 'POST', '/v1/extractions', { headers: { 'content-type': 'text/plain' }, body: Buffer.alloc(LAMBDA_MAX_REQUEST_BYTES, 97) });

    // Assess
    assert.equal(reply.status, 413);
    assert.deepEqual(json(reply), { message: 'Request Entity Too Large' });
    assert.equal(calls, 0);
  });

  it('counts requests by status code', async () => {
    // Prepare
    const { url } = await start(async () => ok({}));

    // Act
    await send(url, 'GET', '/v1/extractions/a');
    await send(url, 'GET', '/v1/extractions/b');
    await send(url, 'GET', '/nowhere');

    // Assess
    const stats = server!.stats;
    assert.equal(stats.requests, 3);
    assert.deepEqual(stats.byStatus, { 200: 2, 404: 1 });
  });

  it('stop() closes the server and its connections, and aborts a running invocation', async () => {
    // Prepare
    let signal: AbortSignal | undefined;
    const running = await startLiveHttpServer({
      handler: (_event, context) =>
        new Promise((resolve) => {
          signal = invocationAbortSignalOf(context);
          signal?.addEventListener('abort', () => resolve(ok({})));
        }),
      timeoutMs: 10_000,
    });
    const pending = send(running.url, 'GET', '/v1/extractions/j-1').catch((error: unknown) => error);
    while (!signal) await new Promise((resolve) => setTimeout(resolve, 5));

    // Act
    const t0 = Date.now();
    await running.stop();
    await running.stop();

    // Assess
    assert.ok(Date.now() - t0 < 2_000);
    assert.equal(signal.aborted, true);
    assert.equal((signal.reason as Error).name, 'AbortError');
    assert.ok((await pending) instanceof Error, 'the open request was cut');
    await assert.rejects(send(running.url, 'GET', '/v1/extractions/j-1'), /ECONNREFUSED/);
  });

  it('refuses options AWS would refuse', async () => {
    // Act + Assess
    const handler: LiveHttpHandler = async () => ok({});
    await assert.rejects(startLiveHttpServer({ handler, timeoutMs: 1_000, integrationTimeoutMs: 31_000 }), LiveHttpAdapterError);
    await assert.rejects(startLiveHttpServer({ handler, timeoutMs: 0 }), LiveHttpAdapterError);
    await assert.rejects(startLiveHttpServer({ handler, timeoutMs: 1_000, routes: ['FETCH /x'] }), LiveHttpAdapterError);
  });
});
