/**
 * Shared by the fake provider tests (the `*.test.ts` here and below): the model, system prompt and JSON
 * schema of an extraction request, a stub extractor (the document's first line is the invoice
 * number), a call to `/chat/completions` as the OpenAI SDK makes it, the prompt tokens the provider
 * counts for a document, OpenAI's error body, and starting providers that {@link stopStarted} stops.
 */
import { startFakeProvider, type FakeProvider, type FakeProviderOptions } from '../../../workbench/fake-provider/index.js';

export const MODEL = 'gpt-4o-mini';
const SYSTEM_PROMPT = 'Extract the invoice fields as JSON.';
export const SCHEMA = {
  type: 'object',
  properties: { invoiceNumber: { type: 'string' }, total: { type: 'number' }, currency: { type: 'string' } },
  required: ['invoiceNumber', 'total', 'currency'],
  additionalProperties: false,
};

/** Stub extractor: the first line of the document is the invoice number. */
function extractStub(text: string): unknown {
  return { invoiceNumber: text.split('\n')[0] ?? '', total: 12.5, currency: 'EUR' };
}

function userMessage(documentText: string): string {
  return `Read this invoice.\n<document>\n${documentText}\n</document>`;
}

/** The prompt tokens the fake provider counts for a request about this document. */
export function promptTokensFor(documentText: string): number {
  return Math.ceil((SYSTEM_PROMPT.length + userMessage(documentText).length) / 4);
}

/** What {@link call} sends: the key, the document, a completion-token cap, an abort signal, or a whole other body. */
export interface CallOptions {
  key?: string;
  documentText?: string;
  maxCompletionTokens?: number;
  signal?: AbortSignal;
  body?: unknown;
}

/** A structured-output request to the provider (key `sk-test-a`, an invoice document, unless given). */
export async function call(provider: FakeProvider, options: CallOptions = {}): Promise<Response> {
  const documentText = options.documentText ?? 'INV-1\nTotal 12.50 EUR';
  const body = options.body ?? {
    model: MODEL,
    messages: [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: userMessage(documentText) },
    ],
    response_format: { type: 'json_schema', json_schema: { name: 'invoice_v1', schema: SCHEMA, strict: true } },
    ...(options.maxCompletionTokens === undefined ? {} : { max_completion_tokens: options.maxCompletionTokens }),
  };
  return fetch(`${provider.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.key ?? 'sk-test-a'}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: options.signal,
  });
}

/** OpenAI's error body. */
export type ErrorJson = { error: { message: string; type: string; param: string | null; code: string | null } };

const started: FakeProvider[] = [];
/** Starts a fake provider (key `sk-test-a`, the stub extractor, no latency), stopped by {@link stopStarted}. */
export async function start(options: Partial<FakeProviderOptions> = {}): Promise<FakeProvider> {
  const provider = await startFakeProvider({ keys: [{ key: 'sk-test-a' }], extract: extractStub, latencyMs: 0, ...options });
  started.push(provider);
  return provider;
}

/** Stops every provider a test started: call it from each file's `afterEach`. */
export async function stopStarted(): Promise<void> {
  await Promise.all(started.splice(0).map((provider) => provider.stop()));
}
