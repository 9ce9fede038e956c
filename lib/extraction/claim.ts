/**
 * The pipeline's claim step: one model call per idempotency key at a time, in the queue and the live
 * lane alike. Before a job's first model call the run claims the job's idempotency key for as long as
 * its record may take (`lib/store/claims.ts`: a conditional write, asked beside the document read so
 * it adds no round trip of its own); while another delivery or request holds the key, this copy makes
 * no call: it is deferred until the holder's claim ends at the latest (`in_progress`; the holder's job
 * is kept on the run as `keyHeldBy`), and a key whose result is committed makes the copy a duplicate.
 * When the run ends, the key is marked completed (by the commit's own transaction, or after a duplicate
 * found at the commit) or given back (anything else: the next copy may claim it). A holder that crashed
 * is taken over once its hold expires. Commit-once stays the last word.
 */
import type { Update } from '@aws-sdk/client-dynamodb';
import { MAX_SETTLE_MARGIN_MS } from './budget.js';
import { count, log, runLogFields, type JobRun, type Next } from './context.js';
import type { ExtractionOutcome } from './outcome.js';
import { decideFor, resolveAction, settleFailure, suppressDuplicate } from './settle.js';
import { errorName } from '../platform/errors.js';

/**
 * How long the run may hold its key (ms): until the record's work must end, plus the settle margin
 * (the commit after the last call); without a deadline, the provider timeout for the call and each
 * repair, plus the margin.
 */
function holdMs(run: JobRun): number {
  const { deps, delivery } = run;
  const now = deps.now().getTime();
  const calls = 1 + (deps.maxRepairAttempts ?? 1);
  const deadlineAt = delivery.deadlineAt;
  const workEnds = deadlineAt !== undefined && Number.isFinite(deadlineAt) ? deadlineAt : now + calls * deps.lane.provider.timeoutMs;
  return Math.max(1_000, workEnds - now + MAX_SETTLE_MARGIN_MS);
}

/** Asks for the run's key claim without waiting for the answer ({@link claimKey} awaits it). */
export function startKeyClaim(run: JobRun): void {
  if (run.keyClaim) return;
  const { deps, job } = run;
  const answer = deps.claims.claim({ idempotencyKey: job.idempotencyKey, jobId: job.jobId, holdMs: holdMs(run), nowMs: deps.now().getTime() });
  answer.catch(() => undefined);
  run.keyClaim = { answer, held: false };
}

/**
 * The run holds its job's key (go on to the call), or the record's outcome: a duplicate when the key's
 * result is committed, a deferral while another holder works on it, or the failure table's verdict when
 * the claim could not be written.
 */
export async function claimKey(run: JobRun): Promise<Next<void>> {
  startKeyClaim(run);
  const state = run.keyClaim!;
  let found: Awaited<typeof state.answer>;
  try {
    found = await state.answer;
  } catch (error) {
    run.keyClaim = undefined;
    return { end: await settleFailure(run, 'claim', error) };
  }
  if (found.held) {
    state.held = found;
    return { go: undefined };
  }
  run.keyClaim = undefined;
  if (found.state === 'completed') return { end: suppressDuplicate(run, found.committedBy ?? 'unknown') };
  count(run.deps, 'KeyInProgress');
  run.keyHeldBy = found.jobId;
  const retryAt = new Date(found.until);
  const action = decideFor(run, { kind: 'in_progress', retryAt });
  return { end: await resolveAction(run, action, `another delivery holds the idempotency key until ${retryAt.toISOString()}`) };
}

/**
 * The completion of the run's key claim, to ride in its commit's transaction (`commit.ts`): none unless
 * the run holds the key.
 */
export function claimCompletion(run: JobRun): Update[] {
  if (!run.keyClaim?.held) return [];
  const { deps, job } = run;
  return [deps.claims.completionWrite(job.idempotencyKey, job.jobId, deps.now().getTime())];
}

/** The commit wrote {@link claimCompletion}: nothing is left for {@link endKeyClaim} to do. */
export function claimCompletedByCommit(run: JobRun): void {
  if (run.keyClaim?.held) run.keyClaim = undefined;
}

/**
 * Ends the run's hold of its key with its outcome: completed for a commit (or a duplicate the commit
 * found), given back otherwise (also without an outcome: the run threw). Never throws: a claim left
 * behind expires with its hold.
 */
export async function endKeyClaim(run: JobRun, outcome: ExtractionOutcome | undefined): Promise<void> {
  const state = run.keyClaim;
  run.keyClaim = undefined;
  if (!state) return;
  const { deps, job } = run;
  try {
    if (!state.held) {
      // Asked but never awaited (the record ended before its call): given back if it was granted.
      const answer = await state.answer.catch(() => undefined);
      if (answer?.held) await deps.claims.release(job.idempotencyKey, answer);
      return;
    }
    const committedBy = outcome?.type === 'committed' ? job.jobId : outcome?.type === 'duplicate' ? outcome.committedBy : undefined;
    if (committedBy === undefined) await deps.claims.release(job.idempotencyKey, state.held);
    else await deps.claims.complete(job.idempotencyKey, state.held, committedBy, deps.now().getTime());
  } catch (error) {
    log(deps, 'warn', 'could not end the idempotency-key claim (it expires with its hold)', { ...runLogFields(run), error: errorName(error) });
  }
}
