/**
 * The one narrow interface every model adapter implements: a request in; the raw structured output
 * and token usage out; or a typed provider error carrying the classifier's verdict.
 */
import type { ProviderErrorClassification } from '../policy/classification.js';
import { RatelaneError } from '../platform/errors.js';
import type { StatedLimits } from './stated-limits.js';

/** A chat message as the prompts build them. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** One structured-extraction call. */
export interface ExtractionRequest {
  messages: ChatMessage[];
  /** Name and JSON schema of the object the model must return. */
  jsonSchemaName: string;
  jsonSchema: Record<string, unknown>;
  /** The API key to use (chosen by admission); adapters never read keys themselves. */
  apiKey: string;
  maxOutputTokens?: number;
  signal?: AbortSignal;
}

/** Token usage as the provider reported it. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/** A successful call: the raw output text (validated later, never trusted) and usage. */
export interface ExtractionResponse {
  content: string;
  usage: TokenUsage;
  model: string;
  /** The quota owner's per-minute limits the answer's headers stated (`stated-limits.ts`); absent: none stated. */
  statedLimits?: StatedLimits | undefined;
}

/** A model adapter; implementations must not retry: ratelane owns retries. */
export interface ModelAdapter {
  readonly provider: string;
  /**
   * The host its calls go to, checked against the lane's approved endpoints before every job
   * (`config/endpoints.ts`); absent: the lane's configured model host.
   */
  readonly host?: string;
  extract(request: ExtractionRequest): Promise<ExtractionResponse>;
}

/** The provider answered with an error; `classification` says what it means for scheduling. */
export class ProviderError extends RatelaneError {
  override name = 'ProviderError';
  readonly kind = 'provider' as const;
  /** Whether calling again later may succeed: not for a request larger than the whole budget. */
  readonly retryable: boolean;
  constructor(
    message: string,
    readonly provider: string,
    readonly status: number,
    readonly classification: ProviderErrorClassification,
    options?: { cause?: unknown; requestTooLarge?: boolean },
  ) {
    super(message, options);
    this.requestTooLarge = options?.requestTooLarge ?? false;
    this.retryable = !this.requestTooLarge;
  }
  /** One request larger than the whole per-window budget: waiting never helps. */
  readonly requestTooLarge: boolean;
}

/** No usable answer in time, or the connection failed: a real failure (normal redelivery rules). */
export class ProviderTransportError extends RatelaneError {
  override name = 'ProviderTransportError';
  readonly kind = 'unavailable' as const;
  readonly retryable = true;
  constructor(
    message: string,
    readonly provider: string,
    readonly timedOut: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
