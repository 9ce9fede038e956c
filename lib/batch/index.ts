/**
 * The batch lane: submit a set of documents through a provider's batch API with a manifest
 * (`submit.ts`), reconcile what comes back through the same validation and commit-once as the other
 * lanes (`reconcile.ts`), the provider clients behind one interface (`provider-batch.ts`).
 */
import { reconcileBatch, type ReconcileDeps, type ReconcileReport } from './reconcile.js';
import { submitPending, type SubmitBatchDeps } from './submit.js';

export * from './errors.js';
export { createOpenAiBatchProvider } from './openai-batch.js';
export { createBedrockBatchProvider } from './bedrock-batch.js';
export type { BatchProvider, BatchRequest, ProviderJobHandle, ProviderJobStatus, ProviderResultLine } from './provider-batch.js';
export { handleOf, jobOfItem, reconcileBatch, type ReconcileDeps, type ReconcileReport } from './reconcile.js';
export { requestFor, submitBatch, submitPending, type SubmitBatchDeps, type SubmitBatchReport } from './submit.js';

/**
 * One pass of the reconciler over a batch (what the lane's scheduled function and the local loop run):
 * parts waiting after a submission throttle are submitted when due, then every open job is polled and
 * every ended one read.
 */
export async function batchPass(batchId: string, deps: SubmitBatchDeps & ReconcileDeps): Promise<ReconcileReport> {
  await submitPending(batchId, deps);
  return reconcileBatch(batchId, deps);
}
