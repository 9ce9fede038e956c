/**
 * The HTTP side of the fake Batch API, behind the same bearer keys as the chat route:
 * - `POST /v1/files` (multipart: `purpose=batch`, `file`, optional `expires_after[anchor]`/`expires_after[seconds]`),
 *   `GET /v1/files/{id}`, `GET /v1/files/{id}/content`, `DELETE /v1/files/{id}`;
 * - `POST /v1/batches`, `GET /v1/batches` (`limit`, `after`), `GET /v1/batches/{id}`, `POST /v1/batches/{id}/cancel`.
 * Paths and methods as the `openai` SDK calls them (`resources/files.js`, `resources/batches.js`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BatchCaller } from './run.js';
import type { BatchStore } from './store.js';
import { checkExpiresAfter, fileTooLargeBody, missingParameterBody } from './wire.js';
import type { WireReply } from '../wire/dialect.js';
import { errorBody, invalidUrlBody } from '../wire/openai.js';

/** Resolves the bearer key of a request to its caller, or the 401 answer that refuses it. */
export type BatchAuthenticator = (request: IncomingMessage) => BatchCaller | WireReply;

type Headers = Record<string, string>;

/** JSON bodies of `POST /v1/batches` are small; anything longer is refused unread. */
const MAX_JSON_BYTES = 1024 * 1024;
const FILE_ROUTE = /^\/v1\/files\/([^/]+)(\/content)?$/;
const BATCH_ROUTE = /^\/v1\/batches\/([^/]+)(\/cancel)?$/;

/** A request body: its bytes up to `limit`, and its full length. */
interface ReadBody {
  bytes: Buffer;
  length: number;
}

function readRaw(request: IncomingMessage, limit: number): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    request.on('data', (chunk: Buffer) => {
      if (length + chunk.length <= limit) chunks.push(chunk);
      length += chunk.length;
    });
    request.on('end', () => resolve({ bytes: Buffer.concat(chunks), length }));
    request.on('error', reject);
  });
}

function sendJson(response: ServerResponse, reply: WireReply, headers: Headers): void {
  if (response.destroyed || response.headersSent) return;
  const text = JSON.stringify(reply.body);
  response.writeHead(reply.status, { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  response.end(text);
}

function isCaller(value: BatchCaller | WireReply): value is BatchCaller {
  return 'owner' in value;
}

/** The model named in the first lines of an over-large upload, for OpenAI's wording of the refusal. */
function modelIn(prefix: Buffer): string {
  return /"model"\s*:\s*"([^"]{1,100})"/.exec(prefix.subarray(0, 64 * 1024).toString('utf8'))?.[1] ?? 'requested';
}

/** The upload's `expires_after` as the SDK sends it in the form (`expires_after[anchor]`, `expires_after[seconds]`). */
function expiresAfterOf(form: FormData): { ok: true; seconds: number | undefined } | { ok: false; reply: WireReply } {
  const anchor = form.get('expires_after[anchor]');
  const seconds = form.get('expires_after[seconds]');
  if (anchor === null && seconds === null) return { ok: true, seconds: undefined };
  const checked = checkExpiresAfter('expires_after', { anchor, seconds: typeof seconds === 'string' ? Number(seconds) : seconds });
  return checked.ok ? { ok: true, seconds: checked.seconds } : checked;
}

/** Routes `/v1/files…` and `/v1/batches…` to the {@link BatchStore}. */
export class BatchRoutes {
  constructor(
    private readonly store: BatchStore,
    private readonly now: () => number,
    private readonly authenticate: BatchAuthenticator,
  ) {}

  /** Whether `path` belongs to the Batch API (files or batches). */
  static handles(path: string): boolean {
    return path === '/v1/files' || path.startsWith('/v1/files/') || path === '/v1/batches' || path.startsWith('/v1/batches/');
  }

  /** Answers one request under `/v1/files` or `/v1/batches` (the body is read here, not by the caller). */
  async handle(request: IncomingMessage, response: ServerResponse, headers: Headers): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const method = request.method ?? 'GET';
    const path = url.pathname;
    const upload = method === 'POST' && path === '/v1/files';
    const body = await readRaw(request, upload ? this.store.maxUploadBytes : MAX_JSON_BYTES);
    const caller = this.authenticate(request);
    if (!isCaller(caller)) return sendJson(response, caller, headers);
    const own = { ...headers, 'openai-organization': caller.organization };
    const now = this.now();

    if (upload) return sendJson(response, await this.upload(request, caller, body), own);
    const file = method === 'GET' ? FILE_ROUTE.exec(path) : null;
    const deleted = method === 'DELETE' ? FILE_ROUTE.exec(path) : null;
    if (deleted && !deleted[2]) return sendJson(response, this.store.deleteFile(caller, decodeURIComponent(deleted[1] ?? '')), own);
    if (file) {
      const fileId = decodeURIComponent(file[1] ?? '');
      if (!file[2]) return sendJson(response, this.store.file(caller, fileId), own);
      const content = this.store.content(caller, fileId, now);
      if (!content.ok) return sendJson(response, content.reply, own);
      response.writeHead(200, { ...own, 'content-type': 'application/octet-stream', 'content-length': String(content.bytes.length) });
      response.end(content.bytes);
      return;
    }
    if (path === '/v1/batches' && (method === 'POST' || method === 'GET')) {
      if (method === 'GET') return sendJson(response, this.list(url, caller, now), own);
      if (body.length > MAX_JSON_BYTES)
        return sendJson(response, { status: 413, body: errorBody('The request body is too large.', 'invalid_request_error') }, own);
      return sendJson(response, this.store.create(caller, body.bytes.toString('utf8'), now), own);
    }
    const batch = BATCH_ROUTE.exec(path);
    const batchId = decodeURIComponent(batch?.[1] ?? '');
    if (batch && !batch[2] && method === 'GET') return sendJson(response, this.store.retrieve(caller, batchId, now), own);
    if (batch?.[2] && method === 'POST') return sendJson(response, this.store.cancel(caller, batchId, now), own);
    sendJson(response, { status: 404, body: invalidUrlBody(method, path) }, own);
  }

  private async upload(request: IncomingMessage, caller: BatchCaller, body: ReadBody): Promise<WireReply> {
    if (body.length > this.store.maxUploadBytes) return { status: 413, body: fileTooLargeBody(this.store.maxFileBytes, modelIn(body.bytes)) };
    let form: FormData;
    try {
      const contentType = request.headers['content-type'] ?? '';
      form = await new Request('http://127.0.0.1/v1/files', { method: 'POST', headers: { 'content-type': contentType }, body: body.bytes }).formData();
    } catch {
      return { status: 400, body: errorBody('The request body must be multipart/form-data with a `file` and a `purpose`.', 'invalid_request_error') };
    }
    const file = form.get('file');
    const purpose = form.get('purpose');
    if (file === null || typeof file === 'string') return { status: 400, body: missingParameterBody('file') };
    if (purpose === null || typeof purpose !== 'string') return { status: 400, body: missingParameterBody('purpose') };
    const expiry = expiresAfterOf(form);
    if (!expiry.ok) return expiry.reply;
    return this.store.upload(caller, file.name, purpose, Buffer.from(await file.arrayBuffer()), this.now(), expiry.seconds);
  }

  private list(url: URL, caller: BatchCaller, now: number): WireReply {
    const raw = url.searchParams.get('limit');
    const limit = raw === null ? 20 : Number(raw);
    if (!(Number.isInteger(limit) && limit >= 1 && limit <= 100)) {
      return { status: 400, body: errorBody(`Invalid 'limit': expected an integer between 1 and 100.`, 'invalid_request_error', 'limit', 'invalid_value') };
    }
    return this.store.list(caller, limit, url.searchParams.get('after'), now);
  }
}
