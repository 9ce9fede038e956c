/**
 * The fake model provider: an OpenAI-compatible Chat Completions (and Batch API) server on loopback that
 * also speaks the Gemini API, with per-owner budgets, seeded faults and a rule-based "model". What its
 * users outside this folder take: the server, its options and counters, the extractor by schema, and
 * the wire shapes a test reads.
 */
export { extractForSchema } from './extractors/extractors.js';
export type { ModelErrorRates } from './extractors/hard-shapes.js';
export type { BatchOutputLine } from './batch/wire.js';
export { startFakeProvider } from './server.js';
export type { FakeProvider, FakeProviderBatchOptions, FakeProviderOptions } from './types.js';
export { formatOpenAiDuration, type ChatCompletionBody } from './wire/openai.js';
