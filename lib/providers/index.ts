/**
 * Model adapters by provider kind, chosen per lane in the lane config.
 */
import { modelBaseUrl, modelEndpointHost } from '../config/endpoints.js';
import { providerDialect, type LaneConfig } from '../config/lanes.js';
import type { ModelAdapter } from './model.js';
import { createAnthropicAdapter } from './anthropic.js';
import { createBedrockAdapter } from './bedrock.js';
import { createGeminiAdapter } from './gemini.js';
import { createOpenAiCompatibleAdapter } from './openai-compatible.js';
import { RatelaneError } from '../platform/errors.js';

/** Raised for a provider kind that has no adapter yet. */
class UnsupportedProviderError extends RatelaneError {
  override name = 'UnsupportedProviderError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/**
 * Builds the lane's model adapter (SDK retries off; ratelane owns retries), naming the host its calls go to. Bedrock's endpoint is
 * the lane's region (`baseUrl`, when set, overrides the endpoint: tests and the local stack); the
 * other providers use `baseUrl` as their API base URL.
 *
 * - openai-compatible: errors classified in the lane's `dialect` (default `openai`); with `azure`
 *   the SDK's `AzureOpenAI` client (endpoint, deployment, api-version).
 * - bedrock: `auth` `iam` (default: the credential chain, key secrets unused) or `api-key`.
 * - gemini: with `vertex`, Vertex AI (`vertexai: true, project, location`, Google credentials),
 *   errors classified as `vertex`.
 */
export function createModelAdapter(lane: LaneConfig): ModelAdapter {
  const adapter = adapterFor(lane);
  const host = modelEndpointHost(lane);
  return { provider: adapter.provider, host, extract: (request) => adapter.extract(request) };
}

function adapterFor(lane: LaneConfig): ModelAdapter {
  const { provider } = lane;
  // Always explicit: an SDK given no base URL takes one from the environment (see modelBaseUrl).
  const baseUrl = modelBaseUrl(lane);
  switch (provider.kind) {
    case 'openai-compatible':
      return createOpenAiCompatibleAdapter({
        provider: providerDialect(provider),
        model: provider.model,
        ...(provider.azure ? { azure: provider.azure } : { baseUrl }),
        timeoutMs: provider.timeoutMs,
      });
    case 'bedrock':
      return createBedrockAdapter({
        model: provider.model,
        region: lane.region,
        endpoint: baseUrl,
        auth: provider.auth ?? 'iam',
        timeoutMs: provider.timeoutMs,
      });
    case 'anthropic':
      return createAnthropicAdapter({ model: provider.model, baseUrl, timeoutMs: provider.timeoutMs });
    case 'gemini':
      return createGeminiAdapter({
        model: provider.model,
        ...(provider.vertex ? { vertex: provider.vertex } : { baseUrl }),
        timeoutMs: provider.timeoutMs,
      });
    default:
      throw new UnsupportedProviderError(`no adapter for provider kind "${provider.kind}" yet`);
  }
}

export type { ModelAdapter } from './model.js';
