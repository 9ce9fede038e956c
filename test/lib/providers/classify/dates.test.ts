/**
 * Believing waits only within reason: every date the
 * classifier parses is validated field by field (a date that does not exist is no date, never a
 * `Date.UTC` roll-over), and a response's `date` header is believed only within ±5 minutes of the
 * caller's clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyAt } from '../../../../lib/providers/classify/classify.js';
import {
  MAX_DATE_SKEW_MS,
  parseHttpDate,
  parseResetValue,
  parseRetryAfter,
  parseRfc3339,
  serverReferenceTime,
  utcDate,
} from '../../../../lib/providers/classify/durations.js';

const NOW = Date.parse('2026-03-23T12:00:00.000Z');

describe('utcDate', () => {
  it('builds real dates, leap days included', () => {
    // Act
    const dates = [utcDate(2024, 2, 29), utcDate(2026, 12, 31, 23, 59, 59, 999), utcDate(2000, 2, 29, 0, 0, 0)];
    // Assess
    assert.deepEqual(
      dates.map((d) => d?.toISOString()),
      ['2024-02-29T00:00:00.000Z', '2026-12-31T23:59:59.999Z', '2000-02-29T00:00:00.000Z'],
    );
  });

  it('refuses dates that do not exist instead of rolling them over', () => {
    // Act
    const refused = [
      utcDate(2026, 99, 99),
      utcDate(2026, 2, 30),
      utcDate(2026, 2, 29),
      utcDate(1900, 2, 29),
      utcDate(2026, 4, 31),
      utcDate(2026, 0, 1),
      utcDate(2026, 13, 1),
      utcDate(2026, 1, 0),
      utcDate(2026, 1, 1, 24),
      utcDate(2026, 1, 1, 12, 60),
      utcDate(2026, 1, 1, 12, 0, 61),
      utcDate(2026, 1, 1.5),
      utcDate(Number.NaN, 1, 1),
      utcDate(10_000, 1, 1),
    ];
    // Assess
    assert.ok(refused.every((d) => d === null));
  });
});

describe('validated date parsers', () => {
  it('parses RFC 3339 with offsets and fractions, and refuses impossible fields', () => {
    // Act
    const good = [parseRfc3339('2026-02-28T23:59:59Z'), parseRfc3339('2026-03-01T01:30:00.250+01:30'), parseRfc3339('2024-02-29 12:00:00z')];
    const bad = ['2026-99-99T00:00:00Z', '2026-02-30T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T12:60:00Z', '2026-01-01T00:00:00+25:00'].map(parseRfc3339);
    // Assess
    assert.deepEqual(
      good.map((d) => d?.toISOString()),
      ['2026-02-28T23:59:59.000Z', '2026-03-01T00:00:00.250Z', '2024-02-29T12:00:00.000Z'],
    );
    assert.ok(bad.every((d) => d === null));
  });

  it('parses the three HTTP date forms and numeric zones, and refuses impossible dates', () => {
    // Act
    const good = [
      parseHttpDate('Wed, 21 Oct 2015 07:28:00 GMT'),
      parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT'),
      parseHttpDate('Sun Nov  6 08:49:37 1994'),
      parseHttpDate('Tue, 26 Mar 2024 21:59:59 +0200'),
    ];
    const bad = ['Mon, 30 Feb 2026 10:00:00 GMT', 'Wed, 15 Jan 2025 25:00:00 GMT', 'Wed, 15 Foo 2025 10:00:00 GMT', 'Wed, 32 Jan 2025 10:00:00 GMT'].map(
      parseHttpDate,
    );
    // Assess
    assert.deepEqual(
      good.map((d) => d?.toISOString()),
      ['2015-10-21T07:28:00.000Z', '1994-11-06T08:49:37.000Z', '1994-11-06T08:49:37.000Z', '2024-03-26T19:59:59.000Z'],
    );
    assert.ok(bad.every((d) => d === null));
  });

  it('reads no wait from a retry-after or reset header that names an impossible date', () => {
    // Act
    const retryAfter = parseRetryAfter('Mon, 30 Feb 2026 10:00:00 GMT', NOW);
    const reset = parseResetValue('2026-13-01T00:00:00Z', NOW);
    // Assess
    assert.equal(retryAfter, null);
    assert.equal(reset, null);
  });
});

describe('the date header is believed only within a sane skew', () => {
  it('uses the date header within ±5 minutes, else the caller’s now', () => {
    // Prepare
    const at = (offsetMs: number) => new Date(NOW + offsetMs).toUTCString();
    // Act
    const refs = [
      serverReferenceTime(at(-MAX_DATE_SKEW_MS), NOW),
      serverReferenceTime(at(90_000), NOW),
      serverReferenceTime(at(-MAX_DATE_SKEW_MS - 1_000), NOW),
      serverReferenceTime(at(2 * 3_600_000), NOW),
      serverReferenceTime('garbage', NOW),
      serverReferenceTime(undefined, NOW),
    ];
    // Assess
    assert.deepEqual(refs, [NOW - MAX_DATE_SKEW_MS, NOW + 90_000, NOW, NOW, NOW, NOW]);
  });

  it('a server clock two hours slow does not turn a one-second reset into a two-hour quota', () => {
    // Prepare
    const headers = {
      date: new Date(NOW - 2 * 3_600_000).toUTCString(),
      'anthropic-ratelimit-requests-remaining': '0',
      'anthropic-ratelimit-requests-reset': new Date(NOW + 1_000).toISOString(),
    };
    const body = { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your per-minute rate limit' } };
    // Act
    const got = classifyAt({ provider: 'anthropic', status: 429, headers, body }, NOW);
    // Assess
    assert.equal(got.kind, 'rate_limit');
    assert.equal(got.retryAfterMs, 1_000);
  });

  it('an HTTP-date retry-after is read against a believable date header (the server’s clock)', () => {
    // Prepare
    const headers = { date: new Date(NOW + 60_000).toUTCString(), 'retry-after': new Date(NOW + 90_000).toUTCString() };
    // Act
    const got = classifyAt({ provider: 'openai', status: 429, headers, body: { error: { code: 'rate_limit_exceeded', message: 'Rate limit reached' } } }, NOW);
    // Assess
    assert.equal(got.retryAfterMs, 30_000);
    assert.equal(got.resetAt?.getTime(), NOW + 90_000);
  });

  it('"regain access on" an impossible date states no reset', () => {
    // Prepare
    const body = {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'You have reached your specified API usage limits. You will regain access on 2026-02-30 at 00:00 UTC.' },
    };
    // Act
    const got = classifyAt({ provider: 'anthropic', status: 400, headers: {}, body }, NOW);
    // Assess
    assert.deepEqual(got, { kind: 'quota_exhausted', retryAfterMs: null, resetAt: null });
  });
});
