/**
 * The local fake provider's seeded model errors against the real server: a request built by
 * `invoice-extract@2` for a document that prints no currency gets a wrong currency, one built by
 * `invoice-extract@1` (rate 0 here) the right one, on the chat route, the Gemini route and the Batch API,
 * each counted in stats(); without `modelErrors` both prompts get the extractor's answer.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { invoiceExtractV1, invoiceExtractV2 } from '../../../lib/contract/schemas/invoice-prompts.js';
import { INVOICE_V1_JSON_SCHEMA_NAME, invoiceV1JsonSchema } from '../../../lib/contract/schemas/invoice-v1.js';
import type { ExtractionPrompt } from '../../../lib/contract/schemas/prompt-kit.js';
import { extractForSchema, type ChatCompletionBody, type FakeProvider, type ModelErrorRates } from '../../../workbench/fake-provider/index.js';
import { createGeminiAdapter } from '../../../lib/providers/gemini.js';
import { NO_CURRENCY_INVOICE } from '../../helpers/sample-texts.js';
import { MODEL, start, stopStarted } from './support.js';

afterEach(stopStarted);

/** Only the currency guess errs: always for the candidate prompt, never for the released one. */
const RATES: ModelErrorRates = { 'invoice-extract@1': { noCurrencySymbol: 0 }, 'invoice-extract@2': { noCurrencySymbol: 1 } };

const extract = (text: string, schemaName: string) => extractForSchema(text, schemaName);

function chatBody(prompt: ExtractionPrompt): Record<string, unknown> {
  return {
    model: MODEL,
    messages: prompt.buildMessages(NO_CURRENCY_INVOICE),
    response_format: { type: 'json_schema', json_schema: { name: INVOICE_V1_JSON_SCHEMA_NAME, schema: invoiceV1JsonSchema, strict: true } },
  };
}

async function chatCurrency(provider: FakeProvider, prompt: ExtractionPrompt): Promise<string> {
  const response = await fetch(`${provider.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test-a', 'content-type': 'application/json' },
    body: JSON.stringify(chatBody(prompt)),
  });
  assert.equal(response.status, 200);
  const body = (await response.json()) as ChatCompletionBody;
  return (JSON.parse(body.choices[0]?.message.content ?? '') as { currency: string }).currency;
}

/** The same request through the project's Gemini adapter (system instruction, contents, a schema without a name). */
async function geminiCurrency(provider: FakeProvider, prompt: ExtractionPrompt): Promise<string> {
  const adapter = createGeminiAdapter({ model: 'gemini-2.5-flash', baseUrl: `http://127.0.0.1:${provider.port}`, timeoutMs: 5_000 });
  const response = await adapter.extract({
    messages: prompt.buildMessages(NO_CURRENCY_INVOICE),
    jsonSchemaName: INVOICE_V1_JSON_SCHEMA_NAME,
    jsonSchema: invoiceV1JsonSchema,
    apiKey: 'sk-test-a',
  });
  return (JSON.parse(response.content) as { currency: string }).currency;
}

describe('fake provider: seeded model errors by prompt version', () => {
  it('answers invoice-extract@2 with a wrong currency and invoice-extract@1 with the right one, counted in stats', async () => {
    // Prepare
    const provider = await start({ extract, modelErrors: { rates: RATES, seed: 5 } });
    // Act
    const released = await chatCurrency(provider, invoiceExtractV1);
    const candidate = await chatCurrency(provider, invoiceExtractV2);
    const geminiReleased = await geminiCurrency(provider, invoiceExtractV1);
    const geminiCandidate = await geminiCurrency(provider, invoiceExtractV2);
    // Assess
    assert.deepEqual([released, candidate], ['EUR', 'USD']);
    assert.deepEqual([geminiReleased, geminiCandidate], ['EUR', 'USD']);
    const stats = provider.stats();
    assert.equal(stats.modelErrors.noCurrencySymbol, 2);
    assert.equal(stats.perKey['sk-test-a']?.modelErrors.noCurrencySymbol, 2);
    assert.equal(stats.modelErrors.ambiguousDate + stats.modelErrors.decimalComma + stats.modelErrors.missingField + stats.modelErrors.longInput, 0);
  });

  it('changes nothing without modelErrors', async () => {
    // Prepare
    const provider = await start({ extract });
    // Act
    const currencies = [await chatCurrency(provider, invoiceExtractV1), await chatCurrency(provider, invoiceExtractV2)];
    const gemini = await geminiCurrency(provider, invoiceExtractV2);
    // Assess
    assert.deepEqual(currencies, ['EUR', 'EUR']);
    assert.equal(gemini, 'EUR');
    assert.ok(Object.values(provider.stats().modelErrors).every((count) => count === 0));
  });

  it('makes Batch API lines err the same way', async () => {
    // Prepare: a hand-moved clock, one line per prompt
    let t = Date.UTC(2026, 0, 5, 9);
    const batch = { validationMs: 20, completionMs: 100, finalizingMs: 40, cancellingMs: 20, windowMs: 5_000 };
    const provider = await start({ extract, modelErrors: { rates: RATES }, now: () => t, batch });
    const client = new OpenAI({ apiKey: 'sk-test-a', baseURL: provider.baseUrl, maxRetries: 0 });
    const lines = [invoiceExtractV1, invoiceExtractV2].map((prompt) => ({
      custom_id: prompt.promptVersion,
      method: 'POST',
      url: '/v1/chat/completions',
      body: chatBody(prompt),
    }));
    const file = await client.files.create({
      file: await toFile(Buffer.from(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`), 'in.jsonl'),
      purpose: 'batch',
    });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    // Act
    let done = await client.batches.retrieve(created.id);
    for (let step = 0; step < 100 && done.status !== 'completed'; step += 1) {
      t += 10;
      done = await client.batches.retrieve(created.id);
    }
    const output = await (await client.files.content(done.output_file_id ?? '')).text();
    // Assess
    const currencies = Object.fromEntries(
      output
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { custom_id: string; response: { body: ChatCompletionBody } })
        .map((l) => [l.custom_id, (JSON.parse(l.response.body.choices[0]?.message.content ?? '') as { currency: string }).currency]),
    );
    assert.equal(done.status, 'completed');
    assert.deepEqual(currencies, { 'invoice-extract@1': 'EUR', 'invoice-extract@2': 'USD' });
    assert.equal(provider.stats().batches.modelErrors.noCurrencySymbol, 1);
  });
});
