/**
 * The OpenAI-compatible and Gemini adapters against the local fake provider (real wire formats,
 * real-shaped 429 bodies and headers, its per-key limits and injected faults).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { FakeProvider } from '../../../workbench/fake-provider/index.js';
import { createGeminiAdapter } from '../../../lib/providers/gemini.js';
import { ProviderError } from '../../../lib/providers/model.js';
import { createOpenAiCompatibleAdapter } from '../../../lib/providers/openai-compatible.js';
import { assertTimesOutOnce, extraction, failure, fake, RESULT, stopAll, SYSTEM, USER } from './support.js';

afterEach(stopAll);

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

  it('reads the per-minute limits an answer states (x-ratelimit-limit-*), and none from a provider that states none', async () => {
    // Prepare: one provider with limits, one without (it sends no x-ratelimit headers), one with limits that states none
    const limits = { requestsPerMinute: 450, tokensPerMinute: 90_000 };
    const limited = await fake({ limits });
    const unlimited = await fake();
    const mute = await fake({ limits, statesLimits: false });
    // Act
    const stated = await adapterFor(limited).extract(extraction(key));
    const silent = await adapterFor(unlimited).extract(extraction(key));
    const unstated = await adapterFor(mute).extract(extraction(key));
    // Assess
    assert.deepEqual(stated.statedLimits, { requestsPerMinute: 450, tokensPerMinute: 90_000 });
    assert.equal(silent.statedLimits, undefined);
    assert.equal(unstated.statedLimits, undefined);
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
    // The OpenAI dialect charges the refused request toward RPM (as OpenAI documents), and its hint
    // counts that charge: two minutes' refill at 1 RPM, less the few ms since the success.
    const waitMs = failed.classification.retryAfterMs;
    assert.ok(waitMs !== null && waitMs > 115_000 && waitMs <= 120_000, `retry after ${waitMs} ms`);
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

  it('maps an unknown key (401 invalid_api_key) to auth, sending one request only', async () => {
    // Prepare
    const provider = await fake();
    // Act
    const failed = await failure(adapterFor(provider), ProviderError, extraction({ apiKey: 'sk-test-unknown' }));
    // Assess
    assert.equal(failed.status, 401);
    assert.deepEqual(failed.classification, { kind: 'auth', retryAfterMs: null, resetAt: null });
    assert.equal(provider.stats().unauthorized, 1);
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

  it('times out on a hung request', async (t) => {
    // Prepare
    const provider = await fake({ faults: { timeout: 1 } });
    // Act + Assess
    const failed = await assertTimesOutOnce(t, adapterFor(provider, 200), () => provider.stats().requests, 200, extraction(key));
    assert.equal(failed.timedOut, true);
  });

  it('refuses an unknown key with 400 API_KEY_INVALID', async () => {
    // Prepare
    const provider = await fake();
    // Act
    const failed = await failure(adapterFor(provider), ProviderError, extraction({ apiKey: 'AIza-unknown' }));
    // Assess
    assert.equal(failed.status, 400);
    // Issue #12 point 2: Gemini's API_KEY_INVALID is `auth` (the key waits for a person), not a failure.
    assert.equal(failed.classification.kind, 'auth');
    assert.equal(provider.stats().unauthorized, 1);
  });
});
