/**
 * A provider's wire dialect: how the fake provider words its answers (success, refusals by the
 * budgets, injected server errors) for one API. The budgets, faults, latency and counters are the
 * same for every dialect; only the bodies, status codes and headers differ.
 */
import { geminiDialect } from './gemini.js';
import type { Admission, RateLimitSnapshot } from './limits.js';
import { openAiDialect } from './responses.js';
import type { FakeDialectName, RefusedRequestRule } from './types.js';

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
 * What a refused request costs in the fake provider's `dialect`: whether it spends one request of
 * RPM (and tokens of TPM), and a one-line description with its source, for reports
 * ("refused requests: <description>"). A lane of kind `openai-compatible` speaks `openai`, `gemini` speaks `gemini`.
 */
export function refusedRequestRuleOf(dialect: FakeDialectName): RefusedRequestRule {
  const dialects: Record<FakeDialectName, WireDialect> = { openai: openAiDialect, gemini: geminiDialect };
  return dialects[dialect].refusedRequestRule;
}
