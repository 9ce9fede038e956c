/**
 * The local fake provider's OpenAI wire format: a structured-output answer with usage and rate-limit
 * headers, waits in OpenAI's duration notation, and the 401, 400 and 404 answers. Its rate limits:
 * `../limits.test.ts`; its fault injection: `../faults.test.ts`.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { formatOpenAiDuration, type ChatCompletionBody } from '../../../../workbench/fake-provider/index.js';
import { call, type ErrorJson, MODEL, promptTokensFor, SCHEMA, start, stopStarted } from '../support.js';

afterEach(stopStarted);

const DURATION = /^(\d+h)?(\d+m)?(\d+(\.\d+)?s|\d+ms)$/;

describe('fake provider: wire format', () => {
  it('answers a structured-output request exactly like OpenAI, with usage and rate-limit headers', async () => {
    // Prepare
    const provider = await start({ limits: { requestsPerMinute: 100, tokensPerMinute: 10_000 } });
    // Act
    const response = await call(provider, { documentText: 'INV-7\nTotal 12.50 EUR' });
    const body = (await response.json()) as ChatCompletionBody;
    // Assess
    assert.equal(response.status, 200);
    assert.match(body.id, /^chatcmpl-[A-Za-z0-9]+$/);
    assert.equal(body.object, 'chat.completion');
    assert.equal(typeof body.created, 'number');
    assert.equal(body.model, MODEL);
    assert.equal(body.choices.length, 1);
    const [choice] = body.choices;
    assert.ok(choice);
    assert.equal(choice.index, 0);
    assert.equal(choice.finish_reason, 'stop');
    assert.equal(choice.logprobs, null);
    assert.equal(choice.message.role, 'assistant');
    assert.equal(choice.message.refusal, null);
    assert.deepEqual(JSON.parse(choice.message.content), { invoiceNumber: 'INV-7', total: 12.5, currency: 'EUR' });
    const promptTokens = promptTokensFor('INV-7\nTotal 12.50 EUR');
    const completionTokens = Math.ceil(choice.message.content.length / 4);
    assert.equal(body.usage.prompt_tokens, promptTokens);
    assert.equal(body.usage.completion_tokens, completionTokens);
    assert.equal(body.usage.total_tokens, promptTokens + completionTokens);
    assert.match(response.headers.get('x-request-id') ?? '', /^req_[0-9a-f]{32}$/);
    assert.equal(response.headers.get('x-ratelimit-limit-requests'), '100');
    assert.equal(response.headers.get('x-ratelimit-limit-tokens'), '10000');
    assert.equal(response.headers.get('x-ratelimit-remaining-requests'), '99');
    // The bucket refills on the real clock (10 000 tokens a minute: one every 6 ms), so a slow machine sees a few back.
    const remainingTokens = Number(response.headers.get('x-ratelimit-remaining-tokens'));
    const spent = 10_000 - promptTokens - completionTokens;
    assert.ok(remainingTokens >= spent && remainingTokens <= spent + 20, `remaining tokens ${remainingTokens}, spent down to ${spent}`);
    assert.match(response.headers.get('x-ratelimit-reset-requests') ?? '', DURATION);
    assert.match(response.headers.get('x-ratelimit-reset-tokens') ?? '', DURATION);
    const stats = provider.stats();
    assert.equal(stats.requests, 1);
    assert.equal(stats.successes, 1);
    assert.equal(stats.perKey['sk-test-a']?.tokensIn, promptTokens);
    assert.equal(stats.perKey['sk-test-a']?.tokensOut, completionTokens);
  });

  it('formats waits in OpenAI duration notation', () => {
    // Act + Assess
    assert.equal(formatOpenAiDuration(0), '0s');
    assert.equal(formatOpenAiDuration(20), '20ms');
    assert.equal(formatOpenAiDuration(1000), '1s');
    assert.equal(formatOpenAiDuration(1200), '1.2s');
    assert.equal(formatOpenAiDuration(9816), '9.816s');
    assert.equal(formatOpenAiDuration(86_400), '1m26.4s');
    assert.equal(formatOpenAiDuration(90_500), '1m30.5s');
    assert.equal(formatOpenAiDuration(360_000), '6m0s');
    assert.equal(formatOpenAiDuration(7_200_000), '2h0m0s');
  });

  it('answers 401 invalid_api_key for an unknown key, 400 without document markers, 404 for other routes', async () => {
    // Prepare
    const provider = await start();
    // Act
    const unauthorized = await call(provider, { key: 'sk-unknown-0123456789abcdef' });
    const noDocument = await call(provider, {
      body: {
        model: MODEL,
        messages: [{ role: 'user', content: 'no markers here' }],
        response_format: { type: 'json_schema', json_schema: { name: 'invoice_v1', schema: SCHEMA, strict: true } },
      },
    });
    const notJson = await fetch(`${provider.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test-a' },
      body: '{"model":',
    });
    const otherRoute = await fetch(`${provider.baseUrl}/models`);
    // Assess
    assert.equal(unauthorized.status, 401);
    const unauthorizedBody = (await unauthorized.json()) as ErrorJson;
    assert.equal(unauthorizedBody.error.code, 'invalid_api_key');
    assert.equal(unauthorizedBody.error.type, 'invalid_request_error');
    assert.match(unauthorizedBody.error.message, /^Incorrect API key provided: sk-unkno\*+cdef\./);
    assert.equal(noDocument.status, 400);
    const noDocumentBody = (await noDocument.json()) as ErrorJson;
    assert.equal(noDocumentBody.error.type, 'invalid_request_error');
    assert.equal(noDocumentBody.error.param, 'messages');
    assert.equal(notJson.status, 400);
    assert.match(((await notJson.json()) as ErrorJson).error.message, /could not parse the JSON body/);
    assert.equal(otherRoute.status, 404);
    assert.deepEqual(await otherRoute.json(), {
      error: { message: 'Invalid URL (GET /v1/models)', type: 'invalid_request_error', param: null, code: null },
    });
    const stats = provider.stats();
    assert.equal(stats.unauthorized, 1);
    assert.equal(stats.badRequests, 2);
  });
});
