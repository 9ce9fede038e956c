/**
 * A cancelled job (`ratelane cancel`: its `#cancelled` marker, `lib/store/cancellation.ts`) makes no further
 * model call and is never committed: the marker is read at its receive (beside its document, before
 * admission, with its source's tombstone), again before a model call when time has passed since (an
 * admission wait, a repair), and the commit is one transaction with the marker's absence, so a cancel that
 * lands while the model answers still wins. The job is then settled: a `rejected` ledger entry with reason
 * `cancelled` (who and when in its details), counted `Cancelled`, and the message acknowledged. Its document
 * stays (the lane's retention removes it).
 */
import type { KeyGrant } from '../admission/keys/key-pool.js';
import { errorName } from '../platform/errors.js';
import { count, ledgerBase, log, runLogFields, type JobRun, type ReceiveGuards } from './context.js';
import type { RejectedOutcome } from './outcome.js';
import { claimed } from './verify.js';

/**
 * The marker is read eventually consistent before admission and a call (half the cost of a strongly consistent
 * read, on every receive): a cancel of the last moment is still stopped by the commit's own condition.
 */
const EVENTUALLY = { consistent: false } as const;

/** How long a read of the marker holds: past this, a model call reads it again first (ms). */
const CANCEL_RECHECK_MS = 1_000;

/** Where a cancelled job was stopped. */
type StoppedAt = 'receive' | 'call' | 'commit';

const STOPPED: Record<StoppedAt, string> = {
  receive: 'at its receive: no model call',
  call: 'before a model call: no further call',
  commit: 'at its commit: the answer was not committed',
};

/** Whether the job is cancelled, from its marker as read at its receive (`Cancellations.atReceive`, beside the document). */
export function startCancelCheck(run: JobRun, guards: ReceiveGuards): Promise<boolean> {
  const checkedAt = run.deps.now().getTime();
  const checking = guards.then(({ marker }) => {
    if (!marker) run.cancelCheckedAt = checkedAt;
    return marker !== undefined;
  });
  checking.catch(() => undefined);
  return checking;
}

/**
 * Before a model call: the outcome when the job was cancelled since its marker was last read (the grant
 * given back unused), else `undefined`. Reads the marker only when {@link CANCEL_RECHECK_MS} has passed; a
 * read that fails lets the call go on (logged): the commit's own condition still stops a cancelled job.
 */
export async function cancelledBeforeCall(run: JobRun, grant: KeyGrant): Promise<RejectedOutcome | undefined> {
  const now = run.deps.now().getTime();
  if (run.cancelCheckedAt !== undefined && now - run.cancelCheckedAt < CANCEL_RECHECK_MS) return undefined;
  let marker: Awaited<ReturnType<typeof run.deps.cancellations.marker>>;
  try {
    marker = await run.deps.cancellations.marker(run.job.jobId, EVENTUALLY);
  } catch (error) {
    log(run.deps, 'warn', 'cancel marker not read before the call: the commit checks it', { ...runLogFields(run), error: errorName(error) });
    return undefined;
  }
  if (!marker) {
    run.cancelCheckedAt = now;
    return undefined;
  }
  await grant.settle({ inputTokens: 0, outputTokens: 0 });
  return settleCancelled(run, 'call');
}

/** Settles a cancelled job: its `rejected` entry (reason `cancelled`), counted `Cancelled`; terminal (the lane acknowledges it). */
export async function settleCancelled(run: JobRun, at: StoppedAt): Promise<RejectedOutcome> {
  const { deps, job } = run;
  // A message naming another job's id is rejected under its message id: nothing of that job is touched.
  const reused = await claimed(run);
  if (reused) return reused;
  const marker = await deps.cancellations.marker(job.jobId);
  const who = marker ? `cancelled by ${marker.cancelledBy} at ${marker.cancelledAt}; ` : '';
  await deps.ledger.record({ ...ledgerBase(run), kind: 'rejected', reason: 'cancelled', details: `${who}stopped ${STOPPED[at]}` });
  count(deps, 'Cancelled');
  log(deps, 'info', 'cancelled job stopped', { ...runLogFields(run), outcome: 'rejected', reason: 'cancelled', detail: STOPPED[at] });
  return { type: 'rejected', reason: 'cancelled' };
}
