/**
 * One batch of the fake Batch API, from `validating` to its end, in scaled time. Nothing runs on a
 * timer: the store calls {@link BatchRun.step} for each due event in time order across all batches
 * (so the enqueued-token check at the end of one batch's validation sees every other batch as it is
 * at that moment) and {@link BatchRun.catchUp} to answer the lines whose time has come.
 *
 * Lifecycle (Batch guide, "Check the status of a batch"): `validating` for `validationMs` → `failed`
 * (a line error, a missing input file, the enqueued-token limit) or `in_progress`, where the n request
 * lines are answered evenly over `completionMs` (line i at `in_progress_at + completionMs·(i+1)/n`) →
 * `finalizing` for `finalizingMs` → `completed`. A batch whose lines are not all answered by
 * `expires_at` (its window ran out, or the seeded `expire` fault stalled it) ends `expired`; a cancel
 * moves it to `cancelling` for `cancellingMs` (lines already answered stay, no new ones) → `cancelled`.
 * The output and error files are written when the batch ends, with the completed part in both cases.
 * Each line's fate (answered, dropped, errored, or answered with content that fails the schema) is drawn
 * when the batch starts, from the batch faults' own seeded sequence.
 */
import type { StatsRecorder } from '../stats.js';
import type { RandomSource } from '../../../lib/platform/random.js';
import { type BatchRequestLine, validateLines } from './input.js';
import {
  type BatchBody,
  type BatchErrorEntry,
  type BatchOutputLine,
  type BatchStatus,
  cancelledLine,
  expiredLine,
  failedRequestLine,
  missingInputFileError,
  newObjectId,
  outputLine,
  tokenLimitError,
  unixSeconds,
} from './wire.js';
import { breakSchema, garbleJson } from '../faults.js';
import { estimateTokens, promptTokensOf } from '../wire/dialect.js';
import { type ChatCompletionBody, chatCompletionBody, newRequestId, type OpenAiErrorBody, serverErrorBody, parseChatRequest } from '../wire/openai.js';
import type { FakeExtractor } from '../types.js';

/** The resolved pace, faults and limit of every batch. */
export interface BatchSettings {
  validationMs: number;
  completionMs: number;
  finalizingMs: number;
  cancellingMs: number;
  windowMs: number;
  dropRate: number;
  errorRate: number;
  invalidRate: number;
  expire: number;
  expireAnsweredShare: number;
  enqueuedTokenLimit: number | null;
}

/** Who created a batch: the key's quota owner and its organization id. */
export interface BatchCaller {
  key: string;
  owner: string;
  organization: string;
}

/** What a batch needs from the server around it. */
export interface BatchEnvironment {
  settings: BatchSettings;
  /** The batch faults' own seeded sequence. */
  random: RandomSource;
  extract: FakeExtractor;
  stats: StatsRecorder;
  /** The text of a `purpose=batch` file `owner` may read; `null` when there is none. */
  inputText(fileId: string, owner: string): string | null;
  /** Prompt tokens `owner` has enqueued for `model` in unfinished batches other than `self`. */
  enqueuedTokens(owner: string, model: string, self: BatchRun): number;
  /** Stores a result file (`purpose=batch_output`) and returns its id. */
  storeFile(owner: string, filename: string, lines: BatchOutputLine[], now: number, expiresAfterSeconds?: number): string;
}

/** What `POST /v1/batches` asked for. */
export interface BatchRequest {
  inputFileId: string;
  endpoint: string;
  completionWindow: string;
  metadata: Record<string, string> | null;
  /** `output_expires_after.seconds`: how long its output and error files are kept. */
  outputExpiresAfterSeconds?: number;
}

type Fate = 'answer' | 'drop' | 'error' | 'invalid';

/** How one request line ended: the chat completion, or the HTTP error it got. */
type Answer = { ok: true; body: ChatCompletionBody } | { ok: false; status: number; body: OpenAiErrorBody };

interface ScheduledLine extends BatchRequestLine {
  fate: Fate;
  /** For an `invalid` line, which way its content fails the schema (a number in [0, 1)). */
  variant: number;
  answerAt: number;
}

const ENQUEUED: ReadonlySet<BatchStatus> = new Set(['in_progress', 'finalizing', 'cancelling']);
const ENDED: ReadonlySet<BatchStatus> = new Set(['failed', 'completed', 'expired', 'cancelled']);

/** One batch and everything that happened to it. */
export class BatchRun {
  readonly id = newObjectId('batch_');
  readonly expiresAt: number;
  status: BatchStatus = 'validating';
  model: string | null = null;
  /** Prompt tokens of every line, counted against the enqueued-token limit while the batch is unfinished. */
  inputTokens = 0;
  private readonly at: Partial<Record<'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled', number>> = {};
  private errors: BatchErrorEntry[] | null = null;
  private lines: ScheduledLine[] = [];
  /** Lines [0, cursor) have been answered (or dropped). */
  private cursor = 0;
  /** Lines from here on are never answered (the `expire` fault). */
  private stallAt = 0;
  private readonly counts = { completed: 0, failed: 0 };
  private readonly usage = { input: 0, output: 0 };
  private readonly output: BatchOutputLine[] = [];
  private readonly errorLines: BatchOutputLine[] = [];
  private outputFileId: string | null = null;
  private errorFileId: string | null = null;

  constructor(
    readonly caller: BatchCaller,
    readonly request: BatchRequest,
    readonly createdAt: number,
    private readonly env: BatchEnvironment,
  ) {
    this.expiresAt = createdAt + env.settings.windowMs;
  }

  /** Whether its tokens count as enqueued (it was admitted and has not ended). */
  get enqueued(): boolean {
    return ENQUEUED.has(this.status);
  }

  /** When its next state change is due; `Infinity` once it has ended. */
  nextEventAt(): number {
    const { settings } = this.env;
    switch (this.status) {
      case 'validating':
        return this.createdAt + settings.validationMs;
      case 'in_progress':
        return Math.max(this.at.in_progress ?? this.createdAt, Math.min(this.finishAt(), this.expiresAt));
      case 'finalizing':
        return (this.at.finalizing ?? 0) + settings.finalizingMs;
      case 'cancelling':
        return (this.at.cancelling ?? 0) + settings.cancellingMs;
      default:
        return Number.POSITIVE_INFINITY;
    }
  }

  /** Applies the state change due at {@link nextEventAt}. */
  step(): void {
    const t = this.nextEventAt();
    if (this.status === 'validating') this.validate(t);
    else if (this.status === 'in_progress') {
      this.catchUp(t);
      if (this.cursor === this.lines.length) {
        this.status = 'finalizing';
        this.at.finalizing = t;
      } else this.end('expired', t);
    } else if (this.status === 'finalizing') this.end('completed', t);
    else if (this.status === 'cancelling') this.end('cancelled', t);
  }

  /** Answers every line whose time has come by `now`. */
  catchUp(now: number): void {
    if (this.status !== 'in_progress') return;
    while (this.cursor < this.stallAt) {
      const line = this.lines[this.cursor];
      if (line === undefined || line.answerAt > now) break;
      this.answer(line, line.answerAt);
      this.cursor += 1;
    }
  }

  /** Starts cancelling at `now`; `false` when the batch has already ended (`cancelling` and `cancelled` stay as they are). */
  cancel(now: number): boolean {
    if (this.status === 'cancelling' || this.status === 'cancelled') return true;
    if (ENDED.has(this.status)) return false;
    this.catchUp(now);
    this.status = 'cancelling';
    this.at.cancelling = now;
    return true;
  }

  /** The Batch object now. */
  body(): BatchBody {
    const seconds = (ms: number | undefined) => (ms === undefined ? null : unixSeconds(ms));
    return {
      id: this.id,
      object: 'batch',
      endpoint: this.request.endpoint,
      model: this.model,
      errors: this.errors === null ? null : { object: 'list', data: this.errors.map((e) => ({ ...e })) },
      input_file_id: this.request.inputFileId,
      completion_window: this.request.completionWindow,
      status: this.status,
      output_file_id: this.outputFileId,
      error_file_id: this.errorFileId,
      created_at: unixSeconds(this.createdAt),
      in_progress_at: seconds(this.at.in_progress),
      expires_at: unixSeconds(this.expiresAt),
      finalizing_at: seconds(this.at.finalizing),
      completed_at: seconds(this.at.completed),
      failed_at: seconds(this.at.failed),
      expired_at: seconds(this.at.expired),
      cancelling_at: seconds(this.at.cancelling),
      cancelled_at: seconds(this.at.cancelled),
      request_counts: { total: this.lines.length, ...this.counts },
      usage: {
        input_tokens: this.usage.input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: this.usage.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: this.usage.input + this.usage.output,
      },
      metadata: this.request.metadata === null ? null : { ...this.request.metadata },
    };
  }

  private finishAt(): number {
    if (this.stallAt < this.lines.length) return Number.POSITIVE_INFINITY;
    return this.lines[this.lines.length - 1]?.answerAt ?? this.at.in_progress ?? this.createdAt;
  }

  private fail(errors: BatchErrorEntry[], t: number): void {
    this.errors = errors;
    this.status = 'failed';
    this.at.failed = t;
    this.env.stats.recordBatch((b) => (b.failed += 1));
  }

  private validate(t: number): void {
    const errors = this.admit(t);
    if (errors !== null) this.fail(errors, t);
  }

  /** Checks the input file, its lines and the enqueued-token limit; starts the batch, or returns why it fails. */
  private admit(t: number): BatchErrorEntry[] | null {
    const { settings, random } = this.env;
    const text = this.env.inputText(this.request.inputFileId, this.caller.owner);
    if (text === null) return [missingInputFileError(this.request.inputFileId, this.caller.organization)];
    const input = validateLines(text, this.request.endpoint);
    if (!input.ok) return input.errors;
    this.model = input.model;
    const tokens = input.lines.reduce((total, line) => total + line.promptTokens, 0);
    const limit = settings.enqueuedTokenLimit;
    if (limit !== null && this.env.enqueuedTokens(this.caller.owner, input.model, this) + tokens > limit) {
      return [tokenLimitError(input.model, this.caller.organization, limit)];
    }
    this.inputTokens = tokens;
    this.status = 'in_progress';
    this.at.in_progress = t;
    const expiring = random() < settings.expire;
    const n = input.lines.length;
    this.stallAt = expiring ? Math.floor(n * settings.expireAnsweredShare) : n;
    this.lines = input.lines.map((line, i) => {
      const fate = fateOf(random(), settings);
      // Only an invalid line draws its variant: without `invalidRate` the sequence is the one it always was.
      const variant = fate === 'invalid' ? random() : 0;
      return { ...line, fate, variant, answerAt: t + (settings.completionMs * (i + 1)) / n };
    });
    return null;
  }

  private answer(line: ScheduledLine, t: number): void {
    const { stats } = this.env;
    if (line.fate === 'drop') {
      // The provider believes it answered: counted as completed, yet no line is written anywhere.
      this.counts.completed += 1;
      stats.recordBatch((b) => {
        b.linesDropped += 1;
        b.droppedCustomIds.push(line.customId);
      });
      return;
    }
    const requestId = newRequestId();
    const result: Answer = line.fate === 'error' ? { ok: false, status: 500, body: serverErrorBody(500, requestId) } : this.run(line, t, requestId);
    if (!result.ok) {
      this.errorLines.push(failedRequestLine(line.customId, requestId, result.status, result.body));
      this.counts.failed += 1;
      stats.recordBatch((b) => {
        b.linesErrored += 1;
        b.erroredCustomIds.push(line.customId);
      });
      return;
    }
    this.output.push(outputLine(line.customId, requestId, result.body));
    this.counts.completed += 1;
    this.usage.input += result.body.usage.prompt_tokens;
    this.usage.output += result.body.usage.completion_tokens;
    stats.recordBatch((b) => {
      b.linesAnswered += 1;
      if (line.fate === 'invalid') b.invalidCustomIds.push(line.customId);
    });
  }

  /** Runs one request line as the chat route would answer it (same parsing, extractor, token cap and body). */
  private run(line: ScheduledLine, t: number, requestId: string): Answer {
    const parsed = parseChatRequest(JSON.stringify(line.body));
    if (!parsed.ok) return { ok: false, status: 400, body: parsed.body };
    const request = parsed.request;
    let content: string;
    try {
      content = JSON.stringify(this.env.extract(request.documentText, request.schemaName, request.context)) ?? 'null';
    } catch {
      return { ok: false, status: 500, body: serverErrorBody(500, requestId) };
    }
    if (line.fate === 'invalid') content = invalidContent(content, request.schema, line.variant);
    let finishReason: 'stop' | 'length' = 'stop';
    let completionTokens = estimateTokens(content.length);
    const cap = request.maxCompletionTokens;
    if (cap !== null && completionTokens > cap) {
      content = content.slice(0, cap * 4);
      completionTokens = cap;
      finishReason = 'length';
    }
    const promptTokens = promptTokensOf(request);
    return { ok: true, body: chatCompletionBody({ model: request.model, content, finishReason, promptTokens, completionTokens, createdAt: t }) };
  }

  private end(status: 'completed' | 'expired' | 'cancelled', t: number): void {
    const { stats } = this.env;
    const unanswered = this.lines.slice(this.cursor);
    for (const line of unanswered) this.errorLines.push(status === 'expired' ? expiredLine(line.customId) : cancelledLine(line.customId));
    this.counts.failed += unanswered.length;
    this.cursor = this.lines.length;
    this.status = status;
    this.at[status] = t;
    const keep = this.request.outputExpiresAfterSeconds;
    if (this.output.length > 0) this.outputFileId = this.env.storeFile(this.caller.owner, `batch_${this.id}_output.jsonl`, this.output, t, keep);
    if (this.errorLines.length > 0) this.errorFileId = this.env.storeFile(this.caller.owner, `batch_${this.id}_error.jsonl`, this.errorLines, t, keep);
    stats.recordBatch((b) => {
      b[status] += 1;
      if (status === 'expired') b.linesExpired += unanswered.length;
      if (status === 'cancelled') b.linesCancelled += unanswered.length;
    });
  }
}

/** A line's fate from one draw in [0, 1): dropped, errored, invalid, else answered (the rates in that order). */
function fateOf(pick: number, settings: Pick<BatchSettings, 'dropRate' | 'errorRate' | 'invalidRate'>): Fate {
  if (pick < settings.dropRate) return 'drop';
  if (pick < settings.dropRate + settings.errorRate) return 'error';
  if (pick < settings.dropRate + settings.errorRate + settings.invalidRate) return 'invalid';
  return 'answer';
}

/**
 * Content that fails the extraction schema, from the correct `content` (JSON): variant < 0.5, the JSON
 * with a required field left out (a number turned into a string when none is present); otherwise the
 * JSON wrapped in prose and a code fence, which is not JSON. Either way a complete answer (`stop`).
 */
function invalidContent(content: string, schema: unknown, variant: number): string {
  // breakSchema drops a required field for variants in [0.5, 1); the rest of the range picks which.
  if (variant < 0.5) return JSON.stringify(breakSchema(JSON.parse(content), schema, 0.5 + variant));
  return garbleJson(content, variant).content;
}
