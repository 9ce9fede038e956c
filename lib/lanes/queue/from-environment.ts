/**
 * Builds the handler of the queue-lane consumer Lambda: reads its lane from the environment, builds its adapters once per
 * execution environment, and hands each SQS batch to the handler. What `lambdas/consumer.ts` runs,
 * and what a team's own Lambda entry calls (`ratelane/lambda`).
 *
 * Environment (set by the lane stack; names and checks in `lib/platform/environment.ts`):
 * - `RATELANE_LANE_CONFIG`: the lane's config as JSON (validated with the lane schema)
 * - `RATELANE_QUEUE_URL`, `RATELANE_DLQ_URL`: the lane's ingress queue and DLQ
 * - `RATELANE_LANE_SENDERS`: the lane's own senders (its functions' role unique ids, comma-separated),
 *   which may state a job's tenant besides the producers the lane config grants it
 * - `RATELANE_PROVIDER_SECRET_ARN`: Secrets Manager secret `{ "<key id>": "<api key>", ... }`
 * - `RATELANE_PAUSE_SCHEDULE_GROUP`, `RATELANE_PAUSE_SCHEDULER_ROLE_ARN`, `RATELANE_MAPPING_ID_PARAMETER`:
 *   the lane pause (schedule group, the role the resume schedule runs as, the SSM parameter holding
 *   the event source mapping's UUID). Without all three the lane never pauses (admission still defers).
 * - optional `RATELANE_ADMISSION_SAFETY_MARGIN` (0..0.5, default 0.05), `RATELANE_ADMISSION_OUTPUT_TOKENS`
 * - Powertools settings (`POWERTOOLS_SERVICE_NAME`, `POWERTOOLS_METRICS_NAMESPACE`, `POWERTOOLS_LOG_LEVEL`)
 */
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import { AwsLanePauseController, sdkPauseCalls } from '../../admission/pause/aws-controller.js';
import { createLaneAdmission, primedPool } from '../../admission/index.js';
import { ProviderKeyRing } from '../../admission/keys/key-ring.js';
import { createAwsClients } from '../../platform/clients.js';
import { consumerServiceName } from '../../platform/telemetry.js';
import { createLaneTracer, traceClients } from '../../platform/lane-tracer.js';
import { providerNeedsKeySecrets } from '../../config/lanes.js';
import { laneFunctionEnvironment, SECRET_MAX_AGE_SECONDS } from '../function-environment.js';
import { createConsumerDeps } from './deps.js';
import { providerSecretCheck } from './configuration.js';
import { createConsumerHandler, type SqsHandler } from './handler.js';
import { CONSUMER_ENV, ConsumerEnvironmentSchema } from '../../platform/environment.js';
import { RatelaneError } from '../../platform/errors.js';

/** Raised when the function's environment is incomplete or wrong. */
export class ConsumerEnvironmentError extends RatelaneError {
  override name = 'ConsumerEnvironmentError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/**
 * Builds the queue consumer's handler from the function's environment (as the lane stack sets it): reads and checks
 * the variables, builds the SDK clients and adapters, primes what INIT primes. Call it once per execution
 * environment (`buildInInit`), never per invocation.
 *
 * @throws when the environment is incomplete or names another region than the function runs in
 */
export async function consumerHandlerFromEnvironment(): Promise<SqsHandler> {
  const { env, lane } = laneFunctionEnvironment(
    ConsumerEnvironmentSchema,
    'the consumer',
    (message, cause) => new ConsumerEnvironmentError(message, { cause }),
  );
  const tracer = createLaneTracer(consumerServiceName(lane));
  const clients = traceClients(tracer, createAwsClients(lane.region));
  const secretArn = env[CONSUMER_ENV.providerSecretArn];
  const needsSecrets = providerNeedsKeySecrets(lane.provider);
  if (needsSecrets && !secretArn) throw new ConsumerEnvironmentError(`${CONSUMER_ENV.providerSecretArn} is not set`);
  // The keys' secrets are (re)read before each batch, cached for SECRET_MAX_AGE_SECONDS: a rotated key is
  // used within that. Bedrock with IAM and Vertex authenticate with the function's role: their keys
  // only name quota owners and keep an empty secret.
  const ring = new ProviderKeyRing(lane.provider.keys);
  const keys = ring.keys;
  const scheduleGroup = env[CONSUMER_ENV.pauseScheduleGroup];
  const schedulerRoleArn = env[CONSUMER_ENV.pauseSchedulerRoleArn];
  const mappingIdParameter = env[CONSUMER_ENV.mappingIdParameter];
  const controller =
    scheduleGroup && schedulerRoleArn && mappingIdParameter
      ? new AwsLanePauseController({
          lane: lane.name,
          calls: sdkPauseCalls({ region: lane.region, mappingIdParameter }),
          scheduleGroup,
          schedulerRoleArn,
          maximumConcurrency: lane.consumer.maximumConcurrency,
        })
      : undefined;
  const margin = env[CONSUMER_ENV.admissionSafetyMargin];
  const outputTokens = env[CONSUMER_ENV.admissionOutputTokens];
  const admission = createLaneAdmission({
    lane,
    dynamodb: clients.dynamodb,
    keys,
    settings: { ...(margin !== undefined ? { safetyMargin: margin } : {}), ...(outputTokens !== undefined ? { outputTokenEstimate: outputTokens } : {}) },
    controller,
  });
  // One pool per execution environment: its short cache lives as long as the environment. Primed here,
  // in INIT: its first take then knows the lane's cooldowns and buckets (`SharedKeyPool.prime`).
  const pool = await primedPool(admission);
  const deps = createConsumerDeps(lane, clients, {
    queueUrl: env[CONSUMER_ENV.queueUrl],
    dlqUrl: env[CONSUMER_ENV.dlqUrl],
    laneSenders: env[CONSUMER_ENV.laneSenders],
    keys: pool,
    lanePause: admission.pauser,
    logLevel: env[CONSUMER_ENV.logLevel],
  });
  const checkConfiguration =
    needsSecrets && secretArn
      ? providerSecretCheck({
          ring,
          readSecret: () => getSecret(secretArn, { maxAge: SECRET_MAX_AGE_SECONDS }),
          store: admission.store,
          onLifted: (keyIds) => deps.logger.info('auth cooldown lifted: the key was replaced', { lane: lane.name, keyIds }),
        })
      : undefined;
  return createConsumerHandler(deps, { checkConfiguration, tracer });
}
