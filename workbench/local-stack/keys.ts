/**
 * Provider keys for a local run against a real provider, from the environment or a file (in AWS
 * they come from the lane's Secrets Manager secret, see `keysFromSecret`).
 *
 * - `RATELANE_<LANE>_PROVIDER_KEYS`: JSON `{ "<key id>": "<secret>" }` for that lane
 *   (`RATELANE_US_PROVIDER_KEYS` for lane `us`);
 * - else `RATELANE_PROVIDER_KEYS_FILE`: path of a JSON file `{ "<lane>": { "<key id>": "<secret>" } }`.
 *
 * Every key id the lane config names must have a non-empty secret; errors name lanes, ids, the
 * variable or the file, never a secret. Lanes whose provider authenticates without a key (Bedrock
 * with `auth: 'iam'`, Vertex AI) need no source: their keys get an empty secret, and a secret given
 * anyway is passed through (the adapter ignores it).
 */
import { readFileSync } from 'node:fs';
import { providerNeedsKeySecrets, type LaneConfig } from '../../lib/config/lanes.js';
import { ProviderKeyRing, ProviderSecretError } from '../../lib/admission/keys/key-ring.js';
import { NoProviderKeyError, type ProviderKey } from '../../lib/admission/keys/key-pool.js';

/** The variable holding a lane's keys: `RATELANE_<LANE>_PROVIDER_KEYS`. */
export function laneKeysVariable(laneName: string): string {
  return `RATELANE_${laneName.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_PROVIDER_KEYS`;
}

/** The variable naming a keys file for all lanes. */
export const PROVIDER_KEYS_FILE_VARIABLE = 'RATELANE_PROVIDER_KEYS_FILE';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Loads the lane's provider keys from `env` (default `process.env`): its own variable first, else
 * the keys file. Throws {@link NoProviderKeyError} when no source is set (for a lane that needs
 * secrets), when the JSON is malformed (without echoing it), or naming the key ids without a secret.
 */
export function loadLocalProviderKeys(lane: Pick<LaneConfig, 'name' | 'provider'>, env: Env = process.env): ProviderKey[] {
  const needsSecrets = providerNeedsKeySecrets(lane.provider);
  const secrets = readSecrets(lane.name, env, needsSecrets);
  if (secrets === null) {
    if (!needsSecrets) return lane.provider.keys.map((k) => ({ id: k.id, quotaOwner: k.quotaOwner, secret: '' }));
    throw new NoProviderKeyError(
      `lane ${lane.name}: no provider keys: set ${laneKeysVariable(lane.name)} to JSON {"<key id>": "<secret>"} or ${PROVIDER_KEYS_FILE_VARIABLE} to a JSON file {"${lane.name}": {"<key id>": "<secret>"}}`,
    );
  }
  const { values, from } = secrets;
  const invalid = Object.entries(values)
    .filter(([, v]) => v !== undefined && typeof v !== 'string')
    .map(([id]) => id);
  if (invalid.length > 0) {
    throw new NoProviderKeyError(`lane ${lane.name}: ${from}: the secret of key id(s) ${invalid.join(', ')} is not a string`);
  }
  if (!needsSecrets) {
    return lane.provider.keys.map((k) => ({
      id: k.id,
      quotaOwner: k.quotaOwner,
      secret: typeof values[k.id] === 'string' ? (values[k.id] as string).trim() : '',
    }));
  }
  // The same checks as the lane's secret in AWS (`ProviderKeyRing`): every key id, trimmed, no control characters.
  const missing = lane.provider.keys.filter((k) => typeof values[k.id] !== 'string' || (values[k.id] as string).trim().length === 0).map((k) => k.id);
  if (missing.length > 0) throw new NoProviderKeyError(`lane ${lane.name}: ${from} has no secret for key id(s): ${missing.join(', ')}`);
  const ring = new ProviderKeyRing(lane.provider.keys);
  try {
    ring.update(values);
  } catch (error) {
    if (!(error instanceof ProviderSecretError)) throw error;
    throw new NoProviderKeyError(`lane ${lane.name}: ${from}: ${error.message.replace(/^the provider secret is not usable: /, '')}`, { cause: error });
  }
  return [...ring.keys];
}

function readSecrets(laneName: string, env: Env, needsSecrets: boolean): { values: Record<string, unknown>; from: string } | null {
  const variable = laneKeysVariable(laneName);
  const inline = env[variable];
  if (inline !== undefined && inline.trim() !== '') {
    return { values: parseObject(inline, variable, laneName), from: variable };
  }
  const file = env[PROVIDER_KEYS_FILE_VARIABLE];
  if (file === undefined || file.trim() === '') return null;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new NoProviderKeyError(`lane ${laneName}: cannot read ${PROVIDER_KEYS_FILE_VARIABLE} file ${file}${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  const all = parseObject(text, `${PROVIDER_KEYS_FILE_VARIABLE} file ${file}`, laneName);
  const section = all[laneName];
  if (section === undefined) {
    if (!needsSecrets) return null;
    throw new NoProviderKeyError(`lane ${laneName}: ${PROVIDER_KEYS_FILE_VARIABLE} file ${file} has no "${laneName}" section`);
  }
  if (section === null || typeof section !== 'object' || Array.isArray(section)) {
    throw new NoProviderKeyError(
      `lane ${laneName}: the "${laneName}" section of ${PROVIDER_KEYS_FILE_VARIABLE} file ${file} must be an object {"<key id>": "<secret>"}`,
    );
  }
  return { values: section as Record<string, unknown>, from: `${PROVIDER_KEYS_FILE_VARIABLE} file ${file} ("${laneName}")` };
}

/** Parses a JSON object; the error never quotes the text (it holds secrets). */
function parseObject(text: string, from: string, laneName: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new NoProviderKeyError(`lane ${laneName}: ${from} is not valid JSON`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new NoProviderKeyError(`lane ${laneName}: ${from} must be a JSON object`);
  }
  return parsed as Record<string, unknown>;
}
