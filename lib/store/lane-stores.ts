/**
 * A lane's stores on its own tables, each keeping what it writes for the lane's `retention`: the one place
 * a lane's table names and retentions meet the stores (the functions, the CLI, the client, reviews and
 * erasure all open them here).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Cancellations } from './cancellation.js';
import { ErasureLedger } from './erasure.js';
import { Ledger } from './ledger.js';
import { BatchManifest } from './manifest.js';
import { manifestTableName } from './manifest-model.js';
import { ResultStore } from './results.js';

/** What of a lane its stores need (structurally the lane config's fields). */
export interface StoreLane {
  name: string;
  resources: { resultsTable: string; ledgerTable: string };
  retention: { resultsDays: number; ledgerDays: number; batchArtifactsDays: number };
}

/** The lane's stores. */
export interface LaneStores {
  results: ResultStore;
  ledger: Ledger;
  erasure: ErasureLedger;
  cancellations: Cancellations;
  manifest: BatchManifest;
}

/** The stores of `lane` on `dynamodb` (in the lane's region), with `now` as their clock where they take one. */
export function laneStores(lane: StoreLane, dynamodb: DynamoDBClient, options: { now?: (() => Date) | undefined } = {}): LaneStores {
  const now = options.now !== undefined ? { now: options.now } : {};
  const { resultsTable, ledgerTable } = lane.resources;
  const { resultsDays, ledgerDays, batchArtifactsDays } = lane.retention;
  const results = new ResultStore({ dynamodb, tableName: resultsTable, retentionDays: resultsDays });
  const ledger = new Ledger({ dynamodb, tableName: ledgerTable, retentionDays: ledgerDays, ...now });
  return {
    results,
    ledger,
    erasure: new ErasureLedger({ dynamodb, tableName: ledgerTable, retentionDays: ledgerDays, ...now }),
    cancellations: new Cancellations({ dynamodb, ledger, results, retentionDays: ledgerDays, ...now }),
    manifest: new BatchManifest({ dynamodb, tableName: manifestTableName(lane), retentionDays: batchArtifactsDays, ...now }),
  };
}
