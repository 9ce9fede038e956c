/**
 * The AWS clients' retry strategy (lib/platform/retry.ts): the SDK's standard mode, bounded by the time
 * the calling scope has left (lib/platform/abort-scope.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RetryErrorInfo } from '@smithy/types';
import { withAbortSignal } from '../../../lib/platform/abort-scope.js';
import { ScopedRetryStrategy } from '../../../lib/platform/retry.js';

const transient = (error: Error): RetryErrorInfo => ({ errorType: 'TRANSIENT', error: error as RetryErrorInfo['error'] });

describe('ScopedRetryStrategy', () => {
  it('retries a transient error in the standard mode, up to its attempts', async () => {
    // Prepare
    const strategy = new ScopedRetryStrategy(3);
    const error = new Error('503');

    // Act: two retries are granted, the third refused
    const first = await strategy.acquireInitialRetryToken('dynamodb');
    const second = await strategy.refreshRetryTokenForRetry(first, transient(error));
    const third = await strategy.refreshRetryTokenForRetry(second, transient(error));

    // Assess
    assert.equal(third.getRetryCount(), 2);
    await assert.rejects(strategy.refreshRetryTokenForRetry(third, transient(error)));
  });

  it('retries nothing once the scope has no time left: the error of the last attempt stands', async () => {
    // Prepare: a scope whose signal fired
    const strategy = new ScopedRetryStrategy(3);
    const error = new Error('503');
    const token = await strategy.acquireInitialRetryToken('sqs');

    // Act / Assess: the very error is thrown, no retry granted
    await assert.rejects(
      withAbortSignal(AbortSignal.abort(), () => strategy.refreshRetryTokenForRetry(token, transient(error))),
      (thrown) => thrown === error,
    );
  });

  it('waits no longer than the scope has left, and grants no attempt past its deadline', async () => {
    // Prepare: a throttle (its backoff base is a second) in a scope with 30 ms left
    const strategy = new ScopedRetryStrategy(3);
    const error = new Error('ThrottlingException');
    const token = await strategy.acquireInitialRetryToken('dynamodb');
    const started = Date.now();

    // Act: the backoff is cut to the deadline, and then no attempt is left
    const outcome = await withAbortSignal(
      new AbortController().signal,
      () =>
        strategy.refreshRetryTokenForRetry(token, { errorType: 'THROTTLING', error: error as RetryErrorInfo['error'] }).then(
          () => 'retried',
          (thrown: unknown) => (thrown === error ? 'refused' : 'other'),
        ),
      started + 30,
    );

    // Assess: within the deadline's time (not the throttle backoff's up to a second)
    const waited = Date.now() - started;
    assert.ok(waited < 80, `waited ${waited} ms`);
    assert.ok(outcome === 'retried' || outcome === 'refused', outcome);
  });
});
