/**
 * Model adapters by provider kind, chosen per lane in the lane config.
 */
import type { LaneConfig } from '../config/lanes.js';
import type { ModelAdapter } from './model.js';
import { createOpenAiCompatibleAdapter } from './openai-compatible.js';

/** Raised for a provider kind that has no adapter yet. */
export class UnsupportedProviderError extends Error {
  override name = 'UnsupportedProviderError';
}

/** Builds the lane's model adapter (SDK retries off; ratelane owns retries). */
export function createModelAdapter(lane: LaneConfig): ModelAdapter {
  const { provider } = lane;
  switch (provider.kind) {
    case 'openai-compatible':
      return createOpenAiCompatibleAdapter({ model: provider.model, baseUrl: provider.baseUrl, timeoutMs: provider.timeoutMs });
    default:
      throw new UnsupportedProviderError(`no adapter for provider kind "${provider.kind}" yet`);
  }
}

export { classifyProviderError, isRequestTooLarge, PROVIDER_NAMES, type ProviderErrorInput, type ProviderName } from './classify.js';
export { ProviderError, ProviderTransportError, type ExtractionRequest, type ExtractionResponse, type ModelAdapter } from './model.js';
