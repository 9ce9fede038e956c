/**
 * OpenAI-shaped bodies of the fake Batch API: the File and Batch objects, the lines of the output and
 * error files, and the refusals. Sources, cited again where each wording is used:
 * - Batch guide (platform.openai.com/docs/guides/batch; the stored copy read here was crawled into a
 *   public repository): the statuses, the output line shape, "Batch expiration" with the
 *   `batch_expired` error line, the per-batch limits (50,000 requests, 200 MB).
 * - The `openai` SDK's own types (`node_modules/openai/resources/batches.d.ts`, `files.d.ts`, v6.49):
 *   every field of `Batch`, `BatchError`, `BatchRequestCounts`, `BatchUsage` and `FileObject`.
 * - llama-stack's integration tests, recorded against the real API with each answer quoted
 *   (github.com/meta-llama/llama-stack, tests/integration/batches/test_batches_errors.py): line
 *   errors fail the batch in `validating` (`invalid_json_line`, `missing_required_parameter`,
 *   `invalid_url`, `invalid_request`, `streaming_unsupported`), a missing input file fails the batch,
 *   a bad endpoint or window is a 400, and cancelling a finished batch is a 409.
 * - github.com/openai/openai-openapi/issues/302: a request that failed with an HTTP error is an
 *   error-file line whose `response` holds that status and body, with `error: null`.
 */
import { randomBytes } from 'node:crypto';
import { errorBody, type OpenAiErrorBody } from '../wire/openai.js';
import type { WireReply } from '../wire/dialect.js';

/** The statuses of a batch (the SDK's `Batch.status` union). */
export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

/** One entry of `errors.data` on a failed batch (the SDK's `BatchError`). */
export interface BatchErrorEntry {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

/** A File object as `POST /v1/files` and `GET /v1/files/{id}` answer it. */
export interface FileObjectBody {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: 'batch' | 'batch_output';
  status: 'processed';
  expires_at: number | null;
  status_details: null;
}

/** A Batch object, field for field as the SDK types it (unset timestamps are `null`). */
export interface BatchBody {
  id: string;
  object: 'batch';
  endpoint: string;
  model: string | null;
  errors: { object: 'list'; data: BatchErrorEntry[] } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  usage: {
    input_tokens: number;
    input_tokens_details: { cached_tokens: number };
    output_tokens: number;
    output_tokens_details: { reasoning_tokens: number };
    total_tokens: number;
  };
  metadata: Record<string, string> | null;
}

/** One line of an output or error file. */
export interface BatchOutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: unknown } | null;
  error: { code: string; message: string } | null;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** An OpenAI-looking id: `prefix` + `length` random letters and digits (`file-…`, `batch_…`, `batch_req_…`). */
export function newObjectId(prefix: string, length = 24): string {
  const bytes = randomBytes(length);
  let id = prefix;
  for (const byte of bytes) id += ALPHANUMERIC[byte % ALPHANUMERIC.length];
  return id;
}

/** Epoch ms → the whole Unix seconds OpenAI's objects carry. */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** An output-file line for an answered request (Batch guide, "Retrieve the results"). */
export function outputLine(customId: string, requestId: string, body: unknown): BatchOutputLine {
  return { id: newObjectId('batch_req_'), custom_id: customId, response: { status_code: 200, request_id: requestId, body }, error: null };
}

/**
 * An error-file line for a request that ran and failed with an HTTP error: `response` carries the
 * status and OpenAI's error body, `error` is `null` (as observed in openai/openai-openapi#302).
 */
export function failedRequestLine(customId: string, requestId: string, status: number, body: OpenAiErrorBody): BatchOutputLine {
  return { id: newObjectId('batch_req_'), custom_id: customId, response: { status_code: status, request_id: requestId, body }, error: null };
}

/** The error-file line of a request never run because its batch expired (Batch guide, "Batch expiration", verbatim). */
export function expiredLine(customId: string): BatchOutputLine {
  const message = 'This request could not be executed before the completion window expired.';
  return { id: newObjectId('batch_req_'), custom_id: customId, response: null, error: { code: 'batch_expired', message } };
}

/**
 * The error-file line of a request never run because its batch was cancelled. UNVERIFIED: OpenAI
 * documents only that a cancelled batch keeps its partial results in the output file; this line
 * mirrors the documented `batch_expired` one so a client can account for every `custom_id`.
 */
export function cancelledLine(customId: string): BatchOutputLine {
  const message = 'This request was not executed because the batch was cancelled.';
  return { id: newObjectId('batch_req_'), custom_id: customId, response: null, error: { code: 'batch_cancelled', message } };
}

/** A `BatchError` entry. */
export function batchError(code: string, message: string, param: string | null = null, line: number | null = null): BatchErrorEntry {
  return { code, message, param, line };
}

/**
 * The enqueued-token refusal. OpenAI does not refuse `POST /v1/batches` for it: the create answers 200
 * with a `validating` batch (github.com/openai/openai-python/issues/1643: "I expected that the
 * client.batches.create call would at least throw an error … but it didn't, and I always need to check
 * by calling client.batches.retrieve"), which then ends `failed` with this entry, verbatim from
 * github.com/openai/openai-python/issues/2084: `BatchError(code='token_limit_exceeded', line=None,
 * message='Enqueued token limit reached for gpt-4o-mini in organization org-…. Limit: 2,000,000
 * enqueued tokens. Please try again once some in_progress batches have been completed.', param=None)`.
 */
export function tokenLimitError(model: string, organization: string, limit: number): BatchErrorEntry {
  const message =
    `Enqueued token limit reached for ${model} in organization ${organization}. Limit: ${limit.toLocaleString('en-US')} enqueued tokens. ` +
    'Please try again once some in_progress batches have been completed.';
  return batchError('token_limit_exceeded', message);
}

/** A missing or foreign input file fails the batch (llama-stack `test_batch_nonexistent_file_id`, recorded wording). */
export function missingInputFileError(fileId: string, organization: string): BatchErrorEntry {
  return batchError('invalid_request', `Cannot find file ${fileId}, or organization ${organization} does not have access to it.`, 'file_id');
}

/** 400 `missing_required_parameter` (wording as OpenAI answers it, github.com/BerriAI/litellm/issues/37146). */
export function missingParameterBody(param: string): OpenAiErrorBody {
  return errorBody(`Missing required parameter: '${param}'.`, 'invalid_request_error', param, 'missing_required_parameter');
}

/** 400 `invalid_value` for an enum parameter (llama-stack `test_batch_invalid_endpoint`, recorded wording). */
export function invalidValueBody(param: string, value: string, supported: readonly string[]): OpenAiErrorBody {
  const list = supported.map((s) => `'${s}'`).join(', ');
  return errorBody(`Invalid value: '${value}'. Supported values are: ${list}.`, 'invalid_request_error', param, 'invalid_value');
}

/** 400 `invalid_type` (llama-stack `test_batch_invalid_metadata_types`, recorded wording). */
export function invalidTypeBody(param: string, expected: string, value: unknown): OpenAiErrorBody {
  return errorBody(
    `Invalid type for '${param}': expected ${expected}, but got ${jsonTypeName(value)} instead.`,
    'invalid_request_error',
    param,
    'invalid_type',
  );
}

/** How OpenAI names a JSON value's type in `invalid_type` messages ("an array", "a string"). */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  if (typeof value === 'boolean') return 'a boolean';
  return 'a string';
}

/** 404 for an unknown or foreign file id (`No such File object: file-…`, param `id`, as OpenAI's SDK tests quote it). */
export function noSuchFileBody(fileId: string): OpenAiErrorBody {
  return errorBody(`No such File object: ${fileId}`, 'invalid_request_error', 'id');
}

/** 404 for an unknown or foreign batch id. The wording is the fake's; llama-stack checks only "no batch found". */
export function noSuchBatchBody(batchId: string): OpenAiErrorBody {
  return errorBody(`No batch found with id '${batchId}'.`, 'invalid_request_error', 'batch_id');
}

/** 409 when cancelling a batch that already ended (recorded by llama-stack; also quoted by BerriAI/litellm's tests). */
export function cannotCancelBody(status: BatchStatus): OpenAiErrorBody {
  return errorBody(`Cannot cancel a batch with status '${status}'.`, 'invalid_request_error');
}

/**
 * 400 for an upload that is not a JSONL file (an empty file, or a first line that is not a JSON
 * object). Observed from OpenAI's `/v1/files` in github.com/BerriAI/litellm/pull/37527: `{'message':
 * 'Invalid file format for Batch API. Must be .jsonl', 'type': 'invalid_request_error', 'param': None,
 * 'code': None}`. The rest of the file is checked line by line only when a batch validates it.
 */
export function invalidJsonlBody(): OpenAiErrorBody {
  return errorBody('Invalid file format for Batch API. Must be .jsonl', 'invalid_request_error');
}

/**
 * 413 for a batch input file over the size limit. Wording observed from OpenAI ("The batch input file
 * is larger than the 209715200 maximum for the gpt-4o model. Please try again with a smaller batch.",
 * errerrors.blogspot.com/2024/07/openai-batch-api-troubleshooting.html; the 413 status as reported in a
 * public run log that hit it for gpt-4.1-nano).
 */
export function fileTooLargeBody(maxBytes: number, model: string): OpenAiErrorBody {
  return errorBody(
    `The batch input file is larger than the ${maxBytes} maximum for the ${model} model. Please try again with a smaller batch.`,
    'invalid_request_error',
  );
}

/**
 * 400 for a file with more request lines than a batch may hold. The limit is documented (50,000); where
 * OpenAI enforces it and in what words was not found, so this wording is the fake's own.
 */
export function tooManyRequestsBody(count: number, max: number): OpenAiErrorBody {
  return errorBody(
    `The batch input file has ${count.toLocaleString('en-US')} requests; a batch may include up to ${max.toLocaleString('en-US')} requests.`,
    'invalid_request_error',
    'file',
  );
}

/** A file's expiry as OpenAI bounds it: anchor `created_at`, 3600..2592000 seconds (`FileCreateParams.ExpiresAfter`). */
export function checkExpiresAfter(param: string, value: unknown): { ok: true; seconds: number } | { ok: false; reply: WireReply } {
  const v = (typeof value === 'object' && value !== null ? value : {}) as { anchor?: unknown; seconds?: unknown };
  if (v.anchor !== 'created_at') return { ok: false, reply: { status: 400, body: invalidValueBody(`${param}.anchor`, String(v.anchor), ['created_at']) } };
  const seconds = v.seconds;
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 3_600 || seconds > 2_592_000) {
    const message = `Invalid '${param}.seconds': expected an integer between 3600 and 2592000.`;
    return { ok: false, reply: { status: 400, body: errorBody(message, 'invalid_request_error', `${param}.seconds`, 'invalid_value') } };
  }
  return { ok: true, seconds };
}

/** `DELETE /v1/files/{id}`: OpenAI's `FileDeleted`. */
export function fileDeletedBody(fileId: string): { id: string; object: 'file'; deleted: true } {
  return { id: fileId, object: 'file', deleted: true };
}
