/**
 * The classifier's `auth` kind and Google's structured quota details deciding a
 * throttle whatever the dialect. The real responses are fixtures
 * (`test/fixtures/provider-errors/auth.json`, `gemini-quota.json`); these tests pin the rules.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { classifyAt, type ProviderName } from '../../../../lib/providers/classify/classify.js';
import { extractFacts } from '../../../../lib/providers/classify/error-body.js';
import { quotaVerdict } from '../../../../lib/providers/classify/quota-details.js';

const FIXTURE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'provider-errors');

/** A Gemini 429 with one QuotaFailure violation (and optionally its value and a RetryInfo delay). */
function geminiQuota(quotaId: string, quotaValue?: string, retryDelay?: string): unknown {
  return {
    error: {
      code: 429,
      message: 'You exceeded your current quota, please check your plan and billing details.',
      status: 'RESOURCE_EXHAUSTED',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [
            { quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId, ...(quotaValue ? { quotaValue } : {}) },
          ],
        },
        ...(retryDelay ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay }] : []),
      ],
    },
  };
}

describe('auth', () => {
  it('has a cited auth fixture for every provider with such a shape, and negatives', () => {
    // Prepare
    const fixtures = JSON.parse(readFileSync(join(FIXTURE_DIR, 'auth.json'), 'utf8')) as Array<{ provider: ProviderName; expected: { kind: string } }>;
    // Act
    const withAuth = new Set(fixtures.filter((f) => f.expected.kind === 'auth').map((f) => f.provider));
    const negatives = fixtures.filter((f) => f.expected.kind !== 'auth').length;
    // Assess
    assert.deepEqual([...withAuth].sort(), ['anthropic', 'azure-openai', 'bedrock', 'cohere', 'gemini', 'groq', 'mistral', 'openai', 'openrouter', 'vertex']);
    assert.ok(negatives >= 8, `${negatives} negative fixtures`);
  });

  it('states no wait, even when the body words one', () => {
    // Prepare
    const body = { error: { message: 'Invalid API Key. Please try again in 20s.', type: 'invalid_request_error', code: 'invalid_api_key' } };
    // Act
    const got = classifyAt({ provider: 'groq', status: 401, headers: { 'retry-after': '20' }, body }, 0);
    // Assess
    assert.deepEqual(got, { kind: 'auth', retryAfterMs: null, resetAt: null });
  });

  it('is never a 429, a 5xx or a 404, whatever the words', () => {
    // Prepare
    const body = { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } };
    // Act
    const kinds = [429, 500, 503, 404].map((status) => classifyAt({ provider: 'openai', status, headers: {}, body }, 0).kind);
    // Assess
    assert.deepEqual(kinds, ['rate_limit', 'not_rate_limit', 'overloaded', 'not_rate_limit']);
  });

  it('reads a bare 401 as auth, but a bare 403 or 400 as not_rate_limit', () => {
    // Act
    const bare401 = classifyAt({ provider: 'mistral', status: 401, headers: {}, body: '' }, 0).kind;
    const bare403 = classifyAt({ provider: 'mistral', status: 403, headers: {}, body: '' }, 0).kind;
    const bare400 = classifyAt({ provider: 'mistral', status: 400, headers: {}, body: { message: 'Invalid request: temperature must be <= 2' } }, 0).kind;
    // Assess
    assert.deepEqual([bare401, bare403, bare400], ['auth', 'not_rate_limit', 'not_rate_limit']);
  });

  it('decides billing before auth: a 401 for a deactivated, unpaid account is billing', () => {
    // Prepare
    const body = { error: { message: 'This key is associated with a deactivated account.', type: 'invalid_request_error', code: 'account_deactivated' } };
    // Act
    const got = classifyAt({ provider: 'openai', status: 401, headers: {}, body }, 0);
    // Assess
    assert.equal(got.kind, 'billing');
  });

  it('reads the AWS error type header: 403 AccessDeniedException for the caller is auth, for a model it is not', () => {
    // Prepare
    const headers = { 'x-amzn-errortype': 'AccessDeniedException:http://internal.amazon.com/coral/com.amazon.bedrock/' };
    // Act
    const caller = classifyAt(
      { provider: 'bedrock', status: 403, headers, body: { message: 'Your account is not authorized to invoke this API operation.' } },
      0,
    );
    const model = classifyAt(
      { provider: 'bedrock', status: 403, headers, body: { message: "You don't have access to the model with the specified model ID." } },
      0,
    );
    // Assess
    assert.equal(caller.kind, 'auth');
    assert.equal(model.kind, 'not_rate_limit');
  });
});

describe('Google structured quota details decide first', () => {
  it('PerMinute is rate_limit, PerDay is quota_exhausted, a limit of 0 is billing, in every dialect', () => {
    // Prepare
    const dialects: ProviderName[] = ['gemini', 'vertex', 'openai', 'openrouter', 'azure-openai', 'groq'];
    const bodies = {
      minute: geminiQuota('GenerateRequestsPerMinutePerProjectPerModel-FreeTier', '15', '37s'),
      day: geminiQuota('GenerateRequestsPerDayPerProjectPerModel-FreeTier', '250', '5s'),
      zero: geminiQuota('GenerateContentInputTokensPerModelPerMinute-FreeTier', '0', '45s'),
    };
    // Act
    const kinds = dialects.map((provider) => ({
      provider,
      minute: classifyAt({ provider, status: 429, headers: {}, body: bodies.minute }, 0),
      day: classifyAt({ provider, status: 429, headers: {}, body: bodies.day }, 0),
      zero: classifyAt({ provider, status: 429, headers: {}, body: bodies.zero }, 0),
    }));
    // Assess
    for (const { provider, minute, day, zero } of kinds) {
      assert.deepEqual(minute, { kind: 'rate_limit', retryAfterMs: 37_000, resetAt: null }, provider);
      assert.deepEqual(day, { kind: 'quota_exhausted', retryAfterMs: 5_000, resetAt: null }, provider);
      assert.equal(zero.kind, 'billing', provider);
    }
  });

  it('a day violation wins over minute violations in the same response', () => {
    // Prepare
    const facts = extractFacts(
      {
        error: {
          details: [
            {
              violations: [
                { quotaId: 'GenerateContentInputTokensPerModelPerMinute-FreeTier' },
                { quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier' },
              ],
            },
          ],
        },
      },
      429,
    );
    // Act
    const verdict = quotaVerdict(facts);
    // Assess
    assert.equal(verdict, 'quota_exhausted');
  });

  it('reads the details written as text: a Python repr, a Go map and the gRPC text form', () => {
    // Prepare
    const python =
      "429 RESOURCE_EXHAUSTED. {'error': {'details': [{'violations': [{'quotaId': 'GenerateRequestsPerMinutePerProjectPerModel'}]}, {'retryDelay': '12s'}]}}";
    const go = 'Error 429, Status: RESOURCE_EXHAUSTED, Details: [map[violations:[map[quotaId:GenerateRequestsPerDayPerProjectPerModel]]]]';
    const grpc =
      'metadata { key: "quota_limit_value" value: "0" } metadata { key: "quota_limit" value: "GenerateContentRequestsPerMinutePerProjectPerRegion" }';
    // Act
    const verdicts = [python, go, grpc].map((body) => quotaVerdict(extractFacts(body, 429)));
    const wait = classifyAt({ provider: 'openai', status: 429, headers: {}, body: python }, 0);
    // Assess
    assert.deepEqual(verdicts, ['rate_limit', 'quota_exhausted', 'billing']);
    assert.deepEqual(wait, { kind: 'rate_limit', retryAfterMs: 12_000, resetAt: null });
  });

  it("keeps OpenAI's own insufficient_quota (same words, no Google details) billing", () => {
    // Prepare
    const body = {
      error: {
        message: 'You exceeded your current quota, please check your plan and billing details.',
        type: 'insufficient_quota',
        param: null,
        code: 'insufficient_quota',
      },
    };
    const wordsOnly = { error: { message: 'You exceeded your current quota, please check your plan and billing details.' } };
    // Act
    const coded = classifyAt({ provider: 'openai', status: 429, headers: {}, body }, 0);
    const worded = classifyAt({ provider: 'openai', status: 429, headers: {}, body: wordsOnly }, 0);
    // Assess
    assert.equal(coded.kind, 'billing');
    assert.equal(worded.kind, 'billing');
  });

  it('does not read details on a 5xx: a 503 with RetryInfo stays overloaded', () => {
    // Prepare
    const body = {
      error: {
        code: 503,
        message: 'The model is overloaded. Please try again later.',
        status: 'UNAVAILABLE',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '40s' }],
      },
    };
    // Act
    const got = classifyAt({ provider: 'openai', status: 503, headers: {}, body }, 0);
    // Assess
    assert.deepEqual(got, { kind: 'overloaded', retryAfterMs: 40_000, resetAt: null });
  });
});
