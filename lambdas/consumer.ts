/**
 * The queue-lane consumer Lambda: reads its lane from the environment, builds its adapters once per
 * execution environment, and hands each SQS batch to the handler. Thin on purpose: everything it
 * does is in `lib/consumer`.
 *
 * Environment (set by the lane stack):
 * - `RATELANE_LANE_CONFIG`: the lane's config as JSON (validated with the lane schema)
 * - `RATELANE_QUEUE_URL`, `RATELANE_DLQ_URL`: the lane's ingress queue and DLQ
 * - `RATELANE_PROVIDER_SECRET_ARN`: Secrets Manager secret `{ "<key id>": "<api key>", ... }`
 * - `RATELANE_PAUSE_SCHEDULE_GROUP`, `RATELANE_PAUSE_SCHEDULER_ROLE_ARN`, `RATELANE_MAPPING_ID_PARAMETER`:
 *   the lane pause (schedule group, the role the resume schedule runs as, the SSM parameter holding
 *   the event source mapping's UUID). Without all three the lane never pauses (admission still defers).
 * - optional `RATELANE_ADMISSION_SAFETY_MARGIN` (0..0.5, default 0.05), `RATELANE_ADMISSION_OUTPUT_TOKENS`
 * - Powertools settings (`POWERTOOLS_SERVICE_NAME`, `POWERTOOLS_METRICS_NAMESPACE`, `POWERTOOLS_LOG_LEVEL`)
 */
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { AwsLanePauseController, sdkPauseCalls } from '../lib/admission/aws-pause.js';
import { createLaneAdmission } from '../lib/admission/index.js';
import { LaneConfigSchema, providerNeedsKeySecrets } from '../lib/config/lanes.js';
import { createConsumerHandler, createConsumerTelemetry, type SqsHandler } from '../lib/consumer/handler.js';
import { keysFromSecret } from '../lib/admission/keys.js';
import { createAwsClients } from '../lib/aws/clients.js';
import { createModelAdapter } from '../lib/providers/index.js';
import { Ledger } from '../lib/store/ledger.js';
import { ResultStore } from '../lib/store/results.js';

/** Raised when the function's environment is incomplete. */
export class ConsumerEnvironmentError extends Error {
  override name = 'ConsumerEnvironmentError';
}

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new ConsumerEnvironmentError(`environment variable ${name} is not set`);
  return value;
}

async function build(): Promise<SqsHandler> {
  const lane = LaneConfigSchema.parse(JSON.parse(requireEnv('RATELANE_LANE_CONFIG')));
  const region = process.env.AWS_REGION ?? lane.region;
  if (region !== lane.region) throw new ConsumerEnvironmentError(`function runs in ${region} but its lane is ${lane.name} (${lane.region})`);
  const clients = createAwsClients(lane.region);
  // Bedrock with IAM and Vertex authenticate with the function's role: their keys only name quota owners.
  const keys = providerNeedsKeySecrets(lane.provider)
    ? keysFromSecret(lane.provider.keys, (await getSecret<Record<string, unknown>>(requireEnv('RATELANE_PROVIDER_SECRET_ARN'), { transform: 'json', maxAge: 300 })) ?? {})
    : lane.provider.keys.map((k) => ({ id: k.id, quotaOwner: k.quotaOwner, secret: '' }));
  const scheduleGroup = process.env.RATELANE_PAUSE_SCHEDULE_GROUP;
  const schedulerRoleArn = process.env.RATELANE_PAUSE_SCHEDULER_ROLE_ARN;
  const mappingIdParameter = process.env.RATELANE_MAPPING_ID_PARAMETER;
  const controller =
    scheduleGroup && schedulerRoleArn && mappingIdParameter
      ? new AwsLanePauseController({ lane: lane.name, calls: sdkPauseCalls({ region: lane.region, mappingIdParameter }), scheduleGroup, schedulerRoleArn })
      : undefined;
  const margin = process.env.RATELANE_ADMISSION_SAFETY_MARGIN;
  const outputTokens = process.env.RATELANE_ADMISSION_OUTPUT_TOKENS;
  const admission = createLaneAdmission({
    lane,
    dynamodb: clients.dynamodb,
    keys,
    settings: { ...(margin ? { safetyMargin: Number(margin) } : {}), ...(outputTokens ? { outputTokenEstimate: Number(outputTokens) } : {}) },
    controller,
  });
  const { logger, metrics } = createConsumerTelemetry(lane);
  return createConsumerHandler({
    lane,
    queueUrl: requireEnv('RATELANE_QUEUE_URL'),
    dlqUrl: requireEnv('RATELANE_DLQ_URL'),
    sqs: clients.sqs,
    s3: clients.s3,
    results: new ResultStore({ dynamodb: clients.dynamodb, tableName: lane.resources.resultsTable }),
    ledger: new Ledger({ dynamodb: clients.dynamodb, tableName: lane.resources.ledgerTable }),
    model: createModelAdapter(lane),
    // One pool per execution environment: its short cache lives as long as the environment.
    keys: admission.newPool(),
    lanePause: admission.pauser,
    logger,
    metrics,
    now: () => new Date(),
    random: Math.random,
  });
}

let built: Promise<SqsHandler> | undefined;

/** The Lambda entry point (SQS event source with ReportBatchItemFailures). */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  built ??= build().catch((error: unknown) => {
    built = undefined;
    throw error;
  });
  return (await built)(event, context);
};
