/**
 * A source's erasure in the lane's ledger table: its tombstone (source id, content hashes, when, by whom,
 * the receipt), the jobs of the source (the claims the ledger indexes by source, `bySource`), a job's
 * items removed (its claim and entries) and the job's `#erased` marker left in their place.
 *
 * The tombstone is what keeps an erased source erased: a job of it that is queued, waiting or in flight
 * is stopped at its next receive ({@link ErasureLedger.tombstone}) and can never commit afterwards — the
 * results store commits only while no tombstone of the job's source holds ({@link erasedCondition}, one
 * transaction with the result's conditional put). Tombstones carry no TTL: they last as long as the
 * table. Reasons and references only: no document text.
 */
import {
  BatchWriteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type ConditionCheck,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { errorName } from '../platform/errors.js';
import { StoreUnavailableError } from './errors.js';
import { sourceKeyOf } from './source-key.js';
import { LEDGER_SOURCE_INDEX, LEDGER_TABLE } from './tables.js';

/** The sort key of a source's tombstone (its partition is the source key). */
const TOMBSTONE_ENTRY_ID = '#tombstone';
/** The sort key of a job's erased marker (in the job's partition). */
const ERASED_ENTRY_ID = '#erased';
/** DynamoDB's most items per `BatchWriteItem`. */
const MAX_BATCH_WRITE = 25;

/** The key of `sourceId`'s tombstone in the ledger table. */
export function tombstoneKey(sourceId: string): Record<string, AttributeValue> {
  return marshall({ [LEDGER_TABLE.partitionKey]: sourceKeyOf(sourceId), [LEDGER_TABLE.sortKey as string]: TOMBSTONE_ENTRY_ID });
}

/** What a lane does with a job of an erased source that was created after the erasure. */
export type AfterErasure = 'refuse' | 'accept';

/** A source's tombstone. */
export interface Tombstone {
  sourceId: string;
  sourceKey: string;
  /** When the source was first erased (ISO 8601). */
  erasedAt: string;
  /** Who erased it first. */
  erasedBy: string;
  /** The content hashes of the source's documents erased so far. */
  contentSha256s: string[];
  /** How many erasures ran (an erasure run again adds one). */
  erasures: number;
}

/** A job of a source, as its claim in the ledger has it. */
export interface SourceJob {
  jobId: string;
  idempotencyKey: string;
  contentSha256: string;
}

/**
 * The condition a commit of a job of `sourceId` is written under (a `ConditionCheck` of a transaction):
 * no tombstone of the source — or, where the lane accepts what is submitted after an erasure, none from
 * after the job's creation.
 */
export function erasedCondition(ledgerTable: string, sourceId: string, job: { createdAt: string }, after: AfterErasure): ConditionCheck {
  const key = tombstoneKey(sourceId);
  return after === 'accept'
    ? {
        TableName: ledgerTable,
        Key: key,
        ConditionExpression: 'attribute_not_exists(#pk) OR erasedAt < :createdAt',
        ExpressionAttributeNames: { '#pk': LEDGER_TABLE.partitionKey },
        ExpressionAttributeValues: { ':createdAt': { S: job.createdAt } },
      }
    : { TableName: ledgerTable, Key: key, ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': LEDGER_TABLE.partitionKey } };
}

/** Whether `tombstone` stops a job created at `createdAt` under the lane's policy. */
export function erasedFor(tombstone: Tombstone | undefined, createdAt: string, after: AfterErasure): boolean {
  if (!tombstone) return false;
  return after === 'refuse' || !(tombstone.erasedAt < createdAt);
}

/** Construction options of {@link ErasureLedger}. */
export interface ErasureLedgerOptions {
  dynamodb: DynamoDBClient;
  /** The lane's ledger table. */
  tableName: string;
  /** Days a job's erased marker is kept (the ledger's retention). */
  retentionDays: number;
  now?: () => Date;
}

/** Erasure's access to a lane's ledger table. */
export class ErasureLedger {
  readonly tableName: string;
  readonly #dynamodb: DynamoDBClient;
  readonly #retentionSeconds: number;
  readonly #now: () => Date;

  constructor(options: ErasureLedgerOptions) {
    this.#dynamodb = options.dynamodb;
    this.tableName = options.tableName;
    this.#retentionSeconds = Math.round(options.retentionDays * 86_400);
    this.#now = options.now ?? (() => new Date());
  }

  /** The tombstone of `sourceId` (strongly consistent), or `undefined`. @throws {@link StoreUnavailableError} */
  async tombstone(sourceId: string): Promise<Tombstone | undefined> {
    const out = await this.#send('GetItem', () =>
      this.#dynamodb.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: tombstoneKey(sourceId),
          ConsistentRead: true,
        }),
      ),
    );
    return out.Item ? tombstoneOf(unmarshall(out.Item)) : undefined;
  }

  /**
   * Lays the tombstone of `sourceId` (or adds an erasure to the one there, keeping its first time and
   * author), with the content hashes known so far. Returns it as stored.
   *
   * @throws {@link StoreUnavailableError}
   */
  async layTombstone(sourceId: string, by: string, contentSha256s: readonly string[]): Promise<Tombstone> {
    const out = await this.#send('UpdateItem', () =>
      this.#dynamodb.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: tombstoneKey(sourceId),
          UpdateExpression: `SET sourceId = :sourceId, erasedAt = if_not_exists(erasedAt, :at), erasedBy = if_not_exists(erasedBy, :by), erasures = if_not_exists(erasures, :zero) + :one${contentSha256s.length > 0 ? ' ADD contentSha256s :hashes' : ''}`,
          ExpressionAttributeValues: marshall({
            ':sourceId': sourceId,
            ':at': this.#now().toISOString(),
            ':by': by,
            ':zero': 0,
            ':one': 1,
            ...(contentSha256s.length > 0 ? { ':hashes': new Set(contentSha256s) } : {}),
          }),
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return tombstoneOf(unmarshall(out.Attributes ?? {}));
  }

  /** Adds content hashes erased since to the tombstone of `sourceId` (when there is one). @throws {@link StoreUnavailableError} */
  async recordHashes(sourceId: string, contentSha256s: readonly string[]): Promise<void> {
    if (contentSha256s.length === 0) return;
    try {
      await this.#dynamodb.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: tombstoneKey(sourceId),
          UpdateExpression: 'ADD contentSha256s :hashes',
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#pk': LEDGER_TABLE.partitionKey },
          ExpressionAttributeValues: marshall({ ':hashes': new Set(contentSha256s) }),
        }),
      );
    } catch (error) {
      if (errorName(error) !== 'ConditionalCheckFailedException') throw new StoreUnavailableError('UpdateItem', this.tableName, { cause: error });
    }
  }

  /** Every job of `sourceId` the lane claimed (the `bySource` index, every page). @throws {@link StoreUnavailableError} */
  async jobsOf(sourceId: string): Promise<SourceJob[]> {
    const jobs: SourceJob[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.#send('Query', () =>
        this.#dynamodb.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: LEDGER_SOURCE_INDEX.name,
            KeyConditionExpression: '#sk = :sourceKey',
            ExpressionAttributeNames: { '#sk': LEDGER_SOURCE_INDEX.partitionKey },
            ExpressionAttributeValues: { ':sourceKey': { S: sourceKeyOf(sourceId) } },
            ExclusiveStartKey: startKey,
          }),
        ),
      );
      for (const item of page.Items ?? []) {
        const claim = unmarshall(item);
        // The index is keyed by a hash of the source id: the claim's own id is compared too.
        if (claim.sourceId === sourceId) jobs.push({ jobId: claim.jobId, idempotencyKey: claim.idempotencyKey, contentSha256: claim.contentSha256 });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return jobs;
  }

  /**
   * Removes every item of `jobId` (its claim and its entries) and leaves its erased marker instead.
   * Returns how many items were removed.
   *
   * @throws {@link StoreUnavailableError}
   */
  async eraseJob(jobId: string, sourceId: string, by: string): Promise<number> {
    const keys: Record<string, AttributeValue>[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.#send('Query', () =>
        this.#dynamodb.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: '#pk = :jobId',
            ProjectionExpression: '#pk, #sk',
            ExpressionAttributeNames: { '#pk': LEDGER_TABLE.partitionKey, '#sk': LEDGER_TABLE.sortKey as string },
            ExpressionAttributeValues: { ':jobId': { S: jobId } },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        ),
      );
      for (const item of page.Items ?? []) if (item[LEDGER_TABLE.sortKey as string]?.S !== ERASED_ENTRY_ID) keys.push(item);
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    for (let i = 0; i < keys.length; i += MAX_BATCH_WRITE) await this.#deleteAll(keys.slice(i, i + MAX_BATCH_WRITE));
    const at = this.#now();
    await this.#send('PutItem', () =>
      this.#dynamodb.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: marshall({
            [LEDGER_TABLE.partitionKey]: jobId,
            [LEDGER_TABLE.sortKey as string]: ERASED_ENTRY_ID,
            // Not `sourceKey`: the marker stays out of the source index.
            erasedSourceKey: sourceKeyOf(sourceId),
            erasedAt: at.toISOString(),
            erasedBy: by,
            expiresAt: Math.floor(at.getTime() / 1000) + this.#retentionSeconds,
          }),
        }),
      ),
    );
    return keys.length;
  }

  /** When and by whom `jobId` was erased, or `undefined`. @throws {@link StoreUnavailableError} */
  async erasedJob(jobId: string): Promise<{ erasedAt: string; erasedBy: string } | undefined> {
    const out = await this.#send('GetItem', () =>
      this.#dynamodb.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: marshall({ [LEDGER_TABLE.partitionKey]: jobId, [LEDGER_TABLE.sortKey as string]: ERASED_ENTRY_ID }),
          ConsistentRead: true,
        }),
      ),
    );
    if (!out.Item) return undefined;
    const item = unmarshall(out.Item);
    return { erasedAt: String(item.erasedAt), erasedBy: String(item.erasedBy) };
  }

  /** Deletes `keys` (at most 25), again for what DynamoDB leaves unprocessed. */
  async #deleteAll(keys: Record<string, AttributeValue>[]): Promise<void> {
    let requests = keys.map((Key) => ({ DeleteRequest: { Key } }));
    for (let round = 0; requests.length > 0; round += 1) {
      if (round === 5) throw new StoreUnavailableError('BatchWriteItem', this.tableName, { cause: new Error(`${requests.length} deletes left unprocessed`) });
      const out = await this.#send('BatchWriteItem', () => this.#dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [this.tableName]: requests } })));
      requests = (out.UnprocessedItems?.[this.tableName] ?? []).flatMap((r) => (r.DeleteRequest?.Key ? [{ DeleteRequest: { Key: r.DeleteRequest.Key } }] : []));
    }
  }

  async #send<T>(operation: 'GetItem' | 'PutItem' | 'UpdateItem' | 'Query' | 'BatchWriteItem', run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw new StoreUnavailableError(operation, this.tableName, { cause: error });
    }
  }
}

/** A tombstone as its (unmarshalled) ledger item holds it. */
export function tombstoneOf(item: Record<string, unknown>): Tombstone {
  const hashes = item.contentSha256s;
  return {
    sourceId: String(item.sourceId),
    sourceKey: String(item.jobId),
    erasedAt: String(item.erasedAt),
    erasedBy: String(item.erasedBy),
    contentSha256s: hashes instanceof Set ? [...hashes].map(String).sort() : [],
    erasures: Number(item.erasures ?? 1),
  };
}
