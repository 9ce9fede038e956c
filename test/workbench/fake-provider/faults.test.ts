/**
 * The local fake provider's fault injection: the same outcomes for the same seed, the configured
 * rates over 400 requests with every fault counted, and a timeout fault that hangs until the client
 * aborts while stop() still returns promptly. Its wire format: `wire/openai.test.ts`.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, it } from 'node:test';
import type { ChatCompletionBody, FakeProvider } from '../../../workbench/fake-provider/index.js';
import { call, SCHEMA, start, stopStarted } from './support.js';

afterEach(stopStarted);

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

/**
 * One call's outcome. A call the provider hangs (its timeout fault, counted as it decides to hang) is
 * aborted then, as a client's timeout would end it, instead of after a real wait; or after `abortAfterMs`.
 */
async function outcomeOf(provider: FakeProvider, abortAfterMs?: number): Promise<Outcome> {
  const hangsBefore = provider.stats().faults.timeout;
  const client = new AbortController();
  let answered = false;
  if (abortAfterMs === undefined) {
    void (async () => {
      while (!answered && provider.stats().faults.timeout === hangsBefore) await new Promise((resolve) => setImmediate(resolve));
      if (!answered) client.abort(new DOMException('the provider hangs the call', 'TimeoutError'));
    })();
  }
  let response: Response;
  try {
    response = await call(provider, { signal: abortAfterMs === undefined ? client.signal : AbortSignal.timeout(abortAfterMs) });
  } catch (error) {
    return (error as Error).name === 'TimeoutError' ? 'timeout' : 'other';
  } finally {
    answered = true;
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
    for (let i = 0; i < count; i += 1) result.push(await outcomeOf(provider));
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
    for (let i = 0; i < 400; i += 1) seen.push(await outcomeOf(provider));
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
    const aborted = await outcomeOf(provider, 100);
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
    assert.ok(abortedAfterMs >= 90, `aborted after ${abortedAfterMs} ms`);
    assert.ok(stopMs < 2_000, `stop took ${stopMs} ms (a hanging answer would hold it forever)`);
    assert.equal(await leftHanging, 'connection closed');
    assert.equal(provider.stats().faults.timeout, 2);
  });
});
