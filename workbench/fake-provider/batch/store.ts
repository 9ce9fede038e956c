/**
 * The fake Batch API's state: uploaded and result files, and every batch, each visible only to the
 * quota owner whose key created it (OpenAI scopes both to the organization). Every operation first
 * brings all batches up to `now` ({@link BatchStore.advance}); the answers are `{ status, body }`
 * pairs the routes send as they are.
 */
import { seededRandom } from '../../../lib/platform/random.js';
import { type BatchFileLimits, checkUpload } from './input.js';
import { type BatchCaller, type BatchEnvironment, BatchRun, type BatchSettings } from './run.js';
import {
  type BatchBody,
  type BatchOutputLine,
  cannotCancelBody,
  checkExpiresAfter,
  fileDeletedBody,
  type FileObjectBody,
  invalidTypeBody,
  invalidValueBody,
  missingParameterBody,
  newObjectId,
  noSuchBatchBody,
  noSuchFileBody,
  unixSeconds,
} from './wire.js';
import type { WireReply } from '../wire/dialect.js';
import { FakeProviderConfigError } from '../faults.js';
import { errorBody, invalidJsonBody } from '../wire/openai.js';
import type { StatsRecorder } from '../stats.js';
import type { FakeProviderOptions } from '../types.js';

/** The only endpoint and window the fake's batches accept. */
const ENDPOINTS = ['/v1/chat/completions'] as const;
const WINDOWS = ['24h'] as const;
/** OpenAI's metadata limits (SDK `Shared.Metadata`: 16 pairs, keys ≤ 64 characters, values ≤ 512). */
const METADATA = { pairs: 16, keyLength: 64, valueLength: 512 } as const;
/** Offsets the batch faults' seed so their sequence is not the chat route's. */
const BATCH_SEED_OFFSET = 0x9e3779b9;

interface StoredFile {
  body: FileObjectBody;
  owner: string;
  bytes: Buffer;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function rate(name: string, value: number | undefined): number {
  const r = value ?? 0;
  if (!(r >= 0 && r <= 1)) throw new FakeProviderConfigError(`batch.${name} must be within 0..1, got ${value}`);
  return r;
}

function duration(name: string, value: number | undefined, fallback: number, positive = false): number {
  const ms = value ?? fallback;
  if (!(ms >= 0) || (positive && ms === 0) || !Number.isFinite(ms))
    throw new FakeProviderConfigError(`batch.${name} must be a non-negative number of ms, got ${value}`);
  return ms;
}

function count(name: string, value: number | undefined, fallback: number): number {
  const n = value ?? fallback;
  if (!(Number.isInteger(n) && n >= 1)) throw new FakeProviderConfigError(`batch.${name} must be a positive integer, got ${value}`);
  return n;
}

/**
 * Resolves `options.batch` against its defaults (scaled by `minuteMs`).
 * @throws {FakeProviderConfigError} when a rate, duration or limit is out of range.
 */
function batchSettings(options: FakeProviderOptions): BatchSettings & BatchFileLimits {
  const batch = options.batch ?? {};
  const minuteMs = options.minuteMs ?? 60_000;
  const settings = {
    validationMs: duration('validationMs', batch.validationMs, minuteMs / 6),
    completionMs: duration('completionMs', batch.completionMs, 3 * minuteMs),
    finalizingMs: duration('finalizingMs', batch.finalizingMs, minuteMs / 6),
    cancellingMs: duration('cancellingMs', batch.cancellingMs, minuteMs / 6),
    windowMs: duration('windowMs', batch.windowMs, options.dayMs ?? 1440 * minuteMs, true),
    dropRate: rate('dropRate', batch.dropRate),
    errorRate: rate('errorRate', batch.errorRate),
    invalidRate: rate('invalidRate', batch.invalidRate),
    expire: rate('expire', batch.expire),
    expireAnsweredShare: rate('expireAnsweredShare', batch.expireAnsweredShare ?? 0.5),
    enqueuedTokenLimit: batch.enqueuedTokenLimit === undefined ? null : count('enqueuedTokenLimit', batch.enqueuedTokenLimit, 1),
    maxRequestsPerFile: count('maxRequestsPerFile', batch.maxRequestsPerFile, 50_000),
    maxFileBytes: count('maxFileBytes', batch.maxFileBytes, 200 * 1024 * 1024),
  };
  if (settings.dropRate + settings.errorRate + settings.invalidRate > 1 + 1e-9) {
    throw new FakeProviderConfigError('batch.dropRate + batch.errorRate + batch.invalidRate must not exceed 1');
  }
  return settings;
}

/** Reads `metadata` as OpenAI checks it; a string map, `null`, or the 400 that refuses it. */
function parseMetadata(value: unknown): { ok: true; metadata: Record<string, string> | null } | { ok: false; reply: WireReply } {
  if (value === undefined || value === null) return { ok: true, metadata: null };
  if (!isObject(value)) return { ok: false, reply: { status: 400, body: invalidTypeBody('metadata', 'an object', value) } };
  const entries = Object.entries(value);
  if (entries.length > METADATA.pairs) {
    const message = `Invalid 'metadata': too many properties. Expected an object with at most ${METADATA.pairs} properties, but got an object with ${entries.length} properties instead.`;
    return { ok: false, reply: { status: 400, body: errorBody(message, 'invalid_request_error', 'metadata', 'object_above_max_properties') } };
  }
  for (const [key, item] of entries) {
    const param = `metadata.${key}`;
    if (typeof item !== 'string') return { ok: false, reply: { status: 400, body: invalidTypeBody(param, 'a string', item) } };
    const tooLong = key.length > METADATA.keyLength ? METADATA.keyLength : item.length > METADATA.valueLength ? METADATA.valueLength : 0;
    if (tooLong > 0) {
      const message = `Invalid '${param}': string too long. Expected a string with maximum length ${tooLong}, but got a longer one instead.`;
      return { ok: false, reply: { status: 400, body: errorBody(message, 'invalid_request_error', param, 'string_above_max_length') } };
    }
  }
  return { ok: true, metadata: Object.fromEntries(entries) as Record<string, string> };
}

/** Files and batches of every quota owner. */
export class BatchStore {
  private readonly files = new Map<string, StoredFile>();
  private readonly batches: BatchRun[] = [];
  private readonly settings: BatchSettings & BatchFileLimits;
  private readonly env: BatchEnvironment;

  constructor(options: FakeProviderOptions, stats: StatsRecorder) {
    this.settings = batchSettings(options);
    this.env = {
      settings: this.settings,
      random: seededRandom((options.seed ?? 1) ^ BATCH_SEED_OFFSET),
      extract: options.extract,
      stats,
      inputText: (fileId, owner) => {
        const file = this.files.get(fileId);
        return file && file.owner === owner && file.body.purpose === 'batch' ? file.bytes.toString('utf8') : null;
      },
      enqueuedTokens: (owner, model, self) =>
        this.batches.filter((b) => b !== self && b.enqueued && b.caller.owner === owner && b.model === model).reduce((t, b) => t + b.inputTokens, 0),
      storeFile: (owner, filename, lines: BatchOutputLine[], now, expiresAfterSeconds) =>
        this.storeFile(
          owner,
          filename,
          'batch_output',
          Buffer.from(lines.map((line) => `${JSON.stringify(line)}\n`).join(''), 'utf8'),
          now,
          expiresAfterSeconds,
        ).id,
    };
  }

  /** The largest upload body the routes need to read: the file limit plus room for the multipart envelope. */
  get maxUploadBytes(): number {
    return this.settings.maxFileBytes + 1024 * 1024;
  }

  /** The file size limit, for the refusal of an upload too big to read at all. */
  get maxFileBytes(): number {
    return this.settings.maxFileBytes;
  }

  /** Applies every batch event due by `now`, in time order across batches, then answers the lines due. */
  advance(now: number): void {
    for (;;) {
      let next: BatchRun | null = null;
      for (const batch of this.batches) {
        if (batch.nextEventAt() <= now && (next === null || batch.nextEventAt() < next.nextEventAt())) next = batch;
      }
      if (next === null) break;
      next.step();
    }
    for (const batch of this.batches) batch.catchUp(now);
  }

  /** `POST /v1/files`: stores a `purpose=batch` JSONL file after OpenAI's upload checks; `expiresAfterSeconds` from its `expires_after`. */
  upload(caller: BatchCaller, filename: string, purpose: string, bytes: Buffer, now: number, expiresAfterSeconds?: number): WireReply {
    if (purpose !== 'batch') return { status: 400, body: invalidValueBody('purpose', purpose, ['batch']) };
    const refusal = checkUpload(bytes, this.settings);
    if (refusal) return refusal;
    return { status: 200, body: { ...this.storeFile(caller.owner, filename, 'batch', bytes, now, expiresAfterSeconds) } };
  }

  /** `DELETE /v1/files/{id}`: the file is gone (its batch keeps naming it, as OpenAI's does); 404 for an unknown or foreign id. */
  deleteFile(caller: BatchCaller, fileId: string): WireReply {
    if (!this.ownFile(caller, fileId)) return { status: 404, body: noSuchFileBody(fileId) };
    this.files.delete(fileId);
    this.env.stats.recordBatch((b) => (b.filesDeleted += 1));
    return { status: 200, body: fileDeletedBody(fileId) };
  }

  /** `GET /v1/files/{id}`. */
  file(caller: BatchCaller, fileId: string): WireReply {
    const file = this.ownFile(caller, fileId);
    return file ? { status: 200, body: { ...file.body } } : { status: 404, body: noSuchFileBody(fileId) };
  }

  /** `GET /v1/files/{id}/content`: the bytes, or the 404 body. */
  content(caller: BatchCaller, fileId: string, now: number): { ok: true; bytes: Buffer } | { ok: false; reply: WireReply } {
    this.advance(now);
    const file = this.ownFile(caller, fileId);
    return file ? { ok: true, bytes: file.bytes } : { ok: false, reply: { status: 404, body: noSuchFileBody(fileId) } };
  }

  /**
   * `POST /v1/batches`. Only the request itself is checked here (400s as OpenAI answers them); the
   * input file and its lines are checked when the batch validates, and a problem there fails the batch.
   */
  create(caller: BatchCaller, raw: string, now: number): WireReply {
    this.advance(now);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return { status: 400, body: invalidJsonBody() };
    }
    if (!isObject(body)) return { status: 400, body: invalidTypeBody('body', 'an object', body) };
    for (const param of ['input_file_id', 'endpoint', 'completion_window'] as const) {
      if (body[param] === undefined || body[param] === null) return { status: 400, body: missingParameterBody(param) };
      if (typeof body[param] !== 'string') return { status: 400, body: invalidTypeBody(param, 'a string', body[param]) };
    }
    const {
      input_file_id: inputFileId,
      endpoint,
      completion_window: completionWindow,
    } = body as { input_file_id: string; endpoint: string; completion_window: string };
    if (!(ENDPOINTS as readonly string[]).includes(endpoint)) return { status: 400, body: invalidValueBody('endpoint', endpoint, ENDPOINTS) };
    if (!(WINDOWS as readonly string[]).includes(completionWindow)) {
      return { status: 400, body: invalidValueBody('completion_window', completionWindow, WINDOWS) };
    }
    const metadata = parseMetadata(body.metadata);
    if (!metadata.ok) return metadata.reply;
    const expiry = body.output_expires_after === undefined ? undefined : checkExpiresAfter('output_expires_after', body.output_expires_after);
    if (expiry && !expiry.ok) return expiry.reply;
    const request = { inputFileId, endpoint, completionWindow, metadata: metadata.metadata, ...(expiry ? { outputExpiresAfterSeconds: expiry.seconds } : {}) };
    const batch = new BatchRun(caller, request, now, this.env);
    this.batches.push(batch);
    this.env.stats.recordBatch((b) => (b.created += 1));
    return { status: 200, body: batch.body() };
  }

  /** `GET /v1/batches/{id}`. */
  retrieve(caller: BatchCaller, batchId: string, now: number): WireReply {
    this.advance(now);
    const batch = this.ownBatch(caller, batchId);
    return batch ? { status: 200, body: batch.body() } : { status: 404, body: noSuchBatchBody(batchId) };
  }

  /** `POST /v1/batches/{id}/cancel`: 409 once the batch has ended. */
  cancel(caller: BatchCaller, batchId: string, now: number): WireReply {
    this.advance(now);
    const batch = this.ownBatch(caller, batchId);
    if (!batch) return { status: 404, body: noSuchBatchBody(batchId) };
    if (!batch.cancel(now)) return { status: 409, body: cannotCancelBody(batch.status) };
    return { status: 200, body: batch.body() };
  }

  /** `GET /v1/batches?limit&after`: the owner's batches, newest first, as a cursor page. */
  list(caller: BatchCaller, limit: number, after: string | null, now: number): WireReply {
    this.advance(now);
    const own = this.batches.filter((b) => b.caller.owner === caller.owner).reverse();
    const start = after === null ? 0 : own.findIndex((b) => b.id === after) + 1;
    const page = own.slice(start, start + limit);
    const data: BatchBody[] = page.map((b) => b.body());
    return {
      status: 200,
      body: { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: start + limit < own.length },
    };
  }

  private storeFile(
    owner: string,
    filename: string,
    purpose: 'batch' | 'batch_output',
    bytes: Buffer,
    now: number,
    expiresAfterSeconds?: number,
  ): FileObjectBody {
    // Seconds on the fake's scaled clock: its window (`windowMs`) stands for OpenAI's 24 hours.
    const expiresInMs = expiresAfterSeconds === undefined ? 30 * this.settings.windowMs : (expiresAfterSeconds / 86_400) * this.settings.windowMs;
    const body: FileObjectBody = {
      id: newObjectId('file-', 22),
      object: 'file',
      bytes: bytes.length,
      created_at: unixSeconds(now),
      filename,
      purpose,
      status: 'processed',
      // files.d.ts: "By default, files with purpose=batch expire after 30 days" (30 scaled days here).
      expires_at: unixSeconds(now + expiresInMs),
      status_details: null,
    };
    this.files.set(body.id, { body, owner, bytes });
    return body;
  }

  private ownFile(caller: BatchCaller, fileId: string): StoredFile | undefined {
    const file = this.files.get(fileId);
    return file && file.owner === caller.owner ? file : undefined;
  }

  private ownBatch(caller: BatchCaller, batchId: string): BatchRun | undefined {
    return this.batches.find((b) => b.id === batchId && b.caller.owner === caller.owner);
  }
}
