/**
 * The one place that builds a live function's dependencies from a lane, its AWS clients and what
 * differs between the Lambda entry, the local stack and the tests (the key pool, a model or a clock).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { KeyPool } from '../admission/keys.js';
import type { LaneConfig } from '../config/lanes.js';
import { createConsumerTelemetry, type ConsumerLogLevel } from '../consumer/deps.js';
import { createModelAdapter } from '../providers/index.js';
import { liveServiceName } from '../shared/telemetry.js';
import { Ledger } from '../store/ledger.js';
import { ResultStore } from '../store/results.js';
import { RecentCallTimes } from './call-times.js';
import type { LiveDeps } from './executor.js';

/** What differs between live functions of the same lane; everything else defaults. */
export interface LiveWiring extends Partial<Omit<LiveDeps, 'lane' | 's3' | 'sqs' | 'queueUrl' | 'keys'>> {
  queueUrl: string;
  /** Admission: a key pool on the lane's live reserve. */
  keys: KeyPool;
  /** Level of the default Logger (ignored when `logger` is given). */
  logLevel?: ConsumerLogLevel | undefined;
}

/**
 * A live function's dependencies: the lane's result store and ledger, its model adapter, Powertools
 * telemetry under the live service name, fresh call-time measurements, the real clock and
 * `Math.random`, unless `wiring` gives its own.
 */
export function createLiveDeps(lane: LaneConfig, clients: { sqs: SQSClient; s3: S3Client; dynamodb: DynamoDBClient }, wiring: LiveWiring): LiveDeps {
  const { logLevel, ...rest } = wiring;
  const given = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined)) as typeof rest;
  const telemetry = given.logger && given.metrics ? undefined : createConsumerTelemetry(lane, { logLevel, serviceName: liveServiceName(lane) });
  return {
    lane,
    sqs: clients.sqs,
    s3: clients.s3,
    results: new ResultStore({ dynamodb: clients.dynamodb, tableName: lane.resources.resultsTable }),
    ledger: new Ledger({ dynamodb: clients.dynamodb, tableName: lane.resources.ledgerTable }),
    model: given.model ?? createModelAdapter(lane),
    callTimes: new RecentCallTimes(),
    now: () => new Date(),
    random: Math.random,
    ...given,
    logger: given.logger ?? (telemetry as NonNullable<typeof telemetry>).logger,
    metrics: given.metrics ?? (telemetry as NonNullable<typeof telemetry>).metrics,
  };
}
