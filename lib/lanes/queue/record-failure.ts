/**
 * A record that fails is never silent: one log line with its reason, the error's name and the message
 * id (never document text), and the `RecordFailed` metric, in total and per reason.
 */
import { RateStateUnavailableError } from '../../admission/dynamodb/rate-state.js';
import { count, log } from '../../extraction/index.js';
import { ResendFailedError } from '../../platform/sqs-errors.js';
import { errorName, RatelaneError, shortMessage } from '../../platform/errors.js';
import { RECORD_FAILED_METRICS, type RecordFailureReason } from '../../platform/telemetry.js';
import { StoreUnavailableError } from '../../store/errors.js';
import { InvocationDeadlineError } from './invocation.js';
import { RecordFailedError, type QueueDelivery, type QueueLaneDeps } from './queue-executor.js';

/** Why `error` failed the record (its `RecordFailed` reason). `stopped`: the invocation's time was up. */
function recordFailureReason(error: unknown, deps: Pick<QueueLaneDeps, 'dlqUrl' | 'ledger'>, stopped: boolean): RecordFailureReason {
  if (stopped || error instanceof InvocationDeadlineError) return 'invocation_deadline';
  if (error instanceof RecordFailedError) return 'retry';
  if (error instanceof ResendFailedError) return error.queueUrl === deps.dlqUrl ? 'dead_letter_failed' : 'resend_failed';
  if (error instanceof StoreUnavailableError) return error.tableName === deps.ledger.tableName ? 'ledger_unavailable' : 'results_unavailable';
  if (error instanceof RateStateUnavailableError) return 'rate_state_unavailable';
  return 'unexpected';
}

/** Logs and counts a failed record. Our own errors' messages name ids and codes only; others' are not logged. */
export function reportRecordFailure(error: unknown, delivery: QueueDelivery, deps: QueueLaneDeps, stopped: boolean): RecordFailureReason {
  const reason = recordFailureReason(error, deps, stopped);
  count(deps, 'RecordFailed');
  count(deps, RECORD_FAILED_METRICS[reason]);
  log(deps, reason === 'retry' ? 'warn' : 'error', 'record failed: SQS brings it back', {
    lane: deps.lane.name,
    messageId: delivery.messageId,
    receiveCount: delivery.receiveCount,
    outcome: 'failed',
    reason,
    error: errorName(error) ?? typeof error,
    ...(error instanceof RatelaneError ? { detail: shortMessage(error) } : {}),
  });
  return reason;
}
