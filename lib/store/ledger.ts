/**
 * The validation and decision ledger: an append-only trail of what happened to each job (rejections,
 * validation failures, deferrals, commits), under its jobId, ordered by entry id, expiring by TTL.
 * Entries describe outcomes — field paths, rule names, versions, counts — never document text.
 */
import { randomBytes } from 'node:crypto';
import {
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { errorName } from '../platform/errors.js';
import { StoreRecordInvalidError, StoreUnavailableError } from './errors.js';
import { sourceKeyOf } from './source-key.js';
import { LEDGER_REVIEW_INDEX, LEDGER_TABLE } from './tables.js';

/** What a ledger entry records. */
export const LEDGER_KINDS = [
  'rejected',
  'validation_failed',
  'needs_review',
  'dead_letter_pending',
  'deferred',
  'transport_failure',
  'committed',
  'duplicate',
] as const;

/** One of {@link LEDGER_KINDS}. */
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** How far a model output got through validation. */
type ParseStatus = 'ok' | 'not_json' | 'schema_invalid' | 'domain_invalid';

/** Longest `details` kept; longer text is cut (details are for short diagnostics, never document text). */
export const MAX_DETAILS_LENGTH = 1000;
/** Most `failingFields` / `failingRules` kept per entry. */
const MAX_LISTED_ISSUES = 50;
/** Default retention of ledger entries. */
export const DEFAULT_LEDGER_RETENTION_DAYS = 90;

/** What the caller records. `at` defaults to now. */
export interface LedgerEntryInput {
  /** The job's id; for a body that is not a job, an id derived from the SQS message (e.g. `msg:<messageId>`). */
  jobId: string;
  idempotencyKey?: string;
  /** Who the job belongs to (`Job.tenant`), when it has a tenant: the live API reads the job to it only. */
  tenant?: string;
  /** The lane that recorded the entry. */
  region: string;
  kind: LedgerKind;
  /** A short machine-readable reason (`region_mismatch`, `deadline`, `rate_limited`, `schema_invalid`, ...). */
  reason: string;
  schemaVersion?: string;
  promptVersion?: string;
  attempt: number;
  deferrals: number;
  /** SQS `ApproximateReceiveCount` of the message being handled. */
  receiveCount?: number;
  parseStatus?: ParseStatus;
  /** Paths of the fields that failed validation (`total`, `lines.2.amount`). */
  failingFields?: string[];
  /** Names of the schema or domain rules that failed. */
  failingRules?: string[];
  /** A short diagnostic. Never document text or model output. */
  details?: string;
  /** For a `deferred` entry: when the re-sent job becomes eligible again (ISO 8601). */
  eligibleAt?: string;
  /** When it happened (ISO 8601); defaults to now. */
  at?: string;
  /** The X-Ray trace id the job's message carried (`lib/platform/tracing.ts`). */
  traceId?: string;
}

/** A stored ledger entry. */
export interface LedgerEntry extends LedgerEntryInput {
  /** Sort key: `<ISO time>#<kind>#<random>`, so a job's entries sort by time. */
  entryId: string;
  at: string;
  /** TTL: epoch seconds after which DynamoDB may delete the entry. */
  expiresAt: number;
}

/** Construction options of {@link Ledger}. */
export interface LedgerOptions {
  dynamodb: DynamoDBClient;
  tableName: string;
  /** Days an entry is kept before TTL removes it (default {@link DEFAULT_LEDGER_RETENTION_DAYS}). */
  retentionDays?: number;
  /** Clock, for tests (default `() => new Date()`). */
  now?: () => Date;
}

/** Adds a stored item to `entries` unless it is a job's claim item or another marker (entry ids starting with `#`). */
function pushEntry(entries: LedgerEntry[], item: Record<string, AttributeValue>): void {
  // `reviewLane` only keys the open-reviews index.
  const { reviewLane: _index, ...entry } = unmarshall(item) as LedgerEntry & { reviewLane?: string };
  if (!entry.entryId.startsWith('#')) entries.push(entry);
}

/** Entries whose times are this close behind the previous one are ordered by recording order. */
const ORDERING_WINDOW_MS = 1000;

/** Sort key of a job's claim item (before every entry: `#` sorts before the ISO times of entry ids). */
const JOB_CLAIM_ENTRY_ID = '#job';

/** What {@link Ledger.claimJob} found: the job id is this job's, or it belongs to another idempotency key. */
export type JobClaim = { claimed: true } | { claimed: false; idempotencyKey: string };

/** A job's claim item as {@link Ledger.claimOf} reads it: whose the job id is, where and when it was last claimed. */
export interface JobClaimRecord {
  jobId: string;
  idempotencyKey: string;
  /** The lane that claimed it. */
  region: string;
  /** When it was last claimed (ISO 8601): each claim with the same key, a redelivery's too, rewrites it. */
  at: string;
  /** Who the job belongs to, when it has a tenant. */
  tenant?: string;
  /** Who first submitted it: the first sender's SQS `SenderId`, or a live request's caller. */
  submittedBy?: string;
  /** The job's source id, on a claim written since erasure exists (lib/store/erasure.ts); absent on an older claim. */
  sourceId?: string;
  /** What the job carried at its latest delivery (`ratelane jobs show`); absent on a claim written before. */
  facts?: JobFacts;
}

/** What a job carries that its claim keeps, as of its latest delivery (no document text). */
export interface JobFacts {
  createdAt: string;
  eligibleAt: string;
  deadline?: string;
  /** The job's attempt counter and deferrals, and the delivery's SQS receive count. */
  attempt: number;
  deferrals: number;
  receiveCount: number;
  schemaVersion: string;
  promptVersion: string;
  /** The job's priority class (absent: bulk). */
  priority?: string;
}

/** Append-only access to a lane's ledger table. */
export class Ledger {
  readonly tableName: string;
  readonly #dynamodb: DynamoDBClient;
  readonly #retentionSeconds: number;
  readonly #now: () => Date;
  /** Last time used in an entry id by this instance, so entries recorded in one millisecond keep their order. */
  #lastIdTime = 0;

  constructor(options: LedgerOptions) {
    this.#dynamodb = options.dynamodb;
    this.tableName = options.tableName;
    this.#retentionSeconds = Math.round((options.retentionDays ?? DEFAULT_LEDGER_RETENTION_DAYS) * 24 * 3600);
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Appends one entry and returns it as stored. `details` is cut to {@link MAX_DETAILS_LENGTH}
   * characters and the issue lists to {@link MAX_LISTED_ISSUES} items. Within one Ledger instance,
   * entries recorded in the same millisecond (or up to a second behind the previous one, as with a
   * clock step) still sort in recording order: the entry id's time is nudged forward by a millisecond,
   * while `at` stays the stated time.
   *
   * @throws {@link StoreRecordInvalidError} when `jobId` is empty or `at` is not a date.
   * @throws {@link StoreUnavailableError} when the write fails: the entry may not exist.
   */
  async record(input: LedgerEntryInput): Promise<LedgerEntry> {
    const entry = this.#entryFrom(input);
    try {
      await this.#dynamodb.send(
        new PutItemCommand({
          TableName: this.tableName,
          // A job sent to review is in the open-reviews index until its review is resolved (`closeReview`).
          Item: marshall(entry.kind === 'needs_review' ? { ...entry, reviewLane: entry.region } : entry, { removeUndefinedValues: true }),
        }),
      );
    } catch (error) {
      throw new StoreUnavailableError('PutItem', this.tableName, { cause: error });
    }
    return entry;
  }

  /**
   * Takes a resolved review's `needs_review` entry out of the open-reviews index (its entry stays in the
   * job's history). Nothing happens to an entry that is gone.
   *
   * @throws {@link StoreUnavailableError}
   */
  async closeReview(jobId: string, entryId: string): Promise<void> {
    try {
      await this.#dynamodb.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: marshall({ [LEDGER_TABLE.partitionKey]: jobId, [LEDGER_TABLE.sortKey as string]: entryId }),
          UpdateExpression: 'REMOVE reviewLane',
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#pk': LEDGER_TABLE.partitionKey },
        }),
      );
    } catch (error) {
      if (errorName(error) !== 'ConditionalCheckFailedException') throw new StoreUnavailableError('UpdateItem', this.tableName, { cause: error });
    }
  }

  /**
   * Binds `jobId` to `idempotencyKey` (a conditional write of the job's claim item): the first job to
   * use an id owns it, and a message that reuses it for another document is refused, so no one can
   * write into another job's history. Claiming again with the same key succeeds (one write) and keeps
   * who first submitted the job (`submittedBy`: a re-sent copy's sender is the lane itself).
   *
   * @throws {@link StoreUnavailableError} when the write fails for another reason.
   */
  async claimJob(input: {
    jobId: string;
    idempotencyKey: string;
    region: string;
    tenant?: string | undefined;
    submittedBy?: string | undefined;
    /** The job's source and content hash: the claim is indexed by source (`bySource`), so erasure finds the job. */
    source?: { sourceId: string; contentSha256: string } | undefined;
    /** What the job carries at this delivery, kept on the claim (`claimOf`'s `facts`). */
    facts?: JobFacts | undefined;
  }): Promise<JobClaim> {
    const at = this.#now();
    const sets = ['idempotencyKey = :key', '#region = :region', '#at = :at', 'expiresAt = :expiresAt'];
    const values: Record<string, unknown> = {
      ':key': input.idempotencyKey,
      ':region': input.region,
      ':at': at.toISOString(),
      ':expiresAt': Math.floor(at.getTime() / 1000) + this.#retentionSeconds,
    };
    if (input.tenant !== undefined) {
      sets.push('tenant = :tenant');
      values[':tenant'] = input.tenant;
    }
    if (input.submittedBy !== undefined) {
      sets.push('submittedBy = if_not_exists(submittedBy, :submittedBy)');
      values[':submittedBy'] = input.submittedBy;
    }
    if (input.facts !== undefined) {
      sets.push('facts = :facts');
      values[':facts'] = input.facts;
    }
    if (input.source !== undefined) {
      sets.push('sourceKey = :sourceKey', 'sourceId = :sourceId', 'contentSha256 = :contentSha256');
      values[':sourceKey'] = sourceKeyOf(input.source.sourceId);
      values[':sourceId'] = input.source.sourceId;
      values[':contentSha256'] = input.source.contentSha256;
    }
    try {
      await this.#dynamodb.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: marshall({ [LEDGER_TABLE.partitionKey]: input.jobId, [LEDGER_TABLE.sortKey as string]: JOB_CLAIM_ENTRY_ID }),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: 'attribute_not_exists(#pk) OR idempotencyKey = :key',
          ExpressionAttributeNames: { '#pk': LEDGER_TABLE.partitionKey, '#region': 'region', '#at': 'at' },
          ExpressionAttributeValues: marshall(values),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { claimed: true };
    } catch (error) {
      if (errorName(error) !== 'ConditionalCheckFailedException') throw new StoreUnavailableError('UpdateItem', this.tableName, { cause: error });
      const old = (error as { Item?: Record<string, AttributeValue> }).Item;
      const key = old ? unmarshall(old).idempotencyKey : undefined;
      return { claimed: false, idempotencyKey: typeof key === 'string' ? key : '(unknown)' };
    }
  }

  /**
   * The claim item of `jobId` (strongly consistent `GetItem`), or `undefined` when no consumer claimed it.
   *
   * @throws {@link StoreUnavailableError}
   */
  async claimOf(jobId: string): Promise<JobClaimRecord | undefined> {
    try {
      const out = await this.#dynamodb.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: { [LEDGER_TABLE.partitionKey]: { S: jobId }, [LEDGER_TABLE.sortKey as string]: { S: JOB_CLAIM_ENTRY_ID } },
          ConsistentRead: true,
        }),
      );
      if (!out.Item) return undefined;
      const item = unmarshall(out.Item);
      return {
        jobId,
        idempotencyKey: String(item.idempotencyKey),
        region: String(item.region),
        at: String(item.at),
        ...(typeof item.tenant === 'string' ? { tenant: item.tenant } : {}),
        ...(typeof item.submittedBy === 'string' ? { submittedBy: item.submittedBy } : {}),
        ...(typeof item.sourceId === 'string' ? { sourceId: item.sourceId } : {}),
        ...(typeof item.facts === 'object' && item.facts !== null ? { facts: item.facts as JobFacts } : {}),
      };
    } catch (error) {
      throw new StoreUnavailableError('GetItem', this.tableName, { cause: error });
    }
  }

  /**
   * All entries of one job, oldest first (paginated, strongly consistent `Query`); not its claim item.
   *
   * @throws {@link StoreUnavailableError}
   */
  async entriesFor(jobId: string): Promise<LedgerEntry[]> {
    const entries: LedgerEntry[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      try {
        const page = await this.#dynamodb.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: '#pk = :jobId',
            ExpressionAttributeNames: { '#pk': LEDGER_TABLE.partitionKey },
            ExpressionAttributeValues: { ':jobId': { S: jobId } },
            ScanIndexForward: true,
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        );
        for (const item of page.Items ?? []) pushEntry(entries, item);
        startKey = page.LastEvaluatedKey;
      } catch (error) {
        throw new StoreUnavailableError('Query', this.tableName, { cause: error });
      }
    } while (startKey);
    return entries;
  }

  /**
   * Every entry of the table (paginated, strongly consistent `Scan`), for the local scorecard and tests.
   *
   * @throws {@link StoreUnavailableError}
   */
  async scanAll(): Promise<LedgerEntry[]> {
    const entries: LedgerEntry[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      try {
        const page = await this.#dynamodb.send(new ScanCommand({ TableName: this.tableName, ConsistentRead: true, ExclusiveStartKey: startKey }));
        for (const item of page.Items ?? []) pushEntry(entries, item);
        startKey = page.LastEvaluatedKey;
      } catch (error) {
        throw new StoreUnavailableError('Scan', this.tableName, { cause: error });
      }
    } while (startKey);
    return entries;
  }

  #entryFrom(input: LedgerEntryInput): LedgerEntry {
    if (typeof input.jobId !== 'string' || input.jobId.length === 0) {
      throw new StoreRecordInvalidError('ledger entry has no jobId', this.tableName);
    }
    const atDate = input.at === undefined ? this.#now() : new Date(input.at);
    const atMs = atDate.getTime();
    if (Number.isNaN(atMs)) {
      throw new StoreRecordInvalidError(`ledger entry of job ${input.jobId} has an invalid time`, this.tableName);
    }
    // Same-moment collisions keep recording order; an explicit time far in the past is taken as given.
    const collides = atMs <= this.#lastIdTime && this.#lastIdTime - atMs < ORDERING_WINDOW_MS;
    const idTime = collides ? this.#lastIdTime + 1 : atMs;
    this.#lastIdTime = Math.max(this.#lastIdTime, idTime);
    const at = atDate.toISOString();
    return {
      ...input,
      ...(input.failingFields ? { failingFields: input.failingFields.slice(0, MAX_LISTED_ISSUES) } : {}),
      ...(input.failingRules ? { failingRules: input.failingRules.slice(0, MAX_LISTED_ISSUES) } : {}),
      ...(input.details !== undefined ? { details: input.details.slice(0, MAX_DETAILS_LENGTH) } : {}),
      entryId: `${new Date(idTime).toISOString()}#${input.kind}#${randomBytes(4).toString('hex')}`,
      at,
      expiresAt: Math.floor(atMs / 1000) + this.#retentionSeconds,
    };
  }
}

/** One page of {@link openReviewEntries}. */
export interface ReviewEntriesPage {
  /** The page's `needs_review` entries whose review is open, oldest first. */
  entries: LedgerEntry[];
  /** Where the next page starts (`ExclusiveStartKey`); `undefined` at the index's end. */
  nextKey: Record<string, AttributeValue> | undefined;
}

/**
 * One page of the lane's open reviews: the `needs_review` entries of the ledger's `needsReview` index for
 * `lane`, oldest first, at most `limit`, from `startKey` on.
 *
 * @throws {@link StoreUnavailableError}
 */
export async function openReviewEntries(
  dynamodb: DynamoDBClient,
  tableName: string,
  lane: string,
  page: { startKey?: Record<string, AttributeValue> | undefined; limit: number },
): Promise<ReviewEntriesPage> {
  try {
    const out = await dynamodb.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: LEDGER_REVIEW_INDEX.name,
        KeyConditionExpression: '#lane = :lane',
        ExpressionAttributeNames: { '#lane': LEDGER_REVIEW_INDEX.partitionKey },
        ExpressionAttributeValues: { ':lane': { S: lane } },
        ScanIndexForward: true,
        Limit: page.limit,
        ExclusiveStartKey: page.startKey,
      }),
    );
    const entries: LedgerEntry[] = [];
    for (const item of out.Items ?? []) pushEntry(entries, item);
    return { entries, nextKey: out.LastEvaluatedKey };
  } catch (error) {
    throw new StoreUnavailableError('Query', tableName, { cause: error });
  }
}
