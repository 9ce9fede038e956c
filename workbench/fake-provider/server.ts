/**
 * A fake OpenAI Chat Completions server on 127.0.0.1 for local runs and integration tests:
 * real wire format, per-owner RPM/TPM/RPD budgets, out-of-credit keys, and seeded faults.
 * The same server also speaks the Gemini API (`POST /v1beta/models/{model}:generateContent`, key in
 * `x-goog-api-key`) with Gemini's own error shapes (see `wire/gemini.ts`); both routes share the keys,
 * budgets, faults and counters, and differ only in their wire dialect (`wire/dialect.ts`).
 *
 * Order of decisions for `POST /v1/chat/completions`: bearer key (401) → request body (400) →
 * credit (429 insufficient_quota) → budgets (429 too_large, rpd, rpm, tpm; the refused request is
 * then charged as its dialect's `refusedRequestRule` says: `limits.ts`) → the request is
 * admitted and spends its budgets → seeded fault draw → simulated model time → answer (with `modelErrors`,
 * made to err on hard shapes by prompt version: `extractors/error-model.ts`).
 * Faults are drawn only for admitted requests, so they spend budgets as a real provider's do: a
 * request that reached the model counts against RPM/RPD and its prompt (+ cap) tokens, even when
 * it then fails with 5xx or hangs.
 * The Batch API (`/v1/files`, `/v1/batches`) is routed to `batch/routes.ts` with the same keys.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { BatchRoutes } from './batch/routes.js';
import { BatchStore } from './batch/store.js';
import { refusedRequestRuleOf, type ReplyContext, type WireDialect, type WireReply, estimateTokens, promptTokensOf, type ChatRequest } from './wire/dialect.js';
import { runFakeModel, validateModelErrorRates } from './extractors/error-model.js';
import { breakSchema, FakeProviderConfigError, FaultInjector, garbleJson } from './faults.js';
import { GEMINI_GENERATE_PATH, geminiDialect, geminiInvalidKeyBody, geminiMissingKeyBody, geminiPlanGateBody, parseGeminiRequest } from './wire/gemini.js';
import { QuotaLedger } from './limits.js';
import {
  insufficientQuotaBody,
  invalidApiKeyBody,
  invalidUrlBody,
  missingApiKeyBody,
  newRequestId,
  openAiDialect,
  organizationId,
  serverErrorBody,
  type OpenAiErrorBody,
  parseChatRequest,
} from './wire/openai.js';
import { countModelErrors, StatsRecorder } from './stats.js';
import type { FakeExtractor, FakeProvider, FakeProviderLimits, FakeProviderOptions } from './types.js';

const COMPLETIONS_PATH = '/v1/chat/completions';
const MAX_BODY_BYTES = 32 * 1024 * 1024;

interface Account {
  owner: string;
  organization: string;
  outOfCredit: boolean;
}

type Headers = Record<string, string>;

/** Sleeps that {@link Sleeper.wakeAll} ends early, so `stop()` never waits on simulated model time. */
class Sleeper {
  private readonly pending = new Map<NodeJS.Timeout, () => void>();

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(timer);
        resolve();
      }, ms);
      this.pending.set(timer, resolve);
    });
  }

  wakeAll(): void {
    for (const [timer, resolve] of this.pending) {
      clearTimeout(timer);
      resolve();
    }
    this.pending.clear();
  }
}

function assertPositive(name: string, value: number | undefined, integer: boolean): void {
  if (value === undefined) return;
  if (!(value > 0) || (integer && !Number.isInteger(value))) {
    throw new FakeProviderConfigError(`${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`);
  }
}

function validateOptions(options: FakeProviderOptions): void {
  const limits: FakeProviderLimits = options.limits ?? {};
  assertPositive('limits.requestsPerMinute', limits.requestsPerMinute, true);
  assertPositive('limits.tokensPerMinute', limits.tokensPerMinute, true);
  assertPositive('limits.requestsPerDay', limits.requestsPerDay, true);
  assertPositive('minuteMs', options.minuteMs, false);
  assertPositive('dayMs', options.dayMs, false);
  if (options.dayStartMs !== undefined && !Number.isFinite(options.dayStartMs)) throw new FakeProviderConfigError(`dayStartMs must be a finite number`);
  if (options.modelErrors) validateModelErrorRates(options.modelErrors.rates);
  const seen = new Set<string>();
  for (const { key } of options.keys) {
    if (key === '' || seen.has(key)) throw new FakeProviderConfigError(`API keys must be non-empty and unique`);
    seen.add(key);
  }
}

function bearerOf(request: IncomingMessage): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  return match?.[1] ?? null;
}

/** Gemini's key: the `x-goog-api-key` header, else the `key` query parameter. */
function googleKeyOf(request: IncomingMessage, url: URL): string | null {
  const header = request.headers['x-goog-api-key'];
  const value = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('key');
  return value === undefined || value === null || value === '' ? null : value;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, status: number, body: unknown, headers: Headers): void {
  if (response.destroyed || response.headersSent) return;
  const text = JSON.stringify(body);
  response.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  response.end(text);
}

/**
 * Starts a fake OpenAI-compatible provider on a free loopback port.
 * @throws {FakeProviderConfigError} when the options are inconsistent.
 */
export async function startFakeProvider(options: FakeProviderOptions): Promise<FakeProvider> {
  validateOptions(options);
  const now = options.now ?? Date.now;
  const accounts = new Map<string, Account>(
    options.keys.map(({ key, quotaOwner, outOfCredit }) => {
      const owner = quotaOwner ?? key;
      return [key, { owner, organization: organizationId(owner), outOfCredit: outOfCredit ?? false }];
    }),
  );
  const ledger = new QuotaLedger(
    options.limits ?? {},
    { minuteMs: options.minuteMs ?? 60_000, dayMs: options.dayMs ?? 86_400_000, dailyWindow: options.dailyWindow ?? 'fixed', dayStartMs: options.dayStartMs },
    now(),
  );
  const injector = new FaultInjector(options.faults ?? {}, options.seed ?? 1, options.latencyMs ?? { min: 5, max: 20 });
  const stats = new StatsRecorder([...accounts.keys()]);
  // Batch lines get the same model (and its errors) as the chat route; their errors count in `batches`.
  const batchExtract: FakeExtractor = (text, schemaName, context) => {
    const { result, applied } = runFakeModel(options.extract, options.modelErrors, { documentText: text, schemaName, context });
    stats.recordBatch((b) => countModelErrors(b.modelErrors, applied));
    return result;
  };
  const batchStore = new BatchStore({ ...options, extract: batchExtract }, stats);
  const batchRoutes = new BatchRoutes(batchStore, now, (request) => {
    const key = bearerOf(request);
    const account = key === null ? undefined : accounts.get(key);
    if (key !== null && account) return { key, owner: account.owner, organization: account.organization };
    stats.record(null, (c) => (c.unauthorized += 1));
    return { status: 401, body: key === null ? missingApiKeyBody() : invalidApiKeyBody(key) };
  });
  const sleeper = new Sleeper();
  const sockets = new Set<Socket>();
  let stopping: Promise<void> | null = null;

  const contextOf = (account: Account, request: ChatRequest): ReplyContext => ({
    model: request.model,
    organization: account.organization,
    limits: ledger.snapshot(account.owner, now()),
  });
  // A provider that states no limits (`statesLimits: false`) sends its answers without the `*-limit-*` headers.
  const stated = (headers: Headers): Headers =>
    options.statesLimits === false ? Object.fromEntries(Object.entries(headers).filter(([name]) => !/^x-ratelimit-limit-/i.test(name))) : headers;
  const reply = (response: ServerResponse, answer: WireReply, headers: Headers) =>
    send(response, answer.status, answer.body, stated({ ...headers, ...answer.headers }));

  function refuseWithRateLimit(
    response: ServerResponse,
    dialect: WireDialect,
    key: string,
    account: Account,
    request: ChatRequest,
    tokens: number,
    headers: Headers,
  ): boolean {
    const refused = ledger.check(account.owner, tokens, now());
    if (refused.admitted) return false;
    stats.record(key, (c) => (c.rateLimited[refused.kind] += 1));
    // The refused request is charged before its answer is worded, so its retry hint counts its own
    // charge: a caller that waits as told gets through, one that keeps resending stays refused. Its
    // "Used" is what the check saw.
    ledger.spendRefused(account.owner, tokens, dialect.refusedRequestRule, now());
    const after = ledger.check(account.owner, tokens, now());
    const waitMs = !after.admitted && after.waitMs !== null && refused.waitMs !== null ? Math.max(refused.waitMs, after.waitMs) : refused.waitMs;
    reply(response, dialect.refuse({ ...refused, waitMs } as typeof refused, contextOf(account, request)), headers);
    return true;
  }

  async function answer(response: ServerResponse, dialect: WireDialect, key: string, account: Account, request: ChatRequest, headers: Headers): Promise<void> {
    const promptTokens = promptTokensOf(request);
    const reservedTokens = promptTokens + (request.maxCompletionTokens ?? 0);
    if (refuseWithRateLimit(response, dialect, key, account, request, reservedTokens, headers)) return;
    ledger.spendRequest(account.owner, reservedTokens, now());
    stats.record(key, (c) => (c.tokensIn += promptTokens));

    const draw = injector.draw();
    if (draw.fault === 'timeout') {
      stats.record(key, (c) => (c.faults.timeout += 1));
      return; // accepted, never answered; the socket closes when the client aborts or on stop()
    }
    await sleeper.sleep(draw.latencyMs);
    if (stopping || response.destroyed) return;
    const answerHeaders = { ...headers, ...dialect.processingHeaders(draw.latencyMs) };
    const requestId = headers['x-request-id'] ?? newRequestId();

    if (draw.fault === 'serverError') {
      stats.record(key, (c) => (c.faults.serverError += 1));
      reply(response, dialect.serverError(draw.variant, requestId, contextOf(account, request)), answerHeaders);
      return;
    }

    let content: string;
    try {
      const { result, applied } = runFakeModel(options.extract, options.modelErrors, request);
      content = JSON.stringify(result) ?? 'null';
      if (applied.length > 0) stats.record(key, (c) => countModelErrors(c.modelErrors, applied));
    } catch {
      reply(response, dialect.internalError(requestId), answerHeaders);
      return;
    }
    let finishReason: 'stop' | 'length' = 'stop';
    if (draw.fault === 'garbageJson') {
      ({ content, finishReason } = garbleJson(content, draw.variant));
    } else if (draw.fault === 'schemaInvalid') {
      content = JSON.stringify(breakSchema(JSON.parse(content), request.schema, draw.variant));
    }
    let completionTokens = estimateTokens(content.length);
    const cap = request.maxCompletionTokens;
    if (cap !== null && completionTokens > cap) {
      content = content.slice(0, cap * 4);
      completionTokens = cap;
      finishReason = 'length';
    }
    if (cap === null) ledger.spendTokens(account.owner, completionTokens, now());

    stats.record(key, (c) => {
      c.tokensOut += completionTokens;
      if (draw.fault === null) c.successes += 1;
      else c.faults[draw.fault] += 1;
    });
    reply(
      response,
      dialect.success({ ...contextOf(account, request), content, finishReason, promptTokens, completionTokens, createdAt: now() }),
      answerHeaders,
    );
  }

  /** `POST /v1beta/models/{model}:generateContent`: the Gemini dialect over the same machinery. */
  async function handleGemini(request: IncomingMessage, response: ServerResponse, url: URL, model: string, raw: string): Promise<void> {
    const headers: Headers = {};
    const key = googleKeyOf(request, url);
    const account = key === null ? undefined : accounts.get(key);
    stats.record(account ? key : null, (c) => (c.requests += 1));
    if (key === null || !account) {
      stats.record(null, (c) => (c.unauthorized += 1));
      if (key === null) send(response, 403, geminiMissingKeyBody(), headers);
      else send(response, 400, geminiInvalidKeyBody(), headers);
      return;
    }
    const parsed = parseGeminiRequest(raw, model);
    if (!parsed.ok) {
      stats.record(key, (c) => (c.badRequests += 1));
      send(response, 400, parsed.body, headers);
      return;
    }
    if (account.outOfCredit) {
      stats.record(key, (c) => (c.rateLimited.insufficient_quota += 1));
      send(response, 429, geminiPlanGateBody(model), headers);
      return;
    }
    await answer(response, geminiDialect, key, account, parsed.request, headers);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const headers: Headers = { 'x-request-id': newRequestId(), 'openai-version': '2020-10-01' };
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    if (BatchRoutes.handles(path)) return batchRoutes.handle(request, response, headers);
    const raw = await readBody(request);
    const gemini = request.method === 'POST' ? GEMINI_GENERATE_PATH.exec(path) : null;
    if (gemini) {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      await handleGemini(request, response, url, decodeURIComponent(gemini[1] ?? ''), raw);
      return;
    }
    if (request.method !== 'POST' || path !== COMPLETIONS_PATH) {
      send(response, 404, invalidUrlBody(request.method ?? 'GET', path), headers);
      return;
    }
    const key = bearerOf(request);
    const account = key === null ? undefined : accounts.get(key);
    stats.record(account ? key : null, (c) => (c.requests += 1));
    if (key === null || !account) {
      stats.record(null, (c) => (c.unauthorized += 1));
      send(response, 401, key === null ? missingApiKeyBody() : invalidApiKeyBody(key), headers);
      return;
    }
    const ownerHeaders = { ...headers, 'openai-organization': account.organization };
    const parsed = parseChatRequest(raw);
    if (!parsed.ok) {
      stats.record(key, (c) => (c.badRequests += 1));
      send(response, 400, parsed.body, ownerHeaders);
      return;
    }
    if (account.outOfCredit) {
      stats.record(key, (c) => (c.rateLimited.insufficient_quota += 1));
      send(response, 429, insufficientQuotaBody(), ownerHeaders);
      return;
    }
    await answer(response, openAiDialect, key, account, parsed.request, ownerHeaders);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      const body: OpenAiErrorBody = serverErrorBody(500, newRequestId());
      send(response, 500, body, {});
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new FakeProviderConfigError('fake provider did not get a TCP port');
  const port = address.port;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    stats: () => {
      batchStore.advance(now());
      return stats.snapshot();
    },
    setKeyOutOfCredit(key, outOfCredit) {
      const account = accounts.get(key);
      if (!account) throw new FakeProviderConfigError(`unknown API key`);
      account.outOfCredit = outOfCredit;
    },
    refusedRequestRule: refusedRequestRuleOf,
    resetDay: () => ledger.resetDay(now()),
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        sleeper.wakeAll();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return stopping;
    },
  };
}
