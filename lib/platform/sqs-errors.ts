/**
 * Typed errors of the SQS adapters. Each keeps the underlying error as `cause` and names the queue,
 * never the message body.
 */
import { errorName, RatelaneError } from './errors.js';

/** Why a re-send did not happen. */
export type ResendFailureReason =
  /** The job does not satisfy the contract: it would be rejected on receipt. */
  | 'invalid_job'
  /** `delaySeconds` is not a number. */
  | 'invalid_delay'
  /** Body plus message attributes exceed SQS's 256 KiB. */
  | 'too_large'
  /** `SendMessage` failed or returned no message id. */
  | 'send_failed';

/**
 * A deferred job could not be re-sent. The new message may not exist: the caller must report the
 * original record failed so SQS brings it back (never acknowledge it).
 */
export class ResendFailedError extends RatelaneError {
  override name = 'ResendFailedError';
  readonly kind: 'input' | 'unavailable';
  /** A send that failed may work later; an invalid or oversize job never will. */
  readonly retryable: boolean;
  /** The SDK's exception name, when the failure came from the SDK. */
  readonly sdkErrorName: string | undefined;

  constructor(
    message: string,
    readonly reason: ResendFailureReason,
    readonly queueUrl: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.sdkErrorName = reason === 'send_failed' ? errorName(options?.cause) : undefined;
    this.retryable = reason === 'send_failed';
    this.kind = this.retryable ? 'unavailable' : 'input';
  }
}

/** An SQS call on a received message failed; the message is left as it was. Names the SDK's exception. */
abstract class ReceivedMessageCallError extends RatelaneError {
  readonly kind = 'unavailable' as const;
  readonly retryable = true;
  /** The SDK's exception name (`ReceiptHandleIsInvalid`, `MessageNotInflight`, ...), when known. */
  readonly sdkErrorName: string | undefined;

  constructor(
    message: string,
    readonly queueUrl: string,
    options: { cause: unknown },
  ) {
    super(message, options);
    this.sdkErrorName = errorName(options.cause);
  }
}

/**
 * `ChangeMessageVisibility` failed (network, expired or invalid receipt handle, ...). The message then
 * keeps its current visibility timeout; the caller logs this and still reports the record failed.
 */
export class VisibilityChangeFailedError extends ReceivedMessageCallError {
  override name = 'VisibilityChangeFailedError';
}

/**
 * `DeleteMessage` of a received message failed. Nothing is lost: the batch response still acknowledges
 * the record; only the early delete (see `deleteReceived`) did not happen.
 */
export class DeleteFailedError extends ReceivedMessageCallError {
  override name = 'DeleteFailedError';
}
