/**
 * What every lane's dependencies share, built once: Powertools telemetry for a lane's function, and
 * the extraction core's defaults — the lane's result store and ledger on its tables, its model
 * adapter, the real clock and sleep and `Math.random` — unless the caller gives its own. The queue lane
 * (`lib/lanes/queue/deps.ts`) and the live lane (`lib/lanes/live/deps.ts`) add their own parts.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { LaneConfig } from '../config/lanes.js';
import { createModelAdapter } from '../providers/index.js';
import { realSleep } from '../platform/sleep.js';
import { METRICS_NAMESPACE } from '../platform/telemetry.js';
import { DynamoKeyClaims } from '../store/claims.js';
import { laneStores } from '../store/lane-stores.js';
import type { ExtractionDeps } from './context.js';

/** Log levels of a lane function's Logger (`POWERTOOLS_LOG_LEVEL`). */
export type LaneLogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/**
 * Powertools Logger and Metrics for one of a lane's functions, named `serviceName`, with the lane and
 * region as metric dimensions and as keys on every log line.
 */
export function createLaneTelemetry(
  lane: LaneConfig,
  options: { serviceName: string; logLevel?: LaneLogLevel | undefined },
): { logger: Logger; metrics: Metrics } {
  const logger = new Logger({
    serviceName: options.serviceName,
    logLevel: options.logLevel ?? 'INFO',
    persistentKeys: { lane: lane.name, region: lane.region },
  });
  const metrics = new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName: options.serviceName,
    defaultDimensions: { lane: lane.name, region: lane.region },
  });
  return { logger, metrics };
}

/** The given overrides without the ones given as `undefined` (which keep the default). */
export function definedOnly<T extends object>(given: T): T {
  return Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) as T;
}

/**
 * The extraction core's dependencies for `lane` (all but the key pool), from `given` where it has
 * them, else the defaults; telemetry under `serviceName` unless both logger and metrics are given.
 */
export function extractionDefaults(
  lane: LaneConfig,
  clients: { s3: S3Client; dynamodb: DynamoDBClient },
  given: Partial<Omit<ExtractionDeps, 'lane' | 's3' | 'keys'>>,
  telemetry: { serviceName: string; logLevel?: LaneLogLevel | undefined },
): Omit<ExtractionDeps, 'keys'> {
  const made = given.logger && given.metrics ? undefined : createLaneTelemetry(lane, telemetry);
  const stores = laneStores(lane, clients.dynamodb);
  return {
    lane,
    s3: clients.s3,
    results: given.results ?? stores.results,
    ledger: given.ledger ?? stores.ledger,
    erasure: given.erasure ?? stores.erasure,
    cancellations: given.cancellations ?? stores.cancellations,
    claims: given.claims ?? new DynamoKeyClaims({ dynamodb: clients.dynamodb, tableName: lane.resources.rateStateTable, lane: lane.name }),
    model: given.model ?? createModelAdapter(lane),
    now: given.now ?? (() => new Date()),
    sleep: given.sleep ?? realSleep,
    random: given.random ?? Math.random,
    logger: given.logger ?? (made as NonNullable<typeof made>).logger,
    metrics: given.metrics ?? (made as NonNullable<typeof made>).metrics,
    ...(given.maxRepairAttempts !== undefined ? { maxRepairAttempts: given.maxRepairAttempts } : {}),
  };
}
