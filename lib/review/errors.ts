/**
 * The typed errors of a review (`listReviews`, `resolveReview`): one class with a `code` to branch on,
 * and its subclass for a corrected object that fails validation, which lists the field paths and the
 * messages. Messages name lanes, jobs, states, fields and rules: never document text nor the values of
 * the corrected object.
 */
import { type ErrorKind, RatelaneError } from '../platform/errors.js';

/** What a {@link ReviewError} is about. */
export type ReviewErrorCode =
  /** The lane is not one of the configured lanes (the message names them). */
  | 'unknown_lane'
  /** The reviewer's name is empty, too long or holds control characters. */
  | 'invalid_reviewer'
  /** A list limit out of range. */
  | 'bad_limit'
  /** A list cursor that no list returned. */
  | 'bad_cursor'
  /** The lane never received a job with this id. */
  | 'job_not_found'
  /** The job is in another state than `needs_review` (`state` says which). */
  | 'not_in_review'
  /** A result is already committed for the job's idempotency key: resolved by another review, or a redrive. */
  | 'already_committed'
  /** The job's review entry names another lane than the one asked. */
  | 'wrong_lane'
  /** The job names a schema version this build does not know. */
  | 'unknown_schema'
  /** The corrected object fails the schema or the domain rules ({@link ReviewValidationError}). */
  | 'invalid_object'
  /** The corrected object cannot be stored as a result (over DynamoDB's item size, a value it refuses). */
  | 'result_unstorable'
  /** A table of the lane could not be read or written: nothing may be assumed written; try again. */
  | 'store_unavailable'
  /** The result IS committed, but the ledger entry naming the reviewer could not be written. */
  | 'ledger_not_recorded';

const KIND_OF: Readonly<Record<ReviewErrorCode, ErrorKind>> = {
  unknown_lane: 'input',
  invalid_reviewer: 'input',
  bad_limit: 'input',
  bad_cursor: 'input',
  job_not_found: 'input',
  not_in_review: 'conflict',
  already_committed: 'conflict',
  wrong_lane: 'input',
  unknown_schema: 'config',
  invalid_object: 'input',
  result_unstorable: 'input',
  store_unavailable: 'unavailable',
  ledger_not_recorded: 'unavailable',
};

/** Refused or failed review work; `code` says what (see {@link ReviewErrorCode}). */
export class ReviewError extends RatelaneError {
  override name = 'ReviewError';
  readonly kind: ErrorKind;
  /** Only a store that did not answer may do better later. */
  readonly retryable: boolean;
  /** The job's state when it was refused (`not_in_review`, `already_committed`). */
  readonly state: string | undefined;

  constructor(
    readonly code: ReviewErrorCode,
    message: string,
    options: { cause?: unknown; state?: string } = {},
  ) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.kind = KIND_OF[code];
    this.retryable = code === 'store_unavailable';
    this.state = options.state;
  }
}

/** The corrected object fails what the pipeline checks: its schema, then the schema's domain rules. */
export class ReviewValidationError extends ReviewError {
  override name = 'ReviewValidationError';

  constructor(
    readonly jobId: string,
    readonly schemaVersion: string,
    /** The step that failed, as the pipeline names it. */
    readonly parseStatus: 'not_json' | 'schema_invalid' | 'domain_invalid',
    /** `path: message` per problem (at most 20), as the pipeline feeds them to a repair call. */
    readonly problems: readonly string[],
    /** The paths of the fields that failed. */
    readonly failingFields: readonly string[],
    /** The schema checks (`schema:<code>`) and domain rules that failed. */
    readonly failingRules: readonly string[],
  ) {
    super('invalid_object', `the corrected object of job ${jobId} fails ${schemaVersion} (${parseStatus}): ${problems.join('; ')}; nothing was written`);
  }
}
