/**
 * Typed errors of the DynamoDB adapters. Every error names the operation and the table, keeps the
 * SDK error as `cause`, and never carries item contents (results and ledger details stay out of logs).
 */
import { errorName, RatelaneError, shortMessage } from '../platform/errors.js';

/** The DynamoDB operations the store adapters perform. */
export type StoreOperation =
  | 'PutItem'
  | 'GetItem'
  | 'BatchGetItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'BatchWriteItem'
  | 'TransactWriteItems'
  | 'Query'
  | 'Scan'
  | 'CreateTable'
  | 'DescribeTable'
  | 'DescribeTimeToLive'
  | 'UpdateTimeToLive';

/**
 * A DynamoDB call did not succeed (network, throttling, service or validation error). Nothing can be
 * assumed written: the caller must not acknowledge the message it was handling, so SQS brings it back.
 */
export class StoreUnavailableError extends RatelaneError {
  override name = 'StoreUnavailableError';
  readonly kind = 'unavailable' as const;
  readonly retryable = true;
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
export class StoreRecordInvalidError extends RatelaneError {
  override name = 'StoreRecordInvalidError';
  readonly kind = 'input' as const;
  readonly retryable = false;
  constructor(
    message: string,
    readonly tableName: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An existing table does not have the key schema or TTL attribute its {@link TableShape} asks for. */
export class TableShapeMismatchError extends RatelaneError {
  override name = 'TableShapeMismatchError';
  readonly kind = 'config' as const;
  readonly retryable = false;
  constructor(
    message: string,
    readonly tableName: string,
  ) {
    super(message);
  }
}
