/**
 * Key schemas of the lane's DynamoDB tables, shared by the CDK stack and the local stack so both
 * create exactly the same tables.
 */

/** A global secondary index of a table (string keys, every attribute projected). */
export interface IndexShape {
  name: string;
  partitionKey: string;
  sortKey?: string;
}

/** Attribute definitions of one table: partition key, optional sort key, optional TTL attribute, indexes. */
export interface TableShape {
  partitionKey: string;
  sortKey?: string;
  /** Attribute holding an epoch-seconds expiry, enabled as the table's TTL. */
  ttlAttribute?: string;
  /** Global secondary indexes (sparse: only items with the index's keys are in it). */
  indexes?: readonly IndexShape[];
}

/** The ledger's index of job claims by source (`sourceKey`, a hash of the source id): what erasure finds a source's jobs by. */
export const LEDGER_SOURCE_INDEX: IndexShape = { name: 'bySource', partitionKey: 'sourceKey', sortKey: 'jobId' };

/** Results: one item per idempotency key, written once with a conditional put. */
export const RESULTS_TABLE: TableShape = { partitionKey: 'idempotencyKey', ttlAttribute: 'expiresAt' };

/** Validation and decision ledger: every entry of one job under its jobId, ordered by entry id. */
/**
 * The ledger's index of open reviews: a `needs_review` entry carries `reviewLane` (its lane) until its review
 * is resolved, oldest first by entry id (`ratelane review list`).
 */
export const LEDGER_REVIEW_INDEX: IndexShape = { name: 'needsReview', partitionKey: 'reviewLane', sortKey: 'entryId' };

export const LEDGER_TABLE: TableShape = {
  partitionKey: 'jobId',
  sortKey: 'entryId',
  ttlAttribute: 'expiresAt',
  indexes: [LEDGER_SOURCE_INDEX, LEDGER_REVIEW_INDEX],
};

/** Rate state: key cooldowns, token buckets and lane pause records; they expire by TTL. */
export const RATE_STATE_TABLE: TableShape = { partitionKey: 'pk', ttlAttribute: 'expiresAt' };

/**
 * Batch manifests: one partition per batch (`batchId`), its header item and one item per document
 * (`itemId`, the record id sent to the provider); they expire by TTL.
 */
export const MANIFEST_TABLE: TableShape = { partitionKey: 'batchId', sortKey: 'itemId', ttlAttribute: 'expiresAt' };
