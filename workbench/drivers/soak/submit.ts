/**
 * The soak's submission: its documents (a share carrying a new sentinel) sent through the capturing
 * producer, cut short when the run's watch ends first, with what was sent by then.
 */
import type { LaneSet } from '../../../lib/config/lanes.js';
import type { RandomSource } from '../../../lib/platform/random.js';
import type { LocalStack } from '../../local-stack/stack.js';
import { orTimeout } from '../observe.js';
import type { SoakOptions } from './soak.js';
import { END_STEP_LIMIT_MS } from './end.js';
import { newSentinel, sentJobs, soakDocuments, type CapturingProducer } from './inputs.js';
import { submitToStack, type StackSubmission } from '../submit.js';

/** What the soak submitted: the submission, and the sentinel some of its documents carry. */
export interface SoakJobs {
  submission: StackSubmission;
  sentinel: string;
  sentinelDocuments: number;
  /** False when the time limit (or a crash) came first: `submission` then holds what the producer had sent. */
  complete: boolean;
}

/**
 * Submits the soak's documents (a share carrying a new sentinel) through the capturing producer. When
 * `stop` aborts first (the run's watch ended: time limit, stall, crash), the producer is shut and the
 * submission is what it had sent by then.
 */
export async function submitSoakJobs(
  stack: LocalStack,
  lanes: LaneSet,
  options: SoakOptions,
  producer: CapturingProducer,
  random: RandomSource,
  stop: AbortSignal,
  say: (line: string) => void,
): Promise<SoakJobs> {
  const sentinel = newSentinel();
  const { documents, sentinelDocuments } = soakDocuments(options.jobs, sentinel, options.sentinels, random);
  const submitStarted = Date.now();
  const submitting = submitToStack(stack, lanes, documents, {
    clientsFor: (region) => {
      const clients = producer.clientsFor(region);
      return { sqs: clients.sqs, s3: clients.s3 };
    },
    onProgress: (event) => {
      if (event.type === 'batch' && event.batch % 50 === 0) say(`  submitting: ${event.region} batch ${event.batch}`);
    },
  });
  const cut = new Promise<undefined>((resolve) => {
    if (stop.aborted) resolve(undefined);
    else stop.addEventListener('abort', () => resolve(undefined), { once: true });
  });
  const submission = await Promise.race([submitting, cut]);
  if (submission) {
    const { submission: result, sent } = submission;
    say(
      `  submitted ${sent.length} of ${documents.length} jobs in ${Date.now() - submission.submitStarted} ms (${sentinelDocuments} carry the sentinel)${result.failed ? `; ${result.failed} NOT sent` : ''}`,
    );
    return { submission, sentinel, sentinelDocuments, complete: true };
  }
  // Cut short: stop the producer, then count what it had sent (its own record, or the captured sends).
  producer.destroy();
  const settled = await orTimeout(
    submitting.catch(() => undefined),
    END_STEP_LIMIT_MS.submissionAfterLimit,
  );
  return { submission: settled ?? capturedSubmission(producer, documents.length, submitStarted), sentinel, sentinelDocuments, complete: false };
}

/** A submission rebuilt from the entries the capturing producer saw accepted (when the producer never returned). */
function capturedSubmission(producer: CapturingProducer, total: number, submitStarted: number): StackSubmission {
  const jobs = sentJobs(producer);
  const sent = jobs.map((j, index) => ({
    index,
    sourceId: j.jobId,
    jobId: j.jobId,
    region: j.region,
    idempotencyKey: j.idempotencyKey,
    status: 'sent' as const,
  }));
  return {
    submission: { total, sent: sent.length, failed: total - sent.length, rejected: 0, results: sent },
    sent,
    submitted: jobs.map((j) => ({ jobId: j.jobId, idempotencyKey: j.idempotencyKey, lane: j.region, createdAt: submitStarted })),
    submitStarted,
  };
}
