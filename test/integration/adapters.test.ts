/**
 * Each model adapter against a loopback server that replays its provider's wire format (no
 * network): success with usage (and the request the SDK sent), each kind of 429, a 5xx/overload, a
 * timeout — and, every time, exactly one request on the wire: the SDKs' own retries are off.
 * Then the OpenAI-compatible and Gemini adapters against the local fake provider.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createH2cServer, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, it } from 'node:test';
import { resolveLanes } from '../../lib/config/lanes.js';
import { startFakeProvider, type FakeProvider, type FakeProviderOptions } from '../../lib/local/fake-provider/index.js';
import { createAnthropicAdapter } from '../../lib/providers/anthropic.js';
import { createBedrockAdapter } from '../../lib/providers/bedrock.js';
import { createGeminiAdapter } from '../../lib/providers/gemini.js';
import { createModelAdapter } from '../../lib/providers/index.js';
import { ProviderError, ProviderTransportError, type ExtractionRequest, type ModelAdapter } from '../../lib/providers/model.js';
import { createOpenAiCompatibleAdapter } from '../../lib/providers/openai-compatible.js';

const SCHEMA = {
  type: 'object',
  properties: { invoiceNumber: { type: 'string' }, total: { type: 'number' }, currency: { type: 'string' } },
  required: ['invoiceNumber', 'total', 'currency'],
  additionalProperties: false,
};
const RESULT = { invoiceNumber: 'INV-7', total: 12.5, currency: 'EUR' };
const SYSTEM = 'Extract the invoice fields as JSON.';
const USER = 'Read this invoice.\n<document>\nINV-7\nTotal 12.50 EUR\n</document>';

function extraction(overrides: Partial<ExtractionRequest> = {}): ExtractionRequest {
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

interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Canned {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** `hang`: accept the request and never answer. */
type Reply = Canned | 'hang';

interface Loopback {
  url: string;
  requests: SeenRequest[];
  stop(): Promise<void>;
}

const servers: Array<{ stop(): Promise<void> }> = [];

/**
 * Starts the replay server: HTTP/1.1, or cleartext HTTP/2 (`h2c`) for the Bedrock Runtime client,
 * whose Node handler always speaks HTTP/2.
 */
async function loopback(reply: (request: SeenRequest) => Reply, options: { http2?: boolean } = {}): Promise<Loopback> {
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
async function fake(options: Partial<FakeProviderOptions> = {}): Promise<FakeProvider> {
  const provider = await startFakeProvider({ keys: [{ key: 'sk-test-a' }], extract: () => RESULT, latencyMs: 0, ...options });
  fakes.push(provider);
  return provider;
}

afterEach(async () => {
  await Promise.all([...servers.splice(0), ...fakes.splice(0)].map((s) => s.stop()));
});

/** Runs the call and returns the typed error it must throw. */
async function failure<E extends Error>(adapter: ModelAdapter, type: new (...args: never[]) => E, request = extraction()): Promise<E> {
  try {
    await adapter.extract(request);
  } catch (error) {
    assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
    return error;
  }
  assert.fail('the call succeeded');
}

/** Asserts the call timed out and that the SDK did not try again. */
async function assertTimesOutOnce(adapter: ModelAdapter, server: Loopback): Promise<void> {
  const started = Date.now();
  const error = await failure(adapter, ProviderTransportError);
  assert.equal(error.timedOut, true);
  assert.ok(Date.now() - started < 5_000, 'gave up at the adapter timeout');
  await sleep(400);
  assert.equal(server.requests.length, 1, 'no SDK retry after the timeout');
}

function json(body: string): Record<string, unknown> {
  return JSON.parse(body) as Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages (tool use)

describe('Anthropic adapter', () => {
  const MODEL = 'claude-sonnet-4-20250514';
  const adapterFor = (server: Loopback, timeoutMs = 5_000) => createAnthropicAdapter({ model: MODEL, baseUrl: server.url, timeoutMs });
  const error = (type: string, message: string) => ({ type: 'error', error: { type, message }, request_id: 'req_011CTestRequest' });

  it('sends one forced tool carrying the JSON schema and maps tool_use input and usage', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 200,
      headers: { 'request-id': 'req_011CTestRequest' },
      body: {
        id: 'msg_01TestMessage',
        type: 'message',
        role: 'assistant',
        model: MODEL,
        content: [{ type: 'tool_use', id: 'toolu_01Test', name: 'invoice_v1', input: RESULT }],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 410, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 37 },
      },
    }));
    // Act
    const response = await adapterFor(server).extract(extraction({ apiKey: 'sk-ant-test' }));
    // Assess
    assert.deepEqual(JSON.parse(response.content), RESULT);
    assert.deepEqual(response.usage, { inputTokens: 410, outputTokens: 37 });
    assert.equal(response.model, MODEL);
    assert.equal(server.requests.length, 1);
    const [sent] = server.requests;
    assert.ok(sent);
    assert.equal(sent.method, 'POST');
    assert.equal(sent.path, '/v1/messages');
    // The key travels as `x-api-key` or (this SDK major) `Authorization: Bearer`.
    assert.ok(sent.headers['x-api-key'] === 'sk-ant-test' || sent.headers.authorization === 'Bearer sk-ant-test', 'the API key was sent');
    const body = json(sent.body);
    assert.equal(body.model, MODEL);
    assert.equal(body.system, SYSTEM);
    assert.deepEqual(body.messages, [{ role: 'user', content: USER }]);
    assert.equal(typeof body.max_tokens, 'number');
    assert.deepEqual(body.tool_choice, { type: 'tool', name: 'invoice_v1' });
    const tools = body.tools as Array<Record<string, unknown>>;
    assert.equal(tools.length, 1);
    assert.equal(tools[0]?.name, 'invoice_v1');
    assert.deepEqual(tools[0]?.input_schema, SCHEMA);
  });

  it('maps a per-minute 429 to rate_limit with retry-after, sending one request only', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 429,
      headers: {
        'retry-after': '23',
        'anthropic-ratelimit-input-tokens-limit': '20000',
        'anthropic-ratelimit-input-tokens-remaining': '0',
        'anthropic-ratelimit-input-tokens-reset': new Date(Date.now() + 23_000).toISOString(),
      },
      body: error('rate_limit_error', 'This request would exceed the rate limit for your organization of 20,000 input tokens per minute.'),
    }));
    // Act
    const failed = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.equal(failed.status, 429);
    assert.equal(failed.provider, 'anthropic');
    assert.equal(failed.classification.kind, 'rate_limit');
    assert.equal(failed.classification.retryAfterMs, 23_000);
    assert.equal(server.requests.length, 1, 'the SDK did not retry the 429');
  });

  it('maps a daily 429 to quota_exhausted', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 429,
      body: error(
        'rate_limit_error',
        'Number of request tokens has exceeded your daily rate limit (https://docs.anthropic.com/en/api/rate-limits); see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.',
      ),
    }));
    // Act
    const failed = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.equal(failed.classification.kind, 'quota_exhausted');
    assert.equal(server.requests.length, 1);
  });

  it('maps "credit balance is too low" to billing', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 400,
      body: error(
        'invalid_request_error',
        'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
      ),
    }));
    // Act
    const failed = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.equal(failed.status, 400);
    assert.equal(failed.classification.kind, 'billing');
    assert.equal(failed.classification.retryAfterMs, null);
  });

  it('maps 529 overloaded_error to overloaded without retrying it', async () => {
    // Prepare
    const server = await loopback(() => ({ status: 529, headers: { 'x-should-retry': 'true' }, body: error('overloaded_error', 'Overloaded') }));
    // Act
    const failed = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.equal(failed.status, 529);
    assert.equal(failed.classification.kind, 'overloaded');
    assert.equal(server.requests.length, 1);
  });

  it('maps a 500 api_error to not_rate_limit without retrying it', async () => {
    // Prepare
    const server = await loopback(() => ({ status: 500, body: error('api_error', 'Internal server error') }));
    // Act
    const failed = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.equal(failed.status, 500);
    assert.equal(failed.classification.kind, 'not_rate_limit');
    assert.equal(server.requests.length, 1);
  });

  it('gives up at its timeout when the server never answers, once', async () => {
    // Prepare
    const server = await loopback(() => 'hang');
    // Act + Assess
    await assertTimesOutOnce(adapterFor(server, 250), server);
  });
});

// ---------------------------------------------------------------------------------------------
// Gemini generateContent (response JSON schema)

function geminiQuota(quotaId: string, limit: number, retryDelay: string): Canned {
  const metric = quotaId.includes('InputTokens')
    ? 'generativelanguage.googleapis.com/generate_content_free_tier_input_token_count'
    : 'generativelanguage.googleapis.com/generate_content_free_tier_requests';
  return {
    status: 429,
    body: {
      error: {
        code: 429,
        message: `You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: ${metric}, limit: ${limit}, model: gemini-2.5-flash\nPlease retry in ${retryDelay}.`,
        status: 'RESOURCE_EXHAUSTED',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
            violations: [{ quotaMetric: metric, quotaId, quotaDimensions: { location: 'global', model: 'gemini-2.5-flash' }, quotaValue: String(limit) }],
          },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay },
        ],
      },
    },
  };
}

describe('Gemini adapter', () => {
  const MODEL = 'gemini-2.5-flash';
  const adapterFor = (server: Loopback, timeoutMs = 5_000) => createGeminiAdapter({ model: MODEL, baseUrl: server.url, timeoutMs });

  it('asks for application/json with the response JSON schema and maps text and usage', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 200,
      body: {
        candidates: [{ content: { parts: [{ text: JSON.stringify(RESULT) }], role: 'model' }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 120, candidatesTokenCount: 30, thoughtsTokenCount: 12, totalTokenCount: 162 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'abcDEF123',
      },
    }));
    // Act
    const response = await adapterFor(server).extract(extraction({ apiKey: 'AIza-test', maxOutputTokens: 512 }));
    // Assess
    assert.deepEqual(JSON.parse(response.content), RESULT);
    assert.deepEqual(response.usage, { inputTokens: 120, outputTokens: 42 });
    assert.equal(response.model, 'gemini-2.5-flash');
    assert.equal(server.requests.length, 1);
    const [sent] = server.requests;
    assert.ok(sent);
    assert.equal(sent.method, 'POST');
    assert.equal(sent.path, `/v1beta/models/${MODEL}:generateContent`);
    assert.equal(sent.headers['x-goog-api-key'], 'AIza-test');
    const body = json(sent.body);
    assert.deepEqual(body.contents, [{ role: 'user', parts: [{ text: USER }] }]);
    const system = body.systemInstruction as { parts: Array<{ text: string }> };
    assert.equal(system.parts[0]?.text, SYSTEM);
    const config = body.generationConfig as Record<string, unknown>;
    assert.equal(config.responseMimeType, 'application/json');
    assert.deepEqual(config.responseJsonSchema, SCHEMA);
    assert.equal(config.maxOutputTokens, 512);
  });

  it('maps a per-minute RESOURCE_EXHAUSTED to rate_limit with RetryInfo 13s, sending one request only', async () => {
    // Prepare
    const server = await loopback(() => geminiQuota('GenerateRequestsPerMinutePerProjectPerModel-FreeTier', 10, '13s'));
    // Act
    const failed = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.equal(failed.status, 429);
    assert.equal(failed.provider, 'gemini');
    assert.equal(failed.classification.kind, 'rate_limit');
    assert.equal(failed.classification.retryAfterMs, 13_000);
    assert.equal(server.requests.length, 1);
  });

  it('maps a per-day quota to quota_exhausted although its retry hint is seconds', async () => {
    // Prepare
    const server = await loopback(() => geminiQuota('GenerateRequestsPerDayPerProjectPerModel-FreeTier', 20, '58s'));
    // Act
    const failed = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.equal(failed.classification.kind, 'quota_exhausted');
    assert.equal(failed.classification.retryAfterMs, 58_000);
  });

  it('maps the free-tier plan gate (limit: 0) to billing', async () => {
    // Prepare
    const server = await loopback(() => geminiQuota('GenerateRequestsPerDayPerProjectPerModel-FreeTier', 0, '45s'));
    // Act
    const failed = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.equal(failed.classification.kind, 'billing');
  });

  it('maps 503 UNAVAILABLE "The model is overloaded." to overloaded without retrying it', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 503,
      body: { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } },
    }));
    // Act
    const failed = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.equal(failed.status, 503);
    assert.equal(failed.classification.kind, 'overloaded');
    assert.equal(server.requests.length, 1);
  });

  it('flags a prompt over the token limit as too large', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 400,
      body: {
        error: { code: 400, message: 'The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).', status: 'INVALID_ARGUMENT' },
      },
    }));
    // Act
    const failed = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.equal(failed.classification.kind, 'not_rate_limit');
    assert.equal(failed.requestTooLarge, true);
  });

  it('gives up at its timeout when the server never answers, once', async () => {
    // Prepare
    const server = await loopback(() => 'hang');
    // Act + Assess
    await assertTimesOutOnce(adapterFor(server, 250), server);
  });
});

// ---------------------------------------------------------------------------------------------
// Bedrock Converse (tool carrying the JSON schema)

describe('Bedrock adapter', () => {
  const MODEL = 'eu.anthropic.claude-3-7-sonnet-20250219-v1:0';
  const REGION = 'eu-central-1';
  const credentials = { accessKeyId: 'AKIDTESTTESTTEST', secretAccessKey: 'test-secret' };
  const adapterFor = (server: Loopback, timeoutMs = 5_000) =>
    createBedrockAdapter({ model: MODEL, region: REGION, endpoint: server.url, timeoutMs, credentials });
  const awsError = (status: number, type: string, message: string): Canned => ({
    status,
    headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'bc9af776-2940-485e-ba33-d7933e178873' },
    body: { message },
  });
  const iam = { apiKey: '' };
  const H2 = { http2: true };

  it('forces one tool whose inputSchema.json is the schema, signs for the lane region, and maps toolUse input and usage', async () => {
    // Prepare
    const server = await loopback(
      () => ({
        status: 200,
        headers: { 'x-amzn-requestid': 'e686a393-fd1a-4f8c-9ec0-3654e3d5ece3' },
        body: {
          output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_test', name: 'invoice_v1', input: RESULT } }] } },
          stopReason: 'tool_use',
          usage: { inputTokens: 512, outputTokens: 48, totalTokens: 560 },
          metrics: { latencyMs: 812 },
        },
      }),
      H2,
    );
    // Act
    const response = await adapterFor(server).extract(extraction({ ...iam, maxOutputTokens: 800 }));
    // Assess
    assert.deepEqual(JSON.parse(response.content), RESULT);
    assert.deepEqual(response.usage, { inputTokens: 512, outputTokens: 48 });
    assert.equal(response.model, MODEL);
    assert.equal(server.requests.length, 1);
    const [sent] = server.requests;
    assert.ok(sent);
    assert.equal(sent.method, 'POST');
    assert.equal(decodeURIComponent(sent.path), `/model/${MODEL}/converse`);
    assert.match(String(sent.headers.authorization), new RegExp(`^AWS4-HMAC-SHA256 Credential=AKIDTESTTESTTEST/\\d{8}/${REGION}/bedrock/aws4_request`));
    const body = json(sent.body);
    assert.deepEqual(body.system, [{ text: SYSTEM }]);
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ text: USER }] }]);
    assert.deepEqual(body.inferenceConfig, { maxTokens: 800 });
    const toolConfig = body.toolConfig as { tools: Array<{ toolSpec: { name: string; inputSchema: { json: unknown } } }>; toolChoice: unknown };
    assert.equal(toolConfig.tools.length, 1);
    assert.equal(toolConfig.tools[0]?.toolSpec.name, 'invoice_v1');
    assert.deepEqual(toolConfig.tools[0]?.toolSpec.inputSchema.json, SCHEMA);
    assert.deepEqual(toolConfig.toolChoice, { tool: { name: 'invoice_v1' } });
  });

  it('sends a Bedrock API key as a bearer token', async () => {
    // Prepare
    const server = await loopback(
      () => ({
        status: 200,
        body: {
          output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 't', name: 'invoice_v1', input: RESULT } }] } },
          stopReason: 'tool_use',
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
          metrics: { latencyMs: 1 },
        },
      }),
      H2,
    );
    // Act
    await adapterFor(server).extract(extraction({ apiKey: 'ABSKbedrock-api-key-test' }));
    // Assess
    assert.equal(server.requests[0]?.headers.authorization, 'Bearer ABSKbedrock-api-key-test');
  });

  it('maps ThrottlingException "Too many tokens" to rate_limit, sending one request only', async () => {
    // Prepare
    const server = await loopback(() => awsError(429, 'ThrottlingException', 'Too many tokens, please wait before trying again.'), H2);
    // Act
    const failed = await failure(adapterFor(server), ProviderError, extraction(iam));
    // Assess
    assert.equal(failed.status, 429);
    assert.equal(failed.provider, 'bedrock');
    assert.equal(failed.classification.kind, 'rate_limit');
    assert.equal(failed.classification.retryAfterMs, null, 'Bedrock states no wait');
    assert.equal(server.requests.length, 1, 'the SDK did not retry the throttle');
  });

  it('maps ThrottlingException "Too many tokens per day" to quota_exhausted', async () => {
    // Prepare
    const server = await loopback(() => awsError(429, 'ThrottlingException', 'Too many tokens per day, please wait before trying again.'), H2);
    // Act
    const failed = await failure(adapterFor(server), ProviderError, extraction(iam));
    // Assess
    assert.equal(failed.classification.kind, 'quota_exhausted');
  });

  it('maps ServiceQuotaExceededException to quota_exhausted', async () => {
    // Prepare
    const server = await loopback(
      () =>
        awsError(
          400,
          'ServiceQuotaExceededException',
          'Your request exceeds the service quota for your account. You can view your quotas at https://console.aws.amazon.com/servicequotas.',
        ),
      H2,
    );
    // Act
    const failed = await failure(adapterFor(server), ProviderError, extraction(iam));
    // Assess
    assert.equal(failed.status, 400);
    assert.equal(failed.classification.kind, 'quota_exhausted');
  });

  it('maps ServiceUnavailableException and ModelNotReadyException to overloaded without retrying', async () => {
    // Prepare
    const unavailable = await loopback(() => awsError(503, 'ServiceUnavailableException', 'Too many connections, please wait before trying again.'), H2);
    const notReady = await loopback(() => awsError(429, 'ModelNotReadyException', 'Model is not ready for inference. Wait and try your request again.'), H2);
    // Act
    const first = await failure(adapterFor(unavailable), ProviderError, extraction(iam));
    const second = await failure(adapterFor(notReady), ProviderError, extraction(iam));
    // Assess
    assert.equal(first.status, 503);
    assert.equal(first.classification.kind, 'overloaded');
    assert.equal(second.classification.kind, 'overloaded');
    assert.equal(unavailable.requests.length, 1);
    assert.equal(notReady.requests.length, 1);
  });

  it('maps InternalServerException to not_rate_limit without retrying', async () => {
    // Prepare
    const server = await loopback(() => awsError(500, 'InternalServerException', 'The server encountered an internal error while processing the request.'), H2);
    // Act
    const failed = await failure(adapterFor(server), ProviderError, extraction(iam));
    // Assess
    assert.equal(failed.status, 500);
    assert.equal(failed.classification.kind, 'not_rate_limit');
    assert.equal(server.requests.length, 1);
  });

  it('gives up at its timeout when the server never answers, once', async () => {
    // Prepare
    const server = await loopback(() => 'hang', H2);
    // Act + Assess
    const adapter = adapterFor(server, 250);
    const started = Date.now();
    const error = await failure(adapter, ProviderTransportError, extraction(iam));
    assert.equal(error.timedOut, true);
    assert.ok(Date.now() - started < 5_000);
    await sleep(400);
    assert.equal(server.requests.length, 1);
  });
});

// ---------------------------------------------------------------------------------------------
// OpenAI-compatible adapter against the fake provider

describe('OpenAI-compatible adapter against the fake provider', () => {
  const adapterFor = (provider: FakeProvider, timeoutMs = 5_000) =>
    createOpenAiCompatibleAdapter({ model: 'gpt-4o-mini', baseUrl: provider.baseUrl, timeoutMs });
  const key = { apiKey: 'sk-test-a' };

  it('extracts with usage', async () => {
    // Prepare
    const provider = await fake();
    // Act
    const response = await adapterFor(provider).extract(extraction(key));
    // Assess
    assert.deepEqual(JSON.parse(response.content), RESULT);
    assert.equal(response.model, 'gpt-4o-mini');
    assert.ok(response.usage.inputTokens > 0);
    assert.equal(response.usage.outputTokens, Math.ceil(JSON.stringify(RESULT).length / 4));
  });

  it('maps an RPM 429 to rate_limit with the stated wait, and sends it once', async () => {
    // Prepare
    const provider = await fake({ limits: { requestsPerMinute: 1 } });
    const adapter = adapterFor(provider);
    await adapter.extract(extraction(key));
    // Act
    const failed = await failure(adapter, ProviderError, extraction(key));
    // Assess
    assert.equal(failed.status, 429);
    assert.equal(failed.classification.kind, 'rate_limit');
    assert.ok(failed.classification.retryAfterMs !== null && failed.classification.retryAfterMs > 55_000 && failed.classification.retryAfterMs <= 60_000);
    assert.equal(provider.stats().requests, 2, 'one success + one 429: the SDK did not retry');
  });

  it('maps insufficient_quota to billing without retrying', async () => {
    // Prepare
    const provider = await fake({ keys: [{ key: 'sk-test-a', outOfCredit: true }] });
    // Act
    const failed = await failure(adapterFor(provider), ProviderError, extraction(key));
    // Assess
    assert.equal(failed.classification.kind, 'billing');
    assert.equal(provider.stats().requests, 1);
  });

  it('flags a request larger than the whole TPM budget as too large', async () => {
    // Prepare
    const provider = await fake({ limits: { tokensPerMinute: 10 } });
    // Act
    const failed = await failure(adapterFor(provider), ProviderError, extraction(key));
    // Assess
    assert.equal(failed.requestTooLarge, true);
    assert.equal(failed.classification.kind, 'not_rate_limit');
    assert.equal(provider.stats().requests, 1);
  });
});

// ---------------------------------------------------------------------------------------------
// The fake provider's Gemini route through the Gemini adapter

describe('Gemini adapter against the fake provider', () => {
  const MODEL = 'gemini-2.5-flash';
  const adapterFor = (provider: FakeProvider, timeoutMs = 5_000) =>
    createGeminiAdapter({ model: MODEL, baseUrl: `http://127.0.0.1:${provider.port}`, timeoutMs });
  const key = { apiKey: 'sk-test-a' };

  it('extracts with usage over the Gemini wire format', async () => {
    // Prepare
    const provider = await fake();
    // Act
    const response = await adapterFor(provider).extract(extraction(key));
    // Assess
    assert.deepEqual(JSON.parse(response.content), RESULT);
    assert.equal(response.model, MODEL);
    assert.equal(response.usage.inputTokens, Math.ceil((SYSTEM.length + USER.length) / 4));
    assert.equal(response.usage.outputTokens, Math.ceil(JSON.stringify(RESULT).length / 4));
    assert.equal(provider.stats().successes, 1);
  });

  it('answers a per-minute limit as RESOURCE_EXHAUSTED: rate_limit with the RetryInfo wait', async () => {
    // Prepare
    const provider = await fake({ limits: { requestsPerMinute: 2 } });
    const adapter = adapterFor(provider);
    await adapter.extract(extraction(key));
    await adapter.extract(extraction(key));
    // Act
    const failed = await failure(adapter, ProviderError, extraction(key));
    // Assess
    assert.equal(failed.status, 429);
    assert.equal(failed.classification.kind, 'rate_limit');
    assert.ok(failed.classification.retryAfterMs !== null && failed.classification.retryAfterMs >= 29_000 && failed.classification.retryAfterMs <= 31_000);
    assert.equal(provider.stats().rateLimited.rpm, 1);
    assert.equal(provider.stats().requests, 3);
  });

  it('answers a per-day limit as quota_exhausted', async () => {
    // Prepare
    const provider = await fake({ limits: { requestsPerDay: 1 } });
    const adapter = adapterFor(provider);
    await adapter.extract(extraction(key));
    // Act
    const failed = await failure(adapter, ProviderError, extraction(key));
    // Assess
    assert.equal(failed.classification.kind, 'quota_exhausted');
    assert.equal(failed.classification.retryAfterMs, 60_000, 'Gemini hints at most a minute even for a daily quota');
    assert.equal(provider.stats().rateLimited.rpd, 1);
  });

  it('answers a key without credit with the limit: 0 plan gate: billing', async () => {
    // Prepare
    const provider = await fake({ keys: [{ key: 'sk-test-a', outOfCredit: true }] });
    // Act
    const failed = await failure(adapterFor(provider), ProviderError, extraction(key));
    // Assess
    assert.equal(failed.classification.kind, 'billing');
  });

  it('rejects a request over the whole token budget as too large', async () => {
    // Prepare
    const provider = await fake({ limits: { tokensPerMinute: 10 } });
    // Act
    const failed = await failure(adapterFor(provider), ProviderError, extraction(key));
    // Assess
    assert.equal(failed.status, 400);
    assert.equal(failed.requestTooLarge, true);
  });

  it('answers injected server faults with 500 INTERNAL or 503 UNAVAILABLE (overloaded)', async () => {
    // Prepare
    const provider = await fake({ faults: { serverError: 1 }, seed: 3 });
    const adapter = adapterFor(provider);
    // Act
    const failures: ProviderError[] = [];
    for (let i = 0; i < 8; i += 1) failures.push(await failure(adapter, ProviderError, extraction(key)));
    // Assess
    for (const failed of failures) {
      assert.ok(failed.status === 500 || failed.status === 503);
      assert.equal(failed.classification.kind, failed.status === 503 ? 'overloaded' : 'not_rate_limit');
    }
    assert.ok(failures.some((f) => f.status === 503));
    assert.equal(provider.stats().requests, 8);
  });

  it('times out on a hung request', async () => {
    // Prepare
    const provider = await fake({ faults: { timeout: 1 } });
    // Act
    const failed = await failure(adapterFor(provider, 200), ProviderTransportError, extraction(key));
    // Assess
    assert.equal(failed.timedOut, true);
    assert.equal(provider.stats().requests, 1);
  });

  it('refuses an unknown key with 400 API_KEY_INVALID', async () => {
    // Prepare
    const provider = await fake();
    // Act
    const failed = await failure(adapterFor(provider), ProviderError, extraction({ apiKey: 'AIza-unknown' }));
    // Assess
    assert.equal(failed.status, 400);
    assert.equal(failed.classification.kind, 'not_rate_limit');
    assert.equal(provider.stats().unauthorized, 1);
  });
});

// ---------------------------------------------------------------------------------------------

describe('createModelAdapter', () => {
  it('builds the adapter of each provider kind', () => {
    // Prepare
    const kinds = ['openai-compatible', 'bedrock', 'anthropic', 'gemini'] as const;
    // Act
    const providers = kinds.map((kind) => {
      const lanes = resolveLanes({ us: { provider: { kind, model: 'some-model', baseUrl: 'http://127.0.0.1:9' } } });
      const lane = lanes.us;
      assert.ok(lane);
      return createModelAdapter(lane).provider;
    });
    // Assess
    assert.deepEqual(providers, ['openai', 'bedrock', 'anthropic', 'gemini']);
  });
});

// ---------------------------------------------------------------------------------------------
// Lane provider settings: Azure OpenAI, the OpenAI-compatible dialect, Bedrock auth.

describe('Azure OpenAI through the OpenAI-compatible adapter', () => {
  const azureLane = (endpoint: string) =>
    resolveLanes({
      us: {
        provider: {
          kind: 'openai-compatible',
          model: 'gpt-4o-mini',
          azure: { endpoint, deployment: 'extract-4o-mini', apiVersion: '2024-10-21' },
          timeoutMs: 5_000,
        },
      },
    }).us;

  it('calls the deployment route with api-version and the api-key header, and maps usage', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 200,
      body: {
        id: 'chatcmpl-azure',
        object: 'chat.completion',
        model: 'gpt-4o-mini-2024-07-18',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: JSON.stringify(RESULT) } }],
        usage: { prompt_tokens: 120, completion_tokens: 18, total_tokens: 138 },
      },
    }));
    const lane = azureLane(server.url);
    assert.ok(lane);
    const adapter = createModelAdapter(lane);
    // Act
    const response = await adapter.extract(extraction({ apiKey: 'azure-key-1' }));
    // Assess
    assert.equal(adapter.provider, 'azure-openai');
    assert.deepEqual(JSON.parse(response.content), RESULT);
    assert.deepEqual(response.usage, { inputTokens: 120, outputTokens: 18 });
    assert.equal(server.requests.length, 1);
    const [sent] = server.requests;
    assert.ok(sent);
    assert.equal(sent.path, '/openai/deployments/extract-4o-mini/chat/completions?api-version=2024-10-21');
    assert.equal(sent.headers['api-key'], 'azure-key-1');
  });

  it('classifies in the azure-openai dialect: a prose 60 s wait, a 24-hour wait, no SDK retry', async () => {
    // Prepare
    const bodies = [
      'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 60 seconds.',
      'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current AIServices S0 pricing tier. Please retry after 86400 seconds.',
    ];
    let call = 0;
    const server = await loopback(() => ({ status: 429, body: { error: { code: '429', message: bodies[call++] } } }));
    const lane = azureLane(server.url);
    assert.ok(lane);
    const adapter = createModelAdapter(lane);
    // Act
    const short = await failure(adapter, ProviderError);
    const daily = await failure(adapter, ProviderError);
    // Assess
    assert.equal(short.provider, 'azure-openai');
    assert.deepEqual([short.classification.kind, short.classification.retryAfterMs], ['rate_limit', 60_000]);
    assert.deepEqual([daily.classification.kind, daily.classification.retryAfterMs], ['quota_exhausted', 86_400_000]);
    assert.equal(server.requests.length, 2, 'one request per call');
  });
});

describe('OpenAI-compatible dialect and Bedrock auth from the lane config', () => {
  it('classifies a Groq endpoint in the groq dialect (a 429 whose one request exceeds the TPM limit is too large)', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 429,
      body: {
        error: {
          message:
            'Rate limit reached for model `llama3-70b-8192` in organization `org_x` on tokens per minute (TPM): Limit 7000, Used 0, Requested ~12903. Please try again in 50.597142857s.',
          type: 'tokens',
          code: 'rate_limit_exceeded',
        },
      },
    }));
    const lane = resolveLanes({ us: { provider: { model: 'llama3-70b-8192', dialect: 'groq', baseUrl: server.url, timeoutMs: 5_000 } } }).us;
    assert.ok(lane);
    // Act
    const error = await failure(createModelAdapter(lane), ProviderError);
    // Assess
    assert.equal(error.provider, 'groq');
    assert.equal(error.classification.kind, 'not_rate_limit');
    assert.equal(error.requestTooLarge, true);
  });

  it('Bedrock with auth api-key sends the bearer token; with iam it signs and ignores the key', async () => {
    // Prepare
    const reply = (): Canned => ({
      status: 200,
      body: {
        output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 't', name: 'invoice_v1', input: RESULT } }] } },
        stopReason: 'tool_use',
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      },
    });
    const server = await loopback(reply, { http2: true });
    const credentials = { accessKeyId: 'AKIDTESTTESTTEST', secretAccessKey: 'test-secret' };
    const base = { model: 'amazon.nova-lite-v1:0', region: 'eu-central-1', endpoint: server.url, timeoutMs: 5_000, credentials };
    // Act
    await createBedrockAdapter({ ...base, auth: 'api-key' }).extract(extraction({ apiKey: 'bedrock-api-key' }));
    await createBedrockAdapter({ ...base, auth: 'iam' }).extract(extraction({ apiKey: 'ignored-secret' }));
    const missing = createBedrockAdapter({ ...base, auth: 'api-key' }).extract(extraction({ apiKey: '' }));
    // Assess
    assert.equal(server.requests[0]?.headers.authorization, 'Bearer bedrock-api-key');
    assert.match(String(server.requests[1]?.headers.authorization), /^AWS4-HMAC-SHA256 /);
    await assert.rejects(missing, /auth is api-key but the key has no secret/);
    assert.equal(server.requests.length, 2);
  });
});
