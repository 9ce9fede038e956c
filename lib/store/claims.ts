/**
 * The in-progress claim of an idempotency key: before a job's model call, one conditional write says
 * "job J works on this key until T", so two deliveries of one job, or two identical requests, cost one
 * model call between them, not one each. The claims live in the lane's rate-state table (`pk`, TTL
 * `expiresAt`) under a lane-wide prefix, so the queue and the live function share each claim. A claim
 * whose hold has passed (a crashed holder) is taken over by the next claim; a COMPLETED claim says the
 * key's result is committed (later copies are duplicates without a call) for {@link COMPLETED_CLAIM_SECONDS}.
 *
 * Powertools' idempotency utility has the same shape (an INPROGRESS record with an expiry, written
 * before the work) and was tried first; it does not fit in two places: its in-progress record carries
 * no data, so a request that finds the key held cannot answer with the holder's job, and its
 * `saveSuccess` and `deleteRecord` are unconditional, so a holder whose hold passed and was taken over
 * would complete or delete the new holder's claim. Here every write after the claim is conditional on
 * the holder's own token, but one: a committing holder completes its claim inside the commit's own
 * transaction ({@link KeyClaims.completionWrite}), unconditionally, since from then on the key's result
 * exists whoever holds the claim. Costs per job: the claim's conditional PutItem, and the completion as
 * an item of the commit's transaction (two write units, as DynamoDB bills a transaction's items) or a
 * DeleteItem (given back).
 */
import { randomBytes } from 'node:crypto';
import { DeleteItemCommand, type DynamoDBClient, PutItemCommand, type Update, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { errorName } from '../platform/errors.js';
import { type StoreOperation, StoreUnavailableError } from './errors.js';

/** How long a COMPLETED claim answers "committed by …" before later copies read the results table (s). */
const COMPLETED_CLAIM_SECONDS = 3600;
/** The longest hold (ms): Lambda's longest timeout and a margin; a longer (or unknown) one is cut to it. */
const MAX_HOLD_MS = 16 * 60_000;
/** How long an in-progress claim's record outlives its hold before TTL removes it (s). */
const IN_PROGRESS_TTL_GRACE_SECONDS = 3600;

/** A claim held by this caller: what completing or giving it back must name. */
export interface HeldClaim {
  held: true;
  /** The holder's token: only its holder completes or releases a claim. */
  token: string;
  /** When the hold ends (epoch ms) if the holder never completes or releases it. */
  until: number;
}

/** What a claim found. */
export type ClaimResult =
  | HeldClaim
  /** Job `jobId` holds the key until `until` (epoch ms; its hold passes then, if it never finishes). */
  | { held: false; state: 'in_progress'; until: number; jobId: string | undefined }
  /** A result was committed for the key, by job `committedBy`. */
  | { held: false; state: 'completed'; committedBy: string | undefined };

/** One claim: the key, the job asking, for how long, on the caller's clock. */
export interface ClaimRequest {
  idempotencyKey: string;
  jobId: string;
  holdMs: number;
  nowMs: number;
}

/** The claims of a lane's idempotency keys. */
export interface KeyClaims {
  /** Claims the key for `holdMs` (after which another caller may take it over). */
  claim(request: ClaimRequest): Promise<ClaimResult>;
  /** The key's result is committed (by `jobId`): later claims find it completed. Nothing when the claim is no longer the holder's. */
  complete(idempotencyKey: string, claim: HeldClaim, jobId: string, nowMs: number): Promise<void>;
  /**
   * The completion by `jobId` as a write for the commit's own transaction (`ResultStore.commitOnce`):
   * unconditional, since the commit it rides with makes the key's result exist, whoever holds the claim
   * by then (a holder taken over finds the result at its own commit). Saves the round trip after the commit.
   */
  completionWrite(idempotencyKey: string, jobId: string, nowMs: number): Update;
  /** Gives the key back without a result (a deferral, a failure, a review): the next copy may claim it. Nothing when the claim is no longer the holder's. */
  release(idempotencyKey: string, claim: HeldClaim): Promise<void>;
}

/** Construction options of {@link DynamoKeyClaims}. */
export interface DynamoKeyClaimsOptions {
  dynamodb: DynamoDBClient;
  /** The lane's rate-state table (`RATE_STATE_TABLE`). */
  tableName: string;
  /** The lane's name: the claims' key prefix, the same in every function of the lane. */
  lane: string;
}

/** The stored claim (rate-state table item). */
interface ClaimItem {
  pk: string;
  claimStatus: 'IN_PROGRESS' | 'COMPLETED';
  jobId: string;
  holder?: string;
  inProgressUntil?: number;
  expiresAt: number;
}

/** {@link KeyClaims} on the lane's rate-state table. */
export class DynamoKeyClaims implements KeyClaims {
  readonly #dynamodb: DynamoDBClient;
  readonly #table: string;
  readonly #prefix: string;

  constructor(options: DynamoKeyClaimsOptions) {
    this.#dynamodb = options.dynamodb;
    this.#table = options.tableName;
    this.#prefix = `claim#${options.lane}#`;
  }

  /** @throws {@link StoreUnavailableError} when the write fails for another reason than a held or completed claim. */
  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const token = randomBytes(12).toString('hex');
    const until = request.nowMs + Math.min(MAX_HOLD_MS, Math.max(1_000, Math.ceil(request.holdMs)));
    const item: ClaimItem = {
      pk: this.#prefix + request.idempotencyKey,
      claimStatus: 'IN_PROGRESS',
      jobId: request.jobId,
      holder: token,
      inProgressUntil: until,
      expiresAt: Math.ceil(until / 1000) + IN_PROGRESS_TTL_GRACE_SECONDS,
    };
    try {
      await this.#dynamodb.send(
        new PutItemCommand({
          TableName: this.#table,
          Item: marshall(item),
          // Free, or held by a holder whose hold has passed, or a record TTL has not removed yet.
          ConditionExpression: 'attribute_not_exists(pk) OR (claimStatus = :inProgress AND inProgressUntil < :now) OR expiresAt < :nowSeconds',
          ExpressionAttributeValues: marshall({ ':inProgress': 'IN_PROGRESS', ':now': request.nowMs, ':nowSeconds': Math.floor(request.nowMs / 1000) }),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { held: true, token, until };
    } catch (error) {
      if (errorName(error) !== 'ConditionalCheckFailedException') throw this.#unavailable('PutItem', error);
      const raw = (error as { Item?: Parameters<typeof unmarshall>[0] }).Item;
      const existing = raw ? (unmarshall(raw) as Partial<ClaimItem>) : {};
      const jobId = typeof existing.jobId === 'string' ? existing.jobId : undefined;
      if (existing.claimStatus === 'COMPLETED') return { held: false, state: 'completed', committedBy: jobId };
      const heldUntil = typeof existing.inProgressUntil === 'number' ? existing.inProgressUntil : until;
      return { held: false, state: 'in_progress', until: heldUntil, jobId };
    }
  }

  /** @throws {@link StoreUnavailableError} */
  async complete(idempotencyKey: string, claim: HeldClaim, jobId: string, nowMs: number): Promise<void> {
    const { ExpressionAttributeValues, ...update } = this.completionWrite(idempotencyKey, jobId, nowMs);
    await this.#ifHolder('UpdateItem', () =>
      this.#dynamodb.send(
        new UpdateItemCommand({
          ...update,
          ConditionExpression: 'holder = :token',
          ExpressionAttributeValues: { ...ExpressionAttributeValues, ...marshall({ ':token': claim.token }) },
        }),
      ),
    );
  }

  completionWrite(idempotencyKey: string, jobId: string, nowMs: number): Update {
    return {
      TableName: this.#table,
      Key: marshall({ pk: this.#prefix + idempotencyKey }),
      UpdateExpression: 'SET claimStatus = :completed, jobId = :jobId, expiresAt = :expiresAt REMOVE holder, inProgressUntil',
      ExpressionAttributeValues: marshall({ ':completed': 'COMPLETED', ':jobId': jobId, ':expiresAt': Math.floor(nowMs / 1000) + COMPLETED_CLAIM_SECONDS }),
    };
  }

  /** @throws {@link StoreUnavailableError} */
  async release(idempotencyKey: string, claim: HeldClaim): Promise<void> {
    await this.#ifHolder('DeleteItem', () =>
      this.#dynamodb.send(
        new DeleteItemCommand({
          TableName: this.#table,
          Key: marshall({ pk: this.#prefix + idempotencyKey }),
          ConditionExpression: 'holder = :token',
          ExpressionAttributeValues: marshall({ ':token': claim.token }),
        }),
      ),
    );
  }

  /** Runs a write conditional on the holder's token: a claim taken over meanwhile is left to its new holder. */
  async #ifHolder(operation: StoreOperation, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (errorName(error) !== 'ConditionalCheckFailedException') throw this.#unavailable(operation, error);
    }
  }

  #unavailable(operation: StoreOperation, error: unknown): StoreUnavailableError {
    return new StoreUnavailableError(operation, this.#table, { cause: error });
  }
}
