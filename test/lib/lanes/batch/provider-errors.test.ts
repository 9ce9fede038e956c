/**
 * How the batch clients map SDK errors to our classes: the `openai` SDK's errors as it builds them
 * (`APIError.generate`, its connection errors) and `@aws-sdk/client-bedrock` / `client-s3` service
 * exceptions as the SDK throws them, plus what a failed job's status says. Every mapped error has a
 * `name`, keeps the SDK error as `cause`, and never repeats the provider's message.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AccessDeniedException,
  ConflictException,
  InternalServerException,
  ResourceNotFoundException,
  ServiceQuotaExceededException,
  ServiceUnavailableException,
  ThrottlingException,
  ValidationException,
} from '@aws-sdk/client-bedrock';
import { NoSuchBucket, S3ServiceException } from '@aws-sdk/client-s3';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import type { Batch } from 'openai/resources/batches';
import { bedrockJobStatus, mapBedrockBatchError } from '../../../../lib/lanes/batch/providers/bedrock.js';
import {
  BatchInputRejectedError,
  BatchProviderRefusedError,
  BatchProviderUnavailableError,
  BatchSubmitThrottledError,
  type BatchClientError,
} from '../../../../lib/lanes/batch/providers/errors.js';
import { mapOpenAiBatchError, openAiJobStatus } from '../../../../lib/lanes/batch/providers/openai.js';
import { RatelaneError } from '../../../../lib/platform/errors.js';

const NOW = new Date('2026-12-01T12:00:00Z');
/** Planted in every provider message: it must never reach one of our messages. */
const SENTINEL = 'Rechnung-4711-SENTINEL';

function assertMapped<E extends BatchClientError>(mapped: Error, type: new (...args: never[]) => E, cause: unknown): E {
  assert.ok(mapped instanceof type, `expected ${type.name}, got ${mapped.name}: ${mapped.message}`);
  assert.ok(mapped instanceof RatelaneError);
  assert.equal(mapped.name, type.name);
  assert.equal(mapped.cause, cause);
  assert.ok(!mapped.message.includes(SENTINEL), `provider text leaked into "${mapped.message}"`);
  return mapped;
}

/** An `openai` SDK error exactly as the SDK builds it from a response. */
function openAiError(status: number, error: Record<string, unknown>, headers: Record<string, string> = {}): APIError {
  return APIError.generate(status, { error: { message: `${SENTINEL} refused`, ...error } }, undefined, new Headers(headers));
}

/** A Bedrock exception as the SDK deserializes it (status in `$metadata`, the raw response on `$response`). */
function withResponse<E extends Error>(error: E, status: number, headers: Record<string, string> = {}): E {
  Object.assign(error, { $response: { statusCode: status, headers: { 'x-amzn-errortype': error.name, ...headers }, body: undefined } });
  return error;
}
const meta = (httpStatusCode: number) => ({ httpStatusCode, requestId: 'b7f0c1d2-0000-4000-8000-000000000000', attempts: 1, totalRetryDelay: 0 });

describe('OpenAI batch client: SDK errors', () => {
  it('maps a 429 on files.create to BatchSubmitThrottledError with the stated wait', () => {
    // Prepare
    const error = openAiError(429, { type: 'requests', code: 'rate_limit_exceeded' }, { 'retry-after-ms': '1500' });
    // Act
    const mapped = assertMapped(mapOpenAiBatchError(error, 'files.create', NOW), BatchSubmitThrottledError, error);
    // Assess
    assert.equal(mapped.reason, 'rate_limit');
    assert.equal(mapped.retryAfterMs, 1500);
    assert.equal(mapped.status, 429);
    assert.equal(mapped.provider, 'openai');
    assert.match(mapped.message, /files\.create HTTP 429/);
  });

  it('maps a 429 token_limit_exceeded on batches.create to an enqueued-token throttle', () => {
    const error = openAiError(429, { type: 'invalid_request_error', code: 'token_limit_exceeded' });
    const mapped = assertMapped(mapOpenAiBatchError(error, 'batches.create', NOW), BatchSubmitThrottledError, error);
    assert.equal(mapped.reason, 'enqueued_tokens');
    assert.equal(mapped.retryAfterMs, null, 'OpenAI states no wait for the enqueued-token limit');
  });

  it('maps a 429 insufficient_quota to a quota throttle', () => {
    const error = openAiError(429, { type: 'insufficient_quota', code: 'insufficient_quota' });
    assert.equal(assertMapped(mapOpenAiBatchError(error, 'batches.create', NOW), BatchSubmitThrottledError, error).reason, 'quota');
  });

  it('maps 400 and 422 to BatchInputRejectedError, with the code', () => {
    for (const status of [400, 413, 422]) {
      const error = openAiError(status, { type: 'invalid_request_error', code: 'invalid_value', param: 'purpose' });
      const mapped = assertMapped(mapOpenAiBatchError(error, 'files.create', NOW), BatchInputRejectedError, error);
      assert.equal(mapped.status, status);
      assert.equal(mapped.code, 'invalid_value');
      assert.equal(mapped.retryable, false);
    }
  });

  it('maps 401, 403, 404 and 409 to BatchProviderRefusedError', () => {
    for (const status of [401, 403, 404, 409]) {
      const error = openAiError(status, { type: 'invalid_request_error', code: null });
      assert.equal(assertMapped(mapOpenAiBatchError(error, 'batches.retrieve', NOW), BatchProviderRefusedError, error).status, status);
    }
  });

  it('maps 5xx, 408 and connection failures to BatchProviderUnavailableError; a timeout says so', () => {
    for (const status of [408, 500, 503]) {
      const error = openAiError(status, { type: 'server_error' });
      assertMapped(mapOpenAiBatchError(error, 'files.content', NOW), BatchProviderUnavailableError, error);
    }
    const refused = new APIConnectionError({ message: `${SENTINEL} ECONNREFUSED`, cause: new Error('connect ECONNREFUSED') });
    assert.equal(assertMapped(mapOpenAiBatchError(refused, 'files.create', NOW), BatchProviderUnavailableError, refused).timedOut, false);
    const timeout = new APIConnectionTimeoutError({ message: 'Request timed out.' });
    assert.equal(assertMapped(mapOpenAiBatchError(timeout, 'files.create', NOW), BatchProviderUnavailableError, timeout).timedOut, true);
  });
});

describe('OpenAI batch client: a failed batch', () => {
  const batch = (overrides: Partial<Batch>): Batch => ({
    id: 'batch_67a1',
    object: 'batch',
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    created_at: 1_764_590_400,
    input_file_id: 'file-abc',
    status: 'validating',
    ...overrides,
  });

  it('reports the enqueued-token refusal as BatchSubmitThrottledError (a scheduling signal)', () => {
    // Prepare: the shape OpenAI answers (openai/openai-python#2084)
    const failed = batch({
      status: 'failed',
      errors: {
        object: 'list',
        data: [
          {
            code: 'token_limit_exceeded',
            line: null,
            param: null,
            message: `Enqueued token limit reached for gpt-4o-mini in organization org-x. Limit: 2,000,000 enqueued tokens. ${SENTINEL}`,
          },
        ],
      },
    });
    // Act
    const status = openAiJobStatus(failed);
    // Assess
    assert.equal(status.state, 'failed');
    assert.ok(status.error instanceof BatchSubmitThrottledError);
    assert.equal(status.error.reason, 'enqueued_tokens');
    assert.equal(status.error.code, 'token_limit_exceeded');
    assert.ok(!status.error.message.includes(SENTINEL));
  });

  it('reports a validation failure as BatchInputRejectedError naming codes and lines, not messages', () => {
    const failed = batch({
      status: 'failed',
      errors: { data: [{ code: 'invalid_json_line', line: 7, message: `${SENTINEL} is not valid JSON`, param: null }] },
    });
    const status = openAiJobStatus(failed);
    assert.ok(status.error instanceof BatchInputRejectedError);
    assert.equal(status.error.code, 'invalid_json_line');
    assert.match(status.error.message, /invalid_json_line \(line 7\)/);
    assert.ok(!status.error.message.includes(SENTINEL));
  });

  it('normalizes every state and the counts', () => {
    const states: Array<[Batch['status'], string]> = [
      ['validating', 'submitted'],
      ['in_progress', 'in_progress'],
      ['finalizing', 'in_progress'],
      ['cancelling', 'in_progress'],
      ['completed', 'finished'],
      ['expired', 'expired'],
      ['cancelled', 'cancelled'],
    ];
    for (const [providerState, state] of states) {
      const status = openAiJobStatus(batch({ status: providerState, request_counts: { total: 10, completed: 7, failed: 2 }, output_file_id: 'file-out' }));
      assert.equal(status.state, state, providerState);
      assert.equal(status.error, undefined);
      assert.deepEqual(status.counts, { total: 10, succeeded: 7, failed: 2 });
      assert.equal(status.outputRef, 'file-out');
    }
  });
});

describe('Bedrock batch client: SDK errors', () => {
  it('maps ThrottlingException on CreateModelInvocationJob to a rate-limit throttle, with a stated wait when there is one', () => {
    // Prepare
    const plain = withResponse(new ThrottlingException({ message: `${SENTINEL} Too many requests`, $metadata: meta(429) }), 429);
    const stated = withResponse(new ThrottlingException({ message: 'Too many requests', $metadata: meta(429) }), 429, { 'retry-after': '7' });
    // Act
    const first = assertMapped(mapBedrockBatchError(plain, 'CreateModelInvocationJob', NOW), BatchSubmitThrottledError, plain);
    const second = assertMapped(mapBedrockBatchError(stated, 'CreateModelInvocationJob', NOW), BatchSubmitThrottledError, stated);
    // Assess
    assert.equal(first.reason, 'rate_limit');
    assert.equal(first.retryAfterMs, null);
    assert.equal(first.code, 'ThrottlingException');
    assert.equal(first.status, 429);
    assert.equal(second.retryAfterMs, 7000);
  });

  it('maps ServiceQuotaExceededException (too many concurrent jobs) to a concurrent-jobs throttle', () => {
    const error = withResponse(
      new ServiceQuotaExceededException({ message: `${SENTINEL} Sum of in-progress and submitted jobs exceeded`, $metadata: meta(400) }),
      400,
    );
    const mapped = assertMapped(mapBedrockBatchError(error, 'CreateModelInvocationJob', NOW), BatchSubmitThrottledError, error);
    assert.equal(mapped.reason, 'concurrent_jobs');
    assert.equal(mapped.retryable, true);
  });

  it('maps ValidationException to BatchInputRejectedError', () => {
    const error = withResponse(new ValidationException({ message: `${SENTINEL} 1 validation error detected`, $metadata: meta(400) }), 400);
    assert.equal(assertMapped(mapBedrockBatchError(error, 'CreateModelInvocationJob', NOW), BatchInputRejectedError, error).code, 'ValidationException');
  });

  it('maps AccessDenied, ResourceNotFound and Conflict to BatchProviderRefusedError', () => {
    const errors = [
      new AccessDeniedException({ message: SENTINEL, $metadata: meta(403) }),
      new ResourceNotFoundException({ message: SENTINEL, $metadata: meta(404) }),
      new ConflictException({ message: SENTINEL, $metadata: meta(409) }),
    ];
    for (const error of errors)
      assertMapped(mapBedrockBatchError(withResponse(error, error.$metadata.httpStatusCode!), 'GetModelInvocationJob', NOW), BatchProviderRefusedError, error);
  });

  it('maps InternalServerException, ServiceUnavailableException, network failures and our timeout to BatchProviderUnavailableError', () => {
    for (const error of [
      new InternalServerException({ message: SENTINEL, $metadata: meta(500) }),
      new ServiceUnavailableException({ message: SENTINEL, $metadata: meta(503) }),
    ]) {
      assertMapped(
        mapBedrockBatchError(withResponse(error, error.$metadata.httpStatusCode!), 'CreateModelInvocationJob', NOW),
        BatchProviderUnavailableError,
        error,
      );
    }
    const network = Object.assign(new Error(`connect ECONNREFUSED ${SENTINEL}`), { code: 'ECONNREFUSED' });
    assert.equal(assertMapped(mapBedrockBatchError(network, 'GetModelInvocationJob', NOW), BatchProviderUnavailableError, network).timedOut, false);
    const aborted = Object.assign(new Error('Request aborted'), { name: 'AbortError' });
    assert.equal(assertMapped(mapBedrockBatchError(aborted, 'GetModelInvocationJob', NOW, true), BatchProviderUnavailableError, aborted).timedOut, true);
  });

  it('maps S3 SlowDown/5xx to unavailable and NoSuchBucket to refused', () => {
    const slowDown = new S3ServiceException({ name: 'SlowDown', $fault: 'server', message: 'Please reduce your request rate.', $metadata: meta(503) });
    assertMapped(mapBedrockBatchError(slowDown, 'PutObject', NOW), BatchProviderUnavailableError, slowDown);
    const noBucket = new NoSuchBucket({ message: 'The specified bucket does not exist', $metadata: meta(404) });
    assertMapped(mapBedrockBatchError(noBucket, 'PutObject', NOW), BatchProviderRefusedError, noBucket);
  });
});

describe('Bedrock batch client: job status', () => {
  const job = (status: string, message?: string) =>
    bedrockJobStatus({ status: status as never, message, totalRecordCount: 120, successRecordCount: 110, errorRecordCount: 10 }, 's3://b/batch/x/output/j1/');

  it('normalizes every state and the counts', () => {
    const states: Array<[string, string]> = [
      ['Submitted', 'submitted'],
      ['Validating', 'submitted'],
      ['Scheduled', 'submitted'],
      ['InProgress', 'in_progress'],
      ['Stopping', 'in_progress'],
      ['Completed', 'finished'],
      ['PartiallyCompleted', 'finished'],
      ['Stopped', 'cancelled'],
      ['Expired', 'expired'],
    ];
    for (const [providerState, state] of states) {
      const status = job(providerState);
      assert.equal(status.state, state, providerState);
      assert.equal(status.providerState, providerState);
      assert.deepEqual(status.counts, { total: 120, succeeded: 110, failed: 10 });
      assert.equal(status.outputRef, 's3://b/batch/x/output/j1/');
    }
  });

  it('types a Failed job by its reason without keeping the provider message', () => {
    const rejected = job('Failed', `The input file has an invalid record: ${SENTINEL}`).error;
    assert.ok(rejected instanceof BatchInputRejectedError);
    assert.ok(!rejected.message.includes(SENTINEL));
    assert.ok(job('Failed', 'Job failed because the service quota was exceeded').error instanceof BatchSubmitThrottledError);
    assert.ok(job('Failed', 'Internal server error').error instanceof BatchProviderUnavailableError);
  });
});
