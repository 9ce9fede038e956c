/**
 * The checks on a batch input file, split where OpenAI splits them:
 * - at upload (`POST /v1/files`), only that the file is JSONL at all, its size and its line count
 *   ({@link checkUpload}). OpenAI accepts a file whose lines are malformed: a file missing `method` on
 *   every line was answered 200 (github.com/BerriAI/litellm/pull/37527), and llama-stack's recorded
 *   tests put "a well formed line before a malformed line to ensure we get to the /v1/batches
 *   validation stage" (meta-llama/llama-stack, tests/integration/batches/test_batches_errors.py);
 * - when a batch validates it ({@link validateLines}): every line, each error with its line number,
 *   and any error fails the whole batch. The codes, params and messages marked "recorded" are the
 *   real API's answers quoted in those llama-stack tests.
 */
import { batchError, type BatchErrorEntry, fileTooLargeBody, invalidJsonlBody, jsonTypeName, tooManyRequestsBody } from './wire.js';
import { estimateTokens } from '../wire/dialect.js';
import type { OpenAiErrorBody } from '../wire/openai.js';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseObject(text: string): Json | null {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

/** The non-blank lines of a JSONL text with their 1-based line numbers. */
function requestLines(text: string): Array<{ line: number; text: string }> {
  return text
    .split('\n')
    .map((line, index) => ({ line: index + 1, text: line }))
    .filter((entry) => entry.text.trim() !== '');
}

/** Limits applied to every batch input file. */
export interface BatchFileLimits {
  maxFileBytes: number;
  maxRequestsPerFile: number;
}

/** The refusal of an upload: HTTP status and OpenAI's error body. */
export interface UploadRefusal {
  status: number;
  body: OpenAiErrorBody;
}

/** What `POST /v1/files` checks of a `purpose=batch` file; `null` when it is accepted. */
export function checkUpload(bytes: Buffer, limits: BatchFileLimits): UploadRefusal | null {
  const lines = requestLines(bytes.toString('utf8'));
  const first = lines[0] === undefined ? null : parseObject(lines[0].text);
  if (first === null) return { status: 400, body: invalidJsonlBody() };
  if (bytes.length > limits.maxFileBytes) {
    const model = isObject(first.body) && typeof first.body.model === 'string' ? first.body.model : 'requested';
    return { status: 413, body: fileTooLargeBody(limits.maxFileBytes, model) };
  }
  if (lines.length > limits.maxRequestsPerFile) return { status: 400, body: tooManyRequestsBody(lines.length, limits.maxRequestsPerFile) };
  return null;
}

/** One request line that passed validation. */
export interface BatchRequestLine {
  /** 1-based line number in the input file. */
  line: number;
  customId: string;
  /** The Chat Completions request body, as the chat route would receive it. */
  body: Json;
  /** Prompt tokens, estimated as the chat route estimates them (all message text / 4, rounded up). */
  promptTokens: number;
}

/** A validated input file: its request lines and their one model, or the errors that fail the batch. */
export type ValidatedInput = { ok: true; lines: BatchRequestLine[]; model: string } | { ok: false; errors: BatchErrorEntry[] };

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isObject(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
}

/** Prompt tokens of a request body, as `promptTokensOf` counts them for the chat route. */
function promptTokensOfBody(body: Json): number {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return estimateTokens(messages.reduce((total: number, message) => total + (isObject(message) ? messageText(message.content).length : 0), 0));
}

const REQUIRED_FIELDS = ['custom_id', 'method', 'url', 'body'] as const;

/** The first error of one parsed line, or `null`. `seen` and `model` carry what earlier lines established. */
function lineError(entry: Json, line: number, endpoint: string, seen: Set<string>, model: string | null): BatchErrorEntry | null {
  for (const field of REQUIRED_FIELDS) {
    // recorded: missing_required_parameter, "Missing required parameter: 'custom_id'.", param custom_id
    if (entry[field] === undefined) return batchError('missing_required_parameter', `Missing required parameter: '${field}'.`, field, line);
  }
  if (typeof entry.custom_id !== 'string') {
    return batchError('invalid_type', `Invalid type for 'custom_id': expected a string, but got ${jsonTypeName(entry.custom_id)} instead.`, 'custom_id', line);
  }
  if (seen.has(entry.custom_id)) {
    // message as OpenAI words it (community.openai.com/t/batch-the-custom-id-for-this-request-is-a-duplicate-of-another-request/723696); code is the fake's
    const message = 'The custom_id for this request is a duplicate of another request. The custom_id parameter must be unique for each request in a batch.';
    return batchError('duplicate_custom_id', message, 'custom_id', line);
  }
  if (entry.method !== 'POST') return batchError('invalid_value', `Invalid value: '${String(entry.method)}'. Supported values are: 'POST'.`, 'method', line);
  // recorded: invalid_url
  if (entry.url !== endpoint) return batchError('invalid_url', 'The URL provided for this request does not match the batch endpoint.', 'url', line);
  const body = entry.body;
  if (!isObject(body)) return batchError('invalid_type', `Invalid type for 'body': expected an object, but got ${jsonTypeName(body)} instead.`, 'body', line);
  // recorded: invalid_request, "Model parameter is required." / "Messages parameter is required."
  if (typeof body.model !== 'string' || body.model === '') return batchError('invalid_request', 'Model parameter is required.', 'body.model', line);
  if (body.messages === undefined) return batchError('invalid_request', 'Messages parameter is required.', 'body.messages', line);
  // recorded: streaming_unsupported
  if (body.stream === true) return batchError('streaming_unsupported', 'Chat Completions: Streaming is not supported in the Batch API.', 'body.stream', line);
  if (model !== null && body.model !== model) {
    // the Batch guide: "each input file can only include requests to a single model"; wording and code are the fake's
    return batchError(
      'invalid_request',
      `Each batch must use a single model: this line asks for '${body.model}', earlier lines for '${model}'.`,
      'body.model',
      line,
    );
  }
  return null;
}

/**
 * Validates every line of an input file for a batch on `endpoint`. Request bodies are not checked
 * beyond `model`, `messages` and `stream`: a body the chat route would refuse runs, and its 400
 * lands in the error file, as a real batch's does.
 */
export function validateLines(text: string, endpoint: string): ValidatedInput {
  const errors: BatchErrorEntry[] = [];
  const lines: BatchRequestLine[] = [];
  const seen = new Set<string>();
  let model: string | null = null;
  for (const { line, text: raw } of requestLines(text)) {
    const entry = parseObject(raw);
    if (entry === null) {
      // recorded: invalid_json_line, "This line is not parseable as valid JSON.", param null
      errors.push(batchError('invalid_json_line', 'This line is not parseable as valid JSON.', null, line));
      continue;
    }
    const error = lineError(entry, line, endpoint, seen, model);
    if (error !== null) {
      errors.push(error);
      continue;
    }
    const customId = entry.custom_id as string;
    const body = entry.body as Json;
    seen.add(customId);
    model ??= body.model as string;
    lines.push({ line, customId, body, promptTokens: promptTokensOfBody(body) });
  }
  if (errors.length > 0) return { ok: false, errors };
  if (model === null) return { ok: false, errors: [batchError('empty_file', 'The input file has no requests.')] };
  return { ok: true, lines, model };
}
