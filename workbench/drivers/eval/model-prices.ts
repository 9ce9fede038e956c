/**
 * Model list prices the evaluation's cost figures use (USD per million tokens). The only place to
 * change them. A model without an entry gets no cost figure (null), never a guessed one.
 */

/** Input and output prices of one model, per million tokens, with where they come from. */
interface ModelPrice {
  inputUsdPerMillion: number;
  outputUsdPerMillion: number;
  /** The batch APIs' price (OpenAI's Batch API bills half). */
  batchInputUsdPerMillion: number;
  batchOutputUsdPerMillion: number;
  source: string;
}

/** Prices by model id as the provider names it. */
const MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4o-mini': {
    inputUsdPerMillion: 0.15,
    outputUsdPerMillion: 0.6,
    batchInputUsdPerMillion: 0.075,
    batchOutputUsdPerMillion: 0.3,
    source:
      'openai.com/api/pricing list price as quoted by promptunit.ai/blog/gpt-4o-mini-pricing-guide and ai.cloudprice.net (standard $0.15/$0.60, batch $0.075/$0.30 per 1M; read from stored pages, 2026)',
  },
};

/**
 * What `inputTokens` and `outputTokens` of `model` cost, at the batch price when `batch`.
 * @returns USD, or null when the model has no listed price
 */
export function tokenCostUsd(model: string, inputTokens: number, outputTokens: number, batch = false): number | null {
  const price = Object.hasOwn(MODEL_PRICES, model) ? MODEL_PRICES[model] : undefined;
  if (price === undefined) return null;
  const input = batch ? price.batchInputUsdPerMillion : price.inputUsdPerMillion;
  const output = batch ? price.batchOutputUsdPerMillion : price.outputUsdPerMillion;
  return (inputTokens * input + outputTokens * output) / 1_000_000;
}
