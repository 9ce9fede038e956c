/**
 * The per-minute limits a successful answer's headers state, per dialect: whole numbers only, and only
 * the headers that count a minute (Groq's requests header counts a day).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { statedLimitsOf } from '../../../lib/providers/stated-limits.js';

describe('statedLimitsOf', () => {
  it("reads OpenAI's and Anthropic's request and token limits, and Groq's token limit alone", () => {
    // Prepare
    const openai = { 'X-RateLimit-Limit-Requests': '500', 'x-ratelimit-limit-tokens': '200000', 'x-ratelimit-remaining-requests': '499' };
    const anthropic = {
      'anthropic-ratelimit-requests-limit': '50',
      'anthropic-ratelimit-input-tokens-limit': '40000',
      'anthropic-ratelimit-tokens-limit': '48000',
    };
    const groq = { 'x-ratelimit-limit-requests': '14400', 'x-ratelimit-limit-tokens': '6000' };
    // Act and assess
    assert.deepEqual(statedLimitsOf('openai', openai), { requestsPerMinute: 500, tokensPerMinute: 200_000 });
    assert.deepEqual(statedLimitsOf('anthropic', anthropic), { requestsPerMinute: 50, tokensPerMinute: 48_000 });
    assert.deepEqual(statedLimitsOf('groq', groq), { tokensPerMinute: 6_000 }, "Groq's requests limit counts a day");
  });

  it('states nothing for dialects without such headers, for absent headers, or for values that are no whole number from 1 to 10^12', () => {
    // Prepare
    const bad = ['0', '-5', '12.5', '1e5', '0x10', '99999999999999', '', ' ', '500, 600'];
    // Act and assess
    assert.equal(statedLimitsOf('bedrock', { 'x-ratelimit-limit-requests': '500' }), undefined);
    assert.equal(statedLimitsOf('gemini', { 'x-ratelimit-limit-requests': '500' }), undefined);
    assert.equal(statedLimitsOf('openai', {}), undefined);
    assert.equal(statedLimitsOf('openai', undefined), undefined);
    for (const value of bad) assert.equal(statedLimitsOf('openai', { 'x-ratelimit-limit-requests': value }), undefined, JSON.stringify(value));
    assert.deepEqual(statedLimitsOf('openai', { 'x-ratelimit-limit-requests': 'lots', 'x-ratelimit-limit-tokens': ' 1000 ' }), { tokensPerMinute: 1_000 });
  });
});
