/**
 * The OpenAI Batch API client of the batch lane, through the official `openai` SDK with its retries
 * off (`maxRetries: 0`) and a timeout: a JSONL file of Chat Completions requests is uploaded
 * (`files.create`, purpose `batch`), a batch is created on it (`batches.create`, window `24h`),
 * watched (`batches.retrieve`), read (`files.content` of its output and error files) or cancelled; once it
 * has ended, its files can be deleted (`files.delete`: what erasing a source of the batch asks). Every file
 * expires after the lane's batch artifact retention when one is given (`expires_after`, `output_expires_after`).
 *
 * Each line's body is what `lib/providers/openai-compatible.ts` sends for one call: `model`,
 * `messages`, `response_format: { type: 'json_schema', json_schema: { name, schema, strict: true } }`
 * and `max_completion_tokens` when the record sets one.
 *
 * Limits ({@link OPENAI_BATCH_LIMITS}): "The file can contain up to 50,000 requests, and can be up to
 * 200 MB in size" (OpenAI API reference, Create batch, `input_file_id`; the same words in the SDK's
 * `BatchCreateParams`); each file holds one model's requests. 200 MB is read as 200,000,000 bytes.
 *
 * Reading: only the output and error files the batch itself names, and only for the batch the part
 * created (its id, its input file and its ratelane batch: {@link foreignBatch}); every line's
 * `custom_id` must carry the batch's record prefix.
 *
 * Throttles: an HTTP 429 on files or batches, and a batch that fails validation because the
 * organization's enqueued-token limit for the model is full (`status: 'failed'`, `errors.data[].code
 * === 'token_limit_exceeded'`, "Enqueued token limit reached for <model> … Please try again once some
 * in_progress batches have been completed"), are {@link BatchSubmitThrottledError}s.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, toFile } from 'openai';
import type { Batch } from 'openai/resources/batches';
import { classifyProviderError } from '../../../providers/classify/classify.js';
import {
  BatchInputRejectedError,
  BatchJobNotFinishedError,
  BatchProviderRefusedError,
  BatchProviderUnavailableError,
  BatchSubmitThrottledError,
  safeCode,
  type BatchClientError,
  type BatchThrottleReason,
} from './errors.js';
import {
  foreignOutput,
  mapErrors,
  matchResults,
  objectField,
  splitRequests,
  tokenCount,
  type BatchLimits,
  type BatchProvider,
  type BatchRequest,
  type ParsedLine,
  type ProviderInput,
  type ProviderJobHandle,
  type ProviderJobState,
  type ProviderRecordsErased,
  type ProviderJobStatus,
  type ProviderResultLine,
} from './provider.js';

const PROVIDER = 'openai' as const;
/** The endpoint every line and the batch name. */
const OPENAI_BATCH_ENDPOINT = '/v1/chat/completions' as const;

/**
 * OpenAI's documented batch limits (see the module comment); a result line is read up to 8 MiB. A
 * `custom_id` is documented as a string unique in its batch, with no length: ratelane keeps it to 64
 * characters, the limit other batch APIs state (Anthropic's Message Batches: `^[a-zA-Z0-9_-]{1,64}$`).
 */
export const OPENAI_BATCH_LIMITS: Readonly<BatchLimits> = Object.freeze({
  minRecordsPerJob: 1,
  maxRecordsPerJob: 50_000,
  maxBytesPerJob: 200_000_000,
  maxResultLineBytes: 8 * 1024 * 1024,
  maxRecordIdLength: 64,
});

/** Settings of the OpenAI batch client. */
export interface OpenAiBatchOptions {
  apiKey: string;
  /** API base URL including `/v1` (the fake provider, a gateway). Default OpenAI's. */
  baseUrl?: string;
  /** Timeout of each API call, in ms. */
  timeoutMs: number;
  /** Tighter limits than OpenAI's (tests, a smaller enqueued-token budget). */
  limits?: Partial<BatchLimits>;
  /**
   * How long OpenAI keeps a batch's input, output and error files (s), from each file's creation: sent as
   * the upload's `expires_after` and the batch's `output_expires_after`, kept within OpenAI's 3600..2592000
   * (1 h to 30 d). Absent: OpenAI's default (batch files expire after 30 days).
   */
  fileExpirySeconds?: number;
  now?: () => Date;
}

/** One input line: `{ custom_id, method, url, body }` with the single-call request as `body`. */
function openAiBatchLine(request: BatchRequest): string {
  return JSON.stringify({
    custom_id: request.recordId,
    method: 'POST',
    url: OPENAI_BATCH_ENDPOINT,
    body: {
      model: request.model,
      messages: request.messages,
      response_format: { type: 'json_schema', json_schema: { name: request.jsonSchemaName, schema: request.jsonSchema, strict: true } },
      ...(request.maxOutputTokens ? { max_completion_tokens: request.maxOutputTokens } : {}),
    },
  });
}

/**
 * Reads one output or error line: `{ id, custom_id, response: { status_code, request_id, body },
 * error }`. A line with an `error` (e.g. `batch_expired`) or a non-2xx `status_code` is a failed
 * record; a 2xx one must carry `body.choices[0].message.content` as a string.
 */
export function parseOpenAiResultLine(value: Record<string, unknown>): ParsedLine {
  return {
    id: value.custom_id,
    result: () => {
      const error = objectField(value, 'error');
      if (error) return { ok: false, code: safeCode(error.code) ?? 'provider_error', message: 'the provider reported an error for this request' };
      const response = objectField(value, 'response');
      const status = response?.status_code;
      if (typeof status !== 'number') return { ok: false, code: 'bad_output', message: 'the line has no response status' };
      const body = objectField(response, 'body');
      if (status < 200 || status >= 300) {
        const bodyError = objectField(body, 'error');
        return { ok: false, code: safeCode(bodyError?.code) ?? safeCode(bodyError?.type) ?? `http_${status}`, message: `the request answered HTTP ${status}` };
      }
      const choices = body?.choices;
      const message = objectField(Array.isArray(choices) ? choices[0] : undefined, 'message');
      const content = message?.content;
      if (typeof content !== 'string') {
        return typeof message?.refusal === 'string'
          ? { ok: false, code: 'refusal', message: 'the model refused' }
          : { ok: false, code: 'bad_output', message: 'the answer has no message content' };
      }
      const usage = objectField(body, 'usage');
      return { ok: true, content, usage: { inputTokens: tokenCount(usage?.prompt_tokens), outputTokens: tokenCount(usage?.completion_tokens) } };
    },
  };
}

const STATES: Record<Batch['status'], ProviderJobState> = {
  validating: 'submitted',
  in_progress: 'in_progress',
  finalizing: 'in_progress',
  cancelling: 'in_progress',
  completed: 'finished',
  expired: 'expired',
  cancelled: 'cancelled',
  failed: 'failed',
};

/** The normalized status of a batch; a failed batch's `errors.data` becomes the typed `error`. */
export function openAiJobStatus(batch: Batch): ProviderJobStatus {
  const state = STATES[batch.status] ?? 'in_progress';
  const counts = batch.request_counts;
  const status: ProviderJobStatus = {
    state,
    providerState: safeCode(batch.status) ?? 'unknown',
    counts: { total: counts && counts.total > 0 ? counts.total : null, succeeded: tokenCount(counts?.completed), failed: tokenCount(counts?.failed) },
    outputRef: batch.output_file_id ?? null,
    errorRef: batch.error_file_id ?? null,
  };
  if (state === 'failed') status.error = failedBatchError(batch);
  return status;
}

function failedBatchError(batch: Batch): BatchClientError {
  const data = Array.isArray(batch.errors?.data) ? batch.errors.data.slice(0, 100) : [];
  const codes = data.map((e) => safeCode(e.code) ?? 'unknown');
  if (codes.includes('token_limit_exceeded')) {
    return new BatchSubmitThrottledError(`${PROVIDER}: batch ${safeCode(batch.id)} refused: enqueued token limit reached`, PROVIDER, 'enqueued_tokens', null, {
      code: 'token_limit_exceeded',
    });
  }
  const where = data
    .slice(0, 5)
    .map((e, i) => (typeof e.line === 'number' ? `${codes[i]} (line ${e.line})` : codes[i]))
    .join(', ');
  return new BatchInputRejectedError(`${PROVIDER}: batch ${safeCode(batch.id)} failed validation: ${where || 'no reason given'}`, PROVIDER, { code: codes[0] });
}

/**
 * What makes a batch not the one a part sent, or `undefined` when it is: another batch id, another
 * input file, or another ratelane batch in its metadata. Its files are then never read.
 */
function foreignBatch(batch: Pick<Batch, 'id' | 'input_file_id' | 'metadata'>, handle: ProviderJobHandle): string | undefined {
  if (batch.id !== handle.jobId) return 'the provider answered for another batch id';
  if (handle.inputRef !== '' && batch.input_file_id !== handle.inputRef) return 'the batch was made from another input file';
  const owner = batch.metadata?.ratelane_batch_id;
  if (owner !== undefined && owner !== handle.batchId) return 'the batch belongs to another ratelane batch';
  return undefined;
}

/** Maps an `openai` SDK error of `operation` (e.g. `files.create`) to a batch client error. */
export function mapOpenAiBatchError(error: unknown, operation: string, now: Date = new Date()): BatchClientError {
  if (error instanceof APIConnectionTimeoutError || error instanceof APIUserAbortError) {
    return new BatchProviderUnavailableError(`${PROVIDER}: ${operation} timed out`, PROVIDER, true, { cause: error });
  }
  if (error instanceof APIConnectionError)
    return new BatchProviderUnavailableError(`${PROVIDER}: ${operation} connection failed`, PROVIDER, false, { cause: error });
  if (!(error instanceof APIError) || typeof error.status !== 'number') {
    return new BatchProviderUnavailableError(`${PROVIDER}: ${operation} failed unexpectedly`, PROVIDER, false, { cause: error });
  }
  const status = error.status;
  const body = objectField(error, 'error');
  const code = safeCode(error.code ?? body?.code) ?? safeCode(error.type ?? body?.type);
  const options = { cause: error, status, code };
  const what = `${PROVIDER}: ${operation} HTTP ${status}${code ? ` ${code}` : ''}`;
  if (status === 429) {
    const headers: Record<string, string> = {};
    (error.headers as { forEach(cb: (value: string, key: string) => void): void } | undefined)?.forEach((value, key) => {
      headers[key.toLowerCase()] = value;
    });
    const verdict = classifyProviderError({ provider: PROVIDER, status, headers, body: error.error === undefined ? undefined : { error: error.error }, now });
    const reason: BatchThrottleReason =
      code === 'token_limit_exceeded' ? 'enqueued_tokens' : verdict.kind === 'quota_exhausted' || verdict.kind === 'billing' ? 'quota' : 'rate_limit';
    return new BatchSubmitThrottledError(what, PROVIDER, reason, verdict.retryAfterMs, options);
  }
  if (status === 408 || status >= 500) return new BatchProviderUnavailableError(what, PROVIDER, false, options);
  if (status === 401 || status === 403 || status === 404 || status === 409) return new BatchProviderRefusedError(what, PROVIDER, options);
  return new BatchInputRejectedError(what, PROVIDER, options);
}

/** OpenAI's bounds of a batch file's expiry: 1 hour to 30 days (`FileCreateParams.ExpiresAfter`, `BatchCreateParams.OutputExpiresAfter`). */
const FILE_EXPIRY_SECONDS = { min: 3_600, max: 2_592_000 } as const;

/** `seconds` (whole, at least 0) kept within what OpenAI takes as a batch file's expiry. */
export function openAiFileExpirySeconds(seconds: number): number {
  return Math.min(FILE_EXPIRY_SECONDS.max, Math.max(FILE_EXPIRY_SECONDS.min, Math.round(seconds)));
}

/** Creates the OpenAI batch client. */
export function createOpenAiBatchProvider(options: OpenAiBatchOptions): BatchProvider {
  const limits: BatchLimits = { ...OPENAI_BATCH_LIMITS, ...options.limits };
  // Always explicit: without one, the SDK would take a base URL from its environment (OPENAI_BASE_URL).
  const baseURL = options.baseUrl ?? 'https://api.openai.com/v1';
  const client = new OpenAI({ apiKey: options.apiKey, baseURL, maxRetries: 0, timeout: options.timeoutMs });
  const now = () => options.now?.() ?? new Date();
  const call = async <T>(operation: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      throw mapOpenAiBatchError(error, operation, now());
    }
  };
  const retrieve = (handle: ProviderJobHandle) => call('batches.retrieve', () => client.batches.retrieve(handle.jobId));
  const expirySeconds = options.fileExpirySeconds === undefined ? undefined : openAiFileExpirySeconds(options.fileExpirySeconds);
  const expiry = <K extends string>(key: K) =>
    (expirySeconds === undefined ? {} : { [key]: { anchor: 'created_at', seconds: expirySeconds } }) as Partial<
      Record<K, { anchor: 'created_at'; seconds: number }>
    >;

  return {
    host: new URL(baseURL).hostname,
    provider: PROVIDER,
    limits,
    prepare: (requests, prepareOptions) => splitRequests(PROVIDER, requests, limits, openAiBatchLine, prepareOptions),

    async submit(input: ProviderInput): Promise<ProviderJobHandle> {
      const data = Buffer.from(input.lines.map((line) => `${line}\n`).join(''), 'utf8');
      const upload = await toFile(data, `ratelane-${input.batchId}-${input.index}.jsonl`, { type: 'application/jsonl' });
      const file = await call('files.create', () => client.files.create({ file: upload, purpose: 'batch', ...expiry('expires_after') }));
      let batch: Batch;
      try {
        batch = await call('batches.create', () =>
          client.batches.create({
            input_file_id: file.id,
            endpoint: OPENAI_BATCH_ENDPOINT,
            completion_window: '24h',
            metadata: { ratelane_batch_id: input.batchId, ratelane_part: String(input.index) },
            ...expiry('output_expires_after'),
          }),
        );
      } catch (error) {
        await client.files.delete(file.id).catch(() => undefined);
        throw error;
      }
      return {
        provider: PROVIDER,
        batchId: input.batchId,
        index: input.index,
        model: input.model,
        jobId: batch.id,
        inputRef: file.id,
        recordIds: [...input.recordIds],
      };
    },

    async status(handle: ProviderJobHandle): Promise<ProviderJobStatus> {
      return openAiJobStatus(await retrieve(handle));
    },

    readResults(handle: ProviderJobHandle): AsyncIterable<ProviderResultLine> {
      return (async function* () {
        const batch = await retrieve(handle);
        const status = openAiJobStatus(batch);
        if (status.state === 'submitted' || status.state === 'in_progress') {
          throw new BatchJobNotFinishedError(`${PROVIDER}: batch ${safeCode(handle.jobId)} is ${status.providerState}`, PROVIDER, status.state);
        }
        const foreign = foreignBatch(batch, handle);
        if (foreign) {
          yield* foreignOutput(handle, foreign);
          return;
        }
        const files = [status.outputRef, status.errorRef]
          .filter((id): id is string => typeof id === 'string' && id !== '')
          .map((id) => ({
            source: safeCode(id) ?? 'file',
            open: async () => {
              const response = await call('files.content', () => client.files.content(id));
              if (!response.body) return [];
              return mapErrors(response.body as unknown as AsyncIterable<Uint8Array>, (error) => mapOpenAiBatchError(error, 'files.content', now()));
            },
          }));
        yield* matchResults(handle.recordIds, files, limits.maxResultLineBytes, parseOpenAiResultLine, handle.recordPrefix);
      })();
    },

    async cancel(handle: ProviderJobHandle): Promise<void> {
      await call('batches.cancel', () => client.batches.cancel(handle.jobId));
    },

    async eraseRecords(handles: readonly ProviderJobHandle[]): Promise<ProviderRecordsErased> {
      const erased: ProviderRecordsErased = { filesDeleted: [], filesRewritten: [], linesRemoved: 0, tooLarge: [], refused: [] };
      for (const handle of handles) {
        const batch = await retrieve(handle);
        const status = openAiJobStatus(batch);
        if (status.state === 'submitted' || status.state === 'in_progress') {
          throw new BatchJobNotFinishedError(`${PROVIDER}: batch ${safeCode(handle.jobId)} is ${status.providerState}`, PROVIDER, status.state);
        }
        if (foreignBatch(batch, handle)) {
          erased.refused.push(handle.jobId);
          continue;
        }
        for (const fileId of [batch.input_file_id, batch.output_file_id, batch.error_file_id]) {
          if (typeof fileId !== 'string' || fileId === '') continue;
          try {
            await client.files.delete(fileId);
          } catch (error) {
            // Already gone (deleted before, or expired): what was asked holds.
            if (!(error instanceof APIError && error.status === 404)) throw mapOpenAiBatchError(error, 'files.delete', now());
          }
          erased.filesDeleted.push(fileId);
        }
      }
      return erased;
    },
  };
}
