/**
 * The OpenAI wire format of the fake provider: Chat Completions requests as it reads them
 * ({@link parseChatRequest}), OpenAI-shaped response bodies and headers, OpenAI's duration notation,
 * and the OpenAI Chat Completions dialect built on them ({@link openAiDialect}). Every message below
 * copies the wording of a real OpenAI response; the comment above each cites where that wording was seen.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { RateLimitSnapshot } from '../limits.js';
import { type ChatRequest, DOCUMENT_END, DOCUMENT_START, extractionContextOf, OPENAI_REFUSED_REQUEST_RULE, type WireDialect } from './dialect.js';

/** OpenAI's error envelope. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** Builds OpenAI's error envelope. */
export function errorBody(message: string, type: string, param: string | null = null, code: string | null = null): OpenAiErrorBody {
  return { error: { message, type, param, code } };
}

const RATE_LIMITS_URL = 'https://platform.openai.com/account/rate-limits';

/** Which per-window limit a 429 names, as OpenAI spells it. */
const LIMIT_NAMES = {
  rpm: { name: 'requests per min (RPM)', type: 'requests' },
  tpm: { name: 'tokens per min (TPM)', type: 'tokens' },
  rpd: { name: 'requests per day (RPD)', type: 'requests' },
} as const;

/**
 * 429 for an exhausted window budget. Wording and fields as in
 * "Rate limit reached for gpt-3.5-turbo in organization org-… on requests per min (RPM): Limit 3, Used 3,
 * Requested 1. Please try again in 20s. Visit https://platform.openai.com/account/rate-limits to learn more."
 * (github.com/OpenBMB/ChatDev/issues/26), the TPM variant with `"type": "tokens"`
 * (github.com/FoundationAgents/MetaGPT/issues/523) and the RPD variant
 * (github.com/openai/openai-agents-js/issues/1022). `code` is `rate_limit_exceeded`.
 */
function rateLimitBody(input: {
  kind: 'rpm' | 'tpm' | 'rpd';
  model: string;
  organization: string;
  limit: number;
  used: number;
  requested: number;
  waitMs: number;
}): OpenAiErrorBody {
  const { name, type } = LIMIT_NAMES[input.kind];
  const message =
    `Rate limit reached for ${input.model} in organization ${input.organization} on ${name}: ` +
    `Limit ${input.limit}, Used ${input.used}, Requested ${input.requested}. ` +
    `Please try again in ${formatOpenAiDuration(input.waitMs)}. Visit ${RATE_LIMITS_URL} to learn more.`;
  return errorBody(message, type, null, 'rate_limit_exceeded');
}

/**
 * 429 for one request bigger than the whole TPM budget: waiting never helps. Real body:
 * `{'message': 'Request too large for gpt-4o in organization org-… on tokens per min (TPM): Limit 30000,
 * Requested 36278. The input or output tokens must be reduced in order to run successfully. Visit
 * https://platform.openai.com/account/rate-limits to learn more.', 'type': 'tokens', 'param': None,
 * 'code': 'rate_limit_exceeded'}` (github.com/Aider-AI/aider/issues/1880).
 */
function requestTooLargeBody(input: { model: string; organization: string; limit: number; requested: number }): OpenAiErrorBody {
  const message =
    `Request too large for ${input.model} in organization ${input.organization} on tokens per min (TPM): ` +
    `Limit ${input.limit}, Requested ${input.requested}. The input or output tokens must be reduced in order to run successfully. ` +
    `Visit ${RATE_LIMITS_URL} to learn more.`;
  return errorBody(message, 'tokens', null, 'rate_limit_exceeded');
}

/** 429 for a key without credit (github.com/ChatGPTNextWeb/NextChat/issues/3664). Sent without `retry-after`. */
export function insufficientQuotaBody(): OpenAiErrorBody {
  return errorBody(
    'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
    'insufficient_quota',
    null,
    'insufficient_quota',
  );
}

/** 401 for an unknown key, masked like OpenAI does (github.com/chatanywhere/GPT_API_free/issues/62). */
export function invalidApiKeyBody(key: string): OpenAiErrorBody {
  const masked = key.length > 12 ? `${key.slice(0, 8)}${'*'.repeat(key.length - 12)}${key.slice(-4)}` : '*'.repeat(key.length);
  return errorBody(
    `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com/account/api-keys.`,
    'invalid_request_error',
    null,
    'invalid_api_key',
  );
}

/** 401 when no bearer token was sent. */
export function missingApiKeyBody(): OpenAiErrorBody {
  return errorBody(
    "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
    'invalid_request_error',
  );
}

/**
 * 500 and 503 bodies, `type: server_error`, `code: null`. 500 wording from
 * github.com/openai/openai-cua-sample-app/issues/54; 503 ("That model is currently overloaded…")
 * from github.com/ikechan8370/chatgpt-plugin/issues/125.
 */
export function serverErrorBody(status: 500 | 503, requestId: string): OpenAiErrorBody {
  const message =
    status === 503
      ? `That model is currently overloaded with other requests. You can retry your request, or contact us through our help center at help.openai.com if the error persists. (Please include the request ID ${requestId} in your message.)`
      : `The server had an error processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if you keep seeing this error. (Please include the request ID ${requestId} in your email.)`;
  return errorBody(message, 'server_error');
}

/** 400 for a body that is not JSON. */
export function invalidJsonBody(): OpenAiErrorBody {
  return errorBody(
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
    'invalid_request_error',
  );
}

/** 404 for any route other than `POST /v1/chat/completions`. */
export function invalidUrlBody(method: string, path: string): OpenAiErrorBody {
  return errorBody(`Invalid URL (${method} ${path})`, 'invalid_request_error');
}

/** A successful Chat Completions answer, field for field as OpenAI sends it. */
export interface ChatCompletionBody {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: 0;
    message: { role: 'assistant'; content: string; refusal: null; annotations: [] };
    logprobs: null;
    finish_reason: 'stop' | 'length';
  }>;
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
    completion_tokens_details: { reasoning_tokens: number; audio_tokens: number; accepted_prediction_tokens: number; rejected_prediction_tokens: number };
  };
  service_tier: 'default';
  system_fingerprint: string;
}

/** Builds a successful Chat Completions body. */
export function chatCompletionBody(input: {
  model: string;
  content: string;
  finishReason: 'stop' | 'length';
  promptTokens: number;
  completionTokens: number;
  createdAt: number;
}): ChatCompletionBody {
  return {
    id: `chatcmpl-${randomId(29)}`,
    object: 'chat.completion',
    created: Math.floor(input.createdAt / 1000),
    model: input.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: input.content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: input.finishReason,
      },
    ],
    usage: {
      prompt_tokens: input.promptTokens,
      completion_tokens: input.completionTokens,
      total_tokens: input.promptTokens + input.completionTokens,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_fake0001',
  };
}

/**
 * `x-ratelimit-*` headers (names and duration format as listed in
 * community.openai.com/t/how-to-get-rate-limit-reset-time-for-response-api/1268905). Unlimited
 * budgets send no headers.
 */
function rateLimitHeaders(snapshot: RateLimitSnapshot): Record<string, string> {
  const headers: Record<string, string> = {};
  if (snapshot.requests) {
    headers['x-ratelimit-limit-requests'] = String(snapshot.requests.limit);
    headers['x-ratelimit-remaining-requests'] = String(snapshot.requests.remaining);
    headers['x-ratelimit-reset-requests'] = formatOpenAiDuration(snapshot.requests.resetMs);
  }
  if (snapshot.tokens) {
    headers['x-ratelimit-limit-tokens'] = String(snapshot.tokens.limit);
    headers['x-ratelimit-remaining-tokens'] = String(snapshot.tokens.remaining);
    headers['x-ratelimit-reset-tokens'] = formatOpenAiDuration(snapshot.tokens.resetMs);
  }
  return headers;
}

/** `retry-after` (whole seconds, rounded up) and `retry-after-ms` (the header OpenAI's SDKs read first). */
function retryAfterHeaders(waitMs: number): Record<string, string> {
  const ms = Math.max(1, Math.ceil(waitMs));
  return { 'retry-after': String(Math.ceil(ms / 1000)), 'retry-after-ms': String(ms) };
}

/** A request id like OpenAI's `x-request-id` (`req_` + 32 hex digits). */
export function newRequestId(): string {
  return `req_${randomBytes(16).toString('hex')}`;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function toAlphanumeric(bytes: Uint8Array, length: number): string {
  let text = '';
  for (let i = 0; i < length; i += 1) text += ALPHANUMERIC[(bytes[i % bytes.length] ?? 0) % ALPHANUMERIC.length];
  return text;
}

function randomId(length: number): string {
  return toAlphanumeric(randomBytes(length), length);
}

/** A stable OpenAI-looking organization id for a quota owner (`org-` + 24 letters and digits). */
export function organizationId(owner: string): string {
  return `org-${toAlphanumeric(createHash('sha256').update(owner).digest(), 24)}`;
}

/** The OpenAI Chat Completions dialect (the route `POST /v1/chat/completions`). */
export const openAiDialect: WireDialect = {
  name: 'openai',
  refusedRequestRule: OPENAI_REFUSED_REQUEST_RULE,
  refuse(refusal, context) {
    const limitHeaders = rateLimitHeaders(context.limits);
    if (refusal.kind === 'too_large' || refusal.waitMs === null) {
      const body = requestTooLargeBody({ model: context.model, organization: context.organization, limit: refusal.limit, requested: refusal.requested });
      return { status: 429, body, headers: limitHeaders };
    }
    const body = rateLimitBody({ ...refusal, kind: refusal.kind, waitMs: refusal.waitMs, model: context.model, organization: context.organization });
    return { status: 429, body, headers: { ...limitHeaders, ...retryAfterHeaders(refusal.waitMs) } };
  },
  serverError(variant, requestId, context) {
    const status = variant < 0.5 ? 500 : 503;
    return { status, body: serverErrorBody(status, requestId), headers: rateLimitHeaders(context.limits) };
  },
  internalError(requestId) {
    return { status: 500, body: serverErrorBody(500, requestId) };
  },
  success(input) {
    const { model, content, finishReason, promptTokens, completionTokens, createdAt } = input;
    return {
      status: 200,
      body: chatCompletionBody({ model, content, finishReason, promptTokens, completionTokens, createdAt }),
      headers: rateLimitHeaders(input.limits),
    };
  },
  processingHeaders(latencyMs) {
    return { 'openai-processing-ms': String(latencyMs) };
  },
};

// ---------------------------------------------------------------------------------------------
// OpenAI's duration notation, as seen in `x-ratelimit-reset-*` headers (`12ms`, `6m0s`) and in 429
// messages ("Please try again in 9.816s", "in 1m26.4s"): Go's `time.Duration` text, cut to millisecond precision.

const MS_PER_SECOND = 1000;
const MS_PER_MINUTE = 60 * MS_PER_SECOND;
const MS_PER_HOUR = 60 * MS_PER_MINUTE;

/**
 * Formats a wait in milliseconds the way OpenAI does: `0s`, `20ms`, `1s`, `1.2s`, `6m0s`,
 * `1m30.5s`, `2h0m0s`. Fractions of a millisecond round up (a wait is never understated).
 */
export function formatOpenAiDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total === 0) return '0s';
  if (total < MS_PER_SECOND) return `${total}ms`;
  const hours = Math.floor(total / MS_PER_HOUR);
  const minutes = Math.floor((total % MS_PER_HOUR) / MS_PER_MINUTE);
  const secondsMs = total % MS_PER_MINUTE;
  const seconds = `${Math.floor(secondsMs / MS_PER_SECOND)}${fraction(secondsMs % MS_PER_SECOND)}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}

function fraction(ms: number): string {
  if (ms === 0) return '';
  return `.${String(ms).padStart(3, '0').replace(/0+$/, '')}`;
}

// ---------------------------------------------------------------------------------------------
// Request parsing: model, message text, the JSON schema asked for, the completion cap and the document
// between the markers.

/** A parsed request, or the 400 body that refuses it. */
export type ParsedChatRequest = { ok: true; request: ChatRequest } | { ok: false; body: OpenAiErrorBody };

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(message: string, param: string | null, code: string | null = null): ParsedChatRequest {
  return { ok: false, body: errorBody(message, 'invalid_request_error', param, code) };
}

function messageText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  return content.map((part) => (isObject(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
}

/** Finds the document in the last user message that carries the markers. */
function findDocument(messages: Json[], texts: string[]): string | null {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    if (messages[i]?.role !== 'user') continue;
    const text = texts[i] ?? '';
    const start = text.indexOf(DOCUMENT_START);
    if (start < 0) continue;
    const end = text.indexOf(DOCUMENT_END, start + DOCUMENT_START.length);
    if (end < 0) continue;
    return text.slice(start + DOCUMENT_START.length, end);
  }
  return null;
}

function completionCap(body: Json): number | null | 'invalid' {
  const name = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null ? 'max_completion_tokens' : 'max_tokens';
  const value = body[name];
  if (value === undefined || value === null) return null;
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : 'invalid';
}

/** Parses and validates a raw request body; refusals use OpenAI's 400 wording where one exists. */
export function parseChatRequest(raw: string): ParsedChatRequest {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return { ok: false, body: invalidJsonBody() };
  }
  if (!isObject(body)) return invalid('The request body must be a JSON object.', null);
  if (typeof body.model !== 'string' || body.model === '') return invalid('you must provide a model parameter', null);
  if (body.messages === undefined) return invalid("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (!Array.isArray(body.messages) || body.messages.length === 0 || !body.messages.every(isObject)) {
    return invalid("Invalid 'messages': expected a non-empty array of message objects.", 'messages', 'invalid_value');
  }
  const messages = body.messages as Json[];
  const texts: string[] = [];
  for (const [index, message] of messages.entries()) {
    const text = messageText(message.content);
    if (typeof message.role !== 'string' || text === null) {
      return invalid(`Invalid 'messages[${index}]': expected a role and a string or text-part content.`, `messages[${index}]`, 'invalid_value');
    }
    texts.push(text);
  }
  const format = body.response_format;
  if (!isObject(format) || format.type !== 'json_schema') {
    return invalid("This fake provider only answers response_format of type 'json_schema'.", 'response_format', 'invalid_value');
  }
  const jsonSchema = format.json_schema;
  if (!isObject(jsonSchema))
    return invalid("Missing required parameter: 'response_format.json_schema'.", 'response_format.json_schema', 'missing_required_parameter');
  if (typeof jsonSchema.name !== 'string' || jsonSchema.name === '') {
    return invalid("Missing required parameter: 'response_format.json_schema.name'.", 'response_format.json_schema.name', 'missing_required_parameter');
  }
  const cap = completionCap(body);
  if (cap === 'invalid') return invalid("Invalid 'max_completion_tokens': expected an integer of at least 1.", 'max_completion_tokens', 'invalid_value');
  const documentText = findDocument(messages, texts);
  if (documentText === null) {
    return invalid(`No document found: a user message must hold the text between "<document>\\n" and "\\n</document>".`, 'messages', null);
  }
  const systemIndex = messages.findIndex((message) => message.role === 'system' || message.role === 'developer');
  const context = extractionContextOf(systemIndex < 0 ? undefined : texts[systemIndex], texts);
  return {
    ok: true,
    request: {
      model: body.model,
      messageTexts: texts,
      schemaName: jsonSchema.name,
      schema: jsonSchema.schema,
      maxCompletionTokens: cap,
      documentText,
      context,
    },
  };
}
