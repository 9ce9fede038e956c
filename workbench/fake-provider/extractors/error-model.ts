/**
 * An honest fake model: the rule-based extractor is always right, so this module makes the answer err on
 * hard shapes of the document (see `hard-shapes.ts`) at seeded rates that depend on the PROMPT that asked.
 * The prompt is recognised from the request's own system message ({@link identifyPrompt}), as a real model
 * "reacts to its prompt": no header, no side channel. Nothing outside the fake provider knows the rates.
 *
 * Draws are seeded and coupled: whether shape `s` errs on a document is `u < rate`, with
 * `u = hash(seed, s, sha256(documentText), repair)` uniform in [0, 1) and NOT keyed by the prompt version,
 * so two prompts with equal rates err on exactly the same documents and a higher rate errs on a superset.
 * A repair call (its request holds "Your previous answer was:") draws again, so a repair may fix an error.
 * Pure: no clock, no environment, no randomness besides the seed.
 */
import { createHash } from 'node:crypto';
import { getExtractionSchema, knownSchemaVersions } from '../../../lib/contract/schemas/registry.js';
import { FakeProviderConfigError } from '../faults.js';
import { corrupt, detectHardShapes, HARD_SHAPE_NAMES, type HardShapeName, type ModelErrorRates } from './hard-shapes.js';
import type { FakeExtractionContext, FakeExtractor, FakeModelErrorOptions } from '../types.js';

/** Seed of the model's error draws when {@link FakeModelErrorOptions.seed} is not given. */
const DEFAULT_MODEL_ERROR_SEED = 1;

/**
 * Default error rates per prompt version. `invoice-extract@2` equals `invoice-extract@1` except for
 * `noCurrencySymbol` (0.8): that candidate dropped the currency guidance, so its seeded regression hits
 * only the `currency` field of documents that print no currency. `invoice-extract@3` adds a worked
 * example for slashed dates to `invoice-extract@1`: it errs less on `ambiguousDate` (0.05) and the same
 * elsewhere.
 */
export const DEFAULT_MODEL_ERROR_RATES: ModelErrorRates = {
  'invoice-extract@1': { ambiguousDate: 0.2, decimalComma: 0.1, missingField: 0.15, longInput: 0.25, noCurrencySymbol: 0.15 },
  'invoice-extract@2': { ambiguousDate: 0.2, decimalComma: 0.1, missingField: 0.15, longInput: 0.25, noCurrencySymbol: 0.8 },
  'invoice-extract@3': { ambiguousDate: 0.05, decimalComma: 0.1, missingField: 0.15, longInput: 0.25, noCurrencySymbol: 0.15 },
  'receipt-extract@1': { ambiguousDate: 0.15, decimalComma: 0.1, missingField: 0.1, longInput: 0.2, noCurrencySymbol: 0.2 },
};

/**
 * Checks that every rate is a number within 0..1.
 * @throws {FakeProviderConfigError} naming the first rate out of range
 */
export function validateModelErrorRates(rates: ModelErrorRates): void {
  for (const [promptVersion, shapes] of Object.entries(rates)) {
    for (const [shape, rate] of Object.entries(shapes)) {
      if (!(HARD_SHAPE_NAMES as readonly string[]).includes(shape)) throw new FakeProviderConfigError(`modelErrors: unknown hard shape ${shape}`);
      if (!(typeof rate === 'number' && rate >= 0 && rate <= 1)) {
        throw new FakeProviderConfigError(`modelErrors rate ${promptVersion}.${shape} must be within 0..1, got ${rate}`);
      }
    }
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** A uniform number in [0, 1) from the first 48 bits of a SHA-256 over the parts. */
function unit(parts: string[]): number {
  return sha256(parts.join('\u0000')).readUIntBE(0, 6) / 2 ** 48;
}

/**
 * The draw `u` in [0, 1) that decides whether `shape` errs on this document (it does when `u < rate`).
 * Independent of the prompt version; a repair call has its own draw.
 */
function modelErrorDraw(seed: number, shape: HardShapeName, documentText: string, repair: boolean): number {
  return unit([String(seed), shape, sha256(documentText).toString('hex'), repair ? 'repair' : 'first']);
}

/**
 * Which registered prompt produced a request, by comparing its system message with every registered
 * prompt's system message (`buildMessages('')[0].content`).
 * @returns the `promptVersion`, or `undefined` when no registered prompt has this system message
 */
export function identifyPrompt(systemMessage: string | undefined): string | undefined {
  if (systemMessage === undefined) return undefined;
  for (const schemaVersion of knownSchemaVersions()) {
    for (const prompt of Object.values(getExtractionSchema(schemaVersion).prompts)) {
      if (prompt.buildMessages('')[0]?.content === systemMessage) return prompt.promptVersion;
    }
  }
  return undefined;
}

/** What {@link applyModelErrors} works from. */
export interface ModelErrorInput {
  /** The correct extraction (never changed). */
  correct: unknown;
  documentText: string;
  /** The prompt that asked; `undefined` or a version without rates → no errors. */
  promptVersion: string | undefined;
  /** Whether this is a repair call (a different draw). */
  repair: boolean;
  rates: ModelErrorRates;
  seed: number;
}

/** The model's answer and the hard shapes it erred on. */
export interface ModelErrorResult {
  /** The correct object when nothing was applied, else a corrupted deep copy. */
  result: unknown;
  /** The shapes whose corruption changed the answer, in application order. */
  applied: HardShapeName[];
}

/**
 * Makes the correct extraction err on the document's hard shapes at the rates of the prompt version.
 * A shape errs when the document has it, its draw is below the rate, and its corruption finds something
 * to change.
 */
export function applyModelErrors(input: ModelErrorInput): ModelErrorResult {
  const { promptVersion, rates } = input;
  const own = promptVersion !== undefined && Object.hasOwn(rates, promptVersion) ? rates[promptVersion] : undefined;
  if (own === undefined) return { result: input.correct, applied: [] };
  const shapes = detectHardShapes(input.documentText, input.correct);
  const docHash = sha256(input.documentText).toString('hex');
  const result = structuredClone(input.correct);
  const applied: HardShapeName[] = [];
  for (const shape of shapes) {
    const rate = own[shape] ?? 0;
    if (!(modelErrorDraw(input.seed, shape, input.documentText, input.repair) < rate)) continue;
    const pick = unit([String(input.seed), `${shape}:pick`, docHash, input.repair ? 'repair' : 'first']);
    const digits = BigInt(`0x${docHash.slice(0, 15)}`)
      .toString()
      .padStart(9, '7');
    if (corrupt(shape, result, { correct: input.correct, pick, digits })) applied.push(shape);
  }
  return applied.length === 0 ? { result: input.correct, applied } : { result, applied };
}

/** What the fake model needs of one request. */
export interface ModelRequest {
  documentText: string;
  schemaName: string;
  context: FakeExtractionContext;
}

/**
 * The fake model's answer to one request: the extractor's correct object, made to err by
 * {@link applyModelErrors} when `modelErrors` is given (absent → exactly the extractor's answer).
 * @throws whatever the extractor throws
 */
export function runFakeModel(extract: FakeExtractor, modelErrors: FakeModelErrorOptions | undefined, request: ModelRequest): ModelErrorResult {
  const correct = extract(request.documentText, request.schemaName, request.context);
  if (modelErrors === undefined) return { result: correct, applied: [] };
  return applyModelErrors({
    correct,
    documentText: request.documentText,
    promptVersion: identifyPrompt(request.context.systemMessage),
    repair: request.context.repair,
    rates: modelErrors.rates,
    seed: modelErrors.seed ?? DEFAULT_MODEL_ERROR_SEED,
  });
}
