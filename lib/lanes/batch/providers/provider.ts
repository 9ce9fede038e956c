/**
 * The one narrow interface of the batch lane's provider clients ({@link BatchProvider}), and what
 * both clients share: splitting a batch into provider jobs by the provider's documented limits
 * ({@link splitRequests}), and reading result files line by line as untrusted input
 * ({@link boundedLines}, {@link ResultMatcher}, {@link matchResults}).
 *
 * Every result line is hostile until proven otherwise: it is read within a byte bound (a longer one is
 * skipped, never buffered), decoded as strict UTF-8 (`textOf`: bytes that are not UTF-8 are never turned
 * into replacement characters), parsed as JSON in a `try`, and its id must be a string that was sent in
 * that job and not seen before; an unknown, missing or repeated id — or one of another batch (not the
 * job's record prefix) — is reported with `recordId: null`, so it can never be matched to a record. A
 * matched line whose bytes are not UTF-8, or whose answer holds lone surrogates or binary, is the record's
 * failure `not_text`: its answer is never read. One bad line never throws: it becomes one reported line.
 * No document text goes into a message: lines are named by their number and file, never quoted.
 */
import { randomUUID } from 'node:crypto';
import { textOf } from '../../../contract/text.js';
import type { ChatMessage, TokenUsage } from '../../../providers/model.js';
import { BatchInputRejectedError, safeCode, type BatchClientError, type BatchProviderName } from './errors.js';

/** One record of a batch: the caller builds `messages` with the registry's prompt (`buildMessages(text)`). */
export interface BatchRequest {
  /** The caller's id of the record; it comes back on its result line. `[A-Za-z0-9_.:-]{1,128}`, unique in a batch. */
  recordId: string;
  messages: ChatMessage[];
  /** Name and JSON schema of the object the model must return. */
  jsonSchemaName: string;
  jsonSchema: Record<string, unknown>;
  /** The provider's model id; records of different models go to different jobs. */
  model: string;
  /** Output cap for this record; the client's default when omitted. */
  maxOutputTokens?: number;
}

/** The limits a batch is split by. Defaults per provider are documented beside each client. */
export interface BatchLimits {
  /** Fewest records a job may have (Bedrock: a per-model quota; OpenAI: 1). */
  minRecordsPerJob: number;
  /** Most records in one job (one input file per job). */
  maxRecordsPerJob: number;
  /** Most bytes of one input file (one file per job), newlines included. */
  maxBytesPerJob: number;
  /** Longest result line read; a longer one is skipped and reported. */
  maxResultLineBytes: number;
  /** Longest record id the provider takes (OpenAI's `custom_id`, Bedrock's `recordId`). */
  maxRecordIdLength: number;
}

/** Options of {@link BatchProvider.prepare}. */
export interface PrepareOptions {
  /** The batch's id (`[A-Za-z0-9-]{1,64}`): names the job(s), S3 keys and metadata. Default: a random UUID. */
  batchId?: string;
}

/** One provider job's input: a JSONL file, as lines (a file may be larger than one JS string can hold). */
export interface ProviderInput {
  provider: BatchProviderName;
  batchId: string;
  /** Position of this job among the batch's jobs (0-based, across models). */
  index: number;
  model: string;
  /** The record ids in this file, in file order. */
  recordIds: string[];
  /** The JSONL lines, without their newline. */
  lines: string[];
  /** Size of the file: every line plus its newline, in bytes. */
  bytes: number;
}

/** A submitted job: plain JSON, to be stored by the batch lane and handed back to the other calls. */
export interface ProviderJobHandle {
  provider: BatchProviderName;
  batchId: string;
  index: number;
  model: string;
  /** OpenAI: the batch id (`batch_…`); Bedrock: the job ARN. */
  jobId: string;
  /** OpenAI: the input file id; Bedrock: the input file's `s3://` URI. */
  inputRef: string;
  /** Bedrock: the `s3://` output prefix given to the job; OpenAI: none (the batch names its files). */
  outputRef?: string;
  /** The ids sent in this job: a result line with any other id is reported, never matched. */
  recordIds: string[];
  /**
   * What every record id of the batch starts with (the batch's own prefix): a line whose id does not is
   * reported as another batch's (`other_batch`). Absent or empty: ids are not told apart by batch.
   */
  recordPrefix?: string;
}

/** A job's state, the same for every provider. */
export type ProviderJobState = 'submitted' | 'in_progress' | 'finished' | 'expired' | 'cancelled' | 'failed';

/** A job's state, counts and where its results are. */
export interface ProviderJobStatus {
  state: ProviderJobState;
  /** The provider's own state name (e.g. `finalizing`, `PartiallyCompleted`), for logs. */
  providerState: string;
  /** Records in the job (`null` until the provider counts them), and how many succeeded or failed so far. */
  counts: { total: number | null; succeeded: number; failed: number };
  /** OpenAI: the output file id; Bedrock: the `s3://` folder of the job's output files. `null` until there is one. */
  outputRef: string | null;
  /** OpenAI: the error file id; Bedrock: `null` (failed records are lines of the output files). */
  errorRef: string | null;
  /** For a `failed` job: what the provider's refusal means (throttled → submit again later, input rejected…). */
  error?: BatchClientError;
}

/** A record the model answered: its output text (validated later, never trusted) and usage. */
type ProviderResultOk = { recordId: string; ok: true; content: string; usage: TokenUsage };

/**
 * A record that failed at the provider, had an unreadable answer (`bad_output`), an answer that is not
 * text (`not_text`), no line at all (`no_result`), or a job that is not the one sent (`foreign_output`).
 */
type ProviderResultFailed = { recordId: string; ok: false; code: string; message: string };

/** Why a line could not be matched to a record. */
type UnmatchedCode = 'line_too_large' | 'not_json' | 'missing_id' | 'unknown_id' | 'other_batch' | 'duplicate_id' | 'too_many_unmatched';

/** A line that matches no record sent (reported, never matched: `recordId` is `null`). */
interface ProviderResultUnmatched {
  recordId: null;
  ok: false;
  code: UnmatchedCode;
  message: string;
  /** 1-based line number in `source`. */
  line: number;
  /** The file the line came from (a file id or S3 key). */
  source: string;
}

/** One result of a job. */
export type ProviderResultLine = ProviderResultOk | ProviderResultFailed | ProviderResultUnmatched;

/** What one client does: split, submit, watch, read and cancel provider batch jobs. */
export interface BatchProvider {
  readonly provider: BatchProviderName;
  /** The host its input goes to, checked against the lane's approved endpoints before every submission; absent: not checked. */
  readonly host?: string;
  readonly limits: BatchLimits;
  /**
   * Splits the records into provider jobs by the provider's limits, one model per job.
   * @throws {BatchInputRejectedError} for a bad or repeated record id, a record larger than a whole
   *   file, or a model with fewer records than a job's minimum
   */
  prepare(requests: readonly BatchRequest[], options?: PrepareOptions): ProviderInput[];
  /** Uploads the input and creates the job. @throws a {@link BatchClientError} */
  submit(input: ProviderInput): Promise<ProviderJobHandle>;
  /** The job's normalized state. @throws a {@link BatchClientError} */
  status(handle: ProviderJobHandle): Promise<ProviderJobStatus>;
  /**
   * The job's result lines (successes and failures), then a `no_result` line for every record sent
   * that had none. A bad line is reported, never thrown; a failed read throws a {@link BatchClientError},
   * and a job not yet in a final state a `BatchJobNotFinishedError`.
   */
  readResults(handle: ProviderJobHandle): AsyncIterable<ProviderResultLine>;
  /** Asks the provider to stop the job. @throws a {@link BatchClientError} */
  cancel(handle: ProviderJobHandle): Promise<void>;
  /**
   * Removes what the provider keeps of `recordIds` (erased sources' records) for ended jobs of one batch.
   * OpenAI keeps the files itself and cannot edit one: each job's input, output and error files are
   * deleted (a file already gone counts as deleted; a job whose batch is not the one the part sent is
   * left alone and named in `refused`). Bedrock's output is in the lane's bucket: each job's output
   * files are rewritten without those records. Running it again removes nothing more.
   *
   * @throws a `BatchJobNotFinishedError` for a job still running, a {@link BatchClientError} for a failed call
   */
  eraseRecords(handles: readonly ProviderJobHandle[], recordIds: ReadonlySet<string>): Promise<ProviderRecordsErased>;
}

/** What {@link BatchProvider.eraseRecords} removed. Ids and keys only. */
export interface ProviderRecordsErased {
  /** Files deleted at the provider (OpenAI file ids). */
  filesDeleted: string[];
  /** Files rewritten without the records (S3 keys), and the lines removed from them. */
  filesRewritten: string[];
  linesRemoved: number;
  /** Files not rewritten: too large to rewrite in memory (their lines stay until the lifecycle rule removes them). */
  tooLarge: string[];
  /** Jobs left alone: the provider answered for a batch the part did not send. */
  refused: string[];
}

const RECORD_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const BATCH_ID = /^[A-Za-z0-9-]{1,64}$/;

/**
 * Splits requests into jobs: grouped by model (in first-seen order), then cut greedily where a job
 * would pass `maxRecordsPerJob` or `maxBytesPerJob`; when the last job of a model is under
 * `minRecordsPerJob`, records move to it from the job before.
 * @throws {BatchInputRejectedError} see {@link BatchProvider.prepare}
 */
export function splitRequests(
  provider: BatchProviderName,
  requests: readonly BatchRequest[],
  limits: BatchLimits,
  buildLine: (request: BatchRequest) => string,
  options: PrepareOptions = {},
): ProviderInput[] {
  const reject = (message: string, code?: string) => new BatchInputRejectedError(`${provider}: ${message}`, provider, { code });
  const batchId = options.batchId ?? randomUUID();
  if (!BATCH_ID.test(batchId)) throw reject('batch id must match [A-Za-z0-9-]{1,64}', 'bad_batch_id');
  const byModel = new Map<string, BatchRequest[]>();
  const seen = new Set<string>();
  requests.forEach((request, i) => {
    if (typeof request.recordId !== 'string' || !RECORD_ID.test(request.recordId) || request.recordId.length > limits.maxRecordIdLength)
      throw reject(`record ${i}: id must match [A-Za-z0-9_.:-]{1,${Math.min(128, limits.maxRecordIdLength)}}`, 'bad_record_id');
    if (seen.has(request.recordId)) throw reject(`record id "${request.recordId}" appears twice`, 'duplicate_record_id');
    seen.add(request.recordId);
    if (typeof request.model !== 'string' || request.model === '') throw reject(`record "${request.recordId}" names no model`, 'no_model');
    byModel.set(request.model, [...(byModel.get(request.model) ?? []), request]);
  });
  const inputs: ProviderInput[] = [];
  for (const [model, group] of byModel) {
    if (group.length < limits.minRecordsPerJob) {
      throw reject(`model ${model} has ${group.length} records, fewer than the ${limits.minRecordsPerJob} a job needs`, 'too_few_records');
    }
    const chunks: Chunk[] = [];
    let current: Chunk = { recordIds: [], lines: [], bytes: 0 };
    for (const request of group) {
      const line = buildLine(request);
      const bytes = Buffer.byteLength(line, 'utf8') + 1;
      if (bytes > limits.maxBytesPerJob)
        throw reject(`record "${request.recordId}" is ${bytes} bytes, over a whole file's ${limits.maxBytesPerJob}`, 'record_too_large');
      if (current.lines.length > 0 && (current.lines.length >= limits.maxRecordsPerJob || current.bytes + bytes > limits.maxBytesPerJob)) {
        chunks.push(current);
        current = { recordIds: [], lines: [], bytes: 0 };
      }
      current.recordIds.push(request.recordId);
      current.lines.push(line);
      current.bytes += bytes;
    }
    if (current.lines.length > 0) chunks.push(current);
    if (!rebalanceTail(chunks, limits))
      throw reject(`cannot split model ${model}'s records into jobs of ${limits.minRecordsPerJob} or more within the limits`, 'unsplittable');
    for (const chunk of chunks) inputs.push({ provider, batchId, index: inputs.length, model, ...chunk });
  }
  return inputs;
}

type Chunk = { recordIds: string[]; lines: string[]; bytes: number };

/** Moves records from the job before into a last job under the minimum; false when no split fits the limits. */
function rebalanceTail(chunks: Chunk[], limits: BatchLimits): boolean {
  const last = chunks.at(-1);
  const before = chunks.at(-2);
  if (!last || !before || last.lines.length >= limits.minRecordsPerJob) return true;
  const need = limits.minRecordsPerJob - last.lines.length;
  const movedLines = before.lines.splice(before.lines.length - need, need);
  const movedBytes = movedLines.reduce((sum, line) => sum + Buffer.byteLength(line, 'utf8') + 1, 0);
  last.recordIds.unshift(...before.recordIds.splice(before.recordIds.length - need, need));
  last.lines.unshift(...movedLines);
  before.bytes -= movedBytes;
  last.bytes += movedBytes;
  return before.lines.length >= limits.minRecordsPerJob && last.bytes <= limits.maxBytesPerJob && last.lines.length <= limits.maxRecordsPerJob;
}

/**
 * One line of a result file: its text, or `null` when it was longer than the bound (then never
 * buffered). `notText`: its bytes are not strict UTF-8 text; `text` is then their lenient decoding, only
 * good for finding the record id the line claims — its answer is never read.
 */
export type RawLine = { number: number; text: string | null; bytes: number; notText?: true };

/** A line's bytes decoded strictly (`textOf`); not text: decoded leniently and marked. `null` for a blank line. */
function decodeLine(number: number, bytes: Buffer): RawLine | null {
  const verdict = textOf(bytes);
  if (verdict.ok) return { number, text: verdict.text, bytes: bytes.length };
  if (verdict.problem === 'empty_document') return null;
  const text = bytes.toString('utf8');
  return text.trim() === '' ? null : { number, text, bytes: bytes.length, notText: true };
}

/**
 * Splits a byte stream into lines of at most `maxLineBytes` bytes. A longer line is skipped as it
 * streams by (its bytes counted, not kept) and yielded with `text: null`. Blank lines are skipped. A
 * line is decoded strictly: one whose bytes are not UTF-8 text is marked `notText` (see {@link RawLine}).
 */
export async function* boundedLines(source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>, maxLineBytes: number): AsyncGenerator<RawLine> {
  let parts: Buffer[] = [];
  let length = 0;
  let overflow = false;
  let number = 0;
  const finish = (): RawLine | null => {
    number++;
    const line = overflow ? { number, text: null, bytes: length } : decodeLine(number, Buffer.concat(parts, length));
    parts = [];
    length = 0;
    overflow = false;
    return line;
  };
  const take = (piece: Buffer) => {
    length += piece.length;
    if (overflow) return;
    if (length > maxLineBytes) {
      overflow = true;
      parts = [];
    } else if (piece.length > 0) parts.push(piece);
  };
  for await (const chunk of source) {
    let buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let newline = buffer.indexOf(10);
    while (newline !== -1) {
      take(buffer.subarray(0, newline));
      const line = finish();
      if (line) yield line;
      buffer = buffer.subarray(newline + 1);
      newline = buffer.indexOf(10);
    }
    take(buffer);
  }
  if (length > 0 || overflow) {
    const line = finish();
    if (line) yield line;
  }
}

/** What a client reads from one parsed line: the id it claims, and the record's result. */
export interface ParsedLine {
  id: unknown;
  result: () => { ok: true; content: string; usage: TokenUsage } | { ok: false; code: string; message: string };
}

/** Whether a string is not text (`textOf`): a lone surrogate, NUL bytes, mostly control characters. */
function notTextString(value: string): boolean {
  const verdict = textOf(value);
  return !verdict.ok && verdict.problem === 'not_text';
}

/**
 * Whether a record's answer is not text ({@link textOf}: lone surrogates, or binary — NUL bytes, mostly
 * control characters), in the answer itself or — when it is JSON — in any string it holds once decoded
 * (a `\ud800` escape decodes to a lone surrogate). An answer without a visible character is left to
 * validation (it is not JSON).
 */
export function answerNotText(content: string): boolean {
  if (notTextString(content)) return true;
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return false;
  }
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'string') {
      if (notTextString(next)) return true;
    } else if (Array.isArray(next)) {
      for (const child of next) stack.push(child);
    } else if (typeof next === 'object' && next !== null) {
      for (const [key, child] of Object.entries(next)) {
        if (notTextString(key)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

/** Matches result lines to the record ids sent: each id at most once, unknown ids reported. */
class ResultMatcher {
  private readonly sent: Set<string>;
  private readonly seen = new Set<string>();
  private unmatched = 0;
  /** True once more than `maxUnmatched` lines matched nothing: the reader should stop. */
  exhausted = false;

  constructor(
    recordIds: readonly string[],
    private readonly maxUnmatched = 1000,
    private readonly recordPrefix = '',
  ) {
    this.sent = new Set(recordIds);
  }

  /** The result for one raw line, never throwing. `parse` reads the provider's line shape. */
  accept(raw: RawLine, source: string, parse: (value: Record<string, unknown>) => ParsedLine): ProviderResultLine {
    const where = `line ${raw.number} of ${source}`;
    if (raw.text === null) return this.report('line_too_large', `${where}: ${raw.bytes} bytes, over the bound`, raw, source);
    let value: unknown;
    try {
      value = JSON.parse(raw.text);
    } catch {
      return this.report('not_json', `${where}: not JSON`, raw, source);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return this.report('not_json', `${where}: not a JSON object`, raw, source);
    let parsed: ParsedLine;
    try {
      parsed = parse(value as Record<string, unknown>);
    } catch {
      return this.report('missing_id', `${where}: unreadable`, raw, source);
    }
    const id = parsed.id;
    if (typeof id !== 'string' || id === '') return this.report('missing_id', `${where}: no record id`, raw, source);
    if (this.recordPrefix !== '' && !id.startsWith(this.recordPrefix)) return this.report('other_batch', `${where}: a record id of another batch`, raw, source);
    if (!this.sent.has(id)) return this.report('unknown_id', `${where}: an id that was not sent in this job`, raw, source);
    if (this.seen.has(id)) return this.report('duplicate_id', `${where}: a record id seen before`, raw, source);
    this.seen.add(id);
    if (raw.notText) return { recordId: id, ok: false, code: 'not_text', message: `${where}: bytes that are not UTF-8 text` };
    try {
      const result = parsed.result();
      if (!result.ok) return { recordId: id, ok: false, code: safeCode(result.code) ?? 'provider_error', message: result.message };
      if (answerNotText(result.content)) return { recordId: id, ok: false, code: 'not_text', message: `${where}: an answer that is not text` };
      return { recordId: id, ...result };
    } catch {
      return { recordId: id, ok: false, code: 'bad_output', message: `${where}: the answer could not be read` };
    }
  }

  /** A `no_result` line for every record sent that had no line. */
  missing(): ProviderResultFailed[] {
    const out: ProviderResultFailed[] = [];
    for (const id of this.sent)
      if (!this.seen.has(id)) out.push({ recordId: id, ok: false, code: 'no_result', message: 'the job returned no line for this record' });
    return out;
  }

  private report(code: UnmatchedCode, message: string, raw: RawLine, source: string): ProviderResultUnmatched {
    this.unmatched++;
    if (this.unmatched > this.maxUnmatched) {
      this.exhausted = true;
      return {
        recordId: null,
        ok: false,
        code: 'too_many_unmatched',
        message: `more than ${this.maxUnmatched} unmatched lines: stopped reading`,
        line: raw.number,
        source,
      };
    }
    return { recordId: null, ok: false, code, message, line: raw.number, source };
  }
}

/** A result file to read: its name for reports and how to open its bytes. */
export interface ResultFile {
  source: string;
  open: () => Promise<AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>>;
}

/**
 * Reads every file's lines through one {@link ResultMatcher}, then yields `no_result` for the records
 * sent that had no line. After too many unmatched lines it stops reading (and reports no `no_result`:
 * the files were not read to their end). With `recordPrefix`, a line whose id does not start with it is
 * reported as another batch's (`other_batch`).
 */
export async function* matchResults(
  recordIds: readonly string[],
  files: readonly ResultFile[],
  maxLineBytes: number,
  parse: (value: Record<string, unknown>) => ParsedLine,
  recordPrefix = '',
): AsyncGenerator<ProviderResultLine> {
  const matcher = new ResultMatcher(recordIds, Math.max(1000, recordIds.length), recordPrefix);
  for (const file of files) {
    for await (const raw of boundedLines(await file.open(), maxLineBytes)) {
      yield matcher.accept(raw, file.source, parse);
      if (matcher.exhausted) return;
    }
  }
  yield* matcher.missing();
}

/**
 * Every record of a job whose provider job is not the one the batch sent (its input, output or batch is
 * another's): each is the failure `foreign_output`, and no line of its files is read.
 */
export function* foreignOutput(handle: Pick<ProviderJobHandle, 'recordIds'>, what: string): Generator<ProviderResultLine> {
  for (const recordId of handle.recordIds) {
    yield { recordId, ok: false, code: 'foreign_output', message: `the provider job is not the one sent: ${what}` };
  }
}

/** A token count from an untrusted value: a non-negative safe integer, else 0. */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

/** True for a plain JSON object (not `null`, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object field of an untrusted value, or `undefined`. */
export function objectField(value: unknown, key: string): Record<string, unknown> | undefined {
  if (!isObject(value)) return undefined;
  const field = value[key];
  return isObject(field) ? field : undefined;
}

/** Re-throws a failing stream's error through `map` (a body cut mid-way is a transport failure). */
export async function* mapErrors<T>(source: AsyncIterable<T>, map: (error: unknown) => Error): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (error) {
    throw map(error);
  }
}
