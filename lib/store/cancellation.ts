/**
 * Cancelling a job (`ratelane cancel`, `RatelaneClient.cancel`, the live API's cancel route): a `#cancelled`
 * marker in the job's partition of the lane's ledger (when, by whom), written only while the job is not
 * committed, and read by the extraction core before admission, before a model call and — as a condition of
 * the commit's own transaction ({@link cancelledCondition}) — at the commit. The marker's write and the
 * commit are each one transaction conditioned on the other's absence, so exactly one of them wins: a job is
 * either committed or cancelled, never both.
 *
 * A job no consumer has received yet has no claim (nothing binds its id to an idempotency key): its marker
 * is written on the condition that it still has none, and the job is stopped when it is received. Once a
 * claim exists, the marker is written on the condition that no result of the claim's idempotency key is
 * committed. The marker expires with the ledger's retention. No document text.
 */
import {
  GetItemCommand,
  TransactWriteItemsCommand,
  type AttributeValue,
  type ConditionCheck,
  type DynamoDBClient,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { errorName } from '../platform/errors.js';
import { StoreUnavailableError } from './errors.js';
import type { Ledger } from './ledger.js';
import { batchGetConsistent } from '../platform/batch-get.js';
import { type AfterErasure, erasedCondition, type Tombstone, tombstoneKey, tombstoneOf } from './erasure.js';
import type { CommitGuards, ResultStore } from './results.js';
import { LEDGER_TABLE, RESULTS_TABLE } from './tables.js';

/** The sort key of a job's cancel marker (in the job's partition). */
const CANCELLED_ENTRY_ID = '#cancelled';
/** The sort key of a job's claim (`ledger.ts`). */
const JOB_CLAIM_ENTRY_ID = '#job';
/** Tries of a cancel whose condition moved under it (a claim or a commit landed meanwhile). */
const CANCEL_TRIES = 4;

/** A job's cancel marker. */
export interface CancelMarker {
  jobId: string;
  /** When it was cancelled (ISO 8601). */
  cancelledAt: string;
  /** Who cancelled it (an operator, or the live API's caller's tenant). */
  cancelledBy: string;
}

/**
 * What a cancel did: `cancelled` (its marker written: `received` says whether a consumer had claimed the job
 * by then), `already_cancelled` (the marker as it was), or `committed` (a result of its idempotency key is
 * committed — by this job or a duplicate of it — and nothing changed).
 */
export type CancelOutcome =
  | { status: 'cancelled'; marker: CancelMarker; received: boolean }
  | { status: 'already_cancelled'; marker: CancelMarker }
  | { status: 'committed'; committedBy: string; committedAt: string };

/** The key of `jobId`'s cancel marker in the ledger table. */
function markerKey(jobId: string): Record<string, AttributeValue> {
  return marshall({ [LEDGER_TABLE.partitionKey]: jobId, [LEDGER_TABLE.sortKey as string]: CANCELLED_ENTRY_ID });
}

/** A cancel marker as its (unmarshalled) ledger item holds it. */
function markerOf(jobId: string, item: Record<string, unknown>): CancelMarker {
  return { jobId, cancelledAt: String(item.cancelledAt), cancelledBy: String(item.cancelledBy) };
}

/** The condition a commit of `jobId` is written under (a `ConditionCheck` of its transaction): no cancel marker. */
function cancelledCondition(ledgerTable: string, jobId: string): ConditionCheck {
  return {
    TableName: ledgerTable,
    Key: markerKey(jobId),
    ConditionExpression: 'attribute_not_exists(#pk)',
    ExpressionAttributeNames: { '#pk': LEDGER_TABLE.partitionKey },
  };
}

/**
 * Everything a commit of `job` is conditioned on, as {@link ResultStore.commitOnce} takes it: no tombstone
 * of its source (under the lane's `afterErasure`), no cancel marker of the job.
 */
export function commitGuards(
  ledgerTable: string,
  job: { jobId: string; createdAt: string; input: { sourceId: string } },
  afterErasure: AfterErasure,
): CommitGuards {
  return {
    unlessErased: erasedCondition(ledgerTable, job.input.sourceId, job, afterErasure),
    unlessCancelled: cancelledCondition(ledgerTable, job.jobId),
  };
}

/** Construction options of {@link Cancellations}. */
export interface CancellationsOptions {
  dynamodb: DynamoDBClient;
  /** The lane's ledger (its claims, and the table the markers go to). */
  ledger: Pick<Ledger, 'claimOf' | 'tableName'>;
  /** The lane's results (a committed job cannot be cancelled). */
  results: Pick<ResultStore, 'get' | 'tableName'>;
  /** Days a marker is kept (the ledger's retention). */
  retentionDays: number;
  now?: () => Date;
}

/** Cancel markers in a lane's ledger table. */
export class Cancellations {
  readonly tableName: string;
  readonly #dynamodb: DynamoDBClient;
  readonly #ledger: CancellationsOptions['ledger'];
  readonly #results: CancellationsOptions['results'];
  readonly #retentionSeconds: number;
  readonly #now: () => Date;

  constructor(options: CancellationsOptions) {
    this.#dynamodb = options.dynamodb;
    this.#ledger = options.ledger;
    this.#results = options.results;
    this.tableName = options.ledger.tableName;
    this.#retentionSeconds = Math.round(options.retentionDays * 86_400);
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * The cancel marker of `jobId`, or `undefined`: strongly consistent unless `options.consistent` is false (an
   * eventually consistent read costs half: what the extraction core reads before admission and a call, where
   * a cancel of a moment ago is still caught by the commit's own condition).
   *
   * @throws {@link StoreUnavailableError}
   */
  async marker(jobId: string, options: { consistent?: boolean } = {}): Promise<CancelMarker | undefined> {
    let item: Record<string, unknown> | undefined;
    try {
      const out = await this.#dynamodb.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: markerKey(jobId),
          ConsistentRead: options.consistent ?? true,
        }),
      );
      item = out.Item ? unmarshall(out.Item) : undefined;
    } catch (error) {
      throw new StoreUnavailableError('GetItem', this.tableName, { cause: error });
    }
    return item ? markerOf(jobId, item) : undefined;
  }

  /**
   * What stops a job at its receive, read together: its source's tombstone (the erasure ledger's, in this
   * same table) and its cancel marker — one strongly consistent `BatchGetItem` instead of a `GetItem` each.
   *
   * @throws {@link StoreUnavailableError}
   */
  async atReceive(job: { jobId: string; input: { sourceId: string } }): Promise<{ tombstone: Tombstone | undefined; marker: CancelMarker | undefined }> {
    const tombstone = tombstoneKey(job.input.sourceId);
    let items: Record<string, unknown>[];
    try {
      items = (await batchGetConsistent(this.#dynamodb, this.tableName, [tombstone, markerKey(job.jobId)])).map((item) => unmarshall(item));
    } catch (error) {
      throw new StoreUnavailableError('BatchGetItem', this.tableName, { cause: error });
    }
    const { partitionKey, sortKey } = LEDGER_TABLE;
    const tombstoneItem = items.find(
      (item) => item[partitionKey] === tombstone[partitionKey]?.S && item[sortKey as string] === tombstone[sortKey as string]?.S,
    );
    const markerItem = items.find((item) => item[partitionKey] === job.jobId && item[sortKey as string] === CANCELLED_ENTRY_ID);
    return { tombstone: tombstoneItem ? tombstoneOf(tombstoneItem) : undefined, marker: markerItem ? markerOf(job.jobId, markerItem) : undefined };
  }

  /**
   * Cancels `jobId` unless it is committed (see the module's description). Idempotent: a second cancel
   * answers `already_cancelled` with the first one's marker.
   *
   * @throws {@link StoreUnavailableError} (a table failed, or the job's claim and commit kept moving under it: cancel again)
   */
  async cancel(jobId: string, by: string): Promise<CancelOutcome> {
    for (let attempt = 1; attempt <= CANCEL_TRIES; attempt++) {
      const [claim, marker] = await Promise.all([this.#ledger.claimOf(jobId), this.marker(jobId)]);
      if (marker) return { status: 'already_cancelled', marker };
      const at = this.#now();
      const written: CancelMarker = { jobId, cancelledAt: at.toISOString(), cancelledBy: by };
      // Not committed now, and none may be while the marker goes in: the claim's result stays absent, or (no
      // claim yet) the claim does.
      const guard: TransactWriteItem = claim
        ? {
            ConditionCheck: {
              TableName: this.#results.tableName,
              Key: marshall({ [RESULTS_TABLE.partitionKey]: claim.idempotencyKey }),
              ConditionExpression: 'attribute_not_exists(#pk)',
              ExpressionAttributeNames: { '#pk': RESULTS_TABLE.partitionKey },
            },
          }
        : {
            ConditionCheck: {
              TableName: this.tableName,
              Key: marshall({ [LEDGER_TABLE.partitionKey]: jobId, [LEDGER_TABLE.sortKey as string]: JOB_CLAIM_ENTRY_ID }),
              ConditionExpression: 'attribute_not_exists(#pk)',
              ExpressionAttributeNames: { '#pk': LEDGER_TABLE.partitionKey },
            },
          };
      const put: TransactWriteItem = {
        Put: {
          TableName: this.tableName,
          Item: marshall({
            [LEDGER_TABLE.partitionKey]: jobId,
            [LEDGER_TABLE.sortKey as string]: CANCELLED_ENTRY_ID,
            cancelledAt: written.cancelledAt,
            cancelledBy: by,
            expiresAt: Math.floor(at.getTime() / 1000) + this.#retentionSeconds,
          }),
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': LEDGER_TABLE.partitionKey },
        },
      };
      try {
        await this.#dynamodb.send(new TransactWriteItemsCommand({ TransactItems: [put, guard] }));
        return { status: 'cancelled', marker: written, received: claim !== undefined };
      } catch (error) {
        if (errorName(error) !== 'TransactionCanceledException') throw new StoreUnavailableError('TransactWriteItems', this.tableName, { cause: error });
        // The claim's result is there: committed (its check is the transaction's second item).
        const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
        const committed = claim && reasons[1]?.Code === 'ConditionalCheckFailed' ? await this.#results.get(claim.idempotencyKey) : undefined;
        if (committed) return { status: 'committed', committedBy: committed.jobId, committedAt: committed.committedAt };
        // Else a marker or a claim landed meanwhile, or another transaction held an item: read again.
      }
    }
    throw new StoreUnavailableError('TransactWriteItems', this.tableName, {
      cause: new Error(`job ${jobId}: its claim or commit moved under ${CANCEL_TRIES} tries to cancel it`),
    });
  }
}
