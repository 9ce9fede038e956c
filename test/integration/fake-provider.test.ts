import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, it } from 'node:test';
import {
  formatOpenAiDuration,
  startFakeProvider,
  type ChatCompletionBody,
  type FakeProvider,
  type FakeProviderOptions,
} from '../../lib/local/fake-provider/index.js';

const MODEL = 'gpt-4o-mini';
const SYSTEM_PROMPT = 'Extract the invoice fields as JSON.';
const SCHEMA = {
  type: 'object',
  properties: { invoiceNumber: { type: 'string' }, total: { type: 'number' }, currency: { type: 'string' } },
  required: ['invoiceNumber', 'total', 'currency'],
  additionalProperties: false,
};

/** Stub extractor: the first line of the document is the invoice number. */
function extractStub(text: string): unknown {
  return { invoiceNumber: text.split('\n')[0] ?? '', total: 12.5, currency: 'EUR' };
}

function userMessage(documentText: string): string {
  return `Read this invoice.\n<document>\n${documentText}\n</document>`;
}

function promptTokensFor(documentText: string): number {
  return Math.ceil((SYSTEM_PROMPT.length + userMessage(documentText).length) / 4);
}

interface CallOptions {
  key?: string;
  documentText?: string;
  maxCompletionTokens?: number;
  signal?: AbortSignal;
  body?: unknown;
}

async function call(provider: FakeProvider, options: CallOptions = {}): Promise<Response> {
  const documentText = options.documentText ?? 'INV-1\nTotal 12.50 EUR';
  const body = options.body ?? {
    model: MODEL,
    messages: [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: userMessage(documentText) },
    ],
    response_format: { type: 'json_schema', json_schema: { name: 'invoice_v1', schema: SCHEMA, strict: true } },
    ...(options.maxCompletionTokens === undefined ? {} : { max_completion_tokens: options.maxCompletionTokens }),
  };
  return fetch(`${provider.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.key ?? 'sk-test-a'}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: options.signal,
  });
}

type ErrorJson = { error: { message: string; type: string; param: string | null; code: string | null } };

const started: FakeProvider[] = [];
async function start(options: Partial<FakeProviderOptions> = {}): Promise<FakeProvider> {
  const provider = await startFakeProvider({ keys: [{ key: 'sk-test-a' }], extract: extractStub, latencyMs: 0, ...options });
  started.push(provider);
  return provider;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((provider) => provider.stop()));
});

/** A hand-moved clock for exact numbers in messages and headers. */
function manualClock(startAt = 1_700_000_000_000) {
  let now = startAt;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

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
    assert.equal(response.headers.get('x-ratelimit-remaining-tokens'), String(10_000 - promptTokens - completionTokens));
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

describe('fake provider: rate limits', () => {
  it('answers 429 past the per-minute request budget and admits again after the scaled window', async () => {
    // Prepare
    const provider = await start({ limits: { requestsPerMinute: 3 }, minuteMs: 900 });
    for (let i = 0; i < 3; i += 1) assert.equal((await call(provider)).status, 200);
    // Act
    const limited = await call(provider);
    const body = (await limited.json()) as ErrorJson;
    // Assess
    assert.equal(limited.status, 429);
    assert.match(
      body.error.message,
      /^Rate limit reached for gpt-4o-mini in organization org-[A-Za-z0-9]{24} on requests per min \(RPM\): Limit 3, Used 3, Requested 1\. Please try again in \d+ms\. Visit https:\/\/platform\.openai\.com\/account\/rate-limits to learn more\.$/,
    );
    assert.equal(body.error.type, 'requests');
    assert.equal(body.error.param, null);
    assert.equal(body.error.code, 'rate_limit_exceeded');
    assert.equal(limited.headers.get('retry-after'), '1');
    const retryAfterMs = Number(limited.headers.get('retry-after-ms'));
    assert.ok(retryAfterMs > 0 && retryAfterMs <= 300, `retry-after-ms ${retryAfterMs}`);
    assert.equal(limited.headers.get('x-ratelimit-remaining-requests'), '0');
    assert.equal(limited.headers.get('x-ratelimit-limit-requests'), '3');
    // Act: wait as told
    await sleep(retryAfterMs + 10);
    const recovered = await call(provider);
    // Assess
    assert.equal(recovered.status, 200);
    assert.equal(provider.stats().rateLimited.rpm, 1);
  });

  it('answers 429 on tokens per minute with the exact used, requested and wait', async () => {
    // Prepare: each request reserves prompt + cap = 100 tokens; the budget holds 250
    const clock = manualClock();
    const documentText = 'INV-9';
    const cap = 100 - promptTokensFor(documentText);
    const provider = await start({ limits: { tokensPerMinute: 250 }, now: clock.now });
    assert.equal((await call(provider, { documentText, maxCompletionTokens: cap })).status, 200);
    assert.equal((await call(provider, { documentText, maxCompletionTokens: cap })).status, 200);
    // Act
    const limited = await call(provider, { documentText, maxCompletionTokens: cap });
    const body = (await limited.json()) as ErrorJson;
    // Assess: 50 tokens missing at 250 tokens/min = 12 s
    assert.equal(limited.status, 429);
    assert.match(body.error.message, /on tokens per min \(TPM\): Limit 250, Used 200, Requested 100\. Please try again in 12s\. Visit/);
    assert.equal(body.error.type, 'tokens');
    assert.equal(body.error.code, 'rate_limit_exceeded');
    assert.equal(limited.headers.get('retry-after'), '12');
    assert.equal(limited.headers.get('retry-after-ms'), '12000');
    assert.equal(limited.headers.get('x-ratelimit-remaining-tokens'), '50');
    assert.equal(limited.headers.get('x-ratelimit-reset-tokens'), '48s');
    // Act: the wait passes
    clock.advance(12_000);
    const recovered = await call(provider, { documentText, maxCompletionTokens: cap });
    // Assess
    assert.equal(recovered.status, 200);
    assert.equal(provider.stats().rateLimited.tpm, 1);
  });

  it('answers "Request too large" with no retry-after when one request exceeds the whole TPM budget', async () => {
    // Prepare
    const clock = manualClock();
    const provider = await start({ limits: { tokensPerMinute: 250 }, now: clock.now });
    const requested = promptTokensFor('INV-1\nTotal 12.50 EUR') + 300;
    // Act
    const tooLarge = await call(provider, { maxCompletionTokens: 300 });
    clock.advance(3_600_000);
    const stillTooLarge = await call(provider, { maxCompletionTokens: 300 });
    // Assess
    for (const response of [tooLarge, stillTooLarge]) {
      assert.equal(response.status, 429);
      assert.equal(response.headers.get('retry-after'), null);
      const body = (await response.json()) as ErrorJson;
      assert.match(
        body.error.message,
        new RegExp(
          `^Request too large for gpt-4o-mini in organization org-[A-Za-z0-9]{24} on tokens per min \\(TPM\\): Limit 250, Requested ${requested}\\. The input or output tokens must be reduced in order to run successfully\\.`,
        ),
      );
      assert.equal(body.error.type, 'tokens');
      assert.equal(body.error.code, 'rate_limit_exceeded');
    }
    assert.equal(provider.stats().rateLimited.too_large, 2);
  });

  it('answers 429 on requests per day until the scaled day ends', async () => {
    // Prepare
    const provider = await start({ limits: { requestsPerDay: 2 }, dayMs: 700 });
    assert.equal((await call(provider)).status, 200);
    assert.equal((await call(provider)).status, 200);
    // Act
    const limited = await call(provider);
    const body = (await limited.json()) as ErrorJson;
    // Assess
    assert.equal(limited.status, 429);
    assert.match(body.error.message, /on requests per day \(RPD\): Limit 2, Used 2, Requested 1\. Please try again in \d+ms\./);
    assert.equal(body.error.code, 'rate_limit_exceeded');
    const retryAfterMs = Number(limited.headers.get('retry-after-ms'));
    assert.ok(retryAfterMs > 0 && retryAfterMs <= 700, `retry-after-ms ${retryAfterMs}`);
    // Act: the day ends
    await sleep(retryAfterMs + 10);
    const nextDay = [await call(provider), await call(provider), await call(provider)];
    // Assess: a whole new day's budget, then refused again
    assert.deepEqual(
      nextDay.map((r) => r.status),
      [200, 200, 429],
    );
    assert.equal(provider.stats().rateLimited.rpd, 2);
  });

  it("states the time to the end of the day (fixed window), or one request's refill time (continuous)", async () => {
    // Prepare
    const fixedClock = manualClock();
    const fixed = await start({ limits: { requestsPerDay: 1 }, now: fixedClock.now });
    const continuousClock = manualClock();
    const continuous = await start({ limits: { requestsPerDay: 10 }, dayMs: 864_000, dailyWindow: 'continuous', now: continuousClock.now });
    await call(fixed);
    fixedClock.advance(3_600_000);
    for (let i = 0; i < 10; i += 1) await call(continuous);
    // Act
    const fixedBody = (await (await call(fixed)).json()) as ErrorJson;
    const continuousBody = (await (await call(continuous)).json()) as ErrorJson;
    fixed.resetDay();
    const afterReset = await call(fixed);
    // Assess
    assert.match(fixedBody.error.message, /Limit 1, Used 1, Requested 1\. Please try again in 23h0m0s\./);
    assert.match(continuousBody.error.message, /Limit 10, Used 10, Requested 1\. Please try again in 1m26\.4s\./);
    assert.equal(afterReset.status, 200);
  });

  it('answers insufficient_quota for a key out of credit while another key works', async () => {
    // Prepare
    const provider = await start({ keys: [{ key: 'sk-broke', outOfCredit: true }, { key: 'sk-test-a' }] });
    // Act
    const broke = await call(provider, { key: 'sk-broke' });
    const fine = await call(provider, { key: 'sk-test-a' });
    provider.setKeyOutOfCredit('sk-broke', false);
    provider.setKeyOutOfCredit('sk-test-a', true);
    const toppedUp = await call(provider, { key: 'sk-broke' });
    const nowBroke = await call(provider, { key: 'sk-test-a' });
    // Assess
    assert.equal(broke.status, 429);
    assert.equal(broke.headers.get('retry-after'), null);
    assert.equal(broke.headers.get('retry-after-ms'), null);
    assert.deepEqual(await broke.json(), {
      error: {
        message:
          'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
        type: 'insufficient_quota',
        param: null,
        code: 'insufficient_quota',
      },
    });
    assert.equal(fine.status, 200);
    assert.equal(toppedUp.status, 200);
    assert.equal(nowBroke.status, 429);
    const stats = provider.stats();
    assert.equal(stats.perKey['sk-broke']?.rateLimited.insufficient_quota, 1);
    assert.equal(stats.perKey['sk-test-a']?.rateLimited.insufficient_quota, 1);
  });

  it('shares one budget between keys of the same quota owner', async () => {
    // Prepare
    const clock = manualClock();
    const provider = await start({
      keys: [{ key: 'sk-team-1', quotaOwner: 'team' }, { key: 'sk-team-2', quotaOwner: 'team' }, { key: 'sk-solo' }],
      limits: { requestsPerMinute: 2 },
      now: clock.now,
    });
    // Act
    const statuses: number[] = [];
    for (const key of ['sk-team-1', 'sk-team-2', 'sk-team-1', 'sk-team-2', 'sk-solo', 'sk-solo']) statuses.push((await call(provider, { key })).status);
    const teamMessage = ((await (await call(provider, { key: 'sk-team-2' })).json()) as ErrorJson).error.message;
    const soloMessage = ((await (await call(provider, { key: 'sk-solo' })).json()) as ErrorJson).error.message;
    // Assess
    assert.deepEqual(statuses, [200, 200, 429, 429, 200, 200]);
    const organizationOf = (message: string) => /in organization (org-\S+) on/.exec(message)?.[1];
    assert.ok(soloMessage.startsWith('Rate limit reached'), 'solo key reaches its own limit at its third request');
    assert.notEqual(organizationOf(teamMessage), organizationOf(soloMessage));
    const stats = provider.stats();
    assert.equal(stats.perKey['sk-team-1']?.rateLimited.rpm, 1);
    assert.equal(stats.perKey['sk-team-2']?.rateLimited.rpm, 2);
    assert.equal(stats.perKey['sk-solo']?.successes, 2);
    assert.equal(stats.perKey['sk-solo']?.rateLimited.rpm, 1);
  });
});

type Outcome = 'ok' | 'status500' | 'status503' | 'timeout' | 'garbageJson' | 'schemaInvalid' | 'other';

function breaksSchema(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return true;
  const record = value as Record<string, unknown>;
  const allowed = Object.keys(SCHEMA.properties);
  return (
    SCHEMA.required.some((key) => !(key in record)) ||
    Object.keys(record).some((key) => !allowed.includes(key)) ||
    typeof record.total !== 'number' ||
    typeof record.invoiceNumber !== 'string' ||
    typeof record.currency !== 'string'
  );
}

async function outcomeOf(provider: FakeProvider, abortAfterMs: number): Promise<Outcome> {
  let response: Response;
  try {
    response = await call(provider, { signal: AbortSignal.timeout(abortAfterMs) });
  } catch (error) {
    return (error as Error).name === 'TimeoutError' ? 'timeout' : 'other';
  }
  if (response.status === 500) return 'status500';
  if (response.status === 503) return 'status503';
  if (response.status !== 200) return 'other';
  const body = (await response.json()) as ChatCompletionBody;
  let content: unknown;
  try {
    content = JSON.parse(body.choices[0]?.message.content ?? '');
  } catch {
    return 'garbageJson';
  }
  return breaksSchema(content) ? 'schemaInvalid' : 'ok';
}

describe('fake provider: fault injection', () => {
  const faults = { serverError: 0.15, timeout: 0.1, garbageJson: 0.15, schemaInvalid: 0.15 };

  async function outcomes(seed: number, count: number): Promise<Outcome[]> {
    const provider = await start({ faults, seed });
    const result: Outcome[] = [];
    for (let i = 0; i < count; i += 1) result.push(await outcomeOf(provider, 500));
    return result;
  }

  it('gives the same sequence of outcomes for the same seed and another for another seed', async () => {
    // Act
    const first = await outcomes(42, 30);
    const again = await outcomes(42, 30);
    const other = await outcomes(7, 30);
    // Assess
    assert.deepEqual(again, first);
    assert.notDeepEqual(other, first);
    assert.ok(!first.includes('other'), first.join(','));
    assert.ok(new Set(first).size >= 4, `varied outcomes: ${first.join(',')}`);
  });

  it('honours the rates roughly over 400 requests and counts every fault', async () => {
    // Prepare
    const rates = { serverError: 0.1, garbageJson: 0.15, schemaInvalid: 0.05 };
    const provider = await start({ faults: rates, seed: 2024 });
    // Act
    const seen: Outcome[] = [];
    for (let i = 0; i < 400; i += 1) seen.push(await outcomeOf(provider, 2_000));
    // Assess: within about four standard deviations of the expected counts
    const count = (...kinds: Outcome[]) => seen.filter((o) => kinds.includes(o)).length;
    const near = (actual: number, rate: number) => Math.abs(actual - 400 * rate) <= 4 * Math.sqrt(400 * rate * (1 - rate)) + 1;
    assert.ok(near(count('status500', 'status503'), 0.1), `server errors ${count('status500', 'status503')}`);
    assert.ok(count('status500') > 0 && count('status503') > 0, 'both 500 and 503 occur');
    assert.ok(near(count('garbageJson'), 0.15), `garbage ${count('garbageJson')}`);
    assert.ok(near(count('schemaInvalid'), 0.05), `schema-invalid ${count('schemaInvalid')}`);
    assert.equal(count('other'), 0);
    const stats = provider.stats();
    assert.equal(stats.requests, 400);
    assert.equal(stats.faults.serverError, count('status500', 'status503'));
    assert.equal(stats.faults.garbageJson, count('garbageJson'));
    assert.equal(stats.faults.schemaInvalid, count('schemaInvalid'));
    assert.equal(stats.successes, count('ok'));
  });

  it('hangs a timeout fault until the client aborts, and stop() still returns promptly', async () => {
    // Prepare
    const provider = await start({ faults: { timeout: 1 } });
    const begin = Date.now();
    // Act
    const aborted = await outcomeOf(provider, 150);
    const abortedAfterMs = Date.now() - begin;
    const leftHanging = call(provider).then(
      () => 'answered',
      () => 'connection closed',
    );
    await sleep(50);
    const stopStarted = Date.now();
    await provider.stop();
    const stopMs = Date.now() - stopStarted;
    // Assess
    assert.equal(aborted, 'timeout');
    assert.ok(abortedAfterMs >= 140, `aborted after ${abortedAfterMs} ms`);
    assert.ok(stopMs < 500, `stop took ${stopMs} ms`);
    assert.equal(await leftHanging, 'connection closed');
    assert.equal(provider.stats().faults.timeout, 2);
  });
});
