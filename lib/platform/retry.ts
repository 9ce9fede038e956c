/**
 * How ratelane's AWS clients retry: the SDK's standard retry mode (its attempts, its retry-token
 * bucket, its verdict on which errors are transient or throttling), bounded by the time the calling
 * scope has left (`abort-scope.ts`): a backoff never waits past the scope's deadline, and no attempt
 * starts once the scope's signal fired or its deadline passed — the error of the last attempt stands.
 * One transient DynamoDB, SQS or S3 error so costs a short retry in-process, not the record (after a
 * paid model call, a failed commit would waste that call). Model calls are not AWS calls of these
 * clients: the providers' SDKs keep their retries off, and ratelane schedules those itself.
 */
import { StandardRetryStrategy } from '@smithy/core/retry';
import type { RetryErrorInfo, RetryStrategyV2, StandardRetryBackoffStrategy, StandardRetryToken } from '@smithy/types';
import { scopeTimeLeftMs } from './abort-scope.js';

/** Attempts per AWS call, the first included (the SDK's standard mode default). */
const AWS_MAX_ATTEMPTS = 3;

/** The longest backoff of the SDK's standard mode (ms). */
const MAX_BACKOFF_MS = 20_000;

/** The standard mode's capped full-jitter backoff, shortened to the time the scope has left. */
class ScopedBackoff implements StandardRetryBackoffStrategy {
  #base = 50;

  setDelayBase(delayBase: number): void {
    this.#base = delayBase;
  }

  computeNextBackoffDelay(retries: number): number {
    const delay = Math.floor(Math.random() * Math.min(this.#base * 2 ** retries, MAX_BACKOFF_MS));
    const left = scopeTimeLeftMs(Date.now());
    return left === undefined ? delay : Math.min(delay, left);
  }
}

/** The scope has time for another attempt (no scope: always). */
function timeForAnotherAttempt(): boolean {
  return scopeTimeLeftMs(Date.now()) !== 0;
}

/**
 * The SDK's standard retry strategy within the calling scope's time. One per client (its retry-token
 * bucket is the client's, as the SDK's own).
 */
export class ScopedRetryStrategy implements RetryStrategyV2 {
  readonly #standard: StandardRetryStrategy;

  constructor(maxAttempts = AWS_MAX_ATTEMPTS) {
    this.#standard = new StandardRetryStrategy({ maxAttempts, backoff: new ScopedBackoff() });
  }

  acquireInitialRetryToken(retryTokenScope: string): Promise<StandardRetryToken> {
    return this.#standard.acquireInitialRetryToken(retryTokenScope);
  }

  async refreshRetryTokenForRetry(token: StandardRetryToken, errorInfo: RetryErrorInfo): Promise<StandardRetryToken> {
    if (!timeForAnotherAttempt()) throw errorInfo.error;
    const next = await this.#standard.refreshRetryTokenForRetry(token, errorInfo);
    // The backoff may have outlasted the scope (it ends early only when the deadline is known).
    if (!timeForAnotherAttempt()) throw errorInfo.error;
    return next;
  }

  recordSuccess(token: StandardRetryToken): void {
    this.#standard.recordSuccess(token);
  }
}
