/**
 * Model adapter for the Google Gemini API (`generativelanguage.googleapis.com`) through the official
 * `@google/genai` SDK (or Vertex AI with `vertex` set: `GoogleGenAI({ vertexai: true, project, location })`,
 * Google credentials, errors classified as `vertex`): `models.generateContent` with `responseMimeType: 'application/json'` and the
 * JSON schema as `responseJsonSchema`.
 *
 * Retries: `@google/genai` retries only when `httpOptions.retryOptions` is set (then through
 * `p-retry`, which also replaces the API error with a bare "Retryable HTTP Error" and loses the
 * body). The adapter never sets it, so each call is exactly one HTTP request and a failed one throws
 * `ApiError` whose `message` is the JSON error body (`{ error: { code, message, status, details } }`,
 * with `google.rpc.QuotaFailure` / `RetryInfo`); that body goes through the classifier with provider
 * `gemini`. The SDK does not expose response headers on errors (Gemini states its waits in the body).
 *
 * Timeout: the adapter's own deadline, passed as `config.abortSignal`, so a timeout is told apart
 * from other failures.
 */
import { ApiError, GoogleGenAI, type Content } from '@google/genai';
import { classifyProviderError, isRequestTooLarge } from './classify/classify.js';
import { ProviderError, ProviderTransportError, type ExtractionRequest, type ExtractionResponse, type ModelAdapter } from './model.js';
import { startDeadline } from './deadline.js';

/** Gemini API or Vertex AI: the classifier dialect of the adapter's errors. */
type GoogleProvider = 'gemini' | 'vertex';

/** Settings of the Gemini adapter. */
export interface GeminiAdapterOptions {
  model: string;
  /**
   * Vertex AI instead of the Gemini API: `GoogleGenAI({ vertexai: true, project, location })`,
   * authenticated with Google credentials (Application Default Credentials), not an API key: the
   * request's `apiKey` is then ignored. Errors classify as provider `vertex`.
   */
  vertex?: { project: string; location: string };
  /** Base URL override without the API version (tests, the local fake provider). Default Google's. */
  baseUrl?: string;
  /** API version path segment. Default the SDK's (`v1beta`). */
  apiVersion?: string;
  timeoutMs: number;
  now?: () => Date;
}

/** Creates the adapter. One SDK client is cached per API key. */
export function createGeminiAdapter(options: GeminiAdapterOptions): ModelAdapter {
  const provider: GoogleProvider = options.vertex ? 'vertex' : 'gemini';
  const clients = new Map<string, GoogleGenAI>();
  const clientFor = (apiKey: string): GoogleGenAI => {
    // Vertex: one client whatever the key (Google credentials authenticate, not the key).
    const cacheKey = options.vertex ? '' : apiKey;
    let client = clients.get(cacheKey);
    if (!client) {
      // No `retryOptions`: the SDK then makes exactly one attempt.
      const httpOptions = {
        ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
        ...(options.apiVersion ? { apiVersion: options.apiVersion } : {}),
      };
      client = options.vertex
        ? new GoogleGenAI({ vertexai: true, project: options.vertex.project, location: options.vertex.location, httpOptions })
        : new GoogleGenAI({ apiKey, httpOptions });
      clients.set(cacheKey, client);
    }
    return client;
  };

  return {
    provider,
    async extract(request: ExtractionRequest): Promise<ExtractionResponse> {
      const systemText = request.messages
        .filter((m) => m.role === 'system')
        .map((m) => m.content)
        .join('\n\n');
      const contents: Content[] = request.messages
        .filter((m) => m.role !== 'system')
        .map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] }));
      const deadline = startDeadline(options.timeoutMs, request.signal);
      try {
        const response = await clientFor(request.apiKey).models.generateContent({
          model: options.model,
          contents,
          config: {
            ...(systemText ? { systemInstruction: systemText } : {}),
            responseMimeType: 'application/json',
            responseJsonSchema: request.jsonSchema,
            ...(request.maxOutputTokens ? { maxOutputTokens: request.maxOutputTokens } : {}),
            abortSignal: deadline.signal,
          },
        });
        const usage = response.usageMetadata;
        return {
          content: response.text ?? '',
          model: response.modelVersion ?? options.model,
          usage: {
            inputTokens: usage?.promptTokenCount ?? 0,
            // Thinking tokens are billed and counted as output.
            outputTokens: (usage?.candidatesTokenCount ?? 0) + (usage?.thoughtsTokenCount ?? 0),
          },
        };
      } catch (error) {
        throw mapGeminiError(error, options.now?.() ?? new Date(), deadline.expired() || (request.signal?.aborted ?? false), provider);
      } finally {
        deadline.dispose();
      }
    },
  };
}

/** `ApiError.message` is `JSON.stringify(body)`; a streamed error is `got status: X. {json}`. */
function bodyOf(message: string): unknown {
  const start = message.indexOf('{');
  if (start < 0) return message;
  try {
    return JSON.parse(message.slice(start));
  } catch {
    return message;
  }
}

/** "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576)." */
function exceedsContext(body: unknown): boolean {
  const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof message === 'string' && /input token count.*exceeds the maximum number of tokens allowed/i.test(message);
}

/** Maps an `@google/genai` error to {@link ProviderError} or {@link ProviderTransportError}. */
function mapGeminiError(error: unknown, now: Date, aborted = false, provider: GoogleProvider = 'gemini'): Error {
  if (error instanceof ApiError) {
    const status = error.status;
    const body = bodyOf(error.message);
    const classification = classifyProviderError({ provider: provider, status, headers: {}, body, now });
    return new ProviderError(`${provider}: HTTP ${status} (${classification.kind})`, provider, status, classification, {
      cause: error,
      requestTooLarge: isRequestTooLarge({ provider: provider, status, body }) || exceedsContext(body),
    });
  }
  const name = (error as { name?: unknown } | null)?.name;
  if (aborted || name === 'AbortError' || name === 'TimeoutError') {
    return new ProviderTransportError(`${provider}: request timed out`, provider, true, { cause: error });
  }
  return new ProviderTransportError(`${provider}: connection failed`, provider, false, { cause: error });
}
