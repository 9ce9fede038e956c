/**
 * What the classifier's parts share, at the bottom of lib/providers/classify: the providers whose
 * error dialects it reads, and the facts it extracts from an error body.
 */

/** The providers whose error dialects the classifier knows. */
export const PROVIDER_NAMES = ['openai', 'azure-openai', 'anthropic', 'gemini', 'vertex', 'bedrock', 'mistral', 'groq', 'openrouter', 'cohere'] as const;

/** One of {@link PROVIDER_NAMES}: the error dialect a response is read in. */
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** What the classifier reads out of a response body. */
export interface ErrorFacts {
  /** Every human-readable message found (error.message, message, metadata.raw, plain text...). */
  texts: string[];
  /** Lower-cased type/code/status/reason/name/__type/error_code/limit_source values. */
  codes: Set<string>;
  /** Google QuotaFailure quotaId and quotaMetric values (and quota_limit names), as sent. */
  quotaIds: string[];
  /** Google quota values (`quotaValue`, `quota_limit_value`). */
  quotaValues: string[];
  /** Google RetryInfo delays found, in ms. */
  retryDelaysMs: number[];
  /** An HTTP status carried inside the body (`error.code: 429`), when there was one. */
  embeddedStatus: number | null;
  /** Headers embedded in the body (OpenRouter `error.metadata.headers`), lower-cased. */
  embeddedHeaders: Record<string, string>;
  /** An error object or error event was found (e.g. inside a 200 stream). */
  hasError: boolean;
}
