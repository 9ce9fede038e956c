/**
 * The lane's rate-state table in DynamoDB (`RATE_STATE_TABLE`: partition key `pk`, TTL `expiresAt`),
 * as the {@link RateStateStore} of `model/store.ts`. This adapter only turns methods into calls; the
 * arithmetic is in `bucket/`, the choices in `decisions/`.
 *
 * Items (`pk`):
 * - `cooldown#key#<key id>` / `cooldown#owner#<quota owner>`: `reason`, `until` (epoch ms),
 *   `untilIso`, `updatedAt`; TTL an hour after `until`. Written only to extend (`until` grows).
 * - `bucket#<quota owner>`: the fields of `BucketState`, each a top-level attribute (`bucket-item.ts`):
 *   the levels' "full again" times (`requestsFullAt`, `tokensFullAt`, a continuous day's
 *   `dailyFullAt`), the fixed day (`dayResetAt`, `dailyUsed`, `reservedDaily`, `reservedDayEnd`), the
 *   retry timeline (`reservedUntil`), the first-call probe (`proven`, `probeUntil`:
 *   `bucket/first-calls.ts`), each flow's clocks (`flow:<id>:until|vt|weight`: `bucket/flows.ts`), the
 *   owner's cooldown again (`coolUntil`, `coolReason`) and a write counter (`version`); TTL two days
 *   after the last write. Changed only by conditional updates whose condition is the quota itself
 *   (`bucket/item-update.ts`): takes move the clocks on with `ADD`, so concurrent takes all land while
 *   the quota allows and two consumers never spend the same tokens.
 *   With a live reserve (`config/reserve.ts`) this is the queue side's bucket, and the owner's live
 *   side has its own, `bucket#<quota owner>#live` ({@link liveBucketId}), alike; `createLaneAdmission`
 *   refuses a lane where that could be another owner's bucket (owners `o` and `o#live`).
 * - `lane#pause`: `until`, `reason`, `pausedAt`; claimed with a conditional put so one consumer
 *   pauses the lane, the others see it is paused.
 * - `lane#limit`: `share`, `until`, `reason`, `limitedAt`: the lane's concurrency reduced to the share
 *   of its quota owners still usable; claimed alike, so one consumer lowers it (and a lower share
 *   replaces a higher one).
 */
import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { batchGetConsistent } from '../../platform/batch-get.js';
import { errorName, RatelaneError, shortMessage } from '../../platform/errors.js';
import type { CooldownReason } from '../../policy/index.js';
import { LIVE_BUCKET_SUFFIX, MAX_BUCKET_SHARDS, shardBucketSuffix, type BucketState, type BucketUpdate } from '../model/bucket.js';
import { bucketOfItem, compileUpdate } from './bucket-item.js';
import type { CooldownRecord, CooldownSnapshot, KeyRef } from '../model/cooldowns.js';
import type { BucketWrite, CooldownsAndBuckets, LanePauseReason, LimitRecord, PauseRecord, RateStateStore } from '../model/store.js';

/** Every reason a pause record may carry. */
const PAUSE_REASONS: readonly LanePauseReason[] = ['quota_exhausted', 'billing', 'auth', 'configuration'];

/** Every reason a limit record may carry. */
const LIMIT_REASONS: readonly LimitRecord['reason'][] = ['quota_exhausted', 'billing', 'auth', 'booked_ahead'];

/** A rate-state call failed (network, throttling, service error): nothing can be assumed written. */
export class RateStateUnavailableError extends RatelaneError {
  override name = 'RateStateUnavailableError';
  readonly kind = 'unavailable';
  readonly retryable = true;
  constructor(
    readonly operation: string,
    readonly tableName: string,
    options: { cause: unknown },
  ) {
    super(`${operation} on rate-state table ${tableName} failed: ${errorName(options.cause) ?? 'Error'}: ${shortMessage(options.cause)}`, options);
  }
}

const COOLDOWN_TTL_GRACE_SECONDS = 3600;
const BUCKET_TTL_SECONDS = 2 * 24 * 3600;
const PAUSE_PK = 'lane#pause';
const LIMIT_PK = 'lane#limit';
/** `until` is a DynamoDB reserved word: conditions name it `#until`. */
const UNTIL = { '#until': 'until' } as const;

/** The partition key of a cooldown item. */
export function cooldownPk(scope: CooldownRecord['scope'], id: string): string {
  return `cooldown#${scope === 'key' ? 'key' : 'owner'}#${id}`;
}

/** What every bucket item's partition key starts with. */
const BUCKET_PK_PREFIX = 'bucket#';

/** The partition key of a quota owner's bucket item (`owner`: a quota owner, or a {@link liveBucketId}). */
function bucketPk(owner: string): string {
  return BUCKET_PK_PREFIX + owner;
}

/**
 * The bucket id of `owner`'s live side (the share of its limits kept for live requests, `config/reserve.ts`):
 * `<owner>#live`, stored as `bucket#<owner>#live`. Bucket items all start `bucket#`, cooldown items
 * `cooldown#`, so it never meets a cooldown or the pause; it would meet the bucket of a quota owner
 * named `<owner>#live`, which `createLaneAdmission` refuses when a reserve is kept.
 */
export function liveBucketId(owner: string): string {
  return owner + LIVE_BUCKET_SUFFIX;
}

const isConditionFailure = (error: unknown): error is { name: string; Item?: Record<string, AttributeValue> } =>
  errorName(error) === 'ConditionalCheckFailedException';

function cooldownOf(item: Record<string, unknown>): CooldownRecord | undefined {
  const pk = String(item.pk ?? '');
  const match = /^cooldown#(key|owner)#(.+)$/.exec(pk);
  if (!match || typeof item.until !== 'number' || typeof item.reason !== 'string') return undefined;
  return {
    scope: match[1] === 'key' ? 'key' : 'quota_owner',
    id: match[2]!,
    reason: item.reason as CooldownReason,
    until: item.until,
    ...(typeof item.fingerprint === 'string' ? { fingerprint: item.fingerprint } : {}),
  };
}

/** {@link RateStateStore} on a DynamoDB table shaped like `RATE_STATE_TABLE`. */
export class DynamoRateStateStore implements RateStateStore {
  private readonly dynamodb: DynamoDBClient;
  readonly tableName: string;

  constructor(options: { dynamodb: DynamoDBClient; tableName: string }) {
    this.dynamodb = options.dynamodb;
    this.tableName = options.tableName;
  }

  private async call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (isConditionFailure(error)) throw error;
      throw new RateStateUnavailableError(operation, this.tableName, { cause: error });
    }
  }

  private async get(pk: string): Promise<Record<string, unknown> | undefined> {
    const out = await this.call('GetItem', () =>
      this.dynamodb.send(new GetItemCommand({ TableName: this.tableName, Key: { pk: { S: pk } }, ConsistentRead: true })),
    );
    return out.Item ? unmarshall(out.Item) : undefined;
  }

  /** One strongly consistent `BatchGetItem` (per 100 keys): one round trip where a `GetItem` per key waits for the slowest. */
  async readCooldowns(keys: readonly KeyRef[]): Promise<CooldownSnapshot> {
    return (await this.readCooldownsAndBuckets(keys, [])).cooldowns;
  }

  /** The cooldowns and the buckets in one strongly consistent `BatchGetItem` (per 100 keys). */
  async readCooldownsAndBuckets(keys: readonly KeyRef[], bucketIds: readonly string[]): Promise<CooldownsAndBuckets> {
    const keyIds = [...new Set(keys.map((k) => k.id))];
    const keyOwners = [...new Set(keys.map((k) => k.quotaOwner))];
    const bucketPks = [...new Set(bucketIds.map(bucketPk))];
    const items = await this.batchGet([...keyIds.map((id) => cooldownPk('key', id)), ...keyOwners.map((o) => cooldownPk('quota_owner', o)), ...bucketPks]);
    const cooldowns = { keys: new Map<string, CooldownRecord>(), owners: new Map<string, CooldownRecord>() };
    const buckets = new Map<string, BucketState>();
    for (const item of items) {
      const pk = String(item.pk ?? '');
      if (pk.startsWith(BUCKET_PK_PREFIX)) {
        const bucket = bucketOfItem(item);
        if (bucket) buckets.set(pk.slice(BUCKET_PK_PREFIX.length), bucket);
        continue;
      }
      const record = cooldownOf(item);
      if (!record) continue;
      (record.scope === 'key' ? cooldowns.keys : cooldowns.owners).set(record.id, record);
    }
    return { cooldowns, buckets };
  }

  /** The items of `pks` that exist, read consistently (`batchGetConsistent`). */
  private async batchGet(pks: readonly string[]): Promise<Record<string, unknown>[]> {
    const items = await this.call('BatchGetItem', () =>
      batchGetConsistent(
        this.dynamodb,
        this.tableName,
        pks.map((pk) => ({ pk: { S: pk } })),
      ),
    );
    return items.map((item) => unmarshall(item));
  }

  async putCooldown(record: CooldownRecord, now: number): Promise<void> {
    // A longer cooldown already recorded stays: the put's condition fails, nothing else to do.
    await this.conditionalPut(
      {
        pk: cooldownPk(record.scope, record.id),
        scope: record.scope,
        reason: record.reason,
        until: record.until,
        untilIso: new Date(record.until).toISOString(),
        ...(record.fingerprint ? { fingerprint: record.fingerprint } : {}),
        updatedAt: now,
        expiresAt: Math.ceil(record.until / 1000) + COOLDOWN_TTL_GRACE_SECONDS,
      },
      { condition: 'attribute_not_exists(pk) OR #until < :until', names: UNTIL, values: { ':until': record.until } },
    );
  }

  /** One `PutItem` of `item` on `condition`; false when the condition failed. */
  private async conditionalPut(
    item: Record<string, unknown>,
    { condition, names, values }: { condition: string; names: Record<string, string>; values: Record<string, unknown> },
  ): Promise<boolean> {
    try {
      await this.call('PutItem', () =>
        this.dynamodb.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: marshall(item),
            ConditionExpression: condition,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: marshall(values),
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async listCooldowns(): Promise<CooldownRecord[]> {
    const records: CooldownRecord[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const out = await this.call('Scan', () =>
        this.dynamodb.send(
          new ScanCommand({
            TableName: this.tableName,
            FilterExpression: 'begins_with(pk, :p)',
            ExpressionAttributeValues: { ':p': { S: 'cooldown#' } },
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        ),
      );
      for (const item of out.Items ?? []) {
        const record = cooldownOf(unmarshall(item));
        if (record) records.push(record);
      }
      start = out.LastEvaluatedKey;
    } while (start);
    return records;
  }

  async deleteCooldown(scope: CooldownRecord['scope'], id: string): Promise<void> {
    await this.call('DeleteItem', () => this.dynamodb.send(new DeleteItemCommand({ TableName: this.tableName, Key: { pk: { S: cooldownPk(scope, id) } } })));
  }

  async readBucket(owner: string): Promise<BucketState | undefined> {
    return bucketOfItem(await this.get(bucketPk(owner)));
  }

  async writeBucket(owner: string, update: BucketUpdate, now: number): Promise<BucketWrite> {
    const compiled = compileUpdate(update, { expiresAt: Math.ceil(now / 1000) + BUCKET_TTL_SECONDS, quotaOwner: owner });
    try {
      const out = await this.call('UpdateItem', () =>
        this.dynamodb.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: { pk: { S: bucketPk(owner) } },
            ...compiled,
            ReturnValues: 'ALL_OLD',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return { ok: true, before: bucketOfItem(out.Attributes ? unmarshall(out.Attributes) : undefined) };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return { ok: false, current: bucketOfItem(error.Item ? unmarshall(error.Item) : undefined) };
    }
  }

  /**
   * Removes the owner's cooldown copy from its bucket, its live side's bucket and its bucket shards (any
   * may be absent): `coolOps` copies an owner's cooldown into each. Without a reserve the live bucket does
   * not exist and that update changes nothing; shards `#s1`, `#s2`, … are cleared up to the first absent
   * one (a cooldown's copy wrote every shard of the lane's count).
   */
  async clearBucketCooldown(owner: string): Promise<void> {
    await this.clearCooldownCopy(bucketPk(owner));
    await this.clearCooldownCopy(bucketPk(liveBucketId(owner)));
    for (let shard = 1; shard < MAX_BUCKET_SHARDS && (await this.clearCooldownCopy(bucketPk(owner + shardBucketSuffix(shard)))); shard++);
  }

  /** Removes the cooldown copy from bucket item `pk`; whether the item exists. */
  private async clearCooldownCopy(pk: string): Promise<boolean> {
    try {
      await this.call('UpdateItem', () =>
        this.dynamodb.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: { pk: { S: pk } },
            UpdateExpression: 'REMOVE coolUntil, coolReason SET version = version + :one',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':one': { N: '1' } },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error; // no bucket: nothing to clear
      return false;
    }
    return true;
  }

  async claimPause(record: PauseRecord, now: number): Promise<boolean> {
    return this.conditionalPut(
      {
        pk: PAUSE_PK,
        until: record.until,
        untilIso: new Date(record.until).toISOString(),
        reason: record.reason,
        pausedAt: record.pausedAt,
        expiresAt: Math.ceil(record.until / 1000) + COOLDOWN_TTL_GRACE_SECONDS,
      },
      { condition: 'attribute_not_exists(pk) OR #until <= :now', names: UNTIL, values: { ':now': now } },
    );
  }

  async claimLimit(record: LimitRecord, now: number): Promise<boolean> {
    return this.conditionalPut(
      {
        pk: LIMIT_PK,
        share: record.share,
        until: record.until,
        untilIso: new Date(record.until).toISOString(),
        reason: record.reason,
        limitedAt: record.limitedAt,
        expiresAt: Math.ceil(record.until / 1000) + COOLDOWN_TTL_GRACE_SECONDS,
      },
      // `replacesLimit`, as a condition.
      record.reason === 'booked_ahead'
        ? {
            condition: 'attribute_not_exists(pk) OR #until <= :now OR (#share > :share AND #reason <> :ahead)',
            names: { ...UNTIL, '#share': 'share', '#reason': 'reason' },
            values: { ':now': now, ':share': record.share, ':ahead': 'booked_ahead' },
          }
        : {
            condition: 'attribute_not_exists(pk) OR #until <= :now OR #share > :share OR (#share = :share AND #until < :until)',
            names: { ...UNTIL, '#share': 'share' },
            values: { ':now': now, ':share': record.share, ':until': record.until },
          },
    );
  }

  async readLimit(): Promise<LimitRecord | undefined> {
    const item = await this.get(LIMIT_PK);
    if (!item || typeof item.until !== 'number' || typeof item.share !== 'number') return undefined;
    return {
      share: item.share,
      until: item.until,
      reason: LIMIT_REASONS.find((r) => r === item.reason) ?? 'quota_exhausted',
      limitedAt: typeof item.limitedAt === 'number' ? item.limitedAt : 0,
    };
  }

  async clearLimit(): Promise<void> {
    await this.call('DeleteItem', () => this.dynamodb.send(new DeleteItemCommand({ TableName: this.tableName, Key: { pk: { S: LIMIT_PK } } })));
  }

  async readPause(): Promise<PauseRecord | undefined> {
    const item = await this.get(PAUSE_PK);
    if (!item || typeof item.until !== 'number') return undefined;
    return {
      until: item.until,
      reason: PAUSE_REASONS.find((r) => r === item.reason) ?? 'quota_exhausted',
      pausedAt: typeof item.pausedAt === 'number' ? item.pausedAt : 0,
    };
  }

  async clearPause(): Promise<void> {
    await this.call('DeleteItem', () => this.dynamodb.send(new DeleteItemCommand({ TableName: this.tableName, Key: { pk: { S: PAUSE_PK } } })));
  }
}
