/**
 * Shared by the adapter tests (`adapters*.test.ts`): an extraction request, a loopback server that
 * replays a provider's wire format and records every request it saw (no network), the local fake
 * provider, and assertions for a typed failure and a timeout that was not retried.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createH2cServer, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFakeProvider, type FakeProvider, type FakeProviderOptions } from '../../../workbench/fake-provider/index.js';
import { ProviderTransportError, type ExtractionRequest, type ModelAdapter } from '../../../lib/providers/model.js';

/** The JSON schema every extraction asks for. */
export const SCHEMA = {
  type: 'object',
  properties: { invoiceNumber: { type: 'string' }, total: { type: 'number' }, currency: { type: 'string' } },
  required: ['invoiceNumber', 'total', 'currency'],
  additionalProperties: false,
};
/** The object the canned answers return. */
export const RESULT = { invoiceNumber: 'INV-7', total: 12.5, currency: 'EUR' };
/** The system prompt of {@link extraction}. */
export const SYSTEM = 'Extract the invoice fields as JSON.';
/** The user prompt of {@link extraction}. */
export const USER = 'Read this invoice.\n<document>\nINV-7\nTotal 12.50 EUR\n</document>';

/** An extraction request for {@link SCHEMA} with key `test-key`, overridable. */
export function extraction(overrides: Partial<ExtractionRequest> = {}): ExtractionRequest {
  return {
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER },
    ],
    jsonSchemaName: 'invoice_v1',
    jsonSchema: SCHEMA,
    apiKey: 'test-key',
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------------
// A loopback server that replays canned answers and records every request it saw.

/** One request the loopback server received. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A canned answer: status, headers, and a body (JSON-encoded unless a string). */
export interface Canned {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** `hang`: accept the request and never answer. */
export type Reply = Canned | 'hang';

/** A running loopback server: its URL and the requests it saw. */
export interface Loopback {
  url: string;
  requests: SeenRequest[];
  stop(): Promise<void>;
}

const servers: Array<{ stop(): Promise<void> }> = [];

/**
 * Starts the replay server: HTTP/1.1, or cleartext HTTP/2 (`h2c`) for the Bedrock Runtime client,
 * whose Node handler always speaks HTTP/2.
 */
export async function loopback(reply: (request: SeenRequest) => Reply, options: { http2?: boolean } = {}): Promise<Loopback> {
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const sessions = new Set<Http2Session>();
  const onRequest = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const seen: SeenRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(seen);
      const answer = reply(seen);
      if (answer === 'hang') return;
      const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...answer.headers });
      res.end(text);
    });
  };
  const server = options.http2 ? createH2cServer(onRequest) : createServer(onRequest);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  const handle = {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  servers.push(handle);
  return handle;
}

const fakes: FakeProvider[] = [];
/** Starts the local fake provider (key `sk-test-a`, no latency), stopped by {@link stopAll}. */
export async function fake(options: Partial<FakeProviderOptions> = {}): Promise<FakeProvider> {
  const provider = await startFakeProvider({ keys: [{ key: 'sk-test-a' }], extract: () => RESULT, latencyMs: 0, ...options });
  fakes.push(provider);
  return provider;
}

/** Stops every loopback server and fake provider a test started: call it from each file's `afterEach`. */
export async function stopAll(): Promise<void> {
  await Promise.all([...servers.splice(0), ...fakes.splice(0)].map((s) => s.stop()));
}

/** Runs the call and returns the typed error it must throw. */
export async function failure<E extends Error>(adapter: ModelAdapter, type: new (...args: never[]) => E, request = extraction()): Promise<E> {
  try {
    await adapter.extract(request);
  } catch (error) {
    assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
    return error;
  }
  assert.fail('the call succeeded');
}

/**
 * Asserts the call to a server that never answers times out at the adapter's `timeoutMs`, and that the
 * SDK does not try again (`requestsSeen`: how many requests the server has seen). On mocked timers (`t.mock.timers`, the global `setTimeout`: the adapter's
 * deadline and an SDK's backoff): the deadline is moved to once the request has reached the server,
 * then a minute more for a retry that must not come — nothing is waited out.
 */
export async function assertTimesOutOnce(
  t: TestContext,
  adapter: ModelAdapter,
  requestsSeen: () => number,
  timeoutMs: number,
  request = extraction(),
): Promise<ProviderTransportError> {
  // The connections of the tests before this one close on the real clock first: undici's timers of one
  // still open would run on the mocked clock (its timers tick on `setTimeout`) and fire for a parser
  // already collected (nodejs/undici#4755: "Cannot destructure property 'socket' of 'parser.deref(...)'").
  await sleep(20);
  t.mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const failing = failure(adapter, ProviderTransportError, request);
    await arrived(requestsSeen, 1);
    t.mock.timers.tick(timeoutMs - 1);
    assert.equal(await settledYet(failing), false, 'still waiting just before the timeout');
    t.mock.timers.tick(1);
    const error = await failing;
    assert.equal(error.timedOut, true);
    t.mock.timers.tick(60_000);
    await sleep(50); // a retry's request, had one been sent, reaches the loopback server in far less
    assert.equal(requestsSeen(), 1, 'no SDK retry after the timeout');
    return error;
  } finally {
    t.mock.timers.reset();
  }
}

/** Resolves once the server has seen `count` requests (real I/O; polled on the event loop, not on a timer). */
async function arrived(requestsSeen: () => number, count: number): Promise<void> {
  for (let turns = 0; requestsSeen() < count; turns++) {
    assert.ok(turns < 1_000_000, `the server saw ${requestsSeen()} request(s)`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Whether `promise` has settled (after the current turn's jobs). */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

/** Parses a request body the SDK sent. */
export function json(body: string): Record<string, unknown> {
  return JSON.parse(body) as Record<string, unknown>;
}
