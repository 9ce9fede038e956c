/**
 * Creates a lane table from its {@link TableShape} when it does not exist yet. Used by the local stack
 * and the tests; in AWS the CDK stack owns the tables (same shapes, from `tables.ts`).
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  type KeySchemaElement,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorName } from '../platform/errors.js';
import { StoreUnavailableError, TableShapeMismatchError, type StoreOperation } from './errors.js';
import type { TableShape } from './tables.js';

/** Options of {@link ensureTable}. */
export interface EnsureTableOptions {
  /** How long to wait for the table to become ACTIVE (default 60 s). */
  timeoutMs?: number;
  /** Delay between DescribeTable polls (default 250 ms). */
  pollIntervalMs?: number;
}

function keySchemaOf(shape: Pick<TableShape, 'partitionKey' | 'sortKey'>): KeySchemaElement[] {
  return [{ AttributeName: shape.partitionKey, KeyType: 'HASH' }, ...(shape.sortKey ? [{ AttributeName: shape.sortKey, KeyType: 'RANGE' as const }] : [])];
}

function attributeDefinitionsOf(shape: TableShape): AttributeDefinition[] {
  const names = new Set([...keySchemaOf(shape), ...(shape.indexes ?? []).flatMap(keySchemaOf)].map((k) => k.AttributeName as string));
  return [...names].map((name) => ({ AttributeName: name, AttributeType: 'S' }));
}

function indexesOf(shape: TableShape): GlobalSecondaryIndex[] | undefined {
  if (!shape.indexes?.length) return undefined;
  return shape.indexes.map((index) => ({ IndexName: index.name, KeySchema: keySchemaOf(index), Projection: { ProjectionType: 'ALL' } }));
}

async function call<T>(operation: StoreOperation, tableName: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new StoreUnavailableError(operation, tableName, { cause: error });
  }
}

function assertKeySchema(tableName: string, shape: TableShape, table: TableDescription | undefined): void {
  const want = keySchemaOf(shape)
    .map((k) => `${k.AttributeName}:${k.KeyType}`)
    .join(',');
  const have = (table?.KeySchema ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`).join(',');
  if (have !== want) {
    throw new TableShapeMismatchError(`table ${tableName} exists with key schema [${have}], expected [${want}]`, tableName);
  }
  const indexes = new Set((table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName));
  const missing = (shape.indexes ?? []).filter((i) => !indexes.has(i.name)).map((i) => i.name);
  if (missing.length > 0) throw new TableShapeMismatchError(`table ${tableName} exists without the index(es) ${missing.join(', ')}`, tableName);
}

async function waitUntilActive(dynamodb: DynamoDBClient, tableName: string, timeoutMs: number, pollIntervalMs: number): Promise<TableDescription> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const described = await call('DescribeTable', tableName, () => dynamodb.send(new DescribeTableCommand({ TableName: tableName })));
    if (described.Table?.TableStatus === 'ACTIVE') return described.Table;
    if (Date.now() >= deadline) {
      throw new StoreUnavailableError('DescribeTable', tableName, {
        cause: new Error(`status ${described.Table?.TableStatus ?? 'unknown'}`),
        message: `table ${tableName} did not become ACTIVE within ${timeoutMs} ms (status ${described.Table?.TableStatus ?? 'unknown'})`,
      });
    }
    await sleep(pollIntervalMs);
  }
}

async function ensureTimeToLive(dynamodb: DynamoDBClient, tableName: string, attribute: string): Promise<void> {
  const current = await call('DescribeTimeToLive', tableName, () => dynamodb.send(new DescribeTimeToLiveCommand({ TableName: tableName })));
  const status = current.TimeToLiveDescription?.TimeToLiveStatus;
  const currentAttribute = current.TimeToLiveDescription?.AttributeName;
  if (status === 'ENABLED' || status === 'ENABLING') {
    if (currentAttribute === attribute) return;
    throw new TableShapeMismatchError(`table ${tableName} has TTL on ${currentAttribute ?? '?'}, expected ${attribute}`, tableName);
  }
  await call('UpdateTimeToLive', tableName, () =>
    dynamodb.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { Enabled: true, AttributeName: attribute } })),
  );
}

/**
 * Makes sure `tableName` exists with the key schema of `shape` (string keys, on-demand billing), is
 * ACTIVE, and has TTL enabled on `shape.ttlAttribute` when one is given. Idempotent: an existing table
 * (`ResourceInUseException`) is accepted when its key schema matches.
 *
 * @throws {@link TableShapeMismatchError} when an existing table has another key schema or TTL attribute.
 * @throws {@link StoreUnavailableError} when a DynamoDB call fails or the table does not become ACTIVE in time.
 */
export async function ensureTable(dynamodb: DynamoDBClient, tableName: string, shape: TableShape, options: EnsureTableOptions = {}): Promise<void> {
  const { timeoutMs = 60_000, pollIntervalMs = 250 } = options;
  try {
    await dynamodb.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: keySchemaOf(shape),
        AttributeDefinitions: attributeDefinitionsOf(shape),
        GlobalSecondaryIndexes: indexesOf(shape),
      }),
    );
  } catch (error) {
    if (errorName(error) !== 'ResourceInUseException') {
      throw new StoreUnavailableError('CreateTable', tableName, { cause: error });
    }
  }
  const table = await waitUntilActive(dynamodb, tableName, timeoutMs, pollIntervalMs);
  assertKeySchema(tableName, shape, table);
  if (shape.ttlAttribute) await ensureTimeToLive(dynamodb, tableName, shape.ttlAttribute);
}
