/**
 * Erased sources' records at the batch provider. Erasing a source (`lib/erasure/erase.ts`) settles its
 * batch items and marks them on their batch's header (`erasedItems`), but the provider may still keep
 * their text and answers: OpenAI keeps a batch's input, output and error files itself, and a Bedrock job
 * still running writes its output after the erasure. The lane's reconciler, which holds the provider's
 * credentials, removes them once the marked items' provider jobs have ended (a running job's files are
 * never touched: the batch's other items are still being answered from them), then takes the marks off.
 */
import { recordIdOf, type BatchHeader, type ProviderJobRef } from '../../store/manifest-model.js';
import { ENDED, handleOf, type ReconcileDeps } from './reconcile.js';
import type { ProviderJobHandle, ProviderJobState, ProviderRecordsErased } from './providers/provider.js';

/** Batch states with no part left to record or run. */
const FINAL = new Set<BatchHeader['state']>(['done', 'cancelled']);

/** What removing a batch's erased records did: `waiting` while a job holding one is still running (or not yet recorded). */
export type ErasedRecordsPass =
  | { batchId: string; state: 'waiting'; items: number }
  | ({ batchId: string; state: 'erased'; items: number } & ProviderRecordsErased);

/**
 * Removes the records of `header`'s erased items from the provider's files once every job holding one has
 * ended, then takes those items off the mark. Nothing to do (`undefined`) when none is marked.
 *
 * @throws what {@link BatchProvider.eraseRecords} and the manifest throw: the marks stay, the next sweep tries again
 */
export async function eraseProviderRecords(
  header: BatchHeader,
  deps: Pick<ReconcileDeps, 'manifest' | 'provider' | 'lane'>,
): Promise<ErasedRecordsPass | undefined> {
  const marked = header.erasedItems ?? [];
  if (marked.length === 0) return undefined;
  const holds = (part: ProviderJobRef, itemId: string) => itemId >= part.items.first && itemId <= part.items.last;
  const parts = header.providerJobs.filter((part) => marked.some((itemId) => holds(part, itemId)));
  // An item no recorded part holds was never sent, once the batch is final; before that its part may still come.
  const unrecorded = marked.some((itemId) => !header.providerJobs.some((part) => holds(part, itemId)));
  if (parts.some((part) => !ENDED.has(part.state as ProviderJobState)) || (unrecorded && !FINAL.has(header.state))) {
    return { batchId: header.batchId, state: 'waiting', items: marked.length };
  }
  // A part cancelled before it was submitted has no provider job: the provider has nothing of it.
  const handles = parts.map((part) => handleOf(header, part, deps.lane.provider.model)).filter((h): h is ProviderJobHandle => h !== undefined);
  const erased = await deps.provider.eraseRecords(handles, new Set(marked.map((itemId) => recordIdOf(header, itemId))));
  await deps.manifest.clearErased(header.batchId, marked);
  return { batchId: header.batchId, state: 'erased', items: marked.length, ...erased };
}
