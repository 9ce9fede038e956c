/**
 * The Gemini API wire format of the fake provider: `POST /v1beta/models/{model}:generateContent`
 * with the key in `x-goog-api-key` (or `?key=`), answered with Google's error envelope
 * `{ error: { code, message, status, details } }`. It shares the budgets, faults and counters of the
 * OpenAI route; only the wording differs. Every shape below copies a real Gemini response:
 *
 * - per-minute 429 `RESOURCE_EXHAUSTED` with `google.rpc.QuotaFailure` (quotaId
 *   `GenerateRequestsPerMinutePerProjectPerModel-FreeTier`, or
 *   `GenerateContentInputTokensPerModelPerMinute-FreeTier` for tokens) and `google.rpc.RetryInfo`
 *   `retryDelay: "13s"`; message "… * Quota exceeded for metric: …, limit: 10, model: … Please retry
 *   in 13.2s." (github.com/ogkalu2/comic-translate/issues/403, github.com/llmsresearch/paperbanana/issues/10);
 * - per-day 429 with quotaId `GenerateRequestsPerDayPerProjectPerModel-FreeTier`. Like the real API,
 *   its retry hint is only seconds (never more than a minute) even though the budget returns when
 *   the day ends: the quotaId is what tells a daily quota apart (github.com/voideditor/void/issues/557);
 * - a key without credit answers the free-tier plan gate: 429 with `limit: 0` / `quotaValue: "0"`
 *   (github.com/continuedev/continue/issues/9570);
 * - 503 `UNAVAILABLE` "The model is overloaded. Please try again later."
 *   (github.com/google-gemini/cookbook/issues/425) and 500 `INTERNAL`;
 * - a request larger than the whole per-minute token budget is refused with Gemini's 400
 *   `INVALID_ARGUMENT` "The input token count (N) exceeds the maximum number of tokens allowed (L)."
 *   (the real wording for a prompt over the context window), so it is rejected, not waited on;
 * - 400 `API_KEY_INVALID` for an unknown key and 403 `PERMISSION_DENIED` for a missing one;
 * - a refused request spends nothing afterwards (`GEMINI_REFUSED_REQUEST_RULE` in `dialect.ts`): Google documents nothing either way.
 */
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { getExtractionSchema, knownSchemaVersions } from '../../../lib/contract/schemas/registry.js';
import {
  type ChatRequest,
  DOCUMENT_END,
  DOCUMENT_START,
  extractionContextOf,
  GEMINI_REFUSED_REQUEST_RULE,
  type Refusal,
  type ReplyContext,
  type SuccessInput,
  type WireDialect,
  type WireReply,
} from './dialect.js';

/** `POST /v1beta/models/{model}:generateContent` (also `v1`); group 1 is the model. */
export const GEMINI_GENERATE_PATH = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):generateContent$/;

/** Google's error envelope. */
export interface GeminiErrorBody {
  error: { code: number; message: string; status: string; details?: Array<Record<string, unknown>> };
}

/** Builds Google's error envelope. */
function geminiErrorBody(code: number, status: string, message: string, details?: Array<Record<string, unknown>>): GeminiErrorBody {
  return { error: { code, message, status, ...(details ? { details } : {}) } };
}

const RATE_LIMITS_DOC = 'https://ai.google.dev/gemini-api/docs/rate-limits';
const QUOTA_PREAMBLE =
  `You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: ${RATE_LIMITS_DOC}. ` +
  'To monitor your current usage, head to: https://ai.dev/rate-limit. ';

const QUOTAS = {
  rpm: { metric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', id: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier' },
  tpm: {
    metric: 'generativelanguage.googleapis.com/generate_content_free_tier_input_token_count',
    id: 'GenerateContentInputTokensPerModelPerMinute-FreeTier',
  },
  rpd: { metric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', id: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier' },
} as const;

/** The longest retry hint Gemini states (its daily quotas still say "retry in 58s"). */
const MAX_RETRY_HINT_MS = 60_000;

/** "13.25s": Gemini's `Please retry in …` text (millisecond precision, never understated). */
function retryText(ms: number): string {
  return `${(Math.ceil(ms) / 1000).toFixed(3).replace(/\.?0+$/, '')}s`;
}

/** 429 RESOURCE_EXHAUSTED for one exhausted quota, with QuotaFailure, Help and RetryInfo details. */
function geminiQuotaBody(input: { kind: 'rpm' | 'tpm' | 'rpd'; model: string; limit: number; waitMs: number }): GeminiErrorBody {
  const quota = QUOTAS[input.kind];
  const hintMs = Math.max(1, Math.min(Math.ceil(input.waitMs), MAX_RETRY_HINT_MS));
  const message = `${QUOTA_PREAMBLE}\n* Quota exceeded for metric: ${quota.metric}, limit: ${input.limit}, model: ${input.model}\nPlease retry in ${retryText(hintMs)}.`;
  return geminiErrorBody(429, 'RESOURCE_EXHAUSTED', message, [
    { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: RATE_LIMITS_DOC }] },
    {
      '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
      violations: [
        { quotaMetric: quota.metric, quotaId: quota.id, quotaDimensions: { location: 'global', model: input.model }, quotaValue: String(input.limit) },
      ],
    },
    { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${Math.ceil(hintMs / 1000)}s` },
  ]);
}

/** The free-tier plan gate (a key with no usable quota): `limit: 0` on requests and input tokens. */
export function geminiPlanGateBody(model: string): GeminiErrorBody {
  const message =
    `${QUOTA_PREAMBLE}\n* Quota exceeded for metric: ${QUOTAS.rpd.metric}, limit: 0, model: ${model}` +
    `\n* Quota exceeded for metric: ${QUOTAS.tpm.metric}, limit: 0, model: ${model}\nPlease retry in 45.578569677s.`;
  return geminiErrorBody(429, 'RESOURCE_EXHAUSTED', message, [
    {
      '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
      violations: [
        { quotaMetric: QUOTAS.rpd.metric, quotaId: QUOTAS.rpd.id, quotaDimensions: { location: 'global', model }, quotaValue: '0' },
        { quotaMetric: QUOTAS.tpm.metric, quotaId: QUOTAS.tpm.id, quotaDimensions: { location: 'global', model }, quotaValue: '0' },
      ],
    },
    { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '45s' },
  ]);
}

/** 400 for one request larger than the whole token budget. */
function geminiTooLargeBody(requested: number, limit: number): GeminiErrorBody {
  return geminiErrorBody(400, 'INVALID_ARGUMENT', `The input token count (${requested}) exceeds the maximum number of tokens allowed (${limit}).`);
}

/** 400 for an unknown API key. */
export function geminiInvalidKeyBody(): GeminiErrorBody {
  return geminiErrorBody(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'API_KEY_INVALID',
      domain: 'googleapis.com',
      metadata: { service: 'generativelanguage.googleapis.com' },
    },
  ]);
}

/** 403 when no key was sent. */
export function geminiMissingKeyBody(): GeminiErrorBody {
  return geminiErrorBody(
    403,
    'PERMISSION_DENIED',
    "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
  );
}

/** A successful `generateContent` answer, field for field as the Gemini API sends it. */
interface GeminiResponseBody {
  candidates: Array<{ content: { parts: Array<{ text: string }>; role: 'model' }; finishReason: 'STOP' | 'MAX_TOKENS'; index: 0 }>;
  usageMetadata: {
    promptTokenCount: number;
    candidatesTokenCount: number;
    totalTokenCount: number;
    promptTokensDetails: Array<{ modality: 'TEXT'; tokenCount: number }>;
  };
  modelVersion: string;
  responseId: string;
}

function geminiResponseBody(input: SuccessInput): GeminiResponseBody {
  return {
    candidates: [
      { content: { parts: [{ text: input.content }], role: 'model' }, finishReason: input.finishReason === 'length' ? 'MAX_TOKENS' : 'STOP', index: 0 },
    ],
    usageMetadata: {
      promptTokenCount: input.promptTokens,
      candidatesTokenCount: input.completionTokens,
      totalTokenCount: input.promptTokens + input.completionTokens,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: input.promptTokens }],
    },
    modelVersion: input.model,
    responseId: randomBytes(16).toString('base64url').slice(0, 22),
  };
}

/** The Gemini dialect for the shared answer path of the fake provider. */
export const geminiDialect: WireDialect = {
  name: 'gemini',
  refusedRequestRule: GEMINI_REFUSED_REQUEST_RULE,
  refuse(refusal: Refusal, context: ReplyContext): WireReply {
    if (refusal.kind === 'too_large' || refusal.waitMs === null) {
      return { status: 400, body: geminiTooLargeBody(refusal.requested, refusal.limit) };
    }
    return { status: 429, body: geminiQuotaBody({ kind: refusal.kind, model: context.model, limit: refusal.limit, waitMs: refusal.waitMs }) };
  },
  serverError(variant: number): WireReply {
    return variant < 0.5
      ? {
          status: 500,
          body: geminiErrorBody(
            500,
            'INTERNAL',
            'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
          ),
        }
      : { status: 503, body: geminiErrorBody(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.') };
  },
  internalError(): WireReply {
    return {
      status: 500,
      body: geminiErrorBody(
        500,
        'INTERNAL',
        'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
      ),
    };
  },
  success(input: SuccessInput): WireReply {
    return { status: 200, body: geminiResponseBody(input) };
  },
  processingHeaders(latencyMs: number): Record<string, string> {
    return { 'server-timing': `gfet4t7; dur=${latencyMs}` };
  },
};

// ---------------------------------------------------------------------------------------------
// Request parsing.

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A parsed `generateContent` request (in the shape the shared answer path uses), or its 400. */
export type ParsedGeminiRequest = { ok: true; request: ChatRequest } | { ok: false; body: GeminiErrorBody };

function invalid(message: string): ParsedGeminiRequest {
  return { ok: false, body: geminiErrorBody(400, 'INVALID_ARGUMENT', message) };
}

function partsText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!isObject(content) || !Array.isArray(content.parts)) return null;
  return content.parts.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

function findDocument(texts: string[]): string | null {
  for (let i = texts.length - 1; i >= 0; i -= 1) {
    const text = texts[i] ?? '';
    const start = text.indexOf(DOCUMENT_START);
    if (start < 0) continue;
    const end = text.indexOf(DOCUMENT_END, start + DOCUMENT_START.length);
    if (end >= 0) return text.slice(start + DOCUMENT_START.length, end);
  }
  return null;
}

/**
 * The schema "name" of a Gemini request, which carries none: the schema's `title`, else the
 * `jsonSchemaName` of the registered schema it equals (what an OpenAI request of the same job names),
 * else `response`.
 */
function schemaNameOf(schema: Json): string {
  if (typeof schema.title === 'string' && schema.title !== '') return schema.title;
  const registered = knownSchemaVersions()
    .map(getExtractionSchema)
    .find((entry) => isDeepStrictEqual(entry.jsonSchema, schema));
  return registered?.jsonSchemaName ?? 'response';
}

/**
 * Parses a `generateContent` body: `contents[].parts[].text`, `systemInstruction`,
 * `generationConfig.{responseMimeType, responseJsonSchema | responseSchema, maxOutputTokens}`.
 * The schema "name" the extractor receives comes from {@link schemaNameOf}.
 */
export function parseGeminiRequest(raw: string, model: string): ParsedGeminiRequest {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return invalid('Invalid JSON payload received. Unexpected token.');
  }
  if (!isObject(body)) return invalid('Invalid JSON payload received. Expected an object.');
  if (!Array.isArray(body.contents) || body.contents.length === 0) return invalid('* GenerateContentRequest.contents: contents is not specified');
  const userTexts: string[] = [];
  for (const [index, content] of body.contents.entries()) {
    const text = partsText(content);
    if (text === null) return invalid(`* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.`);
    userTexts.push(text);
  }
  const systemText = body.systemInstruction === undefined ? null : partsText(body.systemInstruction);
  const config = isObject(body.generationConfig) ? body.generationConfig : {};
  if (config.responseMimeType !== 'application/json') {
    return invalid("This fake provider only answers generationConfig.responseMimeType 'application/json'.");
  }
  const schema = config.responseJsonSchema ?? config.responseSchema;
  if (!isObject(schema)) return invalid('* GenerateContentRequest.generation_config.response_json_schema: a JSON schema is required by this fake provider.');
  const cap = config.maxOutputTokens;
  if (cap !== undefined && !(typeof cap === 'number' && Number.isInteger(cap) && cap >= 1)) {
    return invalid('* GenerateContentRequest.generation_config.max_output_tokens: must be a positive integer.');
  }
  const documentText = findDocument(userTexts);
  if (documentText === null) {
    return invalid(`No document found: a user part must hold the text between "<document>\\n" and "\\n</document>".`);
  }
  return {
    ok: true,
    request: {
      model,
      messageTexts: systemText === null ? userTexts : [systemText, ...userTexts],
      schemaName: schemaNameOf(schema),
      schema,
      maxCompletionTokens: typeof cap === 'number' ? cap : null,
      documentText,
      context: extractionContextOf(systemText ?? undefined, userTexts),
    },
  };
}
