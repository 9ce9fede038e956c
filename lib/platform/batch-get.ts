/**
 * One table's items by key, read with strongly consistent `BatchGetItem`s (100 keys each): one round trip
 * where a `GetItem` per key costs a request each. Keys DynamoDB leaves unprocessed (throttling) are asked
 * again, {@link BATCH_GET_ATTEMPTS} times in all, a little later each time, as AWS documents; still
 * unprocessed, the read fails with {@link UnprocessedKeysError}. SDK errors pass through: each adapter
 * turns either into its own store error.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BatchGetItemCommand,
  type AttributeValue,
  type BatchGetItemCommandOutput,
  type DynamoDBClient,
  type KeysAndAttributes,
} from '@aws-sdk/client-dynamodb';
import { RatelaneError } from './errors.js';

/** The most keys one `BatchGetItem` takes. */
const BATCH_GET_MAX_KEYS = 100;
/** Tries of a `BatchGetItem` that leaves keys unprocessed, the first included. */
const BATCH_GET_ATTEMPTS = 3;
/** The wait before the second try (doubling after). */
const BATCH_GET_BACKOFF_MS = 20;

/** Keys were still unprocessed after {@link BATCH_GET_ATTEMPTS} tries. */
class UnprocessedKeysError extends RatelaneError {
  override readonly name = 'UnprocessedKeysError';
  readonly kind = 'unavailable' as const;
  readonly retryable = true;

  constructor(readonly tableName: string) {
    super(`BatchGetItem on table ${tableName}: keys still unprocessed after ${BATCH_GET_ATTEMPTS} attempts`);
  }
}

/** The items of `keys` in `tableName` that exist (in no particular order). @throws {@link UnprocessedKeysError}, or the SDK's error. */
export async function batchGetConsistent(
  dynamodb: DynamoDBClient,
  tableName: string,
  keys: readonly Record<string, AttributeValue>[],
): Promise<Record<string, AttributeValue>[]> {
  const found: Record<string, AttributeValue>[] = [];
  for (let start = 0; start < keys.length; start += BATCH_GET_MAX_KEYS) {
    let request: Record<string, KeysAndAttributes> | undefined = {
      [tableName]: { Keys: keys.slice(start, start + BATCH_GET_MAX_KEYS), ConsistentRead: true },
    };
    for (let attempt = 0; request && attempt < BATCH_GET_ATTEMPTS; attempt++) {
      if (attempt > 0) await sleep(BATCH_GET_BACKOFF_MS * 2 ** (attempt - 1));
      const out: BatchGetItemCommandOutput = await dynamodb.send(new BatchGetItemCommand({ RequestItems: request }));
      found.push(...(out.Responses?.[tableName] ?? []));
      request = out.UnprocessedKeys?.[tableName]?.Keys?.length ? out.UnprocessedKeys : undefined;
    }
    if (request) throw new UnprocessedKeysError(tableName);
  }
  return found;
}
