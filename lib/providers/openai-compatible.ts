/**
 * Model adapter for OpenAI-compatible Chat Completions (OpenAI, Azure OpenAI, Groq, Mistral,
 * OpenRouter, a self-hosted server, or the local fake provider) through the official `openai` SDK,
 * with the SDK's own retries switched off. Errors are mapped through the provider classifier.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, AzureOpenAI } from 'openai';
import { classifyProviderError, isRequestTooLarge, type ProviderName } from './classify/classify.js';
import { ProviderError, ProviderTransportError, type ExtractionRequest, type ExtractionResponse, type ModelAdapter } from './model.js';
import { statedLimitsOf } from './stated-limits.js';

/** Settings of an OpenAI-compatible adapter. */
export interface OpenAiCompatibleOptions {
  /** Which provider's error dialect to classify with (default `openai`). */
  provider?: ProviderName;
  model: string;
  baseUrl?: string;
  /**
   * Azure OpenAI: use the SDK's `AzureOpenAI` client against `endpoint` (the resource URL) with the
   * deployment and `api-version`; the key is an Azure API key. Exclusive with `baseUrl`.
   */
  azure?: { endpoint: string; deployment: string; apiVersion: string };
  timeoutMs: number;
  now?: () => Date;
}

function headersToRecord(headers: Headers | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  headers?.forEach((value, key) => {
    out[key.toLowerCase()] = value;
  });
  return out;
}

/**
 * Creates the adapter. One SDK client is cached per API key (clients are cheap but keep sockets).
 */
export function createOpenAiCompatibleAdapter(options: OpenAiCompatibleOptions): ModelAdapter {
  if (options.azure && options.baseUrl) throw new TypeError('openai-compatible adapter: azure.endpoint and baseUrl are mutually exclusive');
  const provider: ProviderName = options.provider ?? (options.azure ? 'azure-openai' : 'openai');
  const clients = new Map<string, OpenAI>();
  const clientFor = (apiKey: string): OpenAI => {
    let client = clients.get(apiKey);
    if (!client) {
      client = options.azure
        ? new AzureOpenAI({
            apiKey,
            endpoint: options.azure.endpoint,
            deployment: options.azure.deployment,
            apiVersion: options.azure.apiVersion,
            maxRetries: 0,
            timeout: options.timeoutMs,
          })
        : new OpenAI({ apiKey, baseURL: options.baseUrl, maxRetries: 0, timeout: options.timeoutMs });
      clients.set(apiKey, client);
    }
    return client;
  };

  return {
    provider,
    async extract(request: ExtractionRequest): Promise<ExtractionResponse> {
      try {
        const { data: completion, response } = await clientFor(request.apiKey)
          .chat.completions.create(
            {
              model: options.model,
              messages: request.messages,
              response_format: {
                type: 'json_schema',
                json_schema: { name: request.jsonSchemaName, schema: request.jsonSchema, strict: true },
              },
              ...(request.maxOutputTokens ? { max_completion_tokens: request.maxOutputTokens } : {}),
            },
            { signal: request.signal },
          )
          .withResponse();
        const content = completion.choices[0]?.message?.content ?? '';
        const statedLimits = statedLimitsOf(provider, response.headers);
        return {
          content,
          model: completion.model,
          usage: {
            inputTokens: completion.usage?.prompt_tokens ?? 0,
            outputTokens: completion.usage?.completion_tokens ?? 0,
          },
          ...(statedLimits ? { statedLimits } : {}),
        };
      } catch (error) {
        throw mapOpenAiError(error, provider, options.now?.() ?? new Date());
      }
    },
  };
}

/** Maps an `openai` SDK error to {@link ProviderError} or {@link ProviderTransportError}. */
function mapOpenAiError(error: unknown, provider: ProviderName, now: Date): Error {
  if (error instanceof APIConnectionTimeoutError || error instanceof APIUserAbortError) {
    return new ProviderTransportError(`${provider}: request timed out`, provider, true, { cause: error });
  }
  if (error instanceof APIConnectionError) {
    return new ProviderTransportError(`${provider}: connection failed`, provider, false, { cause: error });
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const body = error.error === undefined ? undefined : { error: error.error };
    const headers = headersToRecord(error.headers);
    const classification = classifyProviderError({ provider, status: error.status, headers, body, now });
    return new ProviderError(`${provider}: HTTP ${error.status} (${classification.kind})`, provider, error.status, classification, {
      cause: error,
      requestTooLarge: isRequestTooLarge({ provider, status: error.status, body }),
    });
  }
  return new ProviderTransportError(`${provider}: unexpected error`, provider, false, { cause: error });
}
