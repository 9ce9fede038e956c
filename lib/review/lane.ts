/**
 * The lane a review works in: its config, a DynamoDB client in the lane's own region (or the local
 * stack's), and its own results table and ledger. A review reads and writes nothing else: a job and its
 * corrected object never leave the lane.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LaneConfig, LaneSet } from '../config/lanes.js';
import { createAwsClients, type ServiceEndpoints } from '../platform/clients.js';
import type { Ledger } from '../store/ledger.js';
import type { ResultStore } from '../store/results.js';
import { ReviewError } from './errors.js';
import { laneStores } from '../store/lane-stores.js';

/** An open review lane ({@link openReviewLane}); {@link ReviewLane.close} when done. */
export interface ReviewLane {
  lane: LaneConfig;
  /** The DynamoDB client, in the lane's region. */
  dynamodb: DynamoDBClient;
  /** The lane's ledger table. */
  ledger: Ledger;
  /** The lane's results table. */
  results: ResultStore;
  now: () => Date;
  /** Closes the client (when the lane opened it). */
  close(): void;
}

/** How {@link openReviewLane} finds and reaches the lane. */
export interface OpenReviewLaneOptions {
  /** The configured lanes (`configuredLanes().lanes`). */
  lanes: LaneSet;
  /** The lane's name (`us`, `eu`, ...). */
  lane: string;
  /** The local stack's endpoints; absent: AWS, with the SDK's default credentials. */
  endpoints?: ServiceEndpoints | undefined;
  /** Makes the lane's DynamoDB client (default: `createAwsClients(region, endpoints)`), for tests. */
  dynamodbFor?: (region: string, endpoints: ServiceEndpoints | undefined) => { dynamodb: DynamoDBClient; destroy(): void };
  /** The clock of the ledger entry and the commit (default: now). */
  now?: () => Date;
}

/**
 * Opens the lane named `options.lane`: a DynamoDB client in its region, its ledger and results tables.
 *
 * @throws {@link ReviewError} `unknown_lane`, naming the known lanes
 */
export function openReviewLane(options: OpenReviewLaneOptions): ReviewLane {
  const lane = Object.hasOwn(options.lanes, options.lane) ? options.lanes[options.lane] : undefined;
  if (!lane) {
    const known = Object.keys(options.lanes);
    throw new ReviewError('unknown_lane', `unknown lane "${options.lane}"; known lanes: ${known.length > 0 ? known.join(', ') : '(none)'}`);
  }
  const clients = options.dynamodbFor ? options.dynamodbFor(lane.region, options.endpoints) : createAwsClients(lane.region, options.endpoints);
  const now = options.now ?? (() => new Date());
  const { ledger, results } = laneStores(lane, clients.dynamodb, { now });
  return {
    lane,
    dynamodb: clients.dynamodb,
    ledger,
    results,
    now,
    close: () => clients.destroy(),
  };
}
