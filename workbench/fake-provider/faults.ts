/**
 * Reproducible fault injection: one seeded pseudo-random sequence per server decides, for each
 * admitted request in arrival order, which fault (if any) it gets, which variant of that fault,
 * and how long the simulated model takes. Same seed + same request order = same outcomes.
 */
import { RatelaneError } from '../../lib/platform/errors.js';
import { seededRandom } from '../../lib/platform/random.js';
import type { FakeProviderFaultRates, FaultKind } from './types.js';

/** Raised when fake provider options are inconsistent (e.g. fault rates above 1). */
export class FakeProviderConfigError extends RatelaneError {
  override name = 'FakeProviderConfigError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/** The fate of one admitted request. */
export interface FaultDraw {
  /** The injected fault, or `null` for a faithful answer. */
  fault: FaultKind | null;
  /** A number in [0, 1) that picks the fault's variant (500 or 503, which field to break…). */
  variant: number;
  /** Simulated model time in ms. */
  latencyMs: number;
}

const FAULT_ORDER: readonly FaultKind[] = ['serverError', 'timeout', 'garbageJson', 'schemaInvalid'];

/** Draws each request's fate from one seeded sequence; always three draws per request. */
export class FaultInjector {
  private readonly random: () => number;
  private readonly rates: Array<[FaultKind, number]>;
  private readonly latency: { min: number; max: number };

  constructor(rates: FakeProviderFaultRates, seed: number, latencyMs: number | { min: number; max: number }) {
    this.rates = FAULT_ORDER.map((kind) => [kind, rates[kind] ?? 0]);
    for (const [kind, rate] of this.rates) {
      if (!(rate >= 0 && rate <= 1)) throw new FakeProviderConfigError(`fault rate ${kind} must be within 0..1, got ${rate}`);
    }
    const sum = this.rates.reduce((total, [, rate]) => total + rate, 0);
    if (sum > 1 + 1e-9) throw new FakeProviderConfigError(`fault rates add up to ${sum}; they must not exceed 1`);
    this.latency = typeof latencyMs === 'number' ? { min: latencyMs, max: latencyMs } : latencyMs;
    if (!(this.latency.min >= 0 && this.latency.max >= this.latency.min)) {
      throw new FakeProviderConfigError(`latencyMs must be >= 0 with min <= max`);
    }
    this.random = seededRandom(seed);
  }

  /** The next request's fate. */
  draw(): FaultDraw {
    const pick = this.random();
    const variant = this.random();
    const latencyMs = Math.round(this.latency.min + this.random() * (this.latency.max - this.latency.min));
    let threshold = 0;
    for (const [kind, rate] of this.rates) {
      threshold += rate;
      if (pick < threshold) return { fault: kind, variant, latencyMs };
    }
    return { fault: null, variant, latencyMs };
  }
}

/** Message content that is not valid JSON, as real models sometimes produce. */
export interface GarbledContent {
  content: string;
  finishReason: 'stop' | 'length';
}

/**
 * Spoils valid JSON content. Variant < 0.5: cut in half with `finish_reason: 'length'` (an answer
 * that ran out of output tokens); otherwise the JSON wrapped in chatty prose and a code fence.
 */
export function garbleJson(content: string, variant: number): GarbledContent {
  if (variant < 0.5) {
    const cut = content.slice(0, Math.ceil(content.length / 2));
    return { content: isJson(cut) ? `${cut},"` : cut, finishReason: 'length' };
  }
  return { content: `Sure! Here is the extracted data:\n\`\`\`json\n${content}\n\`\`\``, finishReason: 'stop' };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function allowsNumber(propertySchema: unknown): boolean {
  if (!isObject(propertySchema)) return false;
  const types = Array.isArray(propertySchema.type) ? propertySchema.type : [propertySchema.type];
  return types.includes('number') || types.includes('integer');
}

/**
 * Returns a copy of `result` that is valid JSON but breaks the top level of `schema`: a number
 * turned into a string, or a required field dropped (the variant chooses when both are possible);
 * failing both, an extra field, which a strict schema (`additionalProperties: false`) forbids.
 */
export function breakSchema(result: unknown, schema: unknown, variant: number): unknown {
  if (!isObject(result)) return { unexpected_field: true };
  const properties = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
  const required = isObject(schema) && Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === 'string') : [];
  const numeric = Object.keys(result).filter((key) => typeof result[key] === 'number' && allowsNumber(properties[key]));
  const present = required.filter((key) => key in result);
  const choose = (keys: string[]) => keys[Math.floor(((variant * 2) % 1) * keys.length)] as string;
  const copy: JsonObject = { ...result };
  if (numeric.length > 0 && (variant < 0.5 || present.length === 0)) {
    const key = choose(numeric);
    copy[key] = String(copy[key]);
  } else if (present.length > 0) {
    delete copy[choose(present)];
  } else {
    copy.unexpected_field = true;
  }
  return copy;
}
