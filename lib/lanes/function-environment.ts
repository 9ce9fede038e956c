/**
 * What the three lane functions' builders (`queue/`, `live/`, `batch/from-environment.ts`) share: their
 * environment checked against its schema, the lane its `RATELANE_LANE_CONFIG` holds, and the refusal of a
 * function that runs in another region than its lane; and how long a read of the provider secret is reused.
 */
import type { z } from 'zod';
import { type LaneConfig, LaneConfigSchema } from '../config/lanes.js';
import { CONSUMER_ENV } from '../platform/environment.js';

/** How long a read of the provider secret is reused (s): a rotated key is in use within this. */
export const SECRET_MAX_AGE_SECONDS = 60;

/**
 * `source` checked with `schema`, and the lane it names, in the region the function runs in.
 *
 * @throws what `fail` makes of the problem: every variable that is wrong (`<name>: <issue>; …`), or a region
 *   other than the lane's
 */
export function laneFunctionEnvironment<T extends { [CONSUMER_ENV.laneConfig]: string }>(
  schema: { safeParse(value: unknown): z.ZodSafeParseResult<T> },
  who: string,
  fail: (message: string, cause?: unknown) => Error,
  source: NodeJS.ProcessEnv = process.env,
): { env: T; lane: LaneConfig } {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw fail(`${who}'s environment is not usable: ${problems}`, parsed.error);
  }
  const lane = LaneConfigSchema.parse(JSON.parse(parsed.data[CONSUMER_ENV.laneConfig]));
  const region = source.AWS_REGION ?? lane.region;
  if (region !== lane.region) throw fail(`function runs in ${region} but its lane is ${lane.name} (${lane.region})`);
  return { env: parsed.data, lane };
}
