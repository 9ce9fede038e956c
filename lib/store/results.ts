/**
 * The results table: one item per idempotency key, written once. This class only turns its methods into
 * DynamoDB calls; the consumer decides what a duplicate or a failed write means for the message.
 */
import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  TransactWriteItemsCommand,
  type AttributeValue,
  type ConditionCheck,
  type DynamoDBClient,
  type Update,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { Job } from '../contract/job.js';
import { errorName } from '../platform/errors.js';
import { StoreRecordInvalidError, StoreUnavailableError } from './errors.js';
import { RESULTS_TABLE } from './tables.js';

/** Tokens one job spent across its model calls. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/** The committed result of one job, as stored (one item per `idempotencyKey`). */
export interface ResultRecord {
  idempotencyKey: string;
  jobId: string;
  /** The region lane that produced it. */
  region: string;
  schemaVersion: string;
  promptVersion: string;
  /** The validated extraction object. */
  result: Record<string, unknown>;
  usage: TokenUsage;
  /** Model id that produced the result. */
  model: string;
  /** The job's real-failure count when it was committed. */
  attempt: number;
  /** The job's throttle reschedules when it was committed. */
  deferrals: number;
  /** Model calls spent in the committing invocation (1, or 2 after a repair call). */
  modelCalls: number;
  /** When the result was committed (ISO 8601). */
  committedAt: string;
  /** The job's own `createdAt` (ISO 8601), so commit latency can be measured from the item alone. */
  jobCreatedAt: string;
  /** When DynamoDB's TTL may delete it (epoch seconds): the commit plus the lane's `retention.resultsDays`; set by the store. */
  expiresAt?: number;
  /** The X-Ray trace id the committing job's message carried (`lib/platform/tracing.ts`). */
  traceId?: string;
}

/** What {@link ResultStore.commitOnce} did: wrote the item, or found one already there. */
export type CommitOutcome = { status: 'committed' } | { status: 'duplicate'; existing: ResultRecord } | { status: 'erased' } | { status: 'cancelled' };

/** What a commit is also conditioned on (each a `ConditionCheck` of the put's transaction): no tombstone of the job's source, no cancel marker of the job. */
export interface CommitGuards {
  /** The job's source's tombstone condition (`erasure.ts`): failing, `erased` comes back. */
  unlessErased?: ConditionCheck | undefined;
  /** The job's cancel marker condition (`cancellation.ts`): failing, `cancelled` comes back. */
  unlessCancelled?: ConditionCheck | undefined;
}

/** Construction options of {@link ResultStore}. */
export interface ResultStoreOptions {
  dynamodb: DynamoDBClient;
  tableName: string;
  /** Days a result is kept from its commit (the table's TTL attribute `expiresAt`); absent: kept until deleted. */
  retentionDays?: number;
}

/**
 * Builds the record to commit for `job` from what the model call produced.
 *
 * @param committedAt defaults to now
 */
export function resultRecordFor(
  job: Job,
  outcome: { result: Record<string, unknown>; usage: TokenUsage; model: string; modelCalls: number; traceId?: string | undefined },
  committedAt: Date = new Date(),
): ResultRecord {
  return {
    idempotencyKey: job.idempotencyKey,
    jobId: job.jobId,
    region: job.region,
    schemaVersion: job.schemaVersion,
    promptVersion: job.promptVersion,
    result: outcome.result,
    usage: { inputTokens: outcome.usage.inputTokens, outputTokens: outcome.usage.outputTokens },
    model: outcome.model,
    attempt: job.attempt,
    deferrals: job.deferrals,
    modelCalls: outcome.modelCalls,
    committedAt: committedAt.toISOString(),
    jobCreatedAt: job.createdAt,
    ...(outcome.traceId !== undefined ? { traceId: outcome.traceId } : {}),
  };
}

/** DynamoDB's item size limit (400 KB), as DynamoDB counts it. */
const MAX_RESULT_ITEM_BYTES = 400 * 1024;

/**
 * An item's size as DynamoDB counts it, approximately from above: the UTF-8 length of every attribute
 * name and value, plus a few bytes per value for its type and structure.
 */
function approximateItemBytes(item: Record<string, AttributeValue>): number {
  let bytes = 0;
  const walk = (value: AttributeValue): void => {
    bytes += 3;
    if (value.S !== undefined) bytes += Buffer.byteLength(value.S, 'utf8');
    else if (value.N !== undefined) bytes += value.N.length;
    else if (value.B !== undefined) bytes += value.B.byteLength;
    else if (value.M !== undefined) {
      for (const [name, child] of Object.entries(value.M)) {
        bytes += Buffer.byteLength(name, 'utf8');
        walk(child);
      }
    } else if (value.L !== undefined) for (const child of value.L) walk(child);
    else if (value.SS !== undefined) for (const s of value.SS) bytes += Buffer.byteLength(s, 'utf8');
    else if (value.NS !== undefined) for (const n of value.NS) bytes += n.length;
  };
  for (const [name, value] of Object.entries(item)) {
    bytes += Buffer.byteLength(name, 'utf8');
    walk(value);
  }
  return bytes;
}

/** Commit-once access to a lane's results table. */
export class ResultStore {
  readonly tableName: string;
  readonly #dynamodb: DynamoDBClient;
  readonly #retentionSeconds: number | undefined;

  constructor(options: ResultStoreOptions) {
    this.#dynamodb = options.dynamodb;
    this.tableName = options.tableName;
    this.#retentionSeconds = options.retentionDays === undefined ? undefined : Math.round(options.retentionDays * 24 * 3600);
  }

  /**
   * Writes `record` only if no item with its `idempotencyKey` exists (conditional `PutItem`). A second
   * write of the same key returns `duplicate` with the item that is already there and changes nothing.
   * With guards ({@link CommitGuards}: the source's tombstone, the job's cancel marker), the put and their
   * conditions are one transaction: while a tombstone or a marker holds nothing is written, and `erased`
   * (checked first) or `cancelled` comes back. `alongside` (e.g. the idempotency key's claim completed:
   * `KeyClaims.completionWrite`) is written in the same transaction, after the put: with the result or not at all.
   *
   * @throws {@link StoreRecordInvalidError} when the record cannot be represented in DynamoDB, is over its
   *   item limit, or DynamoDB refuses it (`ValidationException`): retrying will not help.
   * @throws {@link StoreUnavailableError} for any other failure: nothing may be assumed written.
   */
  async commitOnce(record: ResultRecord, guards: CommitGuards = {}, alongside: readonly Update[] = []): Promise<CommitOutcome> {
    const item = this.#toItem(record);
    const bytes = approximateItemBytes(item);
    if (bytes > MAX_RESULT_ITEM_BYTES) {
      throw new StoreRecordInvalidError(
        `result record of job ${record.jobId} is ~${bytes} bytes, over DynamoDB's item limit (${MAX_RESULT_ITEM_BYTES})`,
        this.tableName,
      );
    }
    const put = {
      TableName: this.tableName,
      Item: item,
      ConditionExpression: 'attribute_not_exists(#key)',
      ExpressionAttributeNames: { '#key': RESULTS_TABLE.partitionKey },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    };
    const checks = [
      ...(guards.unlessErased ? [{ check: guards.unlessErased, status: 'erased' as const }] : []),
      ...(guards.unlessCancelled ? [{ check: guards.unlessCancelled, status: 'cancelled' as const }] : []),
    ];
    if (checks.length > 0 || alongside.length > 0) return this.#commitGuarded(record, put, checks, alongside);
    try {
      await this.#dynamodb.send(new PutItemCommand(put));
      return { status: 'committed' };
    } catch (error) {
      if (errorName(error) === 'ValidationException') {
        // DynamoDB refuses the item itself (a value it cannot hold): writing it again never helps.
        throw new StoreRecordInvalidError(`result record of job ${record.jobId} was refused by DynamoDB (ValidationException)`, this.tableName, {
          cause: error,
        });
      }
      if (errorName(error) !== 'ConditionalCheckFailedException') {
        throw new StoreUnavailableError('PutItem', this.tableName, { cause: error });
      }
      return this.#duplicate(record, error, (error as { Item?: Record<string, AttributeValue> }).Item, 'PutItem');
    }
  }

  /** The put, the guards' conditions and the writes `alongside` as one transaction (see {@link commitOnce}). */
  async #commitGuarded(
    record: ResultRecord,
    put: ConstructorParameters<typeof PutItemCommand>[0],
    checks: ReadonlyArray<{ check: ConditionCheck; status: 'erased' | 'cancelled' }>,
    alongside: readonly Update[],
  ): Promise<CommitOutcome> {
    try {
      await this.#dynamodb.send(
        new TransactWriteItemsCommand({
          TransactItems: [...checks.map((c) => ({ ConditionCheck: c.check })), { Put: put }, ...alongside.map((u) => ({ Update: u }))],
        }),
      );
      return { status: 'committed' };
    } catch (error) {
      if (errorName(error) !== 'TransactionCanceledException') throw new StoreUnavailableError('TransactWriteItems', this.tableName, { cause: error });
      const reasons = (error as { CancellationReasons?: Array<{ Code?: string; Item?: Record<string, AttributeValue> }> }).CancellationReasons ?? [];
      const stopped = checks.find((_, i) => reasons[i]?.Code === 'ConditionalCheckFailed');
      if (stopped) return { status: stopped.status };
      const putReason = reasons[checks.length];
      if (putReason?.Code === 'ConditionalCheckFailed') return this.#duplicate(record, error, putReason.Item, 'TransactWriteItems');
      if (reasons.some((r) => r.Code === 'ValidationError')) {
        throw new StoreRecordInvalidError(`result record of job ${record.jobId} was refused by DynamoDB (ValidationError)`, this.tableName, { cause: error });
      }
      // A conflicting transaction or a throttle: nothing was written, the lane retries.
      throw new StoreUnavailableError('TransactWriteItems', this.tableName, { cause: error });
    }
  }

  /** The `duplicate` outcome: the item already there (AWS returns it with ALL_OLD; read back when a service does not). */
  async #duplicate(
    record: ResultRecord,
    error: unknown,
    oldItem: Record<string, AttributeValue> | undefined,
    operation: 'PutItem' | 'TransactWriteItems',
  ): Promise<CommitOutcome> {
    const existing = oldItem ? (unmarshall(oldItem) as ResultRecord) : await this.get(record.idempotencyKey);
    if (!existing) {
      throw new StoreUnavailableError(operation, this.tableName, {
        cause: error,
        message: `${operation} on table ${this.tableName}: condition failed but the existing item could not be read`,
      });
    }
    return { status: 'duplicate', existing };
  }

  /** Deletes the result of `idempotencyKey`; whether there was one. @throws {@link StoreUnavailableError} */
  async delete(idempotencyKey: string): Promise<boolean> {
    try {
      // Conditional: of two deletes at once exactly one finds the item.
      await this.#dynamodb.send(
        new DeleteItemCommand({
          TableName: this.tableName,
          Key: { [RESULTS_TABLE.partitionKey]: { S: idempotencyKey } },
          ConditionExpression: 'attribute_exists(#key)',
          ExpressionAttributeNames: { '#key': RESULTS_TABLE.partitionKey },
        }),
      );
      return true;
    } catch (error) {
      if (errorName(error) === 'ConditionalCheckFailedException') return false;
      throw new StoreUnavailableError('DeleteItem', this.tableName, { cause: error });
    }
  }

  /**
   * The committed record of `idempotencyKey` (strongly consistent read), or `undefined`.
   *
   * @throws {@link StoreUnavailableError}
   */
  async get(idempotencyKey: string): Promise<ResultRecord | undefined> {
    try {
      const out = await this.#dynamodb.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: { [RESULTS_TABLE.partitionKey]: { S: idempotencyKey } },
          ConsistentRead: true,
        }),
      );
      return out.Item ? (unmarshall(out.Item) as ResultRecord) : undefined;
    } catch (error) {
      throw new StoreUnavailableError('GetItem', this.tableName, { cause: error });
    }
  }

  /**
   * Every committed record (paginated `Scan`, strongly consistent). For the local scorecard and tests,
   * not for a hot path.
   *
   * @throws {@link StoreUnavailableError}
   */
  async scanAll(): Promise<ResultRecord[]> {
    const records: ResultRecord[] = [];
    await this.#scan(false, (items) => {
      for (const item of items) records.push(unmarshall(item) as ResultRecord);
    });
    return records;
  }

  /**
   * Number of committed records (paginated `Scan` with `Select: COUNT`).
   *
   * @throws {@link StoreUnavailableError}
   */
  async count(): Promise<number> {
    let total = 0;
    await this.#scan(true, (_items, count) => {
      total += count;
    });
    return total;
  }

  async #scan(countOnly: boolean, onPage: (items: Record<string, AttributeValue>[], count: number) => void): Promise<void> {
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      try {
        const page = await this.#dynamodb.send(
          new ScanCommand({
            TableName: this.tableName,
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
            ...(countOnly ? { Select: 'COUNT' as const } : {}),
          }),
        );
        onPage(page.Items ?? [], page.Count ?? 0);
        startKey = page.LastEvaluatedKey;
      } catch (error) {
        throw new StoreUnavailableError('Scan', this.tableName, { cause: error });
      }
    } while (startKey);
  }

  #toItem(record: ResultRecord): Record<string, AttributeValue> {
    if (typeof record.idempotencyKey !== 'string' || record.idempotencyKey.length === 0) {
      throw new StoreRecordInvalidError('result record has no idempotencyKey', this.tableName);
    }
    const committedMs = Date.parse(record.committedAt);
    const expiresAt =
      this.#retentionSeconds !== undefined && Number.isFinite(committedMs) ? { expiresAt: Math.floor(committedMs / 1000) + this.#retentionSeconds } : {};
    try {
      return marshall({ ...record, ...expiresAt }, { removeUndefinedValues: true, convertClassInstanceToMap: false });
    } catch (error) {
      // The marshaller's message may quote a value of the result: keep it only as the cause.
      throw new StoreRecordInvalidError(`result record of job ${record.jobId} cannot be stored in DynamoDB`, this.tableName, { cause: error });
    }
  }
}
