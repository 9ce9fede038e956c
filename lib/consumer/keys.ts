/**
 * The provider keys a consumer may use. Secrets come from Secrets Manager in AWS and from env or a
 * file locally; this module only holds them and hands them out round robin.
 */

/** One usable key: its id (logged), the quota owner it shares limits with, and its secret (never logged). */
export interface ProviderKey {
  id: string;
  quotaOwner: string;
  secret: string;
}

/** Hands out the next key to call with. */
export interface KeySelector {
  next(): ProviderKey;
  /** How many keys the lane has. */
  readonly size: number;
}

/** Raised when a lane has no usable key. */
export class NoProviderKeyError extends Error {
  override name = 'NoProviderKeyError';
}

/** Round robin over a fixed set of keys. */
export function roundRobinKeys(keys: readonly ProviderKey[]): KeySelector {
  if (keys.length === 0) throw new NoProviderKeyError('no provider key configured for this lane');
  let cursor = 0;
  return {
    size: keys.length,
    next() {
      const key = keys[cursor % keys.length] as ProviderKey;
      cursor = (cursor + 1) % keys.length;
      return key;
    },
  };
}

/**
 * Pairs the lane config's key ids with secrets from a `{ "<key id>": "<secret>" }` object (the
 * shape of the lane's Secrets Manager secret). Throws naming missing ids, never secrets.
 */
export function keysFromSecret(
  configured: readonly { id: string; quotaOwner: string }[],
  secret: Readonly<Record<string, unknown>>,
): ProviderKey[] {
  const missing = configured.filter((k) => typeof secret[k.id] !== 'string' || (secret[k.id] as string).length === 0).map((k) => k.id);
  if (missing.length > 0) throw new NoProviderKeyError(`provider secret has no value for key id(s): ${missing.join(', ')}`);
  return configured.map((k) => ({ id: k.id, quotaOwner: k.quotaOwner, secret: secret[k.id] as string }));
}
