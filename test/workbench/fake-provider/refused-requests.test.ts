/**
 * What a refused request costs in the fake provider (`workbench/fake-provider/limits.ts`, the rules in `wire/dialect.ts`): with the
 * OpenAI dialect one request of RPM (OpenAI documents that unsuccessful requests count toward the
 * per-minute limit), charged after the refusal's answer, so the next admission waits one more
 * request's refill and later hints say so; with the Gemini dialect (Google documents nothing) nothing
 * changes. Checked on the ledger itself and over HTTP on both routes, and the rule each dialect reports.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { refusedRequestRuleOf, GEMINI_REFUSED_REQUEST_RULE, OPENAI_REFUSED_REQUEST_RULE } from '../../../workbench/fake-provider/wire/dialect.js';
import { startFakeProvider, type FakeProvider } from '../../../workbench/fake-provider/index.js';
import { QuotaLedger, type Admission } from '../../../workbench/fake-provider/limits.js';
import type { FakeProviderLimits, RefusedRequestRule } from '../../../workbench/fake-provider/types.js';

const T0 = 1_700_000_000_000;
const MINUTE_MS = 60_000;
const OWNER = 'team';

/** A ledger whose owner has spent its whole RPM budget of 3 (one request refills in 20 s) at T0. */
function exhaustedLedger(limits: FakeProviderLimits = { requestsPerMinute: 3 }): QuotaLedger {
  const ledger = new QuotaLedger(limits, { minuteMs: MINUTE_MS, dayMs: 86_400_000, dailyWindow: 'fixed' }, T0);
  for (let i = 0; i < 3; i += 1) ledger.spendRequest(OWNER, 10, T0);
  return ledger;
}

/** The first time (ms after T0, on a 1 s grid) the owner is admitted again. Moves the ledger's clock: check earlier times first. */
function firstAdmissionAfter(ledger: QuotaLedger, tokens = 10): number {
  for (let at = 0; at <= 10 * MINUTE_MS; at += 1_000) if (ledger.check(OWNER, tokens, T0 + at).admitted) return at;
  return Infinity;
}

function waitOf(admission: Admission): number | null {
  assert.equal(admission.admitted, false);
  return admission.admitted ? null : admission.waitMs;
}

/** Refuses one request at T0 and charges it as `rule` says; returns the refusal the caller got. */
function refuseAndCharge(ledger: QuotaLedger, rule: RefusedRequestRule, tokens = 10): Admission {
  const refusal = ledger.check(OWNER, tokens, T0);
  ledger.spendRefused(OWNER, tokens, rule, T0);
  return refusal;
}

describe('fake provider budgets: a refused request, per dialect', () => {
  it('openai: a refused request delays the next admission by one request refill, and the next hint says so', () => {
    // Prepare
    const uncharged = exhaustedLedger();
    const charged = exhaustedLedger();
    // Act
    const refusal = refuseAndCharge(charged, OPENAI_REFUSED_REQUEST_RULE);
    const nextCaller = charged.check(OWNER, 10, T0);
    // Assess: the refused caller's own answer is the budget before the charge
    assert.deepEqual(refusal, { admitted: false, kind: 'rpm', limit: 3, used: 3, requested: 1, waitMs: 20_000 });
    assert.deepEqual(nextCaller, { admitted: false, kind: 'rpm', limit: 3, used: 4, requested: 1, waitMs: 40_000 });
    assert.equal(charged.snapshot(OWNER, T0).requests?.resetMs, 80_000);
    assert.equal(firstAdmissionAfter(uncharged), 20_000);
    assert.equal(firstAdmissionAfter(charged), 40_000);
  });

  it('openai: a caller that retries exactly at its own hint is refused again (the hint is a minimum)', () => {
    // Prepare
    const ledger = exhaustedLedger();
    const hint = waitOf(refuseAndCharge(ledger, OPENAI_REFUSED_REQUEST_RULE)) ?? 0;
    // Act
    const retry = ledger.check(OWNER, 10, T0 + hint);
    // Assess: one refill short, told to wait one more refill
    assert.equal(retry.admitted, false);
    assert.equal(retry.admitted ? null : retry.waitMs, 20_000);
  });

  it('openai: a refused request spends no tokens and no daily request', () => {
    // Prepare: TPM 100 nearly spent, so a 50-token request is refused on tokens
    const ledger = new QuotaLedger(
      { requestsPerMinute: 10, tokensPerMinute: 100, requestsPerDay: 5 },
      { minuteMs: MINUTE_MS, dayMs: 86_400_000, dailyWindow: 'fixed' },
      T0,
    );
    ledger.spendRequest(OWNER, 80, T0);
    // Act
    const refusal = refuseAndCharge(ledger, OPENAI_REFUSED_REQUEST_RULE, 50);
    const after = ledger.check(OWNER, 50, T0);
    // Assess: the same TPM wait as the request above, RPM one request lower, the day's budget untouched
    assert.equal(refusal.admitted ? null : refusal.kind, 'tpm');
    assert.deepEqual(after, refusal);
    assert.deepEqual(ledger.snapshot(OWNER, T0).requests, { limit: 10, remaining: 8, resetMs: 12_000 });
    assert.equal(ledger.snapshot(OWNER, T0).tokens?.remaining, 20);
    assert.equal(firstAdmissionAfter(ledger, 50), 18_000);
  });

  it('gemini (documents nothing): a refused request changes nothing', () => {
    // Prepare
    const uncharged = exhaustedLedger();
    const charged = exhaustedLedger();
    // Act
    const refusal = refuseAndCharge(charged, GEMINI_REFUSED_REQUEST_RULE);
    const nextCaller = charged.check(OWNER, 10, T0);
    // Assess
    assert.deepEqual(nextCaller, refusal);
    assert.deepEqual(charged.snapshot(OWNER, T0), uncharged.snapshot(OWNER, T0));
    assert.deepEqual([firstAdmissionAfter(charged), firstAdmissionAfter(uncharged)], [20_000, 20_000]);
  });

  it('each dialect carries its rule with a one-line source', () => {
    // Prepare, act
    const openai = refusedRequestRuleOf('openai');
    const gemini = refusedRequestRuleOf('gemini');
    // Assess
    assert.deepEqual([openai.spendsRequest, openai.spendsTokens], [true, false]);
    assert.deepEqual([gemini.spendsRequest, gemini.spendsTokens], [false, false]);
    assert.match(openai.description, /^openai: a refused request counts toward RPM.*unsuccessful requests contribute to your per-minute limit/);
    assert.match(gemini.description, /^gemini: a refused request spends nothing .*ai\.google\.dev\/gemini-api\/docs\/rate-limits/);
    for (const rule of [openai, gemini]) assert.doesNotMatch(rule.description, /\n/);
  });
});

// ---------------------------------------------------------------------------------------------
// Over HTTP: the server charges after answering, per route.

const started: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((provider) => provider.stop()));
});

/** A provider with RPM 2 (one request refills in 30 s) on a hand-moved clock. */
async function startClocked(): Promise<{ provider: FakeProvider; advance: (ms: number) => void }> {
  let now = T0;
  const provider = await startFakeProvider({
    keys: [{ key: 'sk-test-a' }],
    extract: () => ({ invoiceNumber: 'INV-1', total: 12.5, currency: 'EUR' }),
    latencyMs: 0,
    limits: { requestsPerMinute: 2 },
    now: () => now,
  });
  started.push(provider);
  return { provider, advance: (ms) => void (now += ms) };
}

const SCHEMA = { type: 'object', properties: { invoiceNumber: { type: 'string' } }, required: ['invoiceNumber'] };
const USER_TEXT = 'Read this invoice.\n<document>\nINV-1\nTotal 12.50 EUR\n</document>';

function chat(provider: FakeProvider): Promise<Response> {
  return fetch(`${provider.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test-a', 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: USER_TEXT }],
      response_format: { type: 'json_schema', json_schema: { name: 'invoice_v1', schema: SCHEMA, strict: true } },
    }),
  });
}

function gemini(provider: FakeProvider): Promise<Response> {
  return fetch(`http://127.0.0.1:${provider.port}/v1beta/models/gemini-2.5-flash:generateContent`, {
    method: 'POST',
    headers: { 'x-goog-api-key': 'sk-test-a', 'content-type': 'application/json' },
    body: JSON.stringify({
      contents: [{ role: 'user', parts: [{ text: USER_TEXT }] }],
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: SCHEMA },
    }),
  });
}

/** The Gemini 429's `RetryInfo.retryDelay`. */
async function geminiRetryDelay(response: Response): Promise<string | undefined> {
  const body = (await response.json()) as { error: { details?: Array<Record<string, unknown>> } };
  return body.error.details?.find((d) => d['@type'] === 'type.googleapis.com/google.rpc.RetryInfo')?.retryDelay as string | undefined;
}

describe('fake provider server: refused requests per route', () => {
  it('openai route: each refusal is charged, and its own hint counts its charge, so waiting as told gets through', async () => {
    // Prepare: 2 requests a minute (one refills in 30 s), both spent
    const { provider, advance } = await startClocked();
    assert.deepEqual([(await chat(provider)).status, (await chat(provider)).status], [200, 200]);
    // Act
    const first = await chat(provider);
    const second = await chat(provider);
    advance(60_000);
    const atFirstHint = await chat(provider);
    advance(90_000);
    const atThirdHint = await chat(provider);
    // Assess: the budget is -1 after the first refusal (told 2 refills), -2 after the second (3 refills);
    // at the first's hint the second's charge still stands, so a caller resending early stays refused
    assert.equal(first.status, 429);
    assert.equal(first.headers.get('retry-after-ms'), '60000');
    assert.match(((await first.json()) as { error: { message: string } }).error.message, /Limit 2, Used 2, Requested 1\./);
    assert.equal(second.status, 429);
    assert.equal(second.headers.get('retry-after-ms'), '90000');
    assert.match(((await second.json()) as { error: { message: string } }).error.message, /Limit 2, Used 3, Requested 1\./);
    assert.equal(second.headers.get('x-ratelimit-remaining-requests'), '0');
    assert.equal(atFirstHint.status, 429);
    assert.equal(atFirstHint.headers.get('retry-after-ms'), '60000');
    assert.equal(atThirdHint.status, 200);
    assert.equal(provider.stats().rateLimited.rpm, 3);
    assert.equal(provider.refusedRequestRule('openai'), refusedRequestRuleOf('openai'));
  });

  it('gemini route: refusals change nothing, so the first hint is still right', async () => {
    // Prepare
    const { provider, advance } = await startClocked();
    assert.deepEqual([(await gemini(provider)).status, (await gemini(provider)).status], [200, 200]);
    // Act
    const first = await gemini(provider);
    const second = await gemini(provider);
    advance(30_000);
    const atFirstHint = await gemini(provider);
    // Assess
    assert.deepEqual([first.status, second.status], [429, 429]);
    assert.equal(await geminiRetryDelay(first), '30s');
    assert.equal(await geminiRetryDelay(second), '30s');
    assert.equal(atFirstHint.status, 200);
    assert.equal(provider.refusedRequestRule('gemini'), GEMINI_REFUSED_REQUEST_RULE);
  });
});
