/**
 * The lane's provider keys as one set of objects that stay the same while their secrets change. The
 * key pool hands these very objects out, so a secret replaced in Secrets Manager (a rotation, or the
 * first `put-secret-value` after a deploy) is used by the next call without rebuilding anything. A key
 * whose secret changed is a new key: a cooldown it got for being invalid (`auth`) is lifted.
 */
import { createHash } from 'node:crypto';
import { RatelaneError } from '../../platform/errors.js';
import type { RateStateStore } from '../model/store.js';
import type { ProviderKey } from './key-pool.js';

/** The provider secret is unset, not JSON, or lacks a key the lane config names. A person must fix it. */
export class ProviderSecretError extends RatelaneError {
  override name = 'ProviderSecretError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** The configured keys with their current secrets. */
export class ProviderKeyRing {
  /** One object per configured key, in config order; `secret` is '' until {@link update} set it. */
  readonly keys: readonly ProviderKey[];

  constructor(configured: readonly { id: string; quotaOwner: string }[]) {
    this.keys = configured.map((k) => ({ id: k.id, quotaOwner: k.quotaOwner, secret: '' }));
  }

  /**
   * Takes the secret's value (`{ "<key id>": "<api key>", ... }` as JSON text or parsed) and sets each
   * key's secret, trimmed. Returns the ids whose secret changed. Throws {@link ProviderSecretError},
   * naming ids and what is wrong — never a secret — when the value is not such an object or a key's
   * secret is missing, empty or holds a control character; the keys then keep their secrets. The
   * first value an instance loads counts as changed for every key.
   */
  update(value: unknown): string[] {
    const secrets = parseSecretValue(value);
    const problems: string[] = [];
    const next = new Map<string, string>();
    for (const key of this.keys) {
      const raw = secrets[key.id];
      const secret = typeof raw === 'string' ? raw.trim() : '';
      if (secret === '') problems.push(`no value for key id ${key.id}`);
      else if (CONTROL_CHARACTERS.test(secret)) problems.push(`the value of key id ${key.id} holds a control character`);
      else next.set(key.id, secret);
    }
    if (problems.length > 0) throw new ProviderSecretError(`the provider secret is not usable: ${problems.join('; ')}`);
    const changed: string[] = [];
    for (const key of this.keys) {
      const secret = next.get(key.id)!;
      if (key.secret !== secret) {
        changed.push(key.id);
        key.secret = secret;
      }
    }
    return changed;
  }

  /** Whether every key has a secret. */
  get loaded(): boolean {
    return this.keys.every((k) => k.secret !== '');
  }
}

function parseSecretValue(value: unknown): Record<string, unknown> {
  let parsed = value;
  if (value instanceof Uint8Array) parsed = new TextDecoder().decode(value);
  if (typeof parsed === 'string') {
    try {
      parsed = JSON.parse(parsed);
    } catch {
      throw new ProviderSecretError('the provider secret is not JSON (a new secret holds a generated password until `put-secret-value` replaces it)');
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ProviderSecretError(`the provider secret is ${parsed === undefined ? 'unset' : 'not a JSON object'}`);
  }
  return parsed as Record<string, unknown>;
}

/** A short, one-way fingerprint of a key's secret (16 hex characters of its SHA-256): never the secret. */
export function secretFingerprint(secret: string): string {
  return createHash('sha256').update(secret).digest('hex').slice(0, 16);
}

/**
 * Lifts the `auth` cooldown of every key whose secret is no longer the one that was refused (its
 * fingerprint differs): the replaced key deserves a call. Other cooldowns stay. Returns the ids lifted.
 */
export async function liftReplacedAuthCooldowns(
  store: Pick<RateStateStore, 'readCooldowns' | 'deleteCooldown'>,
  keys: readonly ProviderKey[],
): Promise<string[]> {
  const snapshot = await store.readCooldowns(keys);
  const lifted: string[] = [];
  for (const key of keys) {
    const cooldown = snapshot.keys.get(key.id);
    if (cooldown?.reason !== 'auth' || cooldown.fingerprint === undefined || key.secret === '') continue;
    if (cooldown.fingerprint === secretFingerprint(key.secret)) continue;
    await store.deleteCooldown('key', key.id);
    lifted.push(key.id);
  }
  return lifted;
}
