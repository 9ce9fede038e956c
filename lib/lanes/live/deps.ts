/**
 * The one place that builds a live function's dependencies from a lane, its AWS clients and what
 * differs between the Lambda entry, the local stack and the tests (the key pool, a model or a clock),
 * and what they are ({@link LiveDeps}).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { ExtractionDeps } from '../../extraction/context.js';
import type { KeyPool } from '../../admission/keys/key-pool.js';
import type { LaneConfig } from '../../config/lanes.js';
import { definedOnly, extractionDefaults, type LaneLogLevel } from '../../extraction/deps.js';
import { liveServiceName } from '../../platform/telemetry.js';
import { RecentCallTimes } from './call-times.js';

/** What the live lane adds to the extraction core's dependencies. */
export interface LiveDeps extends ExtractionDeps {
  /** The lane's queue: where a job that cannot finish in time is handed over. */
  queueUrl: string;
  sqs: SQSClient;
  /** Recent model-call and commit times of this function instance. */
  callTimes: RecentCallTimes;
}

/** What differs between live functions of the same lane; everything else defaults. */
export interface LiveWiring extends Partial<Omit<LiveDeps, 'lane' | 's3' | 'sqs' | 'queueUrl' | 'keys'>> {
  queueUrl: string;
  /** Admission: a key pool on the lane's live reserve. */
  keys: KeyPool;
  /** Level of the default Logger (ignored when `logger` is given). */
  logLevel?: LaneLogLevel | undefined;
}

/**
 * A live function's dependencies: the lane's result store and ledger, its model adapter, Powertools
 * telemetry under the live service name, fresh call-time measurements, the real clock and sleep and
 * `Math.random`, unless `wiring` gives its own.
 */
export function createLiveDeps(lane: LaneConfig, clients: { sqs: SQSClient; s3: S3Client; dynamodb: DynamoDBClient }, wiring: LiveWiring): LiveDeps {
  const { logLevel, ...rest } = wiring;
  const given = definedOnly(rest);
  return {
    callTimes: new RecentCallTimes(),
    ...given,
    ...extractionDefaults(lane, clients, given, { serviceName: liveServiceName(lane), logLevel }),
    sqs: clients.sqs,
  };
}
