/**
 * A scripted Batch API for the batch lane's tests: a loopback HTTP server in front of the fake
 * provider that forwards every request as it is and lets a test rewrite two answers the way a broken or
 * hostile provider would — a batch object (`GET /v1/batches/{id}`: another batch's output file, another
 * input file) and a file's bytes (`GET /v1/files/{id}/content`: an answer too large to store, bytes that
 * are not UTF-8). The script is read at each request, so a test can change it between two reconciles.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the scripted server rewrites; each rewrite gets the upstream answer and returns what to answer instead. */
interface BatchScript {
  /** A batch object, by the provider batch id it was asked for. */
  batch?: (batchId: string, body: Record<string, unknown>) => Record<string, unknown>;
  /** A file's content, by its file id. */
  content?: (fileId: string, bytes: Buffer) => Buffer;
}

/** A running scripted server. */
export interface ScriptedBatchServer {
  /** Base URL with `/v1`, for the batch client. */
  baseUrl: string;
  /** What it rewrites now (change it at any time). */
  script: BatchScript;
  stop(): Promise<void>;
}

const BATCH_PATH = /^\/v1\/batches\/([^/]+)$/;
const CONTENT_PATH = /^\/v1\/files\/([^/]+)\/content$/;

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** Starts a scripted server in front of `upstreamBaseUrl` (the fake provider's base URL, with `/v1`). */
export async function scriptedBatchServer(upstreamBaseUrl: string): Promise<ScriptedBatchServer> {
  const upstream = new URL(upstreamBaseUrl);
  const scripted: ScriptedBatchServer = { baseUrl: '', script: {}, stop: async () => undefined };
  const server: Server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      const path = new URL(request.url ?? '/', upstream).pathname;
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type', 'accept']) {
        const value = request.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const method = request.method ?? 'GET';
      const answer = await fetch(new URL(request.url ?? '/', upstream), { method, headers, ...(method === 'GET' ? {} : { body }) });
      let bytes: Buffer = Buffer.from(await answer.arrayBuffer());
      const batch = method === 'GET' && answer.ok ? BATCH_PATH.exec(path) : null;
      const file = method === 'GET' && answer.ok ? CONTENT_PATH.exec(path) : null;
      if (batch && scripted.script.batch) {
        const id = decodeURIComponent(batch[1] ?? '');
        bytes = Buffer.from(JSON.stringify(scripted.script.batch(id, JSON.parse(bytes.toString('utf8')) as Record<string, unknown>)), 'utf8');
      }
      if (file && scripted.script.content) bytes = scripted.script.content(decodeURIComponent(file[1] ?? ''), bytes);
      response.writeHead(answer.status, {
        'content-type': answer.headers.get('content-type') ?? 'application/json',
        'content-length': String(bytes.length),
      });
      response.end(bytes);
    })().catch(() => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  scripted.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  scripted.stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return scripted;
}

/** One line of an OpenAI batch output file, as the fake provider writes it. */
export interface OutputLine {
  custom_id: string;
  response: { status_code: number; body: { choices: { message: { content: string } }[] } } | null;
  [key: string]: unknown;
}

/**
 * Rewrites the lines of an output file whose `custom_id` ends with `itemId`: `rewrite` gets the parsed
 * line and returns the bytes of the line to write instead (without its newline).
 */
export function rewriteLines(bytes: Buffer, rewrites: Record<string, (line: OutputLine) => Buffer>): Buffer {
  const out: Buffer[] = [];
  for (const text of bytes.toString('utf8').split('\n')) {
    if (text.trim() === '') continue;
    const line = JSON.parse(text) as OutputLine;
    const entry = Object.entries(rewrites).find(([itemId]) => line.custom_id.endsWith(itemId));
    out.push(entry ? entry[1](line) : Buffer.from(text, 'utf8'), Buffer.from('\n'));
  }
  return Buffer.concat(out);
}

/** The answer of an output line, parsed (the fake provider answers JSON). */
export function answerOf(line: OutputLine): Record<string, unknown> {
  return JSON.parse(line.response?.body.choices[0]?.message.content ?? 'null') as Record<string, unknown>;
}

/** The line with `answer` as its content, as bytes. */
export function withAnswer(line: OutputLine, answer: string): Buffer {
  const copy = structuredClone(line);
  const choice = copy.response?.body.choices[0];
  if (choice) choice.message.content = answer;
  return Buffer.from(JSON.stringify(copy), 'utf8');
}
