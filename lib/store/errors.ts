/**
 * Typed errors of the DynamoDB adapters. Every error names the operation and the table, keeps the
 * SDK error as `cause`, and never carries item contents (results and ledger details stay out of logs).
 */

/** The DynamoDB operations the store adapters perform. */
export type StoreOperation = 'PutItem' | 'GetItem' | 'Query' | 'Scan' | 'CreateTable' | 'DescribeTable' | 'DescribeTimeToLive' | 'UpdateTimeToLive';

/** Name of an error-like value, when it has one (SDK errors carry the service's exception name). */
export function errorName(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'name' in error && typeof (error as { name: unknown }).name === 'string') {
    return (error as { name: string }).name;
  }
  return undefined;
}

function shortMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}

/**
 * A DynamoDB call did not succeed (network, throttling, service or validation error). Nothing can be
 * assumed written: the caller must not acknowledge the message it was handling, so SQS brings it back.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  /** The operation that failed. */
  readonly operation: StoreOperation;
  /** The table it was addressed to. */
  readonly tableName: string;
  /** The SDK's exception name (`ProvisionedThroughputExceededException`, `TimeoutError`, ...), when known. */
  readonly sdkErrorName: string | undefined;

  constructor(operation: StoreOperation, tableName: string, options: { cause: unknown; message?: string }) {
    const sdkErrorName = errorName(options.cause);
    super(options.message ?? `${operation} on table ${tableName} failed: ${sdkErrorName ?? 'Error'}: ${shortMessage(options.cause)}`, {
      cause: options.cause,
    });
    this.operation = operation;
    this.tableName = tableName;
    this.sdkErrorName = sdkErrorName;
  }
}

/**
 * A record that can never be written as it is (for example a value DynamoDB cannot represent).
 * Retrying will not help; the caller decides what to do with the job (e.g. a `needs_review` entry).
 */
export class StoreRecordInvalidError extends Error {
  override name = 'StoreRecordInvalidError';
  constructor(
    message: string,
    readonly tableName: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An existing table does not have the key schema or TTL attribute its {@link TableShape} asks for. */
export class TableShapeMismatchError extends Error {
  override name = 'TableShapeMismatchError';
  constructor(
    message: string,
    readonly tableName: string,
  ) {
    super(message);
  }
}
