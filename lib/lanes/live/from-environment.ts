/**
 * Builds the handler of the live-lane Lambda behind the lane's HTTP API (IAM auth): `POST /v1/extractions` and
 * `GET /v1/extractions/{jobId}`. Reads its lane from the environment, builds its adapters once per
 * execution environment (admission on the lane's live reserve), and hands each request to the handler.
 * What `lambdas/live.ts` runs, and what a team's own Lambda entry calls (`ratelane/lambda`).
 *
 * Environment (set by the lane stack; names and checks in `lib/platform/environment.ts`, `LIVE_ENV`):
 * - `RATELANE_LANE_CONFIG`: the lane's config as JSON (validated with the lane schema)
 * - `RATELANE_QUEUE_URL`: the lane's ingress queue (where a job that cannot finish in time is handed over)
 * - `RATELANE_PROVIDER_SECRET_ARN`: Secrets Manager secret `{ "<key id>": "<api key>", ... }`
 * - optional `RATELANE_ADMISSION_SAFETY_MARGIN`, `RATELANE_ADMISSION_OUTPUT_TOKENS`; Powertools settings
 */
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import { createLaneAdmission, primedPool } from '../../admission/index.js';
import { ProviderKeyRing } from '../../admission/keys/key-ring.js';
import { createAwsClients } from '../../platform/clients.js';
import { liveServiceName } from '../../platform/telemetry.js';
import { createLaneTracer, traceClients } from '../../platform/lane-tracer.js';
import { providerNeedsKeySecrets } from '../../config/lanes.js';
import { laneFunctionEnvironment, SECRET_MAX_AGE_SECONDS } from '../function-environment.js';
import { providerSecretCheck } from '../queue/configuration.js';
import { createLiveDeps } from './deps.js';
import { createLiveHandler, type LiveHttpHandler } from './handler.js';
import { LIVE_ENV, LiveEnvironmentSchema } from '../../platform/environment.js';
import { RatelaneError } from '../../platform/errors.js';

/** Raised when the function's environment is incomplete or wrong. */
export class LiveEnvironmentError extends RatelaneError {
  override name = 'LiveEnvironmentError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/**
 * Builds the live API function's handler from the function's environment (as the lane stack sets it): reads and checks
 * the variables, builds the SDK clients and adapters, primes what INIT primes. Call it once per execution
 * environment (`buildInInit`), never per invocation.
 *
 * @throws when the environment is incomplete or names another region than the function runs in
 */
export async function liveHandlerFromEnvironment(): Promise<LiveHttpHandler> {
  const { env, lane } = laneFunctionEnvironment(LiveEnvironmentSchema, 'the live function', (message, cause) => new LiveEnvironmentError(message, { cause }));
  const tracer = createLaneTracer(liveServiceName(lane));
  const clients = traceClients(tracer, createAwsClients(lane.region));
  const secretArn = env[LIVE_ENV.providerSecretArn];
  const needsSecrets = providerNeedsKeySecrets(lane.provider);
  if (needsSecrets && !secretArn) throw new LiveEnvironmentError(`${LIVE_ENV.providerSecretArn} is not set`);
  const ring = new ProviderKeyRing(lane.provider.keys);
  const margin = env[LIVE_ENV.admissionSafetyMargin];
  const outputTokens = env[LIVE_ENV.admissionOutputTokens];
  const admission = createLaneAdmission({
    lane,
    dynamodb: clients.dynamodb,
    keys: ring.keys,
    side: 'live',
    settings: { ...(margin !== undefined ? { safetyMargin: margin } : {}), ...(outputTokens !== undefined ? { outputTokenEstimate: outputTokens } : {}) },
  });
  // Primed in INIT, as the consumer's: the first request's take knows the lane's cooldowns and buckets.
  const pool = await primedPool(admission);
  const deps = createLiveDeps(lane, clients, { queueUrl: env[LIVE_ENV.queueUrl], keys: pool, logLevel: env[LIVE_ENV.logLevel] });
  const checkConfiguration =
    needsSecrets && secretArn
      ? providerSecretCheck({ ring, readSecret: () => getSecret(secretArn, { maxAge: SECRET_MAX_AGE_SECONDS }), store: admission.store })
      : undefined;
  return createLiveHandler(deps, { checkConfiguration, tracer });
}
