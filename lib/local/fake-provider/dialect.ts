/**
 * A provider's wire dialect: how the fake provider words its answers (success, refusals by the
 * budgets, injected server errors) for one API. The budgets, faults, latency and counters are the
 * same for every dialect; only the bodies, status codes and headers differ.
 */
import type { Admission, RateLimitSnapshot } from './limits.js';

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
