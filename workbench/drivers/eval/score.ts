/**
 * The scorer `score@1`: compares each document's outcome with its reviewed expected object, field by
 * field after normalization, and sums the comparisons into accuracy figures for any set of documents
 * (the corpus, or one bucket). It knows nothing of how the answers were produced.
 *
 * The fields it scores, per schema, are read from the schema registry's JSON schema, so every field of
 * every registered schema is scored and a new field cannot be forgotten. Nested objects are scored field
 * by field (`seller.vatId`); an array is one field (`lineItems`, matched as a set).
 */
import { getExtractionSchema } from '../../../lib/contract/schemas/registry.js';
import type { AccuracyFigures, FieldAccuracy } from './report-model.js';
import { sameAfterNormalizing } from './normalize.js';

/** The scorer's version, named by every release that uses it. */
export const SCORER_VERSION = 'score@1';

type JsonSchemaNode = { type?: unknown; properties?: Record<string, JsonSchemaNode>; anyOf?: JsonSchemaNode[] };

function objectProperties(node: JsonSchemaNode): Record<string, JsonSchemaNode> | undefined {
  if (node.properties !== undefined) return node.properties;
  const branch = node.anyOf?.find((b) => b.properties !== undefined);
  return branch?.properties;
}

function leafPaths(node: JsonSchemaNode, prefix: string): string[] {
  const properties = objectProperties(node);
  if (properties === undefined) return [prefix];
  return Object.entries(properties).flatMap(([name, child]) => leafPaths(child, prefix === '' ? name : `${prefix}.${name}`));
}

/** Every scored field path of a schema, in the schema's order. */
export function scoredFields(schemaVersion: string): string[] {
  return leafPaths(getExtractionSchema(schemaVersion).jsonSchema as JsonSchemaNode, '');
}

/** The value at a dotted path (`seller.vatId`), or `undefined` when a step is missing. */
function valueAt(object: unknown, path: string): unknown {
  let current: unknown = object;
  for (const step of path.split('.')) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}

/** Where a document's job ended. */
export type EvalOutcomeState = 'committed' | 'needs_review' | 'rejected' | 'dead_lettered' | 'waiting' | 'unresolved' | 'lost';

/** One document of an evaluation with what the pipeline made of it. */
export interface ScoredInput {
  schemaVersion: string;
  expected: Record<string, unknown>;
  expectedOutcome: 'committed' | 'needs_review';
  state: EvalOutcomeState;
  /** The committed object (only when `state` is `committed`). */
  result?: Record<string, unknown> | undefined;
}

/** One document's field verdicts: `true` when the field matched. Empty for a document expected in review. */
export interface DocumentScore {
  schemaVersion: string;
  fields: Record<string, boolean>;
  /** Every field right (false when the job did not commit). Null for a document expected in review. */
  wholeObject: boolean | null;
  endedInReview: boolean;
  /** For a document reviewed as "must go to review": whether it did. */
  reviewedAsExpected: boolean | null;
}

/**
 * Scores one document. A document expected to commit that did not commit scores every field wrong (the
 * caller got nothing); a document expected to go to review is scored on its outcome alone.
 */
export function scoreDocument(input: ScoredInput): DocumentScore {
  const endedInReview = input.state === 'needs_review';
  if (input.expectedOutcome === 'needs_review') {
    return { schemaVersion: input.schemaVersion, fields: {}, wholeObject: null, endedInReview, reviewedAsExpected: endedInReview };
  }
  const fields: Record<string, boolean> = {};
  for (const field of scoredFields(input.schemaVersion)) {
    fields[field] =
      input.state === 'committed' && input.result !== undefined && sameAfterNormalizing(valueAt(input.expected, field), valueAt(input.result, field));
  }
  return {
    schemaVersion: input.schemaVersion,
    fields,
    wholeObject: Object.values(fields).every(Boolean) && input.state === 'committed',
    endedInReview,
    reviewedAsExpected: null,
  };
}

function share(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

/** Sums document scores into figures; fields are listed per schema in the schema's order. */
export function accuracyOf(scores: readonly DocumentScore[]): AccuracyFigures {
  const scored = scores.filter((s) => s.wholeObject !== null);
  const expectedReview = scores.filter((s) => s.reviewedAsExpected !== null);
  const fields: FieldAccuracy[] = [];
  const schemas = [...new Set(scored.map((s) => s.schemaVersion))].sort();
  for (const schemaVersion of schemas) {
    const ofSchema = scored.filter((s) => s.schemaVersion === schemaVersion);
    for (const field of scoredFields(schemaVersion)) {
      const correct = ofSchema.filter((s) => s.fields[field] === true).length;
      fields.push({ schemaVersion, field, correct, total: ofSchema.length, accuracy: share(correct, ofSchema.length) });
    }
  }
  const wholeObjectCorrect = scored.filter((s) => s.wholeObject === true).length;
  return {
    documents: scored.length,
    wholeObjectCorrect,
    wholeObjectAccuracy: share(wholeObjectCorrect, scored.length),
    needsReviewShare: share(scores.filter((s) => s.endedInReview).length, scores.length),
    reviewExpected: { correct: expectedReview.filter((s) => s.reviewedAsExpected === true).length, total: expectedReview.length },
    fields,
  };
}
