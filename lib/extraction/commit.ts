/**
 * The pipeline's commit step: the valid answer is committed once, by a conditional write keyed by the
 * job's idempotency key (a duplicate is suppressed), after the job id's claim held; and what the
 * pipeline extracts with: the job's schema, its prompt and the repair budget.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { CONSUMER_REPAIR_ATTEMPTS } from '../config/lanes.js';
import { getExtractionPrompt, getExtractionSchema, type ExtractionPrompt, type ExtractionSchema } from '../contract/schemas/registry.js';
import { resultRecordFor, type CommitOutcome } from '../store/results.js';
import { count, log, runLogFields, type JobRun } from './context.js';
import { InternalError } from './errors.js';
import type { ExtractionOutcome } from './outcome.js';
import { settleFailure, suppressDuplicate } from './settle.js';
import { claimed } from './verify.js';
import { settleErased } from './erased.js';
import { traceIdOf } from '../platform/tracing.js';
import { commitGuards } from '../store/cancellation.js';
import { settleCancelled } from './cancelled.js';
import { claimCompletedByCommit, claimCompletion } from './claim.js';

/** The run's schema and prompt from the registry (intake checked both are registered), and its repair budget. */
export function extractionOf(run: JobRun): { schema: ExtractionSchema; prompt: ExtractionPrompt; maxRepairAttempts: number } {
  const { job, deps } = run;
  const schema = getExtractionSchema(job.schemaVersion);
  const prompt = getExtractionPrompt(job.schemaVersion, job.promptVersion);
  if (!prompt) throw new InternalError(`prompt ${job.promptVersion} vanished from the registry`);
  return { schema, prompt, maxRepairAttempts: deps.maxRepairAttempts ?? CONSUMER_REPAIR_ATTEMPTS };
}

/** Commits the valid output once (conditional write on the idempotency key). */
export async function commit(run: JobRun, output: { result: Record<string, unknown>; model: string; modelCalls: number }): Promise<ExtractionOutcome> {
  const { job, deps, delivery } = run;
  const usage = { ...run.usage };
  // A job whose id is another's commits nothing (a failure to claim fails the record: SQS brings it back).
  const reused = await claimed(run);
  if (reused) return reused;
  let written: CommitOutcome;
  const started = performance.now();
  try {
    // One transaction with the absence of the source's tombstone and of the job's cancel marker (an erasure
    // or a cancel during the call wins) and the completion of the key's claim (no round trip after it).
    written = await deps.results.commitOnce(
      resultRecordFor(job, { ...output, usage, traceId: traceIdOf(delivery.traceHeader) }, deps.now()),
      commitGuards(deps.erasure.tableName, job, deps.lane.erasure.afterErasure),
      claimCompletion(run),
    );
    delivery.onCommitted?.(performance.now() - started);
  } catch (error) {
    // Not acknowledged: the lane retries it like any real failure.
    return settleFailure(run, 'commit', error);
  }
  if (written.status === 'erased') return settleErased(run, 'commit');
  if (written.status === 'cancelled') return settleCancelled(run, 'commit');
  if (written.status === 'duplicate') return suppressDuplicate(run, written.existing.jobId);
  claimCompletedByCommit(run);
  count(deps, 'Completed');
  count(deps, 'AttemptsPerCompletion', job.attempt + delivery.receiveCount + job.deferrals);
  const createdAt = Date.parse(job.createdAt);
  if (Number.isFinite(createdAt)) deps.metrics.addMetric('JobAgeAtCompletionMs', MetricUnit.Milliseconds, Math.max(0, deps.now().getTime() - createdAt));
  log(deps, 'info', 'committed', {
    ...runLogFields(run),
    attempt: job.attempt,
    deferrals: job.deferrals,
    outcome: 'committed',
    modelCalls: output.modelCalls,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
  });
  return { type: 'committed', modelCalls: output.modelCalls, usage, result: output.result, model: output.model };
}
