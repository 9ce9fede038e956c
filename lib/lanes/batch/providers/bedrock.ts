/**
 * The Amazon Bedrock batch inference client of the batch lane, through `@aws-sdk/client-bedrock`
 * (one attempt: `maxAttempts: 1`, as the model SDKs: a refused or throttled submission is scheduled by
 * the lane) and the lane's S3 client. Each job's input
 * is one JSONL file in the lane's bucket, `batch/<batchId>/input/<n>.jsonl`, of lines
 * `{ recordId, modelInput }`; `CreateModelInvocationJob` runs it with the lane's service role and
 * writes under `batch/<batchId>/output/`; `GetModelInvocationJob` watches it,
 * `StopModelInvocationJob` stops it.
 *
 * `modelInput` is the model family's native InvokeModel body; only Anthropic Claude is supported: the
 * Messages API body with `anthropic_version: 'bedrock-2023-05-31'`. Structured output follows the
 * project's single-call adapters (`lib/providers/bedrock.ts`, `anthropic.ts`): one tool whose input
 * schema is the JSON schema, forced with `tool_choice`; the tool call's input is the object. The job
 * is created with `modelInvocationType: 'InvokeModel'`: Bedrock documents that batch jobs of the
 * `Converse` type do not support tool calling ("To use tool calling with batch inference, create the
 * job with the InvokeModel invocation type and format each modelInput in the model's native request
 * format", Bedrock User Guide, "Process multiple prompts with batch inference").
 *
 * Output layout (Bedrock User Guide, "View the results of a batch inference job",
 * docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-results.html): one output JSONL file
 * per input file, lines `{ recordId, modelInput, modelOutput }` or `{ recordId, modelInput, error:
 * { errorCode, errorMessage } }`, in no guaranteed order, plus a `manifest.json.out` summary. They are
 * written in a folder named by the job id (the last part of the job ARN) under the output URI:
 * `<output>/<jobId>/<input file name>.out` (as observed by LiteLLM, BerriAI/litellm#26834). This
 * client lists `<output>/<jobId>/` and reads every `*.jsonl.out`, skipping the manifest — and only when
 * the job reads the part's own input file and writes to the part's own output location (as
 * `GetModelInvocationJob` reports them); else every record of the part is `foreign_output`. Record ids
 * stay the 11-character item ids ("11 character alphanumeric string" leaves no room for a batch prefix):
 * a Bedrock job's output is the batch's own by the folder it is read from (under the batch's prefix, named
 * by the job's id).
 *
 * Limits ({@link BEDROCK_BATCH_LIMITS}): the Bedrock quotas "Minimum number of records per batch
 * inference job", "Records per input file per batch inference job", "Records per batch inference
 * job", "Batch inference input file size" and "Batch inference job size" (User Guide, "Format and
 * upload your batch inference data"; defaults in the AWS General Reference, "Amazon Bedrock endpoints
 * and quotas": 100 records minimum, 50,000 records per file and per job, 1 GB per file, 5 GB per job).
 * They are per model and adjustable: pass the account's own values as `limits`. With one file per job
 * the file size (1 GB, read as 1,000,000,000 bytes) is the binding size. Because each output line
 * repeats its input, an input line may use at most half of `maxResultLineBytes`.
 */
import { createHash } from 'node:crypto';
import {
  BedrockClient,
  BedrockServiceException,
  CreateModelInvocationJobCommand,
  GetModelInvocationJobCommand,
  StopModelInvocationJobCommand,
  type GetModelInvocationJobCommandOutput,
  type ModelInvocationJobStatus,
} from '@aws-sdk/client-bedrock';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3ServiceException, type S3Client } from '@aws-sdk/client-s3';
import { ScopedAbortHttpHandler } from '../../../platform/abort-scope.js';
import { eraseBatchFileLines } from './bedrock-files.js';
import { ANTHROPIC_DEFAULT_MAX_TOKENS } from '../../../providers/anthropic.js';
import { bedrockToolName } from '../../../providers/bedrock.js';
import { classifyProviderError } from '../../../providers/classify/classify.js';
import { startDeadline } from '../../../providers/deadline.js';
import {
  BatchInputRejectedError,
  BatchJobNotFinishedError,
  BatchProviderRefusedError,
  BatchProviderUnavailableError,
  BatchSubmitThrottledError,
  safeCode,
  type BatchClientError,
} from './errors.js';
import {
  isObject,
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
  type ProviderRecordsErased,
  type ProviderJobState,
  type ProviderJobStatus,
  type ProviderResultLine,
} from './provider.js';

const PROVIDER = 'bedrock' as const;
/** The `anthropic_version` of Claude's Messages API body on Bedrock. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** Bedrock's default batch quotas (see the module comment); a result line is read up to 16 MiB. */
export const BEDROCK_BATCH_LIMITS: Readonly<BatchLimits> = Object.freeze({
  minRecordsPerJob: 100,
  maxRecordsPerJob: 50_000,
  maxBytesPerJob: 1_000_000_000,
  maxResultLineBytes: 16 * 1024 * 1024,
  // "recordId": "11 character alphanumeric string" (User Guide, "Format and upload your batch inference data").
  maxRecordIdLength: 11,
});

/** Settings of the Bedrock batch client. */
export interface BedrockBatchOptions {
  /** The lane's region: Bedrock's control plane of this region runs the jobs. */
  region: string;
  /** The lane's bucket: input under `batch/<batchId>/input/`, output under `batch/<batchId>/output/`. */
  bucket: string;
  /** The batch inference service role Bedrock assumes to read the input and write the output. */
  roleArn: string;
  /** The lane's S3 client (same region). */
  s3: S3Client;
  /** Timeout of each API call, in ms. */
  timeoutMs: number;
  /** Hours after which Bedrock stops a job (24–168). Default 24. */
  jobTimeoutHours?: number;
  /** Bedrock control-plane endpoint override (tests, VPC endpoints). */
  endpoint?: string;
  /** Explicit AWS credentials (tests); default the SDK's credential chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** `max_tokens` when a record sets none. Default {@link ANTHROPIC_DEFAULT_MAX_TOKENS}. */
  defaultMaxOutputTokens?: number;
  /** The account's own quotas when they differ from the defaults. */
  limits?: Partial<BatchLimits>;
  now?: () => Date;
}

/** True for model ids (and inference profile ids/ARNs) of Anthropic Claude. */
function isAnthropicModel(model: string): boolean {
  return /(^|[.:/])anthropic\.claude/.test(model);
}

/** The record's `modelInput`: Claude's Messages API body with one forced tool carrying the schema. */
function bedrockModelInput(request: BatchRequest, defaultMaxOutputTokens = ANTHROPIC_DEFAULT_MAX_TOKENS): Record<string, unknown> {
  const toolName = bedrockToolName(request.jsonSchemaName);
  const system = request.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n\n');
  const messages = request.messages
    .filter((m) => m.role !== 'system')
    .map((m) => ({ role: m.role === 'assistant' ? 'assistant' : 'user', content: [{ type: 'text', text: m.content }] }));
  return {
    anthropic_version: BEDROCK_ANTHROPIC_VERSION,
    max_tokens: request.maxOutputTokens ?? defaultMaxOutputTokens,
    ...(system ? { system } : {}),
    messages,
    tools: [
      {
        name: toolName,
        description: `Record the extracted ${request.jsonSchemaName} object. The input must follow the JSON schema exactly.`,
        input_schema: request.jsonSchema,
      },
    ],
    tool_choice: { type: 'tool', name: toolName },
  };
}

/** One input line: `{ recordId, modelInput }`. */
function bedrockBatchLine(request: BatchRequest, defaultMaxOutputTokens?: number): string {
  return JSON.stringify({ recordId: request.recordId, modelInput: bedrockModelInput(request, defaultMaxOutputTokens) });
}

/**
 * Reads one output line: `modelOutput` is Claude's Messages API response (the forced tool's input,
 * else the text), or `error: { errorCode, errorMessage }` for a failed record. `modelInput` (the
 * document) is never read.
 */
export function parseBedrockResultLine(value: Record<string, unknown>): ParsedLine {
  return {
    id: value.recordId,
    result: () => {
      const error = objectField(value, 'error');
      if (error) return { ok: false, code: safeCode(error.errorCode) ?? 'provider_error', message: 'the model invocation failed for this record' };
      const output = objectField(value, 'modelOutput');
      const blocks = output?.content;
      if (!output || !Array.isArray(blocks)) return { ok: false, code: 'bad_output', message: 'the line has no model output' };
      const objects = blocks.filter(isObject);
      const toolUse = objects.find((b) => b.type === 'tool_use');
      const content =
        toolUse !== undefined
          ? (JSON.stringify(toolUse.input ?? null) ?? 'null')
          : objects
              .map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : ''))
              .join('')
              .trim();
      if (content === '') return { ok: false, code: 'bad_output', message: 'the model output has no tool call or text' };
      const usage = objectField(output, 'usage');
      const inputTokens = tokenCount(usage?.input_tokens) + tokenCount(usage?.cache_creation_input_tokens) + tokenCount(usage?.cache_read_input_tokens);
      return { ok: true, content, usage: { inputTokens, outputTokens: tokenCount(usage?.output_tokens) } };
    },
  };
}

const STATES: Record<ModelInvocationJobStatus, ProviderJobState> = {
  Submitted: 'submitted',
  Validating: 'submitted',
  Scheduled: 'submitted',
  InProgress: 'in_progress',
  Stopping: 'in_progress',
  Completed: 'finished',
  PartiallyCompleted: 'finished',
  Failed: 'failed',
  Stopped: 'cancelled',
  Expired: 'expired',
};

/** The job id Bedrock names the output folder by: the last part of the job ARN. */
function bedrockJobId(jobArn: string): string {
  return jobArn.split('/').at(-1) ?? jobArn;
}

/** The normalized status of a job; `outputRef` is the job's own output folder. */
export function bedrockJobStatus(
  job: Pick<GetModelInvocationJobCommandOutput, 'status' | 'message' | 'totalRecordCount' | 'successRecordCount' | 'errorRecordCount'>,
  outputFolder: string | null,
): ProviderJobStatus {
  const providerState = job.status ?? 'Submitted';
  const state = STATES[providerState] ?? 'in_progress';
  const status: ProviderJobStatus = {
    state,
    providerState: safeCode(providerState) ?? 'unknown',
    counts: { total: job.totalRecordCount ?? null, succeeded: tokenCount(job.successRecordCount), failed: tokenCount(job.errorRecordCount) },
    outputRef: outputFolder,
    errorRef: null,
  };
  if (state === 'failed') {
    // The job's message is the provider's text and may quote the input: it is read, never kept.
    const text = (job.message ?? '').slice(0, 1000).toLowerCase();
    status.error = /quota|throttl|too many/.test(text)
      ? new BatchSubmitThrottledError(`${PROVIDER}: job failed on a quota`, PROVIDER, 'quota', null, { code: 'job_failed' })
      : /internal|service (?:error|unavailable)/.test(text)
        ? new BatchProviderUnavailableError(`${PROVIDER}: job failed inside the service`, PROVIDER, false, { code: 'job_failed' })
        : new BatchInputRejectedError(`${PROVIDER}: job failed`, PROVIDER, { code: 'job_failed' });
  }
  return status;
}

/**
 * What makes a job not the one a part sent, or `undefined` when it is (or Bedrock does not say): another
 * input file or another output location than the part's. Its output is then never read.
 */
function foreignJob(job: Pick<GetModelInvocationJobCommandOutput, 'inputDataConfig' | 'outputDataConfig'>, handle: ProviderJobHandle): string | undefined {
  const input = job.inputDataConfig?.s3InputDataConfig?.s3Uri;
  const output = job.outputDataConfig?.s3OutputDataConfig?.s3Uri;
  if (input !== undefined && handle.inputRef !== '' && input !== handle.inputRef) return 'the job reads another input file';
  if (output !== undefined && handle.outputRef !== undefined && output !== handle.outputRef) return 'the job writes to another output location';
  return undefined;
}

const TIMEOUT_NAMES = new Set(['AbortError', 'TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);

/** Maps a Bedrock or S3 SDK error of `operation` to a batch client error. `aborted`: our deadline fired. */
export function mapBedrockBatchError(error: unknown, operation: string, now: Date = new Date(), aborted = false): BatchClientError {
  if (!(error instanceof BedrockServiceException || error instanceof S3ServiceException)) {
    const name = error instanceof Error ? error.name : '';
    const timedOut = aborted || TIMEOUT_NAMES.has(name);
    return new BatchProviderUnavailableError(`${PROVIDER}: ${operation} ${timedOut ? 'timed out' : 'connection failed'}`, PROVIDER, timedOut, { cause: error });
  }
  const name = error.name;
  const status = error.$metadata?.httpStatusCode ?? (error.$fault === 'server' ? 500 : 400);
  const options = { cause: error, status, code: safeCode(name) };
  const what = `${PROVIDER}: ${operation} HTTP ${status} ${options.code ?? ''}`.trimEnd();
  if (name === 'ThrottlingException' || name === 'ServiceQuotaExceededException') {
    const raw = (error as { $response?: { headers?: Record<string, string | undefined> } }).$response?.headers ?? {};
    const headers: Record<string, string> = { 'x-amzn-errortype': name };
    for (const [key, value] of Object.entries(raw)) if (typeof value === 'string') headers[key.toLowerCase()] = value;
    const verdict = classifyProviderError({ provider: PROVIDER, status, headers, body: { message: error.message, __type: name }, now });
    return new BatchSubmitThrottledError(what, PROVIDER, name === 'ThrottlingException' ? 'rate_limit' : 'concurrent_jobs', verdict.retryAfterMs, options);
  }
  if (name === 'SlowDown' || status === 503 || status >= 500 || error.$fault === 'server')
    return new BatchProviderUnavailableError(what, PROVIDER, false, options);
  if (name === 'ValidationException' || name === 'TooManyTagsException' || name === 'EntityTooLarge' || name === 'InvalidArgument') {
    return new BatchInputRejectedError(what, PROVIDER, options);
  }
  return new BatchProviderRefusedError(what, PROVIDER, options);
}

/** Creates the Bedrock batch client. */
export function createBedrockBatchProvider(options: BedrockBatchOptions): BatchProvider {
  const limits: BatchLimits = { ...BEDROCK_BATCH_LIMITS, ...options.limits };
  const hours = options.jobTimeoutHours ?? 24;
  if (!Number.isInteger(hours) || hours < 24 || hours > 168)
    throw new TypeError(`${PROVIDER} batch: jobTimeoutHours must be a whole number of hours in 24..168`);
  // Always explicit: without one, the SDK would take an endpoint from its environment (AWS_ENDPOINT_URL_BEDROCK).
  const endpoint = options.endpoint ?? `https://bedrock.${options.region}.amazonaws.com`;
  const bedrock = new BedrockClient({
    region: options.region,
    maxAttempts: 1,
    requestHandler: new ScopedAbortHttpHandler(),
    endpoint,
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });
  const now = () => options.now?.() ?? new Date();
  const send = async <T>(operation: string, fn: (abortSignal: AbortSignal) => Promise<T>): Promise<T> => {
    const deadline = startDeadline(options.timeoutMs, undefined);
    try {
      return await fn(deadline.signal);
    } catch (error) {
      throw mapBedrockBatchError(error, operation, now(), deadline.expired());
    } finally {
      deadline.dispose();
    }
  };
  const maxLineBytes = Math.floor(limits.maxResultLineBytes / 2);
  const buildLine = (request: BatchRequest): string => {
    if (!isAnthropicModel(request.model)) {
      throw new BatchInputRejectedError(`${PROVIDER}: model ${request.model} is not an Anthropic Claude model; only Claude is supported for batch`, PROVIDER, {
        code: 'unsupported_model',
      });
    }
    const line = bedrockBatchLine(request, options.defaultMaxOutputTokens);
    if (Buffer.byteLength(line, 'utf8') > maxLineBytes) {
      throw new BatchInputRejectedError(`${PROVIDER}: record "${request.recordId}" is over ${maxLineBytes} bytes`, PROVIDER, { code: 'record_too_large' });
    }
    return line;
  };
  const getJob = (handle: ProviderJobHandle) =>
    send('GetModelInvocationJob', (abortSignal) => bedrock.send(new GetModelInvocationJobCommand({ jobIdentifier: handle.jobId }), { abortSignal }));
  const outputFolderOf = (handle: ProviderJobHandle) =>
    `${handle.outputRef ?? `s3://${options.bucket}/batch/${handle.batchId}/output/`}${bedrockJobId(handle.jobId)}/`;

  return {
    host: new URL(endpoint).hostname,
    provider: PROVIDER,
    limits,
    prepare: (requests, prepareOptions) => splitRequests(PROVIDER, requests, limits, buildLine, prepareOptions),

    async submit(input: ProviderInput): Promise<ProviderJobHandle> {
      const key = `batch/${input.batchId}/input/${input.index}.jsonl`;
      const body = Buffer.from(input.lines.map((line) => `${line}\n`).join(''), 'utf8');
      await send('PutObject', (abortSignal) =>
        options.s3.send(new PutObjectCommand({ Bucket: options.bucket, Key: key, Body: body, ContentType: 'application/jsonl' }), { abortSignal }),
      );
      const inputUri = `s3://${options.bucket}/${key}`;
      const outputUri = `s3://${options.bucket}/batch/${input.batchId}/output/`;
      const created = await send('CreateModelInvocationJob', (abortSignal) =>
        bedrock.send(
          new CreateModelInvocationJobCommand({
            jobName: `rl-${input.index}-${input.batchId}`.slice(0, 63),
            roleArn: options.roleArn,
            // The same job for the same bucket, batch and part: a retried submit creates no second job.
            clientRequestToken: createHash('sha256').update(`${options.bucket}/${input.batchId}/${input.index}`).digest('hex'),
            modelId: input.model,
            modelInvocationType: 'InvokeModel',
            inputDataConfig: { s3InputDataConfig: { s3Uri: inputUri, s3InputFormat: 'JSONL' } },
            outputDataConfig: { s3OutputDataConfig: { s3Uri: outputUri } },
            timeoutDurationInHours: hours,
          }),
          { abortSignal },
        ),
      );
      if (!created.jobArn) throw new BatchProviderUnavailableError(`${PROVIDER}: CreateModelInvocationJob answered no job ARN`, PROVIDER, false);
      return {
        provider: PROVIDER,
        batchId: input.batchId,
        index: input.index,
        model: input.model,
        jobId: created.jobArn,
        inputRef: inputUri,
        outputRef: outputUri,
        recordIds: [...input.recordIds],
      };
    },

    async status(handle: ProviderJobHandle): Promise<ProviderJobStatus> {
      return bedrockJobStatus(await getJob(handle), outputFolderOf(handle));
    },

    readResults(handle: ProviderJobHandle): AsyncIterable<ProviderResultLine> {
      const s3 = options.s3;
      return (async function* () {
        const job = await getJob(handle);
        const status = bedrockJobStatus(job, outputFolderOf(handle));
        if (status.state === 'submitted' || status.state === 'in_progress') {
          throw new BatchJobNotFinishedError(`${PROVIDER}: job ${safeCode(bedrockJobId(handle.jobId))} is ${status.providerState}`, PROVIDER, status.state);
        }
        const foreign = foreignJob(job, handle);
        if (foreign) {
          yield* foreignOutput(handle, foreign);
          return;
        }
        const prefix = outputFolderOf(handle).slice(`s3://${options.bucket}/`.length);
        const keys: string[] = [];
        let token: string | undefined;
        do {
          const page = await send('ListObjectsV2', (abortSignal) =>
            s3.send(new ListObjectsV2Command({ Bucket: options.bucket, Prefix: prefix, ContinuationToken: token }), { abortSignal }),
          );
          for (const object of page.Contents ?? []) if (object.Key?.endsWith('.jsonl.out')) keys.push(object.Key);
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
        const files = keys.sort().map((key) => ({
          source: key,
          open: async () => {
            const object = await send('GetObject', (abortSignal) => s3.send(new GetObjectCommand({ Bucket: options.bucket, Key: key }), { abortSignal }));
            if (!object.Body) return [];
            return mapErrors(object.Body as unknown as AsyncIterable<Uint8Array>, (error) => mapBedrockBatchError(error, 'GetObject', now()));
          },
        }));
        yield* matchResults(handle.recordIds, files, limits.maxResultLineBytes, parseBedrockResultLine, handle.recordPrefix);
      })();
    },

    async cancel(handle: ProviderJobHandle): Promise<void> {
      await send('StopModelInvocationJob', (abortSignal) => bedrock.send(new StopModelInvocationJobCommand({ jobIdentifier: handle.jobId }), { abortSignal }));
    },

    async eraseRecords(handles: readonly ProviderJobHandle[], recordIds: ReadonlySet<string>): Promise<ProviderRecordsErased> {
      const erased: ProviderRecordsErased = { filesDeleted: [], filesRewritten: [], linesRemoved: 0, tooLarge: [], refused: [] };
      for (const handle of handles) {
        const job = await getJob(handle);
        const status = bedrockJobStatus(job, outputFolderOf(handle));
        if (status.state === 'submitted' || status.state === 'in_progress') {
          throw new BatchJobNotFinishedError(`${PROVIDER}: job ${safeCode(bedrockJobId(handle.jobId))} is ${status.providerState}`, PROVIDER, status.state);
        }
        if (foreignJob(job, handle)) {
          erased.refused.push(handle.jobId);
          continue;
        }
        const prefix = outputFolderOf(handle).slice(`s3://${options.bucket}/`.length);
        const rewritten = await eraseBatchFileLines(options.s3, { bucket: options.bucket, batchId: handle.batchId, prefix }, recordIds).catch(
          (error: unknown) => {
            throw mapBedrockBatchError(error, 'PutObject', now(), false);
          },
        );
        erased.filesRewritten.push(...rewritten.filesRewritten);
        erased.linesRemoved += rewritten.linesRemoved;
        erased.tooLarge.push(...rewritten.tooLarge);
      }
      return erased;
    },
  };
}
