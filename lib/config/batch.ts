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
    /** Days a batch's manifest is kept from its creation (TTL: the whole batch expires together). */
    retentionDays: z.number().int().min(1).max(400),
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
  return { enabled: true, completionWindowHours: 24, reconcileEveryMinutes: 5, maxBatchAgeHours: 26, retentionDays: 90 };
}
