/**
 * A provider's wire dialect: how the fake provider reads a request (the document between its markers,
 * the prompt around it) and words its answers (success, refusals by the budgets, injected server
 * errors) for one API, and what a refused request costs in each API as its provider documents it. The
 * budgets, faults, latency and counters are the same for every dialect; only the bodies, status codes
 * and headers differ (`openai.ts`, `gemini.ts`).
 */
import type { Admission, RateLimitSnapshot } from '../limits.js';
import type { FakeDialectName, FakeExtractionContext, RefusedRequestRule } from '../types.js';

/** The document text sits in a user message between these exact markers. */
export const DOCUMENT_START = '<document>\n';
/** Closing marker of the document text. */
export const DOCUMENT_END = '\n</document>';

/** A repair call holds this line (the wording of the registry's repair prompt). */
const REPAIR_MARKER = 'Your previous answer was:';

/** The context the fake model sees: the system message and whether any message asks for a repair. */
export function extractionContextOf(systemMessage: string | undefined, messageTexts: string[]): FakeExtractionContext {
  return { systemMessage, repair: messageTexts.some((text) => text.includes(REPAIR_MARKER)) };
}

/** The parts of a Chat Completions request the fake provider uses. */
export interface ChatRequest {
  model: string;
  /** The text of every message, in order. */
  messageTexts: string[];
  /** `response_format.json_schema.name`. */
  schemaName: string;
  /** `response_format.json_schema.schema`. */
  schema: unknown;
  /** `max_completion_tokens` (or the older `max_tokens`), `null` when not capped. */
  maxCompletionTokens: number | null;
  /** The document text found between the markers. */
  documentText: string;
  /** The prompt around the document, as the fake model sees it. */
  context: FakeExtractionContext;
}

/** OpenAI-like token estimate: one token per four characters, rounded up. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}

/** Prompt tokens of a request: all message text / 4, rounded up. */
export function promptTokensOf(request: ChatRequest): number {
  return estimateTokens(request.messageTexts.reduce((total, text) => total + text.length, 0));
}

/** A request the budgets refused. */
export type Refusal = Extract<Admission, { admitted: false }>;

/** One HTTP answer: status, JSON body and extra headers. */
export interface WireReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** What every answer may use: the model asked for, the owner's organization id and budgets now. */
export interface ReplyContext {
  model: string;
  organization: string;
  /** The owner's per-minute budgets now (for `x-ratelimit-*`-style headers). */
  limits: RateLimitSnapshot;
}

/** A successful extraction. */
export interface SuccessInput extends ReplyContext {
  content: string;
  finishReason: 'stop' | 'length';
  promptTokens: number;
  completionTokens: number;
  createdAt: number;
}

/** How one provider API answers. */
export interface WireDialect {
  /** Which API this is. */
  readonly name: FakeDialectName;
  /** What a request the budgets refused costs its owner afterwards, as this provider documents it. */
  readonly refusedRequestRule: RefusedRequestRule;
  /** The answer to a request the budgets refused (RPM/TPM/RPD, or too large for any window). */
  refuse(refusal: Refusal, context: ReplyContext): WireReply;
  /** An injected server fault; `variant` < 0.5 picks the 500 flavour, else the 503 (overload) one. */
  serverError(variant: number, requestId: string, context: ReplyContext): WireReply;
  /** 500 when the fake's extractor itself throws. */
  internalError(requestId: string): WireReply;
  /** 200 with the extraction. */
  success(input: SuccessInput): WireReply;
  /** Headers added to every answer of an admitted request (e.g. processing time). */
  processingHeaders(latencyMs: number): Record<string, string>;
}

/**
 * A refused request spends 1 request of RPM (no tokens, no RPD). OpenAI's rate-limit guide
 * (developers.openai.com/api/docs/guides/rate-limits, "Retrying with exponential backoff", and the
 * cookbook "How to handle rate limits"): "Note that unsuccessful requests contribute to your
 * per-minute limit, so continuously resending a request won't work." It names no tokens.
 */
export const OPENAI_REFUSED_REQUEST_RULE: RefusedRequestRule = {
  spendsRequest: true,
  spendsTokens: false,
  description:
    'openai: a refused request counts toward RPM, 1 request, no tokens (OpenAI rate-limit guide: "unsuccessful requests contribute to your per-minute limit")',
};

/**
 * A refused request spends nothing: Google's "Rate limits" page (https://ai.google.dev/gemini-api/docs/rate-limits)
 * says RPM, TPM and RPD are each evaluated ("exceeding any of them will trigger a rate limit error")
 * and says nothing about whether a refused request counts, so the fake charges nothing.
 */
export const GEMINI_REFUSED_REQUEST_RULE: RefusedRequestRule = {
  spendsRequest: false,
  spendsTokens: false,
  description: `gemini: a refused request spends nothing (Gemini API "Rate limits" page, https://ai.google.dev/gemini-api/docs/rate-limits, documents nothing about refused requests)`,
};

/**
 * What a refused request costs in the fake provider's `dialect`: whether it spends one request of
 * RPM (and tokens of TPM), and a one-line description with its source, for reports
 * ("refused requests: <description>"). A lane of kind `openai-compatible` speaks `openai`, `gemini` speaks `gemini`.
 */
export function refusedRequestRuleOf(dialect: FakeDialectName): RefusedRequestRule {
  return dialect === 'gemini' ? GEMINI_REFUSED_REQUEST_RULE : OPENAI_REFUSED_REQUEST_RULE;
}
