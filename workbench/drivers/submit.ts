/**
 * How the drivers submit: through the real producer, with each lane's own clients and queue, as a
 * service team would.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LaneSet } from '../../lib/config/lanes.js';
import { RatelaneError } from '../../lib/platform/errors.js';
import { submitDocuments, type DocumentInput, type SubmitItemResult, type SubmitProgress, type SubmitResult } from '../../lib/intake/producer.js';
import type { LocalStack } from '../local-stack/stack.js';
import type { SubmittedJob } from './scorecard.js';

/** What {@link submitToStack} sent, with the jobs as the scorecard tracks them. */
export interface StackSubmission {
  submission: SubmitResult;
  sent: SubmitItemResult[];
  submitted: SubmittedJob[];
  /** When the submission started (epoch ms): every job's `createdAt`. */
  submitStarted: number;
}

/** Options of {@link submitToStack}. */
export interface SubmitToStackOptions {
  /** The producer's clients per region (default: the lane's own). */
  clientsFor?: (region: string) => { sqs: SQSClient; s3: S3Client };
  onProgress?: (event: SubmitProgress) => void;
}

/** Raised when a document names a region that is no lane of the local stack. */
class NoLocalLaneError extends RatelaneError {
  override name = 'NoLocalLaneError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/** Submits documents to a running local stack through the real producer. */
export async function submitToStack(
  stack: LocalStack,
  lanes: LaneSet,
  documents: DocumentInput[],
  options: SubmitToStackOptions = {},
): Promise<StackSubmission> {
  const laneClients = (region: string): { sqs: SQSClient; s3: S3Client } => {
    const lane = Object.values(stack.lanes).find((l) => l.lane.name === region || l.lane.region === region);
    if (!lane) throw new NoLocalLaneError(`no local lane for ${region}`);
    return { sqs: lane.clients.sqs, s3: lane.clients.s3 };
  };
  const submitStarted = Date.now();
  const submission = await submitDocuments(
    { documents },
    {
      lanes,
      clientsFor: options.clientsFor ?? laneClients,
      queueUrlFor: (lane) => stack.lanes[lane.name]!.queueUrl,
      now: () => new Date(),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    },
  );
  const sent = submission.results.filter((r) => r.status === 'sent');
  const submitted: SubmittedJob[] = sent.map((r) => ({ jobId: r.jobId, idempotencyKey: r.idempotencyKey, lane: r.region, createdAt: submitStarted }));
  return { submission, sent, submitted, submitStarted };
}
