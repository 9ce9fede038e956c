/**
 * The Anthropic and Gemini adapters against a loopback server that replays their provider's wire
 * format (no network): success with usage (and the request the SDK sent), each kind of 429, a
 * rejected key, a 5xx/overload, a timeout — and, every time, exactly one request on the wire: the
 * SDKs' own retries are off. Bedrock: `adapters-bedrock.test.ts`; the OpenAI-compatible and Gemini
 * adapters against the local fake provider: `adapters-fake-provider.test.ts`; lane settings
 * (Azure, dialects, Bedrock auth): `adapters-lanes.test.ts`.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createAnthropicAdapter } from '../../../lib/providers/anthropic.js';
import { createGeminiAdapter } from '../../../lib/providers/gemini.js';
import { ProviderError } from '../../../lib/providers/model.js';
import { assertTimesOutOnce, type Canned, extraction, failure, json, loopback, type Loopback, RESULT, SCHEMA, stopAll, SYSTEM, USER } from './support.js';

afterEach(stopAll);

// ---------------------------------------------------------------------------------------------
// Anthropic Messages (tool use)

describe('Anthropic adapter', () => {
  const MODEL = 'claude-sonnet-4-20250514';
  const adapterFor = (server: Loopback, timeoutMs = 5_000) => createAnthropicAdapter({ model: MODEL, baseUrl: server.url, timeoutMs });
  const error = (type: string, message: string) => ({ type: 'error', error: { type, message }, request_id: 'req_011CTestRequest' });

  it('sends one forced tool carrying the JSON schema and maps tool_use input, usage and the limits the answer states', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 200,
      headers: {
        'request-id': 'req_011CTestRequest',
        // As api.anthropic.com states its limits on every answer (tokens: the most restrictive in effect, input and output)
        'anthropic-ratelimit-requests-limit': '1000',
        'anthropic-ratelimit-input-tokens-limit': '80000',
        'anthropic-ratelimit-output-tokens-limit': '16000',
        'anthropic-ratelimit-tokens-limit': '96000',
      },
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
    assert.deepEqual(response.statedLimits, { requestsPerMinute: 1000, tokensPerMinute: 96_000 });
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

  it('maps a 401 authentication_error to auth with no wait, sending one request only', async () => {
    // Prepare
    const server = await loopback(() => ({ status: 401, body: error('authentication_error', 'invalid x-api-key') }));
    // Act
    const failed = await failure(adapterFor(server), ProviderError, extraction({ apiKey: 'sk-ant-revoked' }));
    // Assess
    assert.equal(failed.status, 401);
    assert.equal(failed.provider, 'anthropic');
    assert.deepEqual(failed.classification, { kind: 'auth', retryAfterMs: null, resetAt: null });
    assert.equal(server.requests.length, 1, 'the SDK did not retry the 401');
  });

  it('maps a 403 permission_error to auth, and a 403 forbidden for the region to not_rate_limit', async () => {
    // Prepare
    const bodies = [
      error('permission_error', 'Your API key does not have permission to use the specified resource.'),
      error('forbidden', 'Request not allowed'),
    ];
    let call = 0;
    const server = await loopback(() => ({ status: 403, body: bodies[call++] }));
    // Act
    const permission = await failure(adapterFor(server), ProviderError);
    const region = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.equal(permission.classification.kind, 'auth');
    assert.equal(region.classification.kind, 'not_rate_limit');
    assert.equal(server.requests.length, 2, 'one request per call');
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

  it('gives up at its timeout when the server never answers, once', async (t) => {
    // Prepare
    const server = await loopback(() => 'hang');
    // Act + Assess
    await assertTimesOutOnce(t, adapterFor(server, 250), () => server.requests.length, 250);
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

  it('maps a 401 UNAUTHENTICATED to auth with no wait, sending one request only', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 401,
      body: {
        error: {
          code: 401,
          message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
          status: 'UNAUTHENTICATED',
        },
      },
    }));
    // Act
    const failed = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.equal(failed.status, 401);
    assert.equal(failed.provider, 'gemini');
    assert.deepEqual(failed.classification, { kind: 'auth', retryAfterMs: null, resetAt: null });
    assert.equal(server.requests.length, 1);
  });

  it('maps 400 API_KEY_INVALID and 403 PERMISSION_DENIED (a leaked key) to auth, 400 FAILED_PRECONDITION (location) to not_rate_limit', async () => {
    // Prepare
    const answers: Canned[] = [
      {
        status: 400,
        body: {
          error: {
            code: 400,
            message: 'API key not valid. Please pass a valid API key.',
            status: 'INVALID_ARGUMENT',
            details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }],
          },
        },
      },
      { status: 403, body: { error: { code: 403, message: 'Your API key was reported as leaked. Please use another API key.', status: 'PERMISSION_DENIED' } } },
      { status: 400, body: { error: { code: 400, message: 'User location is not supported for the API use.', status: 'FAILED_PRECONDITION' } } },
    ];
    let call = 0;
    const server = await loopback(() => answers[call++] ?? answers[0]!);
    // Act
    const kinds: string[] = [];
    for (let i = 0; i < answers.length; i++) kinds.push((await failure(adapterFor(server), ProviderError)).classification.kind);
    // Assess
    assert.deepEqual(kinds, ['auth', 'auth', 'not_rate_limit']);
    assert.equal(server.requests.length, answers.length, 'one request per call');
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

  it('gives up at its timeout when the server never answers, once', async (t) => {
    // Prepare
    const server = await loopback(() => 'hang');
    // Act + Assess
    await assertTimesOutOnce(t, adapterFor(server, 250), () => server.requests.length, 250);
  });
});
