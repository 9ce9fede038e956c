/**
 * `ratelane/client`: what a service team's code uses to hand documents to a lane and get results back.
 *
 * ```ts
 * const client = new RatelaneClient({ lanes: [{ name: 'eu', region: 'eu-central-1' }], account: '123456789012' });
 * const { results: [sent] } = await client.submit({ region: 'eu', path: 'invoice.txt' });
 * const settled = await client.wait(sent.jobId, { timeoutMs: 120_000 });
 * if (settled.state === 'committed') use(settled.result);
 * client.close();
 * ```
 */
export {
  type CancelResult,
  type ClientErrorCode,
  RatelaneClient,
  RatelaneClientError,
  type RatelaneClientOptions,
  type SettledStatus,
  type WaitOptions,
} from './client/client.js';
export { type DocumentInput, SubmissionRejectedError, type SubmitProgress, type SubmitResult, type SubmitItemResult } from './intake/producer.js';
export type { JobStatusView } from './store/job-status.js';
export { PRIORITIES, type Priority } from './contract/job.js';
export type { BatchFilesErased } from './lanes/batch/providers/bedrock-files.js';
export { type ErasedBatchItem, type ErasedJob, ErasureError, type ErasureReceipt } from './erasure/erase.js';
export type { Tombstone } from './store/erasure.js';
export type { CancelMarker, CancelOutcome } from './store/cancellation.js';
export type { ServiceEndpoints } from './platform/clients.js';
export { type LaneConfig, LaneConfigError, type LaneInput, resolveLane } from './config/lanes.js';
export { configuredLanes, readLaneConfigFile } from './config/file.js';
