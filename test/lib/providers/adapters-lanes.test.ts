/**
 * Adapters built from a lane's provider settings: each provider kind, Azure OpenAI (deployment
 * route, `api-key` header, the azure-openai dialect), the OpenAI-compatible `dialect`, Bedrock
 * `auth` — and the OpenAI-compatible adapter's rejected keys, against a loopback server.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { modelBaseUrl } from '../../../lib/config/endpoints.js';
import { resolveLanes } from '../../../lib/config/lanes.js';
import { createBedrockAdapter } from '../../../lib/providers/bedrock.js';
import { createModelAdapter } from '../../../lib/providers/index.js';
import { ProviderError } from '../../../lib/providers/model.js';
import { createOpenAiCompatibleAdapter } from '../../../lib/providers/openai-compatible.js';
import { type Canned, extraction, failure, type Loopback, loopback, RESULT, stopAll } from './support.js';

afterEach(stopAll);

describe('createModelAdapter', () => {
  it("gives every SDK its base URL explicitly: a lane without one is not moved by the SDKs' environment variables", async () => {
    // Prepare: each SDK's base-URL variable points at a loopback server; the lanes name no base URL, so
    // their calls go to the provider's own host (unreachable here: the call fails, but never reaches the loopback)
    const elsewhere = await loopback(() => ({ status: 200, body: RESULT }));
    const variables = { OPENAI_BASE_URL: `${elsewhere.url}/v1`, ANTHROPIC_BASE_URL: elsewhere.url, GOOGLE_GEMINI_BASE_URL: elsewhere.url };
    const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
    Object.assign(process.env, variables);
    try {
      for (const kind of ['openai-compatible', 'anthropic', 'gemini'] as const) {
        const lane = resolveLanes({ us: { provider: { kind, model: 'some-model', timeoutMs: 2_000 } } }).us!;
        // Act
        const outcome = await createModelAdapter(lane)
          .extract(extraction({ apiKey: 'sk-test-not-a-key' }))
          .then(
            () => 'answered',
            () => 'failed',
          );
        // Assess
        assert.equal(outcome, 'failed', `${kind}: no answer from the provider's real host with a test key`);
        assert.equal(modelBaseUrl(lane)?.startsWith('https://'), true, `${kind}: an explicit base URL`);
      }
      assert.equal(elsewhere.requests.length, 0, 'no SDK followed its environment');
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

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

describe('OpenAI-compatible adapter: rejected keys', () => {
  const adapterFor = (server: Loopback, provider?: 'openai' | 'groq' | 'mistral' | 'openrouter') =>
    createOpenAiCompatibleAdapter({ model: 'gpt-4o-mini', baseUrl: `${server.url}/v1`, timeoutMs: 5_000, ...(provider ? { provider } : {}) });

  it('maps a 401 invalid_api_key to auth with no wait, sending one request only', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 401,
      body: {
        error: {
          message: 'Incorrect API key provided: sk-proj-****MxYA. You can find your API key at https://platform.openai.com/account/api-keys.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      },
    }));
    // Act
    const failed = await failure(adapterFor(server), ProviderError, extraction({ apiKey: 'sk-proj-revoked' }));
    // Assess
    assert.equal(failed.status, 401);
    assert.equal(failed.provider, 'openai');
    assert.deepEqual(failed.classification, { kind: 'auth', retryAfterMs: null, resetAt: null });
    assert.equal(server.requests.length, 1, 'the SDK did not retry the 401');
  });

  it('maps the 401s of Mistral and OpenRouter to auth in their dialects, and a 403 for the region to not_rate_limit', async () => {
    // Prepare
    const answers: Canned[] = [
      { status: 401, body: { message: 'Unauthorized', request_id: 'c61f2f15feca71626a990e3740f99245' } },
      { status: 401, body: { error: { message: 'User not found.', code: 401 } } },
      {
        status: 403,
        body: {
          error: {
            message: 'Country, region, or territory not supported',
            type: 'request_forbidden',
            param: null,
            code: 'unsupported_country_region_territory',
          },
        },
      },
    ];
    let call = 0;
    const server = await loopback(() => answers[call++] ?? answers[0]!);
    // Act
    const mistral = await failure(adapterFor(server, 'mistral'), ProviderError);
    const openrouter = await failure(adapterFor(server, 'openrouter'), ProviderError);
    const region = await failure(adapterFor(server), ProviderError);
    // Assess
    assert.deepEqual([mistral.classification.kind, openrouter.classification.kind, region.classification.kind], ['auth', 'auth', 'not_rate_limit']);
    assert.equal(server.requests.length, 3, 'one request per call');
  });

  it('maps Azure\'s 401 "invalid subscription key" to auth', async () => {
    // Prepare
    const server = await loopback(() => ({
      status: 401,
      body: {
        error: {
          code: '401',
          message:
            'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
        },
      },
    }));
    const adapter = createOpenAiCompatibleAdapter({
      model: 'gpt-4o-mini',
      azure: { endpoint: server.url, deployment: 'extract-4o-mini', apiVersion: '2024-10-21' },
      timeoutMs: 5_000,
    });
    // Act
    const failed = await failure(adapter, ProviderError, extraction({ apiKey: 'azure-key-revoked' }));
    // Assess
    assert.equal(failed.provider, 'azure-openai');
    assert.equal(failed.classification.kind, 'auth');
    assert.equal(server.requests.length, 1);
  });
});
