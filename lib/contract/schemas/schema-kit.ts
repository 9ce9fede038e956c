/**
 * What every extraction schema is made of: the zod pieces the schemas share (money, non-blank text, codes),
 * the JSON schema derivation for OpenAI strict mode, the money arithmetic of the domain rules, and the
 * shape of a registry entry ({@link ExtractionSchema}).
 */
import { z } from 'zod';
import type { ExtractionPrompt } from './prompt-kit.js';

/** Everything the pipeline needs to extract and validate one kind of object. */
export interface ExtractionSchema<T = unknown> {
  schemaVersion: string;
  zod: z.ZodType<T>;
  jsonSchema: Record<string, unknown>;
  /** `response_format.json_schema.name`. */
  jsonSchemaName: string;
  domainRules(value: T): DomainRuleViolation[];
  prompts: Readonly<Record<string, ExtractionPrompt>>;
}

/** Money: a number with at most two decimals, in the document currency. */
export const money = z.number().min(0).multipleOf(0.01);

/** A non-blank string (expressed as a pattern: strict mode does not accept `minLength`). */
export const text = z.string().regex(/\S/);

/** A VAT identification number as printed, or null; each schema describes it in its own words. */
export const nullableVatId = z
  .string()
  .regex(/^[A-Z]{2,3}[A-Z0-9.\- ]{2,20}$/)
  .nullable();

/** An ISO 3166-1 alpha-2 country code. */
export const countryCode = z.string().regex(/^[A-Z]{2}$/);

/** An ISO 4217 currency code. */
export const currencyCode = z.string().regex(/^[A-Z]{3}$/);

/**
 * The JSON schema of a zod schema for `response_format: { type: 'json_schema', json_schema: { name, schema, strict: true } }`:
 * `z.toJSONSchema(schema)` without its `$schema` dialect marker.
 */
export function strictJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

/** One broken business rule. `message` names fields and numbers only, never document text. */
export interface DomainRuleViolation {
  /** Path of the offending field, e.g. `lineItems[2].amount`. */
  field: string;
  /** Stable rule identifier, e.g. `line_amount`. */
  rule: string;
  message: string;
}

/** Money comparisons allow one cent of rounding either way. */
const MONEY_TOLERANCE = 0.01 + 1e-9;

/** An amount rounded to cents. */
export function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** Whether two amounts differ by more than {@link MONEY_TOLERANCE} (one cent of rounding either way). */
export function differs(actual: number, expected: number): boolean {
  return Math.abs(actual - expected) > MONEY_TOLERANCE;
}

/** An amount as a rule message prints it: two decimals. */
export function show(value: number): string {
  return value.toFixed(2);
}
