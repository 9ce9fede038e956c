/**
 * The batch lane: submit a set of documents through a provider's batch API with a manifest
 * (`submit.ts`), reconcile what comes back through the same validation and commit-once as the other
 * lanes (`reconcile.ts`), the provider clients behind one interface (`providers/`); and operating
 * it: a batch's status and outcome (`status.ts`), handing its unresolved items to the queue lane
 * (`redrive.ts`), cancelling it (`cancel.ts`). This module is one pass over a batch, which the lane's
 * scheduled reconciler (`sweep.ts`), the CLI and the local stack run.
 */
import { reconcileBatch, type ReconcileDeps, type ReconcileReport } from './reconcile.js';
import { submitPending, type SubmitBatchDeps } from './submit.js';

/**
 * One pass of the reconciler over a batch (what the lane's scheduled function and the local loop run):
 * parts waiting after a submission throttle are submitted when due, then every open job is polled and
 * every ended one read.
 */
export async function batchPass(batchId: string, deps: SubmitBatchDeps & ReconcileDeps): Promise<ReconcileReport> {
  // A batch being cancelled submits nothing more: its waiting parts are cancelled by the reconcile.
  const header = await deps.manifest.header(batchId);
  if (header?.state !== 'cancelling' && header?.state !== 'cancelled') await submitPending(batchId, deps);
  return reconcileBatch(batchId, deps);
}
