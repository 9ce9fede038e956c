/**
 * Key schemas of the lane's DynamoDB tables, shared by the CDK stack and the local stack so both
 * create exactly the same tables.
 */

/** Attribute definitions of one table: partition key, optional sort key, optional TTL attribute. */
export interface TableShape {
  partitionKey: string;
  sortKey?: string;
  /** Attribute holding an epoch-seconds expiry, enabled as the table's TTL. */
  ttlAttribute?: string;
}

/** Results: one item per idempotency key, written once with a conditional put. */
export const RESULTS_TABLE: TableShape = { partitionKey: 'idempotencyKey', ttlAttribute: 'expiresAt' };

/** Validation and decision ledger: every entry of one job under its jobId, ordered by entry id. */
export const LEDGER_TABLE: TableShape = { partitionKey: 'jobId', sortKey: 'entryId', ttlAttribute: 'expiresAt' };

/** Rate state: key cooldowns, token buckets and lane pause records; they expire by TTL. */
export const RATE_STATE_TABLE: TableShape = { partitionKey: 'pk', ttlAttribute: 'expiresAt' };

/**
 * Batch manifests: one partition per batch (`batchId`), its header item and one item per document
 * (`itemId`, the record id sent to the provider); they expire by TTL.
 */
export const MANIFEST_TABLE: TableShape = { partitionKey: 'batchId', sortKey: 'itemId', ttlAttribute: 'expiresAt' };
