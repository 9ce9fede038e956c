/**
 * The consumer function's environment: the variable names the stack sets and the Lambda entry reads,
 * and the zod schema that checks them when the function starts.
 */
import { z } from 'zod';
import { SENDER_PRINCIPAL_PATTERN } from '../policy/index.js';

/** The environment variables of a lane's consumer function. */
export const CONSUMER_ENV = {
  /** The lane's config as JSON (checked against the lane schema). */
  laneConfig: 'RATELANE_LANE_CONFIG',
  /** The lane's ingress queue URL (re-sends). */
  queueUrl: 'RATELANE_QUEUE_URL',
  /** The lane's DLQ URL (budget spent across re-sends). */
  dlqUrl: 'RATELANE_DLQ_URL',
  /** The lane's own senders (its functions' role unique ids, comma-separated): they may state a job's tenant. */
  laneSenders: 'RATELANE_LANE_SENDERS',
  /** The Secrets Manager secret `{ "<key id>": "<api key>" }` (providers that need keys). */
  providerSecretArn: 'RATELANE_PROVIDER_SECRET_ARN',
  /** The lane pause: the schedule group, the role the resume schedule runs as, the mapping-id parameter. */
  pauseScheduleGroup: 'RATELANE_PAUSE_SCHEDULE_GROUP',
  pauseSchedulerRoleArn: 'RATELANE_PAUSE_SCHEDULER_ROLE_ARN',
  mappingIdParameter: 'RATELANE_MAPPING_ID_PARAMETER',
  /** Admission overrides: the safety margin (0..0.5) and the initial output-token estimate. */
  admissionSafetyMargin: 'RATELANE_ADMISSION_SAFETY_MARGIN',
  admissionOutputTokens: 'RATELANE_ADMISSION_OUTPUT_TOKENS',
  /** Powertools settings. */
  serviceName: 'POWERTOOLS_SERVICE_NAME',
  metricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
  logLevel: 'POWERTOOLS_LOG_LEVEL',
} as const;

const optionalNumber = (min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      const n = Number(v);
      if (!(Number.isFinite(n) && n >= min && n <= max)) {
        ctx.addIssue({ code: 'custom', message: `must be a number in ${min}..${max}, got ${JSON.stringify(v)}` });
        return z.NEVER;
      }
      return n;
    });

/** The consumer's environment, checked. Unknown variables are ignored (Lambda sets many). */
export const ConsumerEnvironmentSchema = z.object({
  [CONSUMER_ENV.laneConfig]: z.string().min(2),
  [CONSUMER_ENV.queueUrl]: z.string().url(),
  [CONSUMER_ENV.dlqUrl]: z.string().url(),
  [CONSUMER_ENV.laneSenders]: z
    .string()
    .transform((v) => v.split(',').map((id) => id.trim()))
    .pipe(z.array(z.string().regex(SENDER_PRINCIPAL_PATTERN, { error: 'each sender is a role or user unique id (AROA…/AIDA…) or an account id' })).min(1)),
  [CONSUMER_ENV.providerSecretArn]: z.string().min(1).optional(),
  [CONSUMER_ENV.pauseScheduleGroup]: z.string().min(1).optional(),
  [CONSUMER_ENV.pauseSchedulerRoleArn]: z.string().min(1).optional(),
  [CONSUMER_ENV.mappingIdParameter]: z.string().min(1).optional(),
  [CONSUMER_ENV.admissionSafetyMargin]: optionalNumber(0, 0.5),
  [CONSUMER_ENV.admissionOutputTokens]: optionalNumber(0, 1_000_000),
  [CONSUMER_ENV.logLevel]: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? undefined : v.toUpperCase()))
    .pipe(z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR']).optional()),
});

/**
 * The environment variables of a lane's live function: the lane config, the queue a job is handed
 * over to, the provider secret, admission overrides and Powertools settings, as the consumer's.
 */
export const LIVE_ENV = {
  laneConfig: CONSUMER_ENV.laneConfig,
  queueUrl: CONSUMER_ENV.queueUrl,
  providerSecretArn: CONSUMER_ENV.providerSecretArn,
  admissionSafetyMargin: CONSUMER_ENV.admissionSafetyMargin,
  admissionOutputTokens: CONSUMER_ENV.admissionOutputTokens,
  serviceName: CONSUMER_ENV.serviceName,
  metricsNamespace: CONSUMER_ENV.metricsNamespace,
  logLevel: CONSUMER_ENV.logLevel,
} as const;

/** The live function's environment, checked (the consumer's, without the DLQ and the lane pause). */
export const LiveEnvironmentSchema = ConsumerEnvironmentSchema.pick({
  [LIVE_ENV.laneConfig]: true,
  [LIVE_ENV.queueUrl]: true,
  [LIVE_ENV.providerSecretArn]: true,
  [LIVE_ENV.admissionSafetyMargin]: true,
  [LIVE_ENV.admissionOutputTokens]: true,
  [LIVE_ENV.logLevel]: true,
});
