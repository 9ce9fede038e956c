/**
 * The live lane's settings, part of each lane's config: how long a caller may wait, what share of the
 * provider's quota is kept for callers (the queue lane's consumers cannot take it), and the API's
 * function, throttling and alarms.
 */
import { z } from 'zod';
import { PRINCIPAL_ARN_PATTERN } from '../contract/job.js';

/**
 * The longest total deadline a live request may ask (ms): API Gateway HTTP APIs end an integration
 * after 30 s, so the function must have answered (a committed result or "pending") well before.
 */
export const MAX_LIVE_DEADLINE_MS = 27_000;

/** The shortest deadline that leaves room for a model call and a hand-over (ms). */
export const MIN_LIVE_DEADLINE_MS = 1_000;

export const LiveSettingsSchema = z
  .object({
    /** Whether the lane's stack deploys the live API and function. */
    enabled: z.boolean(),
    /**
     * The share of each quota owner's requests and tokens (per minute and per day) kept for live
     * requests: the queue lane's consumers admit calls against the rest only, so a saturating backfill
     * cannot push live requests into 429s. 0 keeps nothing (live requests then compete with the queue).
     */
    reserveShare: z.number().min(0).max(0.9),
    /** The total deadline of a request that states none (ms). */
    defaultDeadlineMs: z.number().int().min(MIN_LIVE_DEADLINE_MS).max(MAX_LIVE_DEADLINE_MS),
    /** The longest deadline a request may state (ms); a longer one is cut to it. */
    maxDeadlineMs: z.number().int().min(MIN_LIVE_DEADLINE_MS).max(MAX_LIVE_DEADLINE_MS),
    /**
     * Time kept at the end of a request's deadline to hand the job over to the queue and answer (ms):
     * an S3-stored document's job sent to the lane's queue, a ledger line, the response.
     */
    handoverMarginMs: z.number().int().min(100).max(5_000),
    /**
     * Principals granted a lane-wide read of `GET /v1/extractions/{jobId}` (IAM user or role ARNs; a
     * role's sessions count as the role): they read every job of the lane, others only their own.
     */
    readers: z
      .array(z.string().regex(PRINCIPAL_ARN_PATTERN, { error: 'a reader is an IAM principal ARN' }))
      .max(100)
      .optional(),
    /** The live function's memory (MB). */
    memoryMb: z.number().int().min(128).max(10240),
    /** Optional reserved concurrency of the live function (its own cap, opt-in like the consumer's). */
    reservedConcurrency: z.number().int().min(1).optional(),
    /** The API stage's default route throttling: steady requests per second and burst. */
    throttle: z
      .object({
        rateLimit: z.number().positive().max(10_000),
        burstLimit: z.number().int().positive().max(5_000),
      })
      .strict(),
    alarms: z
      .object({
        /** Share of answers that were "pending" (handed over) over 5 minutes, in percent. */
        pendingSharePercent: z.number().positive().max(100),
        /** 5xx answers over 5 minutes. */
        serverErrors: z.number().int().positive(),
      })
      .strict(),
  })
  .strict()
  .refine((live) => live.defaultDeadlineMs <= live.maxDeadlineMs, {
    message: 'defaultDeadlineMs must be at most maxDeadlineMs',
    path: ['defaultDeadlineMs'],
  })
  .refine((live) => live.handoverMarginMs < live.defaultDeadlineMs, {
    message: 'handoverMarginMs must be less than defaultDeadlineMs',
    path: ['handoverMarginMs'],
  });

/** A lane's live settings. */
export type LiveSettings = z.infer<typeof LiveSettingsSchema>;

/** The default live settings of a lane. */
export function defaultLiveSettings(): LiveSettings {
  return {
    enabled: true,
    reserveShare: 0.2,
    defaultDeadlineMs: 8_000,
    maxDeadlineMs: 25_000,
    handoverMarginMs: 1_000,
    memoryMb: 512,
    throttle: { rateLimit: 50, burstLimit: 100 },
    alarms: { pendingSharePercent: 20, serverErrors: 5 },
  };
}

/**
 * The live function's timeout (s): the longest deadline a request may state, plus two seconds for
 * the function to start and answer. Below API Gateway's 30 s integration timeout.
 */
export function liveFunctionTimeoutSeconds(live: Pick<LiveSettings, 'maxDeadlineMs'>): number {
  return Math.ceil(live.maxDeadlineMs / 1000) + 2;
}
