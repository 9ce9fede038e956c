/**
 * Model adapter for the Anthropic Messages API through the official `@anthropic-ai/sdk`, with the
 * SDK's own retries switched off (`maxRetries: 0`). Structured output comes through tool use: one
 * tool whose `input_schema` is the JSON schema, forced with `tool_choice: { type: 'tool', name }`;
 * the `tool_use` block's input is the object. Errors (429 rate limits, 529 overload, billing 400/402…)
 * are mapped through the provider classifier with provider `anthropic`.
 */
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { classifyProviderError, isRequestTooLarge } from './classify/classify.js';
import { ProviderError, ProviderTransportError, type ExtractionRequest, type ExtractionResponse, type ModelAdapter } from './model.js';
import { statedLimitsOf } from './stated-limits.js';

const PROVIDER = 'anthropic' as const;

/** Output cap when the request sets none (the Messages API requires `max_tokens`). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** Settings of the Anthropic adapter. */
export interface AnthropicAdapterOptions {
  model: string;
  /** Base URL override (tests, a gateway). Default `https://api.anthropic.com`. */
  baseUrl?: string;
  timeoutMs: number;
  /** `max_tokens` when the request sets no `maxOutputTokens`. Default {@link ANTHROPIC_DEFAULT_MAX_TOKENS}. */
  defaultMaxOutputTokens?: number;
  now?: () => Date;
}

/** Anthropic tool names must match `^[a-zA-Z0-9_-]{1,64}$`. */
function anthropicToolName(schemaName: string): string {
  const cleaned = schemaName.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return cleaned === '' ? 'extract' : cleaned;
}

/** Creates the adapter. One SDK client is cached per API key. */
export function createAnthropicAdapter(options: AnthropicAdapterOptions): ModelAdapter {
  const clients = new Map<string, Anthropic>();
  const clientFor = (apiKey: string): Anthropic => {
    let client = clients.get(apiKey);
    if (!client) {
      client = new Anthropic({ apiKey, baseURL: options.baseUrl, maxRetries: 0, timeout: options.timeoutMs });
      clients.set(apiKey, client);
    }
    return client;
  };

  return {
    provider: PROVIDER,
    async extract(request: ExtractionRequest): Promise<ExtractionResponse> {
      const toolName = anthropicToolName(request.jsonSchemaName);
      const system = request.messages
        .filter((m) => m.role === 'system')
        .map((m) => m.content)
        .join('\n\n');
      const messages = request.messages
        .filter((m) => m.role !== 'system')
        .map((m) => ({ role: m.role === 'assistant' ? ('assistant' as const) : ('user' as const), content: m.content }));
      try {
        const { data: message, response } = await clientFor(request.apiKey)
          .messages.create(
            {
              model: options.model,
              max_tokens: request.maxOutputTokens ?? options.defaultMaxOutputTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
              ...(system ? { system } : {}),
              messages,
              tools: [
                {
                  name: toolName,
                  description: `Record the extracted ${request.jsonSchemaName} object. The input must follow the JSON schema exactly.`,
                  input_schema: request.jsonSchema as Anthropic.Messages.Tool.InputSchema,
                },
              ],
              tool_choice: { type: 'tool', name: toolName },
            },
            { signal: request.signal },
          )
          .withResponse();
        const toolUse = message.content.find((b) => b.type === 'tool_use' && b.name === toolName) ?? message.content.find((b) => b.type === 'tool_use');
        const content =
          toolUse?.type === 'tool_use'
            ? (JSON.stringify(toolUse.input ?? null) ?? 'null')
            : message.content
                .map((b) => (b.type === 'text' ? b.text : ''))
                .join('')
                .trim();
        const usage = message.usage;
        const statedLimits = statedLimitsOf(PROVIDER, response.headers);
        return {
          content,
          model: message.model,
          usage: {
            // Total prompt tokens, like OpenAI's prompt_tokens: uncached + cache writes + cache reads.
            inputTokens: (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0),
            outputTokens: usage.output_tokens ?? 0,
          },
          ...(statedLimits ? { statedLimits } : {}),
        };
      } catch (error) {
        throw mapAnthropicError(error, options.now?.() ?? new Date());
      }
    },
  };
}

/** Maps an `@anthropic-ai/sdk` error to {@link ProviderError} or {@link ProviderTransportError}. */
function mapAnthropicError(error: unknown, now: Date): Error {
  if (error instanceof APIConnectionTimeoutError || error instanceof APIUserAbortError) {
    return new ProviderTransportError(`${PROVIDER}: request timed out`, PROVIDER, true, { cause: error });
  }
  if (error instanceof APIConnectionError) {
    return new ProviderTransportError(`${PROVIDER}: connection failed`, PROVIDER, false, { cause: error });
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    // `error.error` is the whole JSON body: { type: 'error', error: { type, message }, request_id }.
    const body: unknown = error.error ?? error.message;
    const headers: Record<string, string> = {};
    (error.headers as { forEach(cb: (value: string, key: string) => void): void } | undefined)?.forEach((value, key) => {
      headers[key.toLowerCase()] = value;
    });
    const classification = classifyProviderError({ provider: PROVIDER, status: error.status, headers, body, now });
    return new ProviderError(`${PROVIDER}: HTTP ${error.status} (${classification.kind})`, PROVIDER, error.status, classification, {
      cause: error,
      requestTooLarge: isRequestTooLarge({ provider: PROVIDER, status: error.status, body }),
    });
  }
  return new ProviderTransportError(`${PROVIDER}: unexpected error`, PROVIDER, false, { cause: error });
}
