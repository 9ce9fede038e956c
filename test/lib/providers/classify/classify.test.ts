import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ThrottleKind } from '../../../../lib/policy/classification.js';
import {
  classifyAt,
  classifyProviderError,
  isRequestTooLarge,
  PROVIDER_NAMES,
  type ProviderErrorInput,
  type ProviderName,
} from '../../../../lib/providers/classify/classify.js';
import {
  parseDeltaSeconds,
  parseEpoch,
  parseGoDuration,
  parseHttpDate,
  parseProtoDuration,
  parseResetValue,
  parseRetryAfter,
  parseRfc3339,
  parseWaitFromText,
} from '../../../../lib/providers/classify/durations.js';

interface Fixture {
  name: string;
  provider: ProviderName;
  status: number;
  headers: Record<string, string>;
  body: unknown;
  now?: string;
  expected: { kind: ThrottleKind; retryAfterMs: number | null; resetAt: string | null };
  requestTooLarge?: boolean;
  source: string;
  note?: string;
}

const FIXTURE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'provider-errors');
const DEFAULT_NOW = Date.parse('2025-01-15T12:00:00.000Z');

function loadFixtures(): Array<Fixture & { file: string }> {
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .flatMap((file) => {
      const parsed = JSON.parse(readFileSync(join(FIXTURE_DIR, file), 'utf8')) as Fixture | Fixture[];
      return (Array.isArray(parsed) ? parsed : [parsed]).map((fixture) => ({ ...fixture, file }));
    });
}

const fixtures = loadFixtures();

describe('provider error fixtures', () => {
  it('has at least 40 fixtures covering all ten providers, each with a cited source', () => {
    // Assess
    assert.ok(fixtures.length >= 40, `only ${fixtures.length} fixtures`);
    for (const provider of PROVIDER_NAMES) {
      assert.ok(
        fixtures.some((f) => f.provider === provider),
        `no fixture for ${provider}`,
      );
    }
    for (const fixture of fixtures) {
      assert.match(fixture.source, /^https:\/\//, `${fixture.file}: ${fixture.name} has no source URL`);
      assert.ok((PROVIDER_NAMES as readonly string[]).includes(fixture.provider), `${fixture.name}: unknown provider`);
    }
  });

  for (const fixture of fixtures) {
    it(`${fixture.file}: ${fixture.name}`, () => {
      // Prepare
      const nowMs = fixture.now === undefined ? DEFAULT_NOW : Date.parse(fixture.now);
      const input: ProviderErrorInput = {
        provider: fixture.provider,
        status: fixture.status,
        headers: fixture.headers,
        body: fixture.body,
        now: new Date(nowMs),
      };
      // Act
      const got = classifyProviderError(input);
      // Assess
      assert.equal(got.kind, fixture.expected.kind, 'kind');
      if (fixture.expected.retryAfterMs === null) {
        assert.equal(got.retryAfterMs, null, 'retryAfterMs');
      } else {
        assert.notEqual(got.retryAfterMs, null, 'retryAfterMs stated');
        const want = fixture.expected.retryAfterMs;
        assert.ok(Math.abs((got.retryAfterMs ?? 0) - want) <= Math.max(want * 0.1, 1), `retryAfterMs ${got.retryAfterMs} vs ${want}`);
      }
      if (fixture.expected.resetAt === null) {
        assert.equal(got.resetAt, null, 'resetAt');
      } else {
        assert.ok(got.resetAt instanceof Date, 'resetAt is a Date');
        const diff = Math.abs(got.resetAt.getTime() - Date.parse(fixture.expected.resetAt));
        assert.ok(diff <= 1_000, `resetAt ${got.resetAt.toISOString()} vs ${fixture.expected.resetAt}`);
      }
      assert.equal(isRequestTooLarge(input), fixture.requestTooLarge ?? false, 'isRequestTooLarge');
    });
  }
});

describe('classifyProviderError input handling', () => {
  it('accepts a fetch Headers object and a JSON string body', () => {
    // Prepare
    const headers = new Headers({ 'Retry-After': '7' });
    // Act
    const got = classifyProviderError({
      provider: 'anthropic',
      status: 429,
      headers,
      body: '{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your per-minute rate limit"}}',
      now: 0,
    });
    // Assess
    assert.deepEqual(got, { kind: 'rate_limit', retryAfterMs: 7_000, resetAt: null });
  });

  it('reads an HTTP-date retry-after against the date header and gives the reset time', () => {
    // Prepare
    const input: ProviderErrorInput = {
      provider: 'openai',
      status: 429,
      headers: { date: 'Wed, 15 Jan 2025 12:00:00 GMT', 'retry-after': 'Wed, 15 Jan 2025 12:00:30 GMT' },
      body: { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } },
    };
    // Act
    const got = classifyProviderError(input);
    // Assess
    assert.equal(got.kind, 'rate_limit');
    assert.equal(got.retryAfterMs, 30_000);
    assert.equal(got.resetAt?.toISOString(), '2025-01-15T12:00:30.000Z');
  });

  it('defaults now to the date header, and the pure core takes now explicitly', () => {
    // Prepare
    const input: ProviderErrorInput = {
      provider: 'azure-openai',
      status: 429,
      headers: { date: 'Wed, 15 Jan 2025 12:00:00 GMT', 'retry-after': '86400' },
      body: { error: { code: '429', message: 'Requests to the ChatCompletions_Create Operation have exceeded token rate limit.' } },
    };
    // Act
    const viaWrapper = classifyProviderError(input);
    const viaCore = classifyAt(input, Date.parse('2025-01-15T12:00:00Z'));
    // Assess
    assert.equal(viaWrapper.kind, 'quota_exhausted');
    assert.equal(viaWrapper.resetAt?.toISOString(), '2025-01-16T12:00:00.000Z');
    assert.deepEqual(viaWrapper, viaCore);
  });

  it('treats a successful body as not a rate limit', () => {
    // Act
    const got = classifyProviderError({ provider: 'openai', status: 200, headers: {}, body: { choices: [{ message: { content: 'rate limit' } }] }, now: 0 });
    // Assess
    assert.deepEqual(got, { kind: 'not_rate_limit', retryAfterMs: null, resetAt: null });
  });

  it('treats a 500 without throttle signals as not a rate limit and tolerates garbage bodies', () => {
    // Act
    const a = classifyProviderError({ provider: 'mistral', status: 500, headers: {}, body: '<html>Internal Server Error</html>', now: 0 });
    const b = classifyProviderError({ provider: 'cohere', status: 502, headers: undefined, body: undefined, now: 0 });
    // Assess
    assert.equal(a.kind, 'not_rate_limit');
    assert.equal(b.kind, 'not_rate_limit');
  });

  it('picks the tokens reset for a token limit and the requests reset for a request limit', () => {
    // Prepare
    const headers = {
      'x-ratelimit-reset-requests': '1s',
      'x-ratelimit-reset-tokens': '6m0s',
      'x-ratelimit-remaining-requests': '10',
      'x-ratelimit-remaining-tokens': '0',
    };
    // Act
    const tokens = classifyAt(
      {
        provider: 'openai',
        status: 429,
        headers,
        body: { error: { message: 'Rate limit reached on tokens per min (TPM)', type: 'tokens', code: 'rate_limit_exceeded' } },
      },
      0,
    );
    const requests = classifyAt(
      {
        provider: 'openai',
        status: 429,
        headers,
        body: { error: { message: 'Rate limit reached on requests per min (RPM)', type: 'requests', code: 'rate_limit_exceeded' } },
      },
      0,
    );
    // Assess
    assert.equal(tokens.retryAfterMs, 360_000);
    assert.equal(requests.retryAfterMs, 1_000);
  });
});

describe('duration parsers', () => {
  it('parses Go-style durations', () => {
    // Assess
    assert.equal(parseGoDuration('6m0s'), 360_000);
    assert.equal(parseGoDuration('1m30.5s'), 90_500);
    assert.equal(parseGoDuration('20ms'), 20);
    assert.equal(parseGoDuration('1s'), 1_000);
    assert.equal(parseGoDuration('0.5s'), 500);
    assert.equal(parseGoDuration('9m38.016s'), 578_016);
    assert.equal(parseGoDuration('1h2m3s'), 3_723_000);
  });

  it('rejects garbage and negative durations', () => {
    // Assess
    for (const bad of ['', 'abc', '-1s', '5', 's', '1x', '1s garbage', null, undefined, 12]) {
      assert.equal(parseGoDuration(bad as unknown), null, String(bad));
    }
  });

  it('parses delta-seconds, rejecting negatives and garbage', () => {
    // Assess
    assert.equal(parseDeltaSeconds('20'), 20_000);
    assert.equal(parseDeltaSeconds('1.5'), 1_500);
    assert.equal(parseDeltaSeconds('86400'), 86_400_000);
    assert.equal(parseDeltaSeconds('-5'), null);
    assert.equal(parseDeltaSeconds('soon'), null);
  });

  it('parses HTTP dates and rejects non-dates', () => {
    // Assess
    assert.equal(parseHttpDate('Wed, 21 Oct 2015 07:28:00 GMT')?.toISOString(), '2015-10-21T07:28:00.000Z');
    assert.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT')?.toISOString(), '1994-11-06T08:49:37.000Z');
    assert.equal(parseHttpDate('120'), null);
    assert.equal(parseHttpDate('not a date at all, really'), null);
  });

  it('reads retry-after as seconds or an HTTP date against a reference time', () => {
    // Prepare
    const ref = Date.parse('2015-10-21T07:27:00Z');
    // Act
    const date = parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', ref);
    const past = parseRetryAfter('Wed, 21 Oct 2015 07:00:00 GMT', ref);
    // Assess
    assert.deepEqual(parseRetryAfter('30', ref), { ms: 30_000, at: null });
    assert.equal(date?.ms, 60_000);
    assert.equal(date?.at?.toISOString(), '2015-10-21T07:28:00.000Z');
    assert.equal(past?.ms, 0);
    assert.equal(parseRetryAfter('-1', ref), null);
    assert.equal(parseRetryAfter('garbage', ref), null);
  });

  it('parses RFC 3339 timestamps', () => {
    // Assess
    assert.equal(parseRfc3339('2024-03-26T20:00:00Z')?.toISOString(), '2024-03-26T20:00:00.000Z');
    assert.equal(parseRfc3339('2025-01-01T02:00:00.5+02:00')?.toISOString(), '2025-01-01T00:00:00.500Z');
    assert.equal(parseRfc3339('2024-03-26'), null);
    assert.equal(parseRfc3339('yesterday'), null);
  });

  it('parses epoch seconds and milliseconds, and mixed reset dialects', () => {
    // Assess
    assert.equal(parseEpoch('1777420800000')?.toISOString(), '2026-04-29T00:00:00.000Z');
    assert.equal(parseEpoch(1777420800)?.toISOString(), '2026-04-29T00:00:00.000Z');
    assert.equal(parseEpoch('55'), null);
    assert.deepEqual(parseResetValue('55', 0), { ms: 55_000, at: null });
    assert.deepEqual(parseResetValue('6m0s', 0), { ms: 360_000, at: null });
    assert.equal(parseResetValue('nope', 0), null);
  });

  it('parses protobuf durations from RetryInfo', () => {
    // Assess
    assert.equal(parseProtoDuration('37s'), 37_000);
    assert.equal(parseProtoDuration('0.5s'), 500);
    assert.equal(parseProtoDuration({ seconds: 2, nanos: 500_000_000 }), 2_500);
    assert.equal(parseProtoDuration('-3s'), null);
  });

  it('finds a wait stated in prose', () => {
    // Assess
    assert.equal(parseWaitFromText('Please try again in 20s.'), 20_000);
    assert.equal(parseWaitFromText('try again in 1.5s'), 1_500);
    assert.equal(parseWaitFromText('Try again in 6m0s. Visit https://platform.openai.com'), 360_000);
    assert.equal(parseWaitFromText('Please try again in 644ms. Visit'), 644);
    assert.equal(parseWaitFromText('Please retry after 36 seconds. Please go here'), 36_000);
    assert.equal(parseWaitFromText('retry after 2 minutes'), 120_000);
    assert.equal(parseWaitFromText('Please retry after 1 second.'), 1_000);
    assert.equal(parseWaitFromText('Please retry in 45.578569677s.'), 45_579);
    assert.equal(parseWaitFromText('Your quota will reset after 20s.'), 20_000);
    assert.equal(parseWaitFromText('Please try again later.'), null);
    assert.equal(parseWaitFromText('please reduce your message size and try again. Need more tokens?'), null);
    assert.equal(parseWaitFromText(undefined), null);
  });
});
