/**
 * The batch clients' pure parts: splitting a batch into provider jobs by records and bytes, the JSONL
 * line each provider gets, and reading hostile result lines (not JSON, huge, unknown or repeated ids,
 * ids of another batch, missing fields, bytes that are not UTF-8, answers that are not text): each is
 * reported, none throws, none is matched to a record it does not belong to.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BEDROCK_ANTHROPIC_VERSION,
  BEDROCK_BATCH_LIMITS,
  createBedrockBatchProvider,
  parseBedrockResultLine,
} from '../../../../lib/lanes/batch/providers/bedrock.js';
import { BatchInputRejectedError } from '../../../../lib/lanes/batch/providers/errors.js';
import { createOpenAiBatchProvider, OPENAI_BATCH_LIMITS, parseOpenAiResultLine } from '../../../../lib/lanes/batch/providers/openai.js';
import { answerNotText, boundedLines, matchResults, type BatchRequest, type ProviderResultLine } from '../../../../lib/lanes/batch/providers/provider.js';
import { S3Client } from '@aws-sdk/client-s3';
import { getExtractionPrompt, getExtractionSchema } from '../../../../lib/contract/schemas/registry.js';

const SENTINEL = 'Rechnung-4711-SENTINEL';
const schema = getExtractionSchema('invoice@1');
const prompt = getExtractionPrompt('invoice@1', 'invoice-extract@1')!;
const CLAUDE = 'eu.anthropic.claude-sonnet-4-20250514-v1:0';

function request(recordId: string, model = 'gpt-4o-mini', text = `Invoice ${recordId}\n${SENTINEL}`): BatchRequest {
  return { recordId, messages: prompt.buildMessages(text), jsonSchemaName: schema.jsonSchemaName, jsonSchema: schema.jsonSchema, model };
}
const many = (n: number, model?: string) => Array.from({ length: n }, (_, i) => request(`rec-${i}`, model));

const openai = (limits = {}) => createOpenAiBatchProvider({ apiKey: 'sk-unused', baseUrl: 'http://127.0.0.1:9/v1', timeoutMs: 1000, limits });
const bedrock = (limits = {}) =>
  createBedrockBatchProvider({
    region: 'eu-central-1',
    bucket: 'rl-eu-docs',
    roleArn: 'arn:aws:iam::123456789012:role/batch',
    s3: new S3Client({ region: 'eu-central-1' }),
    timeoutMs: 1000,
    limits,
  });

async function collect(lines: AsyncIterable<ProviderResultLine>): Promise<ProviderResultLine[]> {
  const out: ProviderResultLine[] = [];
  for await (const line of lines) out.push(line);
  return out;
}
const assertRejected = (fn: () => unknown, code: string) =>
  assert.throws(fn, (error) => error instanceof BatchInputRejectedError && error.code === code && !error.message.includes(SENTINEL));

describe('documented limits', () => {
  it('are OpenAI 50,000 requests / 200 MB per file and Bedrock 100..50,000 records / 1 GB per file', () => {
    assert.deepEqual(
      { records: OPENAI_BATCH_LIMITS.maxRecordsPerJob, bytes: OPENAI_BATCH_LIMITS.maxBytesPerJob, min: OPENAI_BATCH_LIMITS.minRecordsPerJob },
      { records: 50_000, bytes: 200_000_000, min: 1 },
    );
    assert.deepEqual(
      { records: BEDROCK_BATCH_LIMITS.maxRecordsPerJob, bytes: BEDROCK_BATCH_LIMITS.maxBytesPerJob, min: BEDROCK_BATCH_LIMITS.minRecordsPerJob },
      { records: 50_000, bytes: 1_000_000_000, min: 100 },
    );
  });
});

describe('prepare: splitting', () => {
  it('cuts at the record limit, numbering jobs across the batch', () => {
    // Act
    const inputs = openai({ maxRecordsPerJob: 3 }).prepare(many(7), { batchId: 'b-1' });
    // Assess
    assert.deepEqual(
      inputs.map((i) => i.recordIds.length),
      [3, 3, 1],
    );
    assert.deepEqual(
      inputs.map((i) => i.index),
      [0, 1, 2],
    );
    assert.ok(inputs.every((i) => i.batchId === 'b-1' && i.provider === 'openai'));
    assert.deepEqual(
      inputs.flatMap((i) => i.recordIds),
      many(7).map((r) => r.recordId),
    );
  });

  it('cuts at the byte limit, newlines counted, never over it', () => {
    // Prepare: room for exactly two lines per file
    const [one] = openai().prepare([request('rec-0')]);
    const lineBytes = one!.bytes;
    // Act
    const inputs = openai({ maxBytesPerJob: lineBytes * 2 + 5 }).prepare(many(5));
    // Assess
    assert.deepEqual(
      inputs.map((i) => i.lines.length),
      [2, 2, 1],
    );
    for (const input of inputs) {
      assert.equal(
        input.bytes,
        input.lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0),
      );
      assert.ok(input.bytes <= lineBytes * 2 + 5);
    }
  });

  it('puts each model in its own jobs', () => {
    const inputs = openai().prepare([request('a', 'gpt-4o-mini'), request('b', 'gpt-4.1'), request('c', 'gpt-4o-mini')]);
    assert.deepEqual(
      inputs.map((i) => [i.model, i.recordIds]),
      [
        ['gpt-4o-mini', ['a', 'c']],
        ['gpt-4.1', ['b']],
      ],
    );
  });

  it('rejects a record larger than a whole file, a repeated or malformed id, and a bad batch id', () => {
    assertRejected(() => openai({ maxBytesPerJob: 100 }).prepare([request('a')]), 'record_too_large');
    assertRejected(() => openai().prepare([request('a'), request('a')]), 'duplicate_record_id');
    assertRejected(() => openai().prepare([request('a b')]), 'bad_record_id');
    assertRejected(() => openai().prepare([request('a')], { batchId: '../etc' }), 'bad_batch_id');
  });

  it('Bedrock: refuses a model with fewer records than a job needs', () => {
    assertRejected(() => bedrock().prepare(many(99, CLAUDE)), 'too_few_records');
    assert.equal(bedrock().prepare(many(100, CLAUDE)).length, 1);
  });

  it('Bedrock: moves records into a last job under the minimum', () => {
    // greedy would give 5, 5, 1; the minimum of 3 makes it 5, 3, 3
    const inputs = bedrock({ minRecordsPerJob: 3, maxRecordsPerJob: 5 }).prepare(many(11, CLAUDE));
    assert.deepEqual(
      inputs.map((i) => i.recordIds.length),
      [5, 3, 3],
    );
    assert.deepEqual(
      inputs.flatMap((i) => i.recordIds),
      many(11).map((r) => r.recordId),
    );
  });

  it('Bedrock: refuses a split it cannot make within the minimum, and a model that is not Claude', () => {
    assertRejected(() => bedrock({ minRecordsPerJob: 3, maxRecordsPerJob: 4 }).prepare(many(5, CLAUDE)), 'unsplittable');
    assertRejected(() => bedrock({ minRecordsPerJob: 1 }).prepare([request('a', 'amazon.nova-pro-v1:0')]), 'unsupported_model');
  });
});

describe('prepare: line shapes', () => {
  it('OpenAI: custom_id, POST /v1/chat/completions, and the body a single call sends', () => {
    const [input] = openai().prepare([request('r1'), { ...request('r2'), maxOutputTokens: 900 }]);
    const [first, second] = input!.lines.map((l) => JSON.parse(l));
    assert.deepEqual(Object.keys(first), ['custom_id', 'method', 'url', 'body']);
    assert.equal(first.custom_id, 'r1');
    assert.equal(first.method, 'POST');
    assert.equal(first.url, '/v1/chat/completions');
    assert.deepEqual(first.body, {
      model: 'gpt-4o-mini',
      messages: prompt.buildMessages(`Invoice r1\n${SENTINEL}`),
      response_format: { type: 'json_schema', json_schema: { name: schema.jsonSchemaName, schema: schema.jsonSchema, strict: true } },
    });
    assert.equal(second.body.max_completion_tokens, 900);
  });

  it("Bedrock: { recordId, modelInput } with Claude's Messages body and one forced tool", () => {
    const [input] = bedrock({ minRecordsPerJob: 1 }).prepare([request('r1', CLAUDE)]);
    const line = JSON.parse(input!.lines[0]!);
    const [system, user] = prompt.buildMessages(`Invoice r1\n${SENTINEL}`);
    assert.deepEqual(Object.keys(line), ['recordId', 'modelInput']);
    assert.equal(line.recordId, 'r1');
    assert.deepEqual(line.modelInput, {
      anthropic_version: BEDROCK_ANTHROPIC_VERSION,
      max_tokens: 4096,
      system: system!.content,
      messages: [{ role: 'user', content: [{ type: 'text', text: user!.content }] }],
      tools: [
        {
          name: schema.jsonSchemaName,
          description: `Record the extracted ${schema.jsonSchemaName} object. The input must follow the JSON schema exactly.`,
          input_schema: schema.jsonSchema,
        },
      ],
      tool_choice: { type: 'tool', name: schema.jsonSchemaName },
    });
  });
});

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield Buffer.from(part, 'utf8');
}
const file = (...parts: string[]) => [{ source: 'out.jsonl', open: async () => chunks(...parts) }];
const okLine = (id: unknown, content = '{"invoiceNumber":"INV-1"}') =>
  JSON.stringify({
    id: 'batch_req_1',
    custom_id: id,
    response: { status_code: 200, request_id: 'r', body: { choices: [{ message: { content } }], usage: { prompt_tokens: 120, completion_tokens: 30 } } },
    error: null,
  });

describe('reading result lines: hostile input is reported, never thrown, never matched', () => {
  it('reads an OpenAI output file split anywhere, with usage', async () => {
    const text = `${okLine('a')}\n${okLine('b')}\n`;
    const lines = await collect(matchResults(['a', 'b'], file(text.slice(0, 17), text.slice(17, 250), text.slice(250)), 4096, parseOpenAiResultLine));
    assert.deepEqual(lines, [
      { recordId: 'a', ok: true, content: '{"invoiceNumber":"INV-1"}', usage: { inputTokens: 120, outputTokens: 30 } },
      { recordId: 'b', ok: true, content: '{"invoiceNumber":"INV-1"}', usage: { inputTokens: 120, outputTokens: 30 } },
    ]);
  });

  it('reports lines that are not JSON, too large, without an id, with an unknown or a repeated id; then the missing records', async () => {
    // Prepare
    const huge = okLine('b', 'x'.repeat(10_000));
    const text = [
      `not json ${SENTINEL}`,
      huge,
      '[1,2,3]',
      JSON.stringify({ response: { status_code: 200 } }),
      okLine(42),
      okLine('z-not-sent'),
      okLine('a'),
      okLine('a'),
      JSON.stringify({ custom_id: 'c', response: { status_code: 200, body: { choices: [] } }, error: null }),
      JSON.stringify({ custom_id: 'd', response: null, error: { code: 'batch_expired', message: SENTINEL } }),
      JSON.stringify({ custom_id: 'e', response: { status_code: 500, body: { error: { type: 'server_error', message: SENTINEL } } }, error: null }),
      '',
    ].join('\n');
    // Act
    const lines = await collect(matchResults(['a', 'b', 'c', 'd', 'e', 'f'], file(text), 4096, parseOpenAiResultLine));
    // Assess
    const summary = lines.map((l) => [l.recordId, l.ok ? 'ok' : l.code]);
    assert.deepEqual(summary, [
      [null, 'not_json'],
      [null, 'line_too_large'],
      [null, 'not_json'],
      [null, 'missing_id'],
      [null, 'missing_id'],
      [null, 'unknown_id'],
      ['a', 'ok'],
      [null, 'duplicate_id'],
      ['c', 'bad_output'],
      ['d', 'batch_expired'],
      ['e', 'server_error'],
      ['b', 'no_result'],
      ['f', 'no_result'],
    ]);
    for (const line of lines) if (!line.ok) assert.ok(!line.message.includes(SENTINEL), line.message);
    assert.deepEqual(
      lines.filter((l) => l.recordId === null).map((l) => (l.recordId === null ? l.line : 0)),
      [1, 2, 3, 4, 5, 6, 8],
    );
  });

  it('never buffers a huge line: it is skipped as it streams by', async () => {
    const pieces = Array.from({ length: 64 }, () => 'y'.repeat(1024));
    const lines = [];
    for await (const line of boundedLines(chunks(...pieces, '\n{"ok":1}\n'), 4096)) lines.push(line);
    assert.deepEqual(lines, [
      { number: 1, text: null, bytes: 65_536 },
      { number: 2, text: '{"ok":1}', bytes: 8 },
    ]);
  });

  it('stops after too many unmatched lines', async () => {
    const text = Array.from({ length: 1500 }, (_, i) => okLine(`x${i}`)).join('\n');
    const lines = await collect(matchResults(['a'], file(text), 4096, parseOpenAiResultLine));
    assert.equal(lines.length, 1001);
    const last = lines.at(-1);
    assert.ok(last && !last.ok && last.recordId === null);
    assert.equal(last.code, 'too_many_unmatched');
  });

  it("reads Bedrock lines: the forced tool's input, a record error, text, and a missing modelOutput", async () => {
    const modelInput = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, messages: [{ role: 'user', content: SENTINEL }] };
    const text = [
      JSON.stringify({
        recordId: 'a',
        modelInput,
        modelOutput: {
          type: 'message',
          content: [{ type: 'tool_use', id: 't', name: 'invoice_v1', input: { invoiceNumber: 'INV-7' } }],
          usage: { input_tokens: 100, cache_read_input_tokens: 20, output_tokens: 40 },
        },
      }),
      JSON.stringify({ recordId: 'b', modelInput, error: { errorCode: 400, errorMessage: `bad request ${SENTINEL}` } }),
      JSON.stringify({ recordId: 'c', modelInput, modelOutput: { content: [{ type: 'text', text: ' {"x":1} ' }], usage: {} } }),
      JSON.stringify({ recordId: 'd', modelInput }),
      JSON.stringify({ recordId: 'e', modelInput, modelOutput: { content: 'not an array' } }),
    ].join('\n');
    const lines = await collect(matchResults(['a', 'b', 'c', 'd', 'e'], file(text), 1 << 20, parseBedrockResultLine));
    assert.deepEqual(lines, [
      { recordId: 'a', ok: true, content: '{"invoiceNumber":"INV-7"}', usage: { inputTokens: 120, outputTokens: 40 } },
      { recordId: 'b', ok: false, code: '400', message: 'the model invocation failed for this record' },
      { recordId: 'c', ok: true, content: '{"x":1}', usage: { inputTokens: 0, outputTokens: 0 } },
      { recordId: 'd', ok: false, code: 'bad_output', message: 'the line has no model output' },
      { recordId: 'e', ok: false, code: 'bad_output', message: 'the line has no model output' },
    ]);
  });
});

describe('reading result lines: strict text, and the batch a line belongs to', () => {
  async function* bytes(...parts: Buffer[]): AsyncGenerator<Uint8Array> {
    for (const part of parts) yield part;
  }

  it('decodes each line strictly: a line whose bytes are not UTF-8 is marked, never given replacement characters', async () => {
    // Prepare: a line with a lone continuation byte between two good lines
    const good = Buffer.from('{"ok":1}\n', 'utf8');
    const bad = Buffer.concat([Buffer.from('{"ok":"a'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]);
    // Act
    const lines = [];
    for await (const line of boundedLines(bytes(good, bad, good), 4096)) lines.push(line);
    // Assess
    assert.deepEqual(
      lines.map((l) => [l.number, l.notText === true]),
      [
        [1, false],
        [2, true],
        [3, false],
      ],
    );
  });

  it('a matched line that is not UTF-8, or whose answer decodes to a lone surrogate or holds NUL, is not_text; its answer is not given', async () => {
    // Prepare
    const spoiled = Buffer.from(okLine('b', '{"invoiceNumber":"INV-@@"}'), 'utf8');
    const at = spoiled.indexOf('@@');
    const notUtf8 = Buffer.concat([spoiled.subarray(0, at), Buffer.from([0xff, 0xfe]), spoiled.subarray(at + 2)]);
    const text = (s: string) => Buffer.from(`${s}\n`, 'utf8');
    // Act
    const lines = await collect(
      matchResults(
        ['a', 'b', 'c', 'd', 'e'],
        [
          {
            source: 'out.jsonl',
            open: async () =>
              bytes(
                text(okLine('a')),
                notUtf8,
                Buffer.from('\n'),
                text(okLine('c', '{"invoiceNumber":"INV-\\ud800"}')),
                text(okLine('d', '{"invoiceNumber":"INV-\\u0000"}')),
                text(okLine('e', '{"invoiceNumber":"INV-\u00e9"}')),
              ),
          },
        ],
        4096,
        parseOpenAiResultLine,
      ),
    );
    // Assess
    assert.deepEqual(
      lines.map((l) => [l.recordId, l.ok ? 'ok' : l.code]),
      [
        ['a', 'ok'],
        ['b', 'not_text'],
        ['c', 'not_text'],
        ['d', 'not_text'],
        ['e', 'ok'],
      ],
    );
    for (const line of lines) if (line.ok) assert.ok(!line.content.includes('\ufffd'));
  });

  it('answerNotText: lone surrogates and binary, in the answer or in the strings its JSON holds', () => {
    assert.equal(answerNotText('{"a":"Grüße, 東京 🙂"}'), false);
    assert.equal(answerNotText('not json at all'), false, 'left to validation');
    assert.equal(answerNotText('{"a":"\ud800"}'), true);
    assert.equal(answerNotText('{"a":"\\udc00x"}'), true);
    assert.equal(answerNotText('{"a":["ok",{"b":"\\u0000"}]}'), true);
    assert.equal(answerNotText('{"\\ud83d":"key"}'), true);
    assert.equal(answerNotText('{"a":"\\ud83d\\ude42"}'), false, 'a pair is text');
  });

  it("with the batch's record prefix, a line of another batch is refused as other_batch, even with an item id this job sent", async () => {
    // Prepare: this batch is b-x.; a line of b-y. and one without any prefix name the same item
    const text = [okLine('b-y.r0000000000'), okLine('r0000000000'), okLine('b-x.r0000000000')].join('\n');
    // Act
    const lines = await collect(matchResults(['b-x.r0000000000'], file(text), 4096, parseOpenAiResultLine, 'b-x.'));
    // Assess
    assert.deepEqual(
      lines.map((l) => [l.recordId, l.ok ? 'ok' : l.code]),
      [
        [null, 'other_batch'],
        [null, 'other_batch'],
        ['b-x.r0000000000', 'ok'],
      ],
    );
  });

  it('a record id longer than the provider takes is refused when the batch is split', () => {
    assert.throws(
      () => bedrock({ minRecordsPerJob: 1 }).prepare([request('b-1.r0000000000', CLAUDE)]),
      (e: unknown) => {
        return e instanceof BatchInputRejectedError && e.code === 'bad_record_id';
      },
    );
    assert.equal(openai().prepare([request(`b-${'1'.repeat(36)}.r0000000000`)]).length, 1);
    assert.throws(() => openai().prepare([request(`b-${'1'.repeat(60)}.r0000000000`)]), BatchInputRejectedError);
  });
});
