/**
 * The local fake provider's rate limits, answered as OpenAI does: 429 past the requests, tokens or
 * requests per day (with the exact used, requested and wait), "Request too large", the daily window
 * (fixed or continuous), insufficient_quota for a key out of credit, and one budget shared by the
 * keys of one quota owner. Its wire format: `wire/openai.test.ts`.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { call, type ErrorJson, promptTokensFor, start, stopStarted } from './support.js';

afterEach(stopStarted);

/** A hand-moved clock for exact numbers in messages and headers. */
function manualClock(startAt = 1_700_000_000_000) {
  let now = startAt;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe('fake provider: rate limits', () => {
  it('answers 429 past the per-minute request budget and admits again after the scaled window', async () => {
    // Prepare
    const clock = manualClock();
    const provider = await start({ limits: { requestsPerMinute: 3 }, minuteMs: 900, now: clock.now });
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
    // one refill is 300 ms; the refused request counts toward the RPM (OpenAI), its own hint with it
    assert.ok(retryAfterMs > 300 && retryAfterMs <= 600, `retry-after-ms ${retryAfterMs}`);
    assert.equal(limited.headers.get('x-ratelimit-remaining-requests'), '0');
    assert.equal(limited.headers.get('x-ratelimit-limit-requests'), '3');
    // Act: wait as told (on the provider's clock)
    clock.advance(retryAfterMs + 10);
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
    const clock = manualClock();
    const provider = await start({ limits: { requestsPerDay: 2 }, dayMs: 700, now: clock.now });
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
    // Act: the day ends (on the provider's clock)
    clock.advance(retryAfterMs + 10);
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
