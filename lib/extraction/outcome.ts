/**
 * What the extraction core ends with, for one record. Terminal outcomes are already settled by the
 * core (ledger entry, metrics, log line); `deferred` and `failed` carry the policy's action for the
 * lane that drives the core to carry out (the queue lane re-sends, or backs off and dead-letters).
 */
import type { Job } from '../contract/job.js';
import type { DeferAction, FailAction } from '../policy/index.js';
import type { TokenUsage } from '../providers/model.js';
import type { RejectionReason } from '../platform/telemetry.js';
import type { LaneOutReason } from '../policy/index.js';

/** Every key is out until a long reset (daily quota) or a person (billing): the lane may pause until `until`. */
export interface LaneOut {
  until: Date;
  reason: LaneOutReason;
}

/** The result was committed (conditional write on the idempotency key). Terminal. */
interface CommittedOutcome {
  type: 'committed';
  modelCalls: number;
  usage: TokenUsage;
  /** The validated object as committed. */
  result: Record<string, unknown>;
  /** The model that produced it. */
  model: string;
}

/** A result for the job's idempotency key was committed before (by `committedBy`). Terminal. */
export interface DuplicateOutcome {
  type: 'duplicate';
  committedBy: string;
}

/** Rejected for good with a ledger reason; no (further) model call. Terminal. */
export interface RejectedOutcome {
  type: 'rejected';
  reason: RejectionReason;
  /** Set when every key was found out while deciding (the lane may pause all the same). */
  laneOut?: LaneOut | undefined;
}

/** The output stayed invalid after the repair budget; a person reviews it. Terminal. */
export interface NeedsReviewOutcome {
  type: 'needs_review';
}

/**
 * Not now: a throttle, an admission denial or a job not yet eligible. The lane decides how the job
 * waits (`action` says how long and with which scheduling fields); `laneOut` is set when every key is
 * out for a long reset.
 */
interface DeferredOutcome {
  type: 'deferred';
  /** The job as it arrived (the action says what changes for the next attempt). */
  job: Job;
  action: DeferAction;
  /** For logs and the ledger (no source text). */
  detail?: string | undefined;
  laneOut?: LaneOut | undefined;
}

/** A real failure (5xx, timeout, an unavailable store): the lane retries it under its budget. */
interface FailedOutcome {
  type: 'failed';
  /** The job as it arrived. */
  job: Job;
  action: FailAction;
  detail: string;
}

/** The outcome of one record in the extraction core. */
export type ExtractionOutcome = CommittedOutcome | DuplicateOutcome | RejectedOutcome | NeedsReviewOutcome | DeferredOutcome | FailedOutcome;
