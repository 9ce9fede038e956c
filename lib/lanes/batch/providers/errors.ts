/**
 * The errors of the batch lane's provider clients (`openai-batch.ts`, `bedrock-batch.ts`). Each SDK
 * error is mapped to one of these, so the batch lane decides on our classes, never on an SDK's:
 *
 * - {@link BatchSubmitThrottledError}: the provider refused *for now* (HTTP 429, OpenAI's enqueued
 *   token limit, Bedrock's `ThrottlingException` or `ServiceQuotaExceededException` for too many
 *   concurrent jobs). A scheduling signal, not a failure: submit again later.
 * - {@link BatchInputRejectedError}: the input itself is wrong (a validation error, a file over a
 *   limit, a malformed line); the same input fails again.
 * - {@link BatchProviderUnavailableError}: the network failed, the call timed out or the provider
 *   answered 5xx: a real failure that may pass when tried again.
 * - {@link BatchProviderRefusedError}: the provider refused for a reason a person must fix (the key or
 *   role has no access, the job or file does not exist, a name conflict).
 *
 * Messages name the provider, the operation, HTTP status and error codes — never document text and
 * never the provider's own message (which may quote the input); the SDK error stays as `cause`.
 */
import { RatelaneError } from '../../../platform/errors.js';

/** The batch providers these clients speak to. */
export type BatchProviderName = 'openai' | 'bedrock';

/** Why a submission was throttled. */
export type BatchThrottleReason =
  /** A short-window rate limit on the API calls (HTTP 429, `ThrottlingException`). */
  | 'rate_limit'
  /** OpenAI: the organization's enqueued-token limit for the model is full (`token_limit_exceeded`). */
  | 'enqueued_tokens'
  /** Bedrock: too many submitted + in-progress jobs (`ServiceQuotaExceededException`). */
  | 'concurrent_jobs'
  /** A longer quota or billing limit that a 429 stated (OpenAI `insufficient_quota`, a daily quota). */
  | 'quota';

/** Common fields of every batch client error. */
interface BatchErrorOptions {
  cause?: unknown;
  /** HTTP status of the provider's answer, when there was one. */
  status?: number;
  /** The provider's error code or exception name (sanitized, bounded). */
  code?: string;
}

/** What every batch client error carries: the provider, and its HTTP status and error code when known. */
abstract class BatchProviderError extends RatelaneError {
  readonly status: number | undefined;
  readonly code: string | undefined;
  constructor(
    message: string,
    readonly provider: BatchProviderName,
    options: BatchErrorOptions,
  ) {
    super(message, { cause: options.cause });
    this.status = options.status;
    this.code = options.code;
  }
}

/** The provider refused a submission for now: submit again later (after `retryAfterMs` when stated). */
export class BatchSubmitThrottledError extends BatchProviderError {
  override name = 'BatchSubmitThrottledError';
  readonly kind = 'unavailable' as const;
  readonly retryable = true;
  constructor(
    message: string,
    provider: BatchProviderName,
    readonly reason: BatchThrottleReason,
    /** The wait the provider stated, in ms; `null` when it stated none. */
    readonly retryAfterMs: number | null,
    options: BatchErrorOptions = {},
  ) {
    super(message, provider, options);
  }
}

/** The provider rejected the input (or a file/job over a documented limit): the same input fails again. */
export class BatchInputRejectedError extends BatchProviderError {
  override name = 'BatchInputRejectedError';
  readonly kind = 'input' as const;
  readonly retryable = false;
  constructor(message: string, provider: BatchProviderName, options: BatchErrorOptions = {}) {
    super(message, provider, options);
  }
}

/** Network failure, timeout or a 5xx: may pass when tried again. */
export class BatchProviderUnavailableError extends BatchProviderError {
  override name = 'BatchProviderUnavailableError';
  readonly kind = 'unavailable' as const;
  readonly retryable = true;
  constructor(
    message: string,
    provider: BatchProviderName,
    /** True when our own timeout (or the caller's signal) ended the call. */
    readonly timedOut: boolean,
    options: BatchErrorOptions = {},
  ) {
    super(message, provider, options);
  }
}

/** Refused for a reason a person must fix: credentials, permissions, a missing resource, a conflict. */
export class BatchProviderRefusedError extends BatchProviderError {
  override name = 'BatchProviderRefusedError';
  readonly kind = 'config' as const;
  readonly retryable = false;
  constructor(message: string, provider: BatchProviderName, options: BatchErrorOptions = {}) {
    super(message, provider, options);
  }
}

/** Any error a batch client maps an SDK error to. */
export type BatchClientError = BatchSubmitThrottledError | BatchInputRejectedError | BatchProviderUnavailableError | BatchProviderRefusedError;

/** A provider error code or exception name made safe for a message: `[A-Za-z0-9_.:-]`, at most 64 characters. */
export function safeCode(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(Math.trunc(value));
  if (typeof value !== 'string') return undefined;
  const cleaned = value.slice(0, 64).replace(/[^A-Za-z0-9_.:-]/g, '_');
  return cleaned === '' ? undefined : cleaned;
}

/** Results were asked for before the job reached a final state: ask again when it has. */
export class BatchJobNotFinishedError extends RatelaneError {
  override name = 'BatchJobNotFinishedError';
  readonly kind = 'conflict' as const;
  readonly retryable = true;
  constructor(
    message: string,
    readonly provider: BatchProviderName,
    /** The job's normalized state when asked. */
    readonly state: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}
