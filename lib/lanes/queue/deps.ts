/**
 * The one place that builds a queue-lane consumer's dependencies from a lane, its AWS clients and the
 * few things that differ between the Lambda entry, the local stack and the tests (the key pool, the
 * lane pause, a model or a clock to inject). Everything else has one default here.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { KeyPool } from '../../admission/keys/key-pool.js';
import type { LanePauseRequester } from '../../admission/pause/lane-pause.js';
import type { LaneConfig } from '../../config/lanes.js';
import { createLaneTelemetry, definedOnly, extractionDefaults, type LaneLogLevel } from '../../extraction/deps.js';
import { consumerServiceName } from '../../platform/telemetry.js';
import type { ConsumerDeps } from './process-record.js';

/** Log levels of the consumer's Logger (`POWERTOOLS_LOG_LEVEL`). */
export type ConsumerLogLevel = LaneLogLevel;

/**
 * Powertools Logger and Metrics for one lane's consumer (or, with `serviceName`, another of its
 * functions), with the lane and region as metric dimensions and as keys on every log line.
 */
export function createConsumerTelemetry(
  lane: LaneConfig,
  options: { serviceName?: string; logLevel?: ConsumerLogLevel | undefined } = {},
): { logger: Logger; metrics: Metrics } {
  return createLaneTelemetry(lane, { serviceName: options.serviceName ?? consumerServiceName(lane), logLevel: options.logLevel });
}

/** The SDK clients a consumer calls, all in the lane's region. */
export interface ConsumerClients {
  sqs: SQSClient;
  s3: S3Client;
  dynamodb: DynamoDBClient;
}

/** What differs between consumers of the same lane; everything else defaults. */
export interface ConsumerWiring extends Partial<Omit<ConsumerDeps, 'lane' | 's3' | 'queueUrl' | 'dlqUrl' | 'keys'>> {
  queueUrl: string;
  dlqUrl: string;
  /** Admission: the shared key pool (one per consumer instance), or round robin. */
  keys: KeyPool;
  /**
   * The lane's own senders' IAM unique ids (`ExtractionDeps.laneSenders`): in AWS the lane's function
   * roles (`RATELANE_LANE_SENDERS`); an emulator that names every sender by its account, that account.
   */
  laneSenders: readonly string[];
  lanePause?: LanePauseRequester | undefined;
  /** Level of the default Logger (ignored when `logger` is given). */
  logLevel?: ConsumerLogLevel | undefined;
}

/**
 * A consumer's dependencies: the lane's result store and ledger on its tables, its model adapter,
 * Powertools telemetry, the real clock and sleep and `Math.random`, unless `wiring` gives its own.
 */
export function createConsumerDeps(lane: LaneConfig, clients: ConsumerClients, wiring: ConsumerWiring): ConsumerDeps {
  const { logLevel, ...rest } = wiring;
  const given = definedOnly(rest);
  return { ...given, ...extractionDefaults(lane, clients, given, { serviceName: consumerServiceName(lane), logLevel }), sqs: given.sqs ?? clients.sqs };
}
