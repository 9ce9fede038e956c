/**
 * Builds the handler of the batch lane's reconciler Lambda, invoked by the lane's EventBridge Scheduler schedule every
 * `lane.batch.reconcileEveryMinutes`: reads its lane from the environment, builds its adapters once per
 * execution environment, and runs one sweep of the lane's batches per invocation. What `lambdas/batch-reconciler.ts`
 * runs, and what a team's own Lambda entry calls (`ratelane/lambda`).
 *
 * Environment (set by the lane stack; names in `lib/config/names.ts`, `BATCH_RECONCILER_ENV`; checks in
 * `lib/lanes/batch/reconciler-deps.ts`):
 * - `RATELANE_LANE_CONFIG`: the lane's config as JSON (validated with the lane schema)
 * - `RATELANE_QUEUE_URL`: the lane's ingress queue (an invalid output goes there for its repair)
 * - `RATELANE_PROVIDER_SECRET_ARN`: Secrets Manager secret `{ "<key id>": "<api key>", ... }` (OpenAI-compatible lanes)
 * - `RATELANE_BATCH_SERVICE_ROLE_ARN`: the batch inference service role (Bedrock lanes)
 * - Powertools settings (`POWERTOOLS_SERVICE_NAME`, `POWERTOOLS_METRICS_NAMESPACE`, `POWERTOOLS_LOG_LEVEL`)
 */
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import { batchProviderFactory, BatchReconcilerConfigurationError, BatchReconcilerEnvironmentSchema, createBatchReconcilerDeps } from './reconciler-deps.js';
import { type BatchReconcilerHandler, createBatchReconcilerHandler } from './reconciler-handler.js';
import { createAwsClients } from '../../platform/clients.js';
import { laneFunctionEnvironment, SECRET_MAX_AGE_SECONDS } from '../function-environment.js';
import { BATCH_RECONCILER_ENV, batchServiceName } from '../../config/names.js';
import { createLaneTracer, traceClients } from '../../platform/lane-tracer.js';

/**
 * Builds the batch reconciler's handler from the function's environment (as the lane stack sets it): reads and checks
 * the variables, builds the SDK clients and adapters, primes what INIT primes. Call it once per execution
 * environment (`buildInInit`), never per invocation.
 *
 * @throws when the environment is incomplete or names another region than the function runs in
 */
export async function batchReconcilerHandlerFromEnvironment(): Promise<BatchReconcilerHandler> {
  const { env, lane } = laneFunctionEnvironment(
    BatchReconcilerEnvironmentSchema,
    'the batch reconciler',
    (message, cause) => new BatchReconcilerConfigurationError(message, { cause }),
  );
  const tracer = createLaneTracer(batchServiceName(lane));
  const clients = traceClients(tracer, createAwsClients(lane.region));
  const secretArn = env[BATCH_RECONCILER_ENV.providerSecretArn];
  const provider = batchProviderFactory(lane, {
    s3: clients.s3,
    readSecret: secretArn ? () => getSecret(secretArn, { maxAge: SECRET_MAX_AGE_SECONDS }) : undefined,
    bedrockServiceRoleArn: env[BATCH_RECONCILER_ENV.bedrockServiceRoleArn],
  });
  const deps = createBatchReconcilerDeps(lane, clients, {
    queueUrl: env[BATCH_RECONCILER_ENV.queueUrl],
    provider,
    logLevel: env[BATCH_RECONCILER_ENV.logLevel],
  });
  return createBatchReconcilerHandler(deps, { tracer });
}
