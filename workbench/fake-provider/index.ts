/** The fake model provider: an OpenAI-compatible Chat Completions (and Batch API) server on loopback. */
export { startFakeProvider } from './server.js';
export { FakeProviderConfigError } from './faults.js';
export { formatOpenAiDuration } from './duration.js';
export { DOCUMENT_END, DOCUMENT_START, REPAIR_MARKER } from './request.js';
export { extractForSchema, fakeExtractorSchemaNames, UnknownFakeSchemaError } from './extractors/extractors.js';
export {
  applyModelErrors,
  DEFAULT_MODEL_ERROR_RATES,
  DEFAULT_MODEL_ERROR_SEED,
  identifyPrompt,
  modelErrorDraw,
  runFakeModel,
  type ModelErrorInput,
  type ModelErrorResult,
  type ModelRequest,
} from './extractors/error-model.js';
export { detectHardShapes, HARD_SHAPE_NAMES, type HardShapeName, type ModelErrorRates } from './extractors/hard-shapes.js';
export type { OpenAiErrorBody, ChatCompletionBody } from './responses.js';
export type { BatchBody, BatchErrorEntry, BatchOutputLine, BatchStatus, FileObjectBody } from './batch/wire.js';
export type * from './types.js';
