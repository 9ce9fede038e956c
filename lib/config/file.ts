/**
 * The lane config file a team owns: `ratelane.config.json` beside its project (or the file `--config`,
 * `RATELANE_CONFIG` or the CDK context `config` names), read alike by the CDK app, the CLI and the local
 * stack. No source edit adds a lane, changes a quota or a provider:
 *
 * ```json
 * { "lanes": [
 *     { "name": "us", "region": "us-east-1", "provider": { "limits": { "requestsPerMinute": 300 } } },
 *     { "name": "eu", "region": "eu-central-1", "provider": { "baseUrl": "https://eu.api.openai.com/v1" } }
 * ] }
 * ```
 *
 * Each lane is a `LaneInput` (its name and region, and whatever differs from the defaults), checked with
 * the lane schema: an error names the file, the lane and the field. No file anywhere: the built-in lanes
 * (`us` in us-east-1, `eu` in eu-central-1).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { DEFAULT_LANES, type LaneConfig, LaneConfigError, type LaneInput, laneSetOf, type LaneSet, resolveLane } from './lanes.js';

/** The file looked for in the working folder when none is named. */
export const CONFIG_FILE_NAME = 'ratelane.config.json';

/** The environment variable that names the file (the CLI's `--config` wins over it). */
export const CONFIG_FILE_VARIABLE = 'RATELANE_CONFIG';

const ConfigFileSchema = z
  .object({
    /** Where an editor finds the file's JSON schema, if the team keeps one; not read. */
    $schema: z.string().optional(),
    lanes: z
      .array(z.object({ name: z.string(), region: z.string() }).passthrough())
      .min(1, { error: 'declare at least one lane' })
      .max(50),
  })
  .strict();

/** Where a lane set came from: a file's path, or `built-in` (no file). */
export interface ConfiguredLanes {
  lanes: LaneSet;
  source: string;
}

/**
 * The lanes of the config file at `path`.
 *
 * @throws {@link LaneConfigError} naming the file and, for a wrong lane, the lane and its field
 */
export function readLaneConfigFile(path: string): LaneSet {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = code === 'ENOENT' ? 'no such file' : error instanceof SyntaxError ? `not JSON (${error.message})` : String(code ?? error);
    throw new LaneConfigError(`lane config ${path}: ${why}`, { cause: error });
  }
  const parsed = ConfigFileSchema.safeParse(raw);
  if (!parsed.success) throw new LaneConfigError(`lane config ${path}: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  const lanes: LaneConfig[] = parsed.data.lanes.map((declared, i) => {
    try {
      return resolveLane(declared as LaneInput);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new LaneConfigError(`lane config ${path}, lanes[${i}]: ${message}`, { cause: error });
    }
  });
  try {
    return laneSetOf(lanes);
  } catch (error) {
    throw new LaneConfigError(`lane config ${path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/**
 * The lanes a command or app runs with: the file `path` names (a flag, a context value), else the one
 * `RATELANE_CONFIG` names, else `ratelane.config.json` in `cwd` when there is one, else the built-in lanes.
 * A file that is named must exist.
 *
 * @throws {@link LaneConfigError} for a named file that is missing or any file that is wrong
 */
export function configuredLanes(options: { path?: string | undefined; cwd?: string; env?: NodeJS.ProcessEnv } = {}): ConfiguredLanes {
  const cwd = options.cwd ?? process.cwd();
  const named = options.path ?? (options.env ?? process.env)[CONFIG_FILE_VARIABLE];
  if (named !== undefined && named !== '') {
    const path = resolve(cwd, named);
    return { lanes: readLaneConfigFile(path), source: path };
  }
  const local = join(cwd, CONFIG_FILE_NAME);
  if (existsSync(local)) return { lanes: readLaneConfigFile(local), source: local };
  return { lanes: DEFAULT_LANES, source: 'built-in' };
}
