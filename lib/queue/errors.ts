/**
 * Typed errors of the SQS adapters. Each keeps the underlying error as `cause` and names the queue,
 * never the message body.
 */

/** Name of an error-like value, when it has one (SDK errors carry the service's exception name). */
function errorName(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'name' in error && typeof (error as { name: unknown }).name === 'string') {
    return (error as { name: string }).name;
  }
  return undefined;
}

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
export class ResendFailedError extends Error {
  override name = 'ResendFailedError';
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
  }
}

/**
 * `ChangeMessageVisibility` failed (network, expired or invalid receipt handle, ...). The message then
 * keeps its current visibility timeout; the caller logs this and still reports the record failed.
 */
export class VisibilityChangeFailedError extends Error {
  override name = 'VisibilityChangeFailedError';
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
