/**
 * The one error base of ratelane. Every error the project raises extends {@link RatelaneError}: it has
 * a `name` (its class), a `kind` that says what went wrong in terms a caller can act on, whether
 * trying the same thing again later can help (`retryable`), and keeps what caused it as `cause`.
 * Messages name resources, ids, codes and sizes, never document text or secrets.
 */

/**
 * What went wrong, for a caller deciding what to do:
 * - `input`: the request, message or document is wrong; the same input fails again;
 * - `config`: the deployment or settings are wrong or incomplete; a person fixes them;
 * - `unavailable`: a dependency did not answer or refused for now (network, throttling, a 5xx);
 * - `conflict`: someone else changed the same state first (a conditional write lost);
 * - `provider`: the model provider answered with an error;
 * - `internal`: a bug or an invariant broken inside ratelane.
 */
export type ErrorKind = 'input' | 'config' | 'unavailable' | 'conflict' | 'provider' | 'internal';

/** The base of every ratelane error. */
export abstract class RatelaneError extends Error {
  /** What went wrong (see {@link ErrorKind}). */
  abstract readonly kind: ErrorKind;
  /** Whether the same operation may succeed when tried again later. */
  abstract readonly retryable: boolean;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The name of an error-like value, when it has one (SDK errors carry the service's exception name). */
export function errorName(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'name' in error && typeof (error as { name: unknown }).name === 'string') {
    return (error as { name: string }).name;
  }
  return undefined;
}

/**
 * An error's code for logs: its `code` when it has a string one (Node system errors), else its name,
 * else `Error`.
 */
export function errorCode(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : (errorName(error) ?? 'Error');
}

/** An error's message cut to `max` characters (an ellipsis marks the cut), for logs and wrapped messages. */
export function shortMessage(error: unknown, max = 200): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > max ? `${message.slice(0, max)}…` : message;
}
