/**
 * The fields an evaluation scores, per schema: read from the schema registry's JSON schema, so every
 * field of every registered schema is scored and a new field cannot be forgotten. Nested objects are
 * scored field by field (`seller.vatId`); an array is one field (`lineItems`, matched as a set).
 */
import { getExtractionSchema } from '../../../lib/contract/schemas/registry.js';

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
export function valueAt(object: unknown, path: string): unknown {
  let current: unknown = object;
  for (const step of path.split('.')) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}
