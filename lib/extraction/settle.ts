/**
 * The core's way from a policy decision to an outcome: ask the pure policy (`decide`), settle what is
 * terminal (ledger entry, metric, log line — the same for every lane) and hand back what the lane
 * must carry out (a deferral or a real failure).
 */
import { decide, type Action, type JobOutcome, type NeedsReviewAction, type RejectAction } from '../policy/index.js';
import type { ValidationResult } from './validate.js';
import type { RejectionReason } from '../platform/telemetry.js';
import { InternalError } from './errors.js';
import { count, ledgerBase, log, runLogFields, type JobRun, type Next } from './context.js';
import { failureVerdict, type FailureContext, type FailureStep } from './failures.js';
import type { DuplicateOutcome, ExtractionOutcome, LaneOut, NeedsReviewOutcome, RejectedOutcome } from './outcome.js';
import { claimed } from './verify.js';

/** The policy's decision for `outcome` of the run's job, at the run's receive count and now. */
export function decideFor(run: JobRun, outcome: JobOutcome): Action {
  const { deps } = run;
  return decide({
    job: run.job,
    lane: deps.lane.name,
    approximateReceiveCount: run.delivery.receiveCount,
    maxReceiveCount: deps.lane.queue.maxReceiveCount,
    now: deps.now(),
    backoff: deps.lane.backoff,
    random: deps.random,
    outcome,
  });
}

/**
 * Turns a decided action into the record's outcome: rejections and reviews are settled here; a
 * deferral or a real failure is handed back with `detail` for the lane to carry out. `laneOut` (every
 * key is out) travels with a deferral or a rejection, so the lane can pause whatever became of the job.
 */
export async function resolveAction(run: JobRun, action: Action, detail: string, laneOut?: LaneOut): Promise<ExtractionOutcome> {
  switch (action.type) {
    case 'reject':
      return { ...(await rejectRun(run, action)), ...(laneOut ? { laneOut } : {}) };
    case 'needs_review':
      return needsReview(run, action, detail);
    case 'defer':
      return { type: 'deferred', job: run.job, action, detail, ...(laneOut ? { laneOut } : {}) };
    case 'fail':
      return { type: 'failed', job: run.job, action, detail };
    case 'repair':
    case 'commit':
      throw new InternalError(`unexpected action ${action.type} here`);
  }
}

/**
 * What an error at `step` makes of the run's job, by the failure table: a rejection, or the policy's
 * decision on the outcome it stands for. Errors the table does not know are thrown on.
 */
export async function settleFailure(run: JobRun, step: FailureStep, error: unknown, context: FailureContext = {}): Promise<ExtractionOutcome> {
  if (run.delivery.stopWork?.aborted) return outOfTime(run, `${step} cut off by the record's time`, { cutOff: true });
  const verdict = failureVerdict(step, error, context);
  if (verdict.type === 'rethrow') throw error;
  if (verdict.type === 'reject') return rejectRun(run, { type: 'reject', reason: verdict.policyReason, detail: verdict.detail }, verdict.reason);
  if (verdict.type === 'review') return needsReview(run, { type: 'needs_review', reason: 'validation_failed', detail: verdict.detail }, verdict.reason);
  return resolveAction(run, decideFor(run, verdict.outcome), verdict.detail);
}

/**
 * The record's time cannot hold what is left: it is sent back (the lane decides how) to come back at
 * once — or, when a step was `cutOff` in the middle, after the delivery's {@link Delivery.cutOffWaitMs}
 * (the queue lane's: the environment is slower than its invocations then, and jobs sent back at once
 * would only be received and cut off again, re-sent in a loop that feeds on the slowness).
 */
export async function outOfTime(run: JobRun, detail: string, options: { cutOff?: boolean } = {}): Promise<ExtractionOutcome> {
  count(run.deps, 'InvocationDeadlineDeferred');
  const waitMs = options.cutOff ? (run.delivery.cutOffWaitMs ?? 0) : 0;
  return resolveAction(run, decideFor(run, { kind: 'out_of_time', waitMs }), detail);
}

/**
 * Rejects the run's job for good: a ledger entry with `reason`, the `Rejected` metric, a log line (a
 * job whose id is another's is rejected for that instead, under its message id).
 */
export async function rejectRun(run: JobRun, action: RejectAction, reason: RejectionReason = action.reason): Promise<RejectedOutcome> {
  const { deps, job } = run;
  const reused = await claimed(run);
  if (reused) return reused;
  await deps.ledger.record({ ...ledgerBase(run), kind: 'rejected', reason, details: action.detail });
  count(deps, 'Rejected');
  if (action.reason === 'region_mismatch') count(deps, 'RegionMismatch');
  log(deps, 'warn', 'job rejected', { ...runLogFields(run), attempt: job.attempt, deferrals: job.deferrals, outcome: 'rejected', reason });
  return { type: 'rejected', reason };
}

async function needsReview(run: JobRun, action: NeedsReviewAction, reason: string): Promise<NeedsReviewOutcome | RejectedOutcome> {
  const { deps } = run;
  const reused = await claimed(run);
  if (reused) return reused;
  await deps.ledger.record({ ...ledgerBase(run), kind: 'needs_review', reason, details: action.detail });
  count(deps, 'NeedsReview');
  log(deps, 'warn', 'needs review', { ...runLogFields(run), outcome: 'needs_review', reason });
  return { type: 'needs_review' };
}

/** A result for the job's idempotency key was already committed (by `committedBy`). */
export function suppressDuplicate(run: JobRun, committedBy: string): DuplicateOutcome {
  count(run.deps, 'DuplicateSuppressed');
  log(run.deps, 'info', 'duplicate suppressed', { ...runLogFields(run), committedBy, outcome: 'duplicate' });
  return { type: 'duplicate', committedBy };
}

/**
 * An answer that failed validation: counted, ledgered (which fields, which rules, which model), then
 * the policy says repair (go on: the pipeline asks again with the problems) or what the job becomes
 * once the repair budget is spent (needs review).
 */
export async function settleInvalidAnswer(
  run: JobRun,
  validation: Extract<ValidationResult, { ok: false }>,
  answer: { model: string; outputChars: number; repairsUsed: number; maxRepairAttempts: number },
): Promise<Next<void>> {
  const { deps } = run;
  count(deps, 'ValidationFailed');
  const reused = await claimed(run);
  if (reused) return { end: reused };
  await deps.ledger.record({
    ...ledgerBase(run),
    kind: 'validation_failed',
    reason: validation.parseStatus,
    parseStatus: validation.parseStatus,
    failingFields: validation.failingFields,
    failingRules: validation.failingRules,
    details: `model ${answer.model}, repair ${answer.repairsUsed} of ${answer.maxRepairAttempts}, output ${answer.outputChars} chars`,
  });
  const action = decideFor(run, { kind: 'validation_failed', repairAttemptsUsed: answer.repairsUsed, maxRepairAttempts: answer.maxRepairAttempts });
  if (action.type !== 'repair') return { end: await resolveAction(run, action, validation.parseStatus) };
  log(deps, 'info', 'repairing output', { ...runLogFields(run), parseStatus: validation.parseStatus, outcome: 'repair' });
  return { go: undefined };
}
