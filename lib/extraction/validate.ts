/**
 * Output validation, in three steps: parse the model's text as JSON, check it against the zod schema
 * of the job's `schemaVersion`, then the schema's domain rules. The result says which step failed,
 * which fields and which rules, and never repeats the document's text.
 */
import type { z } from 'zod';
import type { DomainRuleViolation } from '../contract/schemas/registry.js';

/** What validation needs of an extraction schema (see the schema registry). */
export interface ValidatableSchema {
  zod: z.ZodType;
  domainRules: (value: never) => DomainRuleViolation[];
}

/** The outcome of validating one model output. */
export type ValidationResult =
  | { ok: true; value: Record<string, unknown> }
  | {
      ok: false;
      parseStatus: 'not_json' | 'schema_invalid' | 'domain_invalid';
      failingFields: string[];
      failingRules: string[];
      /** Short problem statements to feed back in a repair call (field paths and rule ids only). */
      problems: string[];
    };

/** Validates a model's raw output against a schema and its domain rules. */
export function validateOutput(content: string, schema: ValidatableSchema): ValidationResult {
  let raw: unknown;
  try {
    raw = JSON.parse(content);
  } catch {
    return {
      ok: false,
      parseStatus: 'not_json',
      failingFields: [],
      failingRules: ['json'],
      problems: ['The output was not valid JSON. Return one JSON object only.'],
    };
  }
  const parsed = schema.zod.safeParse(raw);
  if (!parsed.success) {
    const failingFields = [...new Set(parsed.error.issues.map((i) => i.path.join('.') || '(root)'))];
    return {
      ok: false,
      parseStatus: 'schema_invalid',
      failingFields,
      failingRules: [...new Set(parsed.error.issues.map((i) => `schema:${i.code}`))],
      problems: parsed.error.issues.slice(0, 20).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
    };
  }
  const violations = schema.domainRules(parsed.data as never);
  if (violations.length > 0) {
    return {
      ok: false,
      parseStatus: 'domain_invalid',
      failingFields: [...new Set(violations.map((v) => v.field))],
      failingRules: [...new Set(violations.map((v) => v.rule))],
      problems: violations.slice(0, 20).map((v) => `${v.field}: ${v.message} (rule ${v.rule})`),
    };
  }
  return { ok: true, value: parsed.data as Record<string, unknown> };
}
