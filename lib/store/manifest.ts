/**
 * The batch lane's manifest (`MANIFEST_TABLE`): one partition per batch, a header item (`itemId`
 * {@link HEADER_ITEM_ID}) and one item per document, keyed by the record id sent to the provider
 * (`custom_id` / `recordId`, {@link itemIdFor}). Every item ends in one known state, moved only along
 * {@link ITEM_TRANSITIONS} by conditional updates, so reconciling twice changes nothing; an item handed
 * to the queue lane is claimed first ({@link BatchManifest.claimSend}), so only one caller sends it. Items carry
 * references, hashes and sizes, never document text: records are built field by field from the input.
 * The states, moves, ids and shapes are in `manifest-model.ts`.
 */
import {
  BatchWriteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
  type ScanCommandInput,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { setTimeout as delay } from 'node:timers/promises';
import { errorName, shortMessage } from '../platform/errors.js';
import { StoreRecordInvalidError, StoreUnavailableError, type StoreOperation } from './errors.js';
import {
  BATCH_WRITE_CHUNK,
  BatchExistsError,
  type BatchHeader,
  type BatchItem,
  canMoveItem,
  DEFAULT_MANIFEST_RETENTION_DAYS,
  HEADER_ITEM_ID,
  type HeaderChange,
  type HeaderWrite,
  ITEM_STATES,
  type ItemMove,
  type ItemSettlement,
  type ItemState,
  ItemTransitionError,
  MANIFEST_ID_PATTERN,
  prepareBatch,
  providerJobRefOf,
  reasonOf,
  type NewBatch,
  type NewBatchItem,
  type SendClaim,
  PROVIDER_JOB_STATES,
  PROVIDER_JOB_TRANSITIONS,
  type ProviderJobRef,
} from './manifest-model.js';
import { MANIFEST_TABLE } from './tables.js';

/** Construction options of {@link BatchManifest}. */
export interface BatchManifestOptions {
  dynamodb: DynamoDBClient;
  tableName: string;
  retentionDays?: number;
  /** `BatchWriteItem` calls per chunk before unprocessed items fail the creation (default 8). */
  maxBatchWriteAttempts?: number;
  /** Chunks written at once (default 4). */
  writeConcurrency?: number;
  now?: () => Date;
  /** Waits between unprocessed-item retries, for tests. */
  sleep?: (ms: number) => Promise<void>;
}

type Item = Record<string, AttributeValue>;
type Operation = StoreOperation | 'UpdateItem' | 'BatchWriteItem';
const PK = MANIFEST_TABLE.partitionKey;
const SK = MANIFEST_TABLE.sortKey as string;

/** A DynamoDB failure; `StoreOperation` has no `UpdateItem` / `BatchWriteItem` yet, so those report as `PutItem`, named in the message. */
function unavailable(operation: Operation, tableName: string, cause: unknown, message?: string): StoreUnavailableError {
  const reported: StoreOperation = operation === 'UpdateItem' || operation === 'BatchWriteItem' ? 'PutItem' : operation;
  return new StoreUnavailableError(reported, tableName, {
    cause,
    message: message ?? `${operation} on table ${tableName} failed: ${errorName(cause) ?? 'Error'}: ${shortMessage(cause)}`,
  });
}

function headerOf(item: Item): BatchHeader {
  const { itemId: _sk, providerJobs, erasedItems, ...rest } = unmarshall(item);
  const jobs = Object.values((providerJobs ?? {}) as Record<string, ProviderJobRef>).sort((a, b) => (a.partId < b.partId ? -1 : 1));
  const erased = erasedItems instanceof Set ? [...(erasedItems as Set<string>)].sort() : [];
  return { ...rest, providerJobs: jobs, ...(erased.length > 0 ? { erasedItems: erased } : {}) } as BatchHeader;
}

const itemOf = (item: Item): BatchItem => unmarshall(item) as BatchItem;

/** A lane's batch manifests in DynamoDB. */
export class BatchManifest {
  readonly tableName: string;
  readonly #dynamodb: DynamoDBClient;
  readonly #retentionSeconds: number;
  readonly #maxAttempts: number;
  readonly #concurrency: number;
  readonly #now: () => Date;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: BatchManifestOptions) {
    this.#dynamodb = options.dynamodb;
    this.tableName = options.tableName;
    this.#retentionSeconds = Math.round((options.retentionDays ?? DEFAULT_MANIFEST_RETENTION_DAYS) * 24 * 3600);
    this.#maxAttempts = Math.max(1, options.maxBatchWriteAttempts ?? 8);
    this.#concurrency = Math.max(1, options.writeConcurrency ?? 4);
    this.#now = options.now ?? (() => new Date());
    this.#sleep = options.sleep ?? ((ms) => delay(ms).then(() => undefined));
  }

  /**
   * Creates a batch: the header first, `submitting`, by a conditional put (the batch id is claimed once),
   * then the items, `prepared`, in `BatchWriteItem` chunks of 25 (unprocessed items retried a bounded number
   * of times). A creation cut short leaves a `submitting` header with fewer items than `itemCount`.
   *
   * @throws {@link StoreRecordInvalidError} for an invalid or duplicate id, field or part; nothing is written.
   * @throws {@link BatchExistsError} when the batch id is taken.
   * @throws {@link StoreUnavailableError} when a write fails or items stay unprocessed.
   */
  async createBatch(batch: NewBatch, items: readonly NewBatchItem[]): Promise<BatchHeader> {
    const { header, items: records } = prepareBatch(batch, items, { now: this.#now(), retentionSeconds: this.#retentionSeconds, tableName: this.tableName });
    const { batchId } = header;
    const jobs = Object.fromEntries(header.providerJobs.map((ref) => [ref.partId, ref]));
    try {
      await this.#dynamodb.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: marshall({ ...header, [SK]: HEADER_ITEM_ID, providerJobs: jobs }, { removeUndefinedValues: true }),
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': PK },
        }),
      );
    } catch (error) {
      if (errorName(error) === 'ConditionalCheckFailedException') throw new BatchExistsError(batchId, this.tableName, { cause: error });
      if (errorName(error) === 'ValidationException')
        throw new StoreRecordInvalidError(`batch ${batchId} header was refused by DynamoDB`, this.tableName, { cause: error });
      throw unavailable('PutItem', this.tableName, error);
    }
    const chunks: WriteRequest[][] = [];
    for (let i = 0; i < records.length; i += BATCH_WRITE_CHUNK) {
      chunks.push(records.slice(i, i + BATCH_WRITE_CHUNK).map((r) => ({ PutRequest: { Item: marshall(r, { removeUndefinedValues: true }) } })));
    }
    let next = 0;
    let failed = false;
    const worker = async (): Promise<void> => {
      while (!failed && next < chunks.length) {
        await this.#writeChunk(batchId, chunks[next++] as WriteRequest[]).catch((error: unknown) => {
          failed = true;
          throw error;
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#concurrency, chunks.length) }, worker));
    return header;
  }

  /** The header of `batchId` (strongly consistent), or `undefined`. @throws {@link StoreUnavailableError} */
  async header(batchId: string): Promise<BatchHeader | undefined> {
    const item = await this.#get(batchId, HEADER_ITEM_ID);
    return item ? headerOf(item) : undefined;
  }

  /** One item (strongly consistent), or `undefined`. @throws {@link StoreUnavailableError} */
  async item(batchId: string, itemId: string): Promise<BatchItem | undefined> {
    const item = await this.#get(batchId, itemId);
    return item ? itemOf(item) : undefined;
  }

  /** Every item of a batch in item id order (paginated, strongly consistent `Query`), not the header. @throws {@link StoreUnavailableError} */
  async items(batchId: string): Promise<BatchItem[]> {
    const items: BatchItem[] = [];
    await this.#queryItems(batchId, false, (page) => {
      for (const item of page) items.push(itemOf(item));
    });
    return items;
  }

  /**
   * Every batch item of `sourceId` in the lane's batches (a filtered, paginated `Scan`: the manifest has no
   * index by source; an operator's erasure reads it, never a hot path).
   *
   * @throws {@link StoreUnavailableError}
   */
  async itemsOfSource(sourceId: string): Promise<BatchItem[]> {
    const items = await this.#scan({ FilterExpression: 'sourceId = :sourceId', ExpressionAttributeValues: { ':sourceId': { S: sourceId } } });
    return items.map(itemOf);
  }

  /** How many items of a batch are in each state (every state present, zero or more). @throws {@link StoreUnavailableError} */
  async counts(batchId: string): Promise<Record<ItemState, number>> {
    const counts = Object.fromEntries(ITEM_STATES.map((s) => [s, 0])) as Record<ItemState, number>;
    await this.#queryItems(batchId, true, (page) => {
      for (const item of page) {
        const state = item.state?.S as ItemState | undefined;
        if (state !== undefined && state in counts) counts[state] += 1;
      }
    });
    return counts;
  }

  /**
   * The headers of a lane's batches, oldest first (a paginated `Scan` filtered on header items: for ops, not a hot path).
   *
   * @throws {@link StoreUnavailableError}
   */
  async listBatches(lane: string): Promise<BatchHeader[]> {
    const items = await this.#scan({
      FilterExpression: '#sk = :header AND #lane = :lane',
      ExpressionAttributeNames: { '#sk': SK, '#lane': 'lane' },
      ExpressionAttributeValues: { ':header': { S: HEADER_ITEM_ID }, ':lane': { S: lane } },
    });
    const headers = items.map(headerOf);
    return headers.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.batchId.localeCompare(b.batchId));
  }

  /**
   * Changes the header if it is still at `expectedVersion` (conditional `UpdateItem`); the version goes up by one.
   *
   * @throws {@link StoreUnavailableError}
   */
  async updateHeader(batchId: string, expectedVersion: number, change: HeaderChange): Promise<HeaderWrite> {
    const names: Record<string, string> = { '#pk': PK, '#version': 'version', '#updatedAt': 'updatedAt' };
    const values: Item = { ':expected': { N: String(expectedVersion) } };
    const sets: string[] = [];
    if (change.state !== undefined) {
      sets.push('#state = :state');
      names['#state'] = 'state';
      values[':state'] = { S: change.state };
    }
    if (change.reason !== undefined) {
      sets.push('#reason = :reason');
      names['#reason'] = 'reason';
      values[':reason'] = { S: reasonOf(change.reason) as string };
    }
    return this.#updateHeader(batchId, sets, '#version = :expected', names, values);
  }

  /**
   * Adds `itemIds` to the batch's erased items waiting for the reconciler ({@link BatchHeader.erasedItems}):
   * a set update, so two erasures at once both stay marked. Nothing for a batch that does not exist.
   *
   * @throws {@link StoreUnavailableError}
   */
  async markErased(batchId: string, itemIds: readonly string[]): Promise<void> {
    await this.#erasedItems(batchId, 'ADD', itemIds);
  }

  /**
   * Takes `itemIds` off the batch's erased items once their records are gone from the provider's files
   * (an erasure marking others meanwhile keeps them marked), and records when.
   *
   * @throws {@link StoreUnavailableError}
   */
  async clearErased(batchId: string, itemIds: readonly string[]): Promise<void> {
    await this.#erasedItems(batchId, 'DELETE', itemIds);
  }

  async #erasedItems(batchId: string, action: 'ADD' | 'DELETE', itemIds: readonly string[]): Promise<void> {
    if (itemIds.length === 0) return;
    const now = this.#now().toISOString();
    try {
      await this.#dynamodb.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [PK]: { S: batchId }, [SK]: { S: HEADER_ITEM_ID } },
          UpdateExpression: `${action} #erased :ids SET #updatedAt = :now${action === 'DELETE' ? ', #erasedAt = :now' : ''}`,
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: {
            '#pk': PK,
            '#erased': 'erasedItems',
            '#updatedAt': 'updatedAt',
            ...(action === 'DELETE' ? { '#erasedAt': 'providerRecordsErasedAt' } : {}),
          },
          ExpressionAttributeValues: { ':ids': { SS: [...new Set(itemIds)] }, ':now': { S: now } },
        }),
      );
    } catch (error) {
      if (errorName(error) === 'ConditionalCheckFailedException') return;
      throw unavailable('UpdateItem', this.tableName, error);
    }
  }

  /**
   * Records one provider job in the header, by `partId`: a new part is added in any state; a known part
   * is replaced only along {@link PROVIDER_JOB_TRANSITIONS} (a stale poll cannot move it back). The
   * header's version goes up by one.
   *
   * @throws {@link StoreRecordInvalidError} for an invalid `partId`.
   * @throws {@link StoreUnavailableError}
   */
  async setProviderJob(batchId: string, ref: ProviderJobRef): Promise<HeaderWrite> {
    if (!MANIFEST_ID_PATTERN.test(ref.partId))
      throw new StoreRecordInvalidError(`batch ${batchId}: provider job part ${ref.partId} is invalid`, this.tableName);
    const from = PROVIDER_JOB_STATES.filter((s) => PROVIDER_JOB_TRANSITIONS[s].includes(ref.state));
    const names: Record<string, string> = { '#pk': PK, '#version': 'version', '#updatedAt': 'updatedAt', '#jobs': 'providerJobs', '#part': ref.partId };
    const values: Item = { ':ref': { M: marshall(providerJobRefOf(ref), { removeUndefinedValues: true }) } };
    from.forEach((s, i) => {
      values[`:from${i}`] = { S: s };
    });
    if (from.length > 0) names['#state'] = 'state';
    const known = from.length > 0 ? ` OR #jobs.#part.#state IN (${from.map((_, i) => `:from${i}`).join(', ')})` : '';
    return this.#updateHeader(batchId, ['#jobs.#part = :ref'], `(attribute_not_exists(#jobs.#part)${known})`, names, values);
  }

  /**
   * Moves one item to `move.to` if it is in one of `move.from` (and, with `move.version`, still at that
   * version) by a conditional `UpdateItem`: a second reconcile of the same item does not move it again
   * (`moved: false` with the item as it is). A claim (`claimUntil`) ends with the move.
   *
   * @throws {@link ItemTransitionError} when a `from` state cannot reach `to` in {@link ITEM_TRANSITIONS},
   *   or `to` is `sending` (see {@link BatchManifest.claimSend}); nothing is written.
   * @throws {@link StoreUnavailableError}
   */
  async settleItem(batchId: string, itemId: string, move: ItemMove): Promise<ItemSettlement> {
    const refused = move.from.filter((s) => !canMoveItem(s, move.to));
    if (move.from.length === 0 || refused.length > 0 || move.to === 'sending') {
      throw new ItemTransitionError(`item ${itemId} of batch ${batchId}: no move from [${refused.join(', ')}] to ${move.to}`);
    }
    const names: Record<string, string> = {
      '#sk': SK,
      '#state': 'state',
      '#version': 'version',
      '#updatedAt': 'updatedAt',
      '#reason': 'reason',
      '#claim': 'claimUntil',
    };
    const values: Item = { ':to': { S: move.to }, ':now': { S: this.#now().toISOString() }, ':one': { N: '1' } };
    move.from.forEach((s, i) => {
      values[`:from${i}`] = { S: s };
    });
    const sets = ['#state = :to', '#updatedAt = :now', '#version = #version + :one'];
    if (move.reason !== undefined) {
      sets.push('#reason = :reason');
      values[':reason'] = { S: reasonOf(move.reason) as string };
    }
    if (move.providerJobId !== undefined) {
      sets.push('#pj = :pj');
      names['#pj'] = 'providerJobId';
      values[':pj'] = { S: move.providerJobId };
    }
    let condition = `attribute_exists(#sk) AND #state IN (${move.from.map((_, i) => `:from${i}`).join(', ')})`;
    if (move.version !== undefined) {
      condition += ' AND #version = :version';
      values[':version'] = { N: String(move.version) };
    }
    const removes = ['#claim', ...(move.reason === undefined ? ['#reason'] : [])];
    return this.#updateItem(batchId, itemId, `SET ${sets.join(', ')} REMOVE ${removes.join(', ')}`, condition, names, values);
  }

  /**
   * Claims one item for sending it to the queue lane: it moves to `sending` (its claim ending
   * `claim.leaseMs` from now) if it is in one of `claim.from` — for `sending`, only when its claim lapsed
   * or was released. One conditional `UpdateItem`: of callers claiming the same item at once, one gets
   * `moved: true` (the item with the version to settle it at), the others `moved: false`.
   *
   * @throws {@link ItemTransitionError} for an empty `from` or a non-positive lease; nothing is written.
   * @throws {@link StoreUnavailableError}
   */
  async claimSend(batchId: string, itemId: string, claim: SendClaim): Promise<ItemSettlement> {
    if (claim.from.length === 0 || !(claim.leaseMs > 0)) throw new ItemTransitionError(`item ${itemId} of batch ${batchId}: an empty or unbounded claim`);
    const now = this.#now();
    const names: Record<string, string> = { '#sk': SK, '#state': 'state', '#version': 'version', '#updatedAt': 'updatedAt', '#claim': 'claimUntil' };
    const values: Item = {
      ':sending': { S: 'sending' },
      ':now': { S: now.toISOString() },
      ':until': { S: new Date(now.getTime() + claim.leaseMs).toISOString() },
      ':one': { N: '1' },
    };
    const alternatives = claim.from.map((s, i) => {
      if (s === 'sending') return '#state = :sending AND (attribute_not_exists(#claim) OR #claim <= :now)';
      values[`:from${i}`] = { S: s };
      return `#state = :from${i}`;
    });
    // DynamoDB refuses redundant parentheses: one alternative stands as it is.
    const which = alternatives.length === 1 ? alternatives[0] : `(${alternatives.map((a) => (a.includes(' AND ') ? `(${a})` : a)).join(' OR ')})`;
    const sets = ['#state = :sending', '#claim = :until', '#updatedAt = :now', '#version = #version + :one'];
    if (claim.reason !== undefined) {
      sets.push('#reason = :reason');
      names['#reason'] = 'reason';
      values[':reason'] = { S: reasonOf(claim.reason) as string };
    }
    return this.#updateItem(batchId, itemId, `SET ${sets.join(', ')}`, `attribute_exists(#sk) AND ${which}`, names, values);
  }

  /**
   * Releases a claim whose send failed: the item stays `sending`, its claim removed, so the next pass
   * (or redrive) takes it again at once. Only if it is still at `version` (the claim is still the caller's).
   *
   * @throws {@link StoreUnavailableError}
   */
  async releaseClaim(batchId: string, itemId: string, version: number): Promise<ItemSettlement> {
    const names: Record<string, string> = { '#sk': SK, '#state': 'state', '#version': 'version', '#updatedAt': 'updatedAt', '#claim': 'claimUntil' };
    const values: Item = { ':sending': { S: 'sending' }, ':version': { N: String(version) }, ':now': { S: this.#now().toISOString() }, ':one': { N: '1' } };
    const update = 'SET #updatedAt = :now, #version = #version + :one REMOVE #claim';
    return this.#updateItem(batchId, itemId, update, 'attribute_exists(#sk) AND #state = :sending AND #version = :version', names, values);
  }

  async #updateItem(batchId: string, itemId: string, update: string, condition: string, names: Record<string, string>, values: Item): Promise<ItemSettlement> {
    try {
      const out = await this.#dynamodb.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [PK]: { S: batchId }, [SK]: { S: itemId } },
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { moved: true, item: itemOf(out.Attributes ?? {}) };
    } catch (error) {
      if (errorName(error) !== 'ConditionalCheckFailedException') throw unavailable('UpdateItem', this.tableName, error);
      const old = (error as { Item?: Item }).Item;
      return { moved: false, current: old && Object.keys(old).length > 0 ? itemOf(old) : await this.item(batchId, itemId) };
    }
  }

  async #updateHeader(batchId: string, sets: string[], condition: string, names: Record<string, string>, values: Item): Promise<HeaderWrite> {
    if (sets.length === 0) throw new StoreRecordInvalidError(`header update of batch ${batchId} changes nothing`, this.tableName);
    try {
      const out = await this.#dynamodb.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [PK]: { S: batchId }, [SK]: { S: HEADER_ITEM_ID } },
          UpdateExpression: `SET ${[...sets, '#updatedAt = :now', '#version = #version + :one'].join(', ')}`,
          ConditionExpression: `attribute_exists(#pk) AND ${condition}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ...values, ':now': { S: this.#now().toISOString() }, ':one': { N: '1' } },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { ok: true, header: headerOf(out.Attributes ?? {}) };
    } catch (error) {
      if (errorName(error) !== 'ConditionalCheckFailedException') throw unavailable('UpdateItem', this.tableName, error);
      const old = (error as { Item?: Item }).Item;
      return { ok: false, current: old && Object.keys(old).length > 0 ? headerOf(old) : await this.header(batchId) };
    }
  }

  async #writeChunk(batchId: string, requests: WriteRequest[]): Promise<void> {
    let pending = requests;
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await this.#dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [this.tableName]: pending } }));
        pending = out.UnprocessedItems?.[this.tableName] ?? [];
      } catch (error) {
        if (errorName(error) === 'ValidationException')
          throw new StoreRecordInvalidError(`items of batch ${batchId} were refused by DynamoDB`, this.tableName, { cause: error });
        throw unavailable('BatchWriteItem', this.tableName, error);
      }
      if (pending.length === 0) return;
      if (attempt >= this.#maxAttempts) {
        const message = `BatchWriteItem on table ${this.tableName} left ${pending.length} items of batch ${batchId} unprocessed after ${attempt} attempts`;
        throw unavailable('BatchWriteItem', this.tableName, new Error('UnprocessedItems'), message);
      }
      await this.#sleep(Math.random() * Math.min(1000, 25 * 2 ** attempt));
    }
  }

  async #get(batchId: string, itemId: string): Promise<Item | undefined> {
    try {
      const key = { [PK]: { S: batchId }, [SK]: { S: itemId } };
      return (await this.#dynamodb.send(new GetItemCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }))).Item;
    } catch (error) {
      throw unavailable('GetItem', this.tableName, error);
    }
  }

  /** Every item a filtered, paginated, strongly consistent `Scan` of the table returns. */
  async #scan(filter: Pick<ScanCommandInput, 'FilterExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>): Promise<Item[]> {
    const items: Item[] = [];
    let startKey: Item | undefined;
    do {
      try {
        const page = await this.#dynamodb.send(new ScanCommand({ TableName: this.tableName, ConsistentRead: true, ...filter, ExclusiveStartKey: startKey }));
        items.push(...(page.Items ?? []));
        startKey = page.LastEvaluatedKey;
      } catch (error) {
        throw unavailable('Scan', this.tableName, error);
      }
    } while (startKey);
    return items;
  }

  async #queryItems(batchId: string, stateOnly: boolean, onPage: (items: Item[]) => void): Promise<void> {
    let startKey: Item | undefined;
    do {
      try {
        const page = await this.#dynamodb.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: '#pk = :batchId AND begins_with(#sk, :r)',
            ExpressionAttributeNames: { '#pk': PK, '#sk': SK, ...(stateOnly ? { '#state': 'state' } : {}) },
            ExpressionAttributeValues: { ':batchId': { S: batchId }, ':r': { S: 'r' } },
            ...(stateOnly ? { ProjectionExpression: '#state' } : {}),
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        );
        onPage(page.Items ?? []);
        startKey = page.LastEvaluatedKey;
      } catch (error) {
        throw unavailable('Query', this.tableName, error);
      }
    } while (startKey);
  }
}
