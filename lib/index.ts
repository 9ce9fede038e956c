/**
 * ratelane's package entry: the pieces a service team or operator uses from code.
 */
export { classifyProviderError, isRequestTooLarge, PROVIDER_NAMES, type ProviderErrorInput, type ProviderName } from './providers/classify/classify.js';
export type { ProviderErrorClassification, ThrottleKind } from './policy/classification.js';
export { submitDocuments, SubmissionRejectedError, type DocumentInput, type SubmitResult } from './intake/producer.js';
export { resolveLanes, DEFAULT_LANES, type LaneConfig, type LaneSet } from './config/lanes.js';
export { JobSchema, parseJob, PRIORITIES, type Job, type Priority } from './contract/job.js';
export { CONFIG_FILE_NAME, CONFIG_FILE_VARIABLE, configuredLanes, type ConfiguredLanes, readLaneConfigFile } from './config/file.js';
