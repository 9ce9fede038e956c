/**
 * The batch lane's settings, part of each lane's config: whether the lane takes batches, how long a
 * provider job may run, how often open jobs are reconciled, and when a batch counts as too old.
 */
import { z } from 'zod';

export const BatchSettingsSchema = z
  .object({
    /** Whether the lane takes batches (its stack deploys the manifest table and the reconciler). */
    enabled: z.boolean(),
    /** The provider job's completion window (h): OpenAI offers 24 h; Bedrock's job timeout is 24..168 h. */
    completionWindowHours: z.number().int().min(24).max(168),
    /** How often the reconciler polls open provider jobs (min). */
    reconcileEveryMinutes: z.number().int().min(1).max(60),
    /** A batch still open after this many hours raises the batch-age alarm (beyond the window plus a margin). */
    maxBatchAgeHours: z.number().int().min(1).max(336),
    /**
     * Optional reserved concurrency of the batch reconciler: `1` makes Lambda run at most one sweep
     * at a time. Off by default, like the consumer's and the live function's: AWS keeps 10 of an
     * account's concurrency unreserved and refuses a reservation that would leave less ("decreases
     * account's UnreservedConcurrentExecution below its minimum value"), so an account whose quota is
     * 10 (many new accounts) cannot reserve any, and the deploy would fail. Set it where the account's
     * quota has room (Service Quotas, "Concurrent executions", above 10 plus the other reservations).
     *
     * Without it, sweeps do not overlap as long as each tick runs on time: a tick comes every
     * `reconcileEveryMinutes`, a sweep times out after that interval and starts no batch pass in its
     * last 15 s, and Lambda does not retry a tick. Lambda does not forbid an overlap, though: a tick
     * delivered late (a Scheduler retry, Lambda's async queue) can start while the previous sweep is
     * still running. Item moves and commits are conditional (an item is never committed twice), but
     * two overlapping sweeps can each resubmit the same part waiting after a throttle (a second
     * provider job, paid for, whose results are not read) and each hand the same invalid output to
     * the queue for its repair (the queue lane commits it once). docs/deploying.md says more.
     */
    reservedConcurrency: z.literal(1).optional(),
  })
  .strict()
  .refine((b) => b.maxBatchAgeHours > b.completionWindowHours, {
    message: 'maxBatchAgeHours must be more than completionWindowHours (a batch may take its whole window)',
    path: ['maxBatchAgeHours'],
  });

/** A lane's batch settings. */
export type BatchSettings = z.infer<typeof BatchSettingsSchema>;

/** The default batch settings of a lane. */
export function defaultBatchSettings(): BatchSettings {
  return { enabled: true, completionWindowHours: 24, reconcileEveryMinutes: 5, maxBatchAgeHours: 26 };
}
