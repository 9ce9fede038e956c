/**
 * The OpenAI structured-outputs strict-mode check for JSON schemas, shared by the tests that assert a
 * shipped schema is accepted in strict mode (corpus, receipt corpus, schema registry).
 */

/** Keywords OpenAI structured outputs accept in strict mode. */
const STRICT_KEYWORDS: ReadonlySet<string> = new Set([
  ...['type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'enum', 'const', 'description', 'title', 'pattern', 'format'],
  ...['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems', '$defs', '$ref'],
]);

/** String formats OpenAI structured outputs accept in strict mode. */
const STRICT_FORMATS: ReadonlySet<string> = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);

/** Every problem that would make OpenAI reject the schema in strict mode, as `path: problem`. */
export function strictModeProblems(node: unknown, path: string): string[] {
  if (typeof node !== 'object' || node === null) return [`${path}: not a schema object`];
  const schema = node as Record<string, unknown>;
  const problems = Object.keys(schema)
    .filter((key) => !STRICT_KEYWORDS.has(key))
    .map((key) => `${path}: unsupported keyword ${key}`);
  if (typeof schema.format === 'string' && !STRICT_FORMATS.has(schema.format)) problems.push(`${path}: unsupported format ${schema.format}`);
  if (schema.type === 'object' || schema.properties !== undefined) {
    const properties = (schema.properties ?? {}) as Record<string, unknown>;
    if (schema.additionalProperties !== false) problems.push(`${path}: additionalProperties is not false`);
    const required = Array.isArray(schema.required) ? [...schema.required].sort() : [];
    if (JSON.stringify(required) !== JSON.stringify(Object.keys(properties).sort())) problems.push(`${path}: not every property is required`);
    for (const [name, child] of Object.entries(properties)) problems.push(...strictModeProblems(child, `${path}.${name}`));
  }
  if (schema.items !== undefined) problems.push(...strictModeProblems(schema.items, `${path}[]`));
  if (Array.isArray(schema.anyOf)) {
    for (const [i, child] of schema.anyOf.entries()) problems.push(...strictModeProblems(child, `${path}|${i}`));
  }
  return problems;
}
