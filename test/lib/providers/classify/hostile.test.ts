/**
 * Hostile input: the classifier runs in time linear in its input, never throws,
 * and a body it cannot read, or one that carries no throttle signal, is `not_rate_limit` with no
 * wait. Each body here is about 1 MB; each must be classified well under a second on the 2-core
 * development machine (the bound is generous: the slowest takes tens of ms even with the machine
 * busy; before the fix 20,000 `{` took ~8 s and 50,000 took ~4 min).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyProviderError, isRequestTooLarge, type ProviderErrorInput } from '../../../../lib/providers/classify/classify.js';
import { extractFacts, MAX_TOTAL_TEXT } from '../../../../lib/providers/classify/error-body.js';
import { normalizeHeaders } from '../../../../lib/providers/classify/headers.js';
import { balancedEnd, tryParseJson } from '../../../../lib/providers/classify/json-text.js';

const MB = 1 << 20;
const BOUND_MS = 500;
const NO_THROTTLE = { kind: 'not_rate_limit', retryAfterMs: null, resetAt: null };

/** `unit` repeated to 1 MB. */
function mb(unit: string): string {
  return unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
}

function cyclic(): Record<string, unknown> {
  const error: Record<string, unknown> = { message: 'upstream failed' };
  const body: Record<string, unknown> = { error };
  error.parent = body;
  body.self = body;
  return body;
}

/** Ten keys that all point back at the object: 10^10 paths within the depth limit if walked naively. */
function fanOut(): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (let i = 0; i < 10; i++) body[`k${i}`] = body;
  return body;
}

const HOSTILE_BODIES: Array<[string, () => unknown]> = [
  ['20,000 {', () => '{'.repeat(20_000)],
  ['1 MB of {', () => mb('{')],
  ['1 MB of [', () => mb('[')],
  ['1 MB of "', () => mb('"')],
  ['1 MB of backslashes', () => mb('\\')],
  ['1 MB of {"', () => mb('{"')],
  ['1 MB of {"a": (deep nesting, unbalanced)', () => mb('{"a":')],
  ['512 K [ then 512 K ] (deep nesting, balanced)', () => '['.repeat(MB / 2) + ']'.repeat(MB / 2)],
  ['a client prefix and 1 MB of {', () => `[CloudCode] upstream error: ${mb('{')}`],
  ['limit: 1,1,1,… (1 MB)', () => `limit: ${mb('1,')}`],
  ['"limit: 1, requested: " repeated', () => mb('limit: 1, requested: ')],
  ['"try again in " repeated', () => mb('try again in ')],
  ['"exceeded " repeated (a regex with a free run before "quota")', () => mb('exceeded ')],
  ['"regain access on 2026-" repeated', () => mb('regain access on 2026-')],
  ['a 1 MB SSE stream without errors', () => mb('data: {"choices":[{"delta":{"content":"x"}}]}\n\n')],
  ['a 1 MB SSE stream of broken error events', () => mb('event: error\ndata: {{{{\n\n')],
  ['a JSON body whose message is 1 MB of {', () => JSON.stringify({ error: { message: mb('{') } })],
  ['50,000 distinct messages', () => JSON.stringify({ error: Array.from({ length: 50_000 }, (_, i) => ({ message: `message ${i}` })) })],
  ['1 MB of bytes', () => new TextEncoder().encode(mb('{['))],
  [
    'an object with a throwing getter',
    () => ({
      error: {
        get message(): string {
          throw new Error('boom');
        },
      },
    }),
  ],
  [
    'a Proxy that throws on ownKeys',
    () =>
      new Proxy(
        {},
        {
          ownKeys() {
            throw new Error('boom');
          },
        },
      ),
  ],
  [
    'a Proxy that throws on every get',
    () =>
      new Proxy(
        { error: { message: 'x' } },
        {
          get() {
            throw new Error('boom');
          },
        },
      ),
  ],
  ['a cyclic object', cyclic],
  ['an object whose ten keys all point back at it', fanOut],
  ['an array of 200,000 empty objects', () => ({ error: Array.from({ length: 200_000 }, () => ({})) })],
];

/**
 * Classifies `input` three times and keeps the fastest time: a super-linear scan is slow every
 * time, while a garbage-collection pause or a busy neighbour on this shared machine slows one run.
 */
function timed(input: ProviderErrorInput): { ms: number; result: ReturnType<typeof classifyProviderError> } {
  let ms = Number.POSITIVE_INFINITY;
  let result = classifyProviderError(input);
  for (let run = 0; run < 3; run++) {
    const started = performance.now();
    result = classifyProviderError(input);
    ms = Math.min(ms, performance.now() - started);
  }
  return { ms, result };
}

describe('classifyProviderError on hostile bodies', () => {
  for (const [name, make] of HOSTILE_BODIES) {
    it(`${name}: not_rate_limit, no wait, under ${BOUND_MS} ms`, () => {
      // Prepare
      const body = make();
      // Act
      const { ms, result } = timed({ provider: 'openai', status: 500, headers: {}, body, now: 0 });
      // Assess
      assert.ok(ms < BOUND_MS, `took ${ms.toFixed(1)} ms`);
      assert.deepEqual(result, NO_THROTTLE);
    });
  }

  it('classifies every hostile body in every dialect at a 429 without throwing, within the bound', () => {
    // Prepare
    const bodies = HOSTILE_BODIES.map(([, make]) => make());
    // Act
    const results = bodies.flatMap((body) =>
      (['gemini', 'anthropic', 'bedrock'] as const).map((provider) => timed({ provider, status: 429, headers: {}, body, now: 0 })),
    );
    // Assess
    for (const { ms, result } of results) {
      assert.ok(ms < BOUND_MS, `took ${ms.toFixed(1)} ms`);
      assert.equal(result.retryAfterMs, null);
      assert.equal(result.resetAt, null);
    }
  });

  it('isRequestTooLarge never throws either', () => {
    // Prepare
    const bodies = HOSTILE_BODIES.map(([, make]) => make());
    // Act
    const verdicts = bodies.map((body) => isRequestTooLarge({ provider: 'openai', status: 429, body }));
    // Assess
    assert.ok(verdicts.every((v) => v === false));
  });

  it('a hostile input object (a throwing status or headers getter) gives not_rate_limit', () => {
    // Prepare
    const input = {
      provider: 'openai',
      get status(): number {
        throw new Error('boom');
      },
    } as unknown as ProviderErrorInput;
    // Act
    const result = classifyProviderError(input);
    // Assess
    assert.deepEqual(result, NO_THROTTLE);
  });
});

describe('hostile headers', () => {
  it('drops a 1 MB header value instead of reading a wait from it', () => {
    // Prepare
    const headers = { 'retry-after': '1'.repeat(MB), 'x-ratelimit-reset-requests': `${'1'.repeat(MB)}s` };
    // Act
    const { ms, result } = timed({ provider: 'openai', status: 429, headers, body: '', now: 0 });
    // Assess
    assert.ok(ms < BOUND_MS, `took ${ms.toFixed(1)} ms`);
    assert.deepEqual(result, { kind: 'rate_limit', retryAfterMs: null, resetAt: null });
  });

  it('survives headers with throwing getters, a throwing forEach, a throwing iterator and 100,000 entries', () => {
    // Prepare
    const getter = {
      'retry-after': '7',
      get date(): string {
        throw new Error('boom');
      },
    };
    const forEach = {
      forEach() {
        throw new Error('boom');
      },
    };
    const iterator = {
      *[Symbol.iterator]() {
        yield ['retry-after', '3'] as const;
        throw new Error('boom');
      },
    };
    const many = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`x-h${i}`, 'v']));
    // Act
    const fromGetter = normalizeHeaders(getter);
    const fromForEach = normalizeHeaders(forEach);
    const fromIterator = normalizeHeaders(iterator as Iterable<readonly [string, string]>);
    const fromMany = normalizeHeaders(many);
    const classified = classifyProviderError({ provider: 'openai', status: 429, headers: getter, body: '', now: 0 });
    // Assess
    assert.equal(fromGetter['retry-after'], '7');
    assert.deepEqual({ ...fromForEach }, {});
    assert.equal(fromIterator['retry-after'], '3');
    assert.ok(Object.keys(fromMany).length <= 256);
    assert.deepEqual(classified, { kind: 'rate_limit', retryAfterMs: 7_000, resetAt: null });
  });
});

describe('bounded building blocks', () => {
  it('tryParseJson still finds JSON behind a prefix of brackets, and gives up on an unbalanced flood', () => {
    // Prepare
    const prefixed = '[CloudCode] [stream] 429 {"error":{"code":429,"message":"Resource exhausted"}} trailing';
    // Act
    const found = tryParseJson(prefixed);
    const flood = tryParseJson(mb('{'));
    // Assess
    assert.deepEqual(found, { error: { code: 429, message: 'Resource exhausted' } });
    assert.equal(flood, undefined);
  });

  it('balancedEnd stops at its bound and at a nesting deeper than 64', () => {
    // Prepare
    const shallow = `{"a":[${'1,'.repeat(10)}1]}`;
    // Act
    const ends = [balancedEnd(shallow, 0, 1_000), balancedEnd(shallow, 0, 5), balancedEnd(`${'['.repeat(65)}${']'.repeat(65)}`, 0, 1_000)];
    // Assess
    assert.deepEqual(ends, [shallow.length - 1, -1, -1]);
  });

  it('caps the messages it keeps, so every regex runs over at most a few dozen KB', () => {
    // Prepare
    const body = { error: Array.from({ length: 500 }, (_, i) => ({ message: `${i} ${'x'.repeat(4_000)}` })) };
    // Act
    const facts = extractFacts(body, 429);
    // Assess
    assert.ok(facts.texts.join('').length <= MAX_TOTAL_TEXT);
  });
});
