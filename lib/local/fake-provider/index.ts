/** The fake model provider: an OpenAI-compatible Chat Completions (and Batch API) server on loopback. */
export { startFakeProvider } from './server.js';
export { FakeProviderConfigError } from './faults.js';
export { formatOpenAiDuration } from './duration.js';
export { DOCUMENT_END, DOCUMENT_START } from './request.js';
export type { OpenAiErrorBody, ChatCompletionBody } from './responses.js';
export type { BatchBody, BatchErrorEntry, BatchOutputLine, BatchStatus, FileObjectBody } from './batch-wire.js';
export type * from './types.js';
