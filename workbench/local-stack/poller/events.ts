/**
 * What the local event source poller reports through `onEvent`: batches received, invocations
 * finished, whole-batch failures, failed deletes and receives, pauses and resumes.
 */

/** Why a whole batch counted as failed. */
export type WholeBatchFailureReason = 'handlerError' | 'timeout' | 'invalidResponse' | 'invalidMessage';

/** A batch was received and is about to be handed to the handler. */
interface BatchReceivedEvent {
  type: 'batchReceived';
  requestId: string;
  messageIds: string[];
}

/** An invocation ended and the poller has acted on it (deleted what succeeded). */
interface InvocationFinishedEvent {
  type: 'invocationFinished';
  requestId: string;
  outcome: 'success' | 'partial' | 'failed';
  records: number;
  /** Records deleted from the queue. */
  deleted: number;
  /** Records left on the queue because they (or their whole batch) failed. */
  failed: number;
  /** Successful records whose delete failed (they will come back). */
  deleteFailed: number;
  durationMs: number;
}

/** The whole batch failed: nothing of it was deleted. */
interface BatchFailedEvent {
  type: 'batchFailed';
  requestId: string;
  reason: WholeBatchFailureReason;
  message: string;
  messageIds: string[];
  error?: unknown;
}

/** Some deletes of successful records failed (per-entry failures or the whole call). */
export interface DeleteFailedEvent {
  type: 'deleteFailed';
  requestId: string;
  failures: Array<{ messageId: string; code: string; message?: string }>;
}

/** A ReceiveMessage call failed; the poller waits `retryInMs` before that poller tries again. */
interface ReceiveErrorEvent {
  type: 'receiveError';
  error: unknown;
  retryInMs: number;
}

/** `pause()` was called: no new receives; receives and invocations already under way finish. */
interface PausedEvent {
  type: 'paused';
  inFlight: number;
}

/** `resume()` was called: polling starts again. */
interface ResumedEvent {
  type: 'resumed';
}

/** Everything the poller reports through `onEvent`. */
export type PollerEvent = BatchReceivedEvent | InvocationFinishedEvent | BatchFailedEvent | DeleteFailedEvent | ReceiveErrorEvent | PausedEvent | ResumedEvent;
