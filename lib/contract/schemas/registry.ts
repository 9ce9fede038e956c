/**
 * Registry of extraction schemas by `schemaVersion` (`name@N`). Each entry carries the zod schema, the
 * JSON schema sent to providers, the domain rules and its prompts by `promptVersion`. A job names both
 * versions; a consumer rejects a job whose versions are not registered here before any model call.
 */
import { RatelaneError } from '../../platform/errors.js';
import { invoiceV1Entry } from './invoice-v1.js';
import { receiptV1Entry } from './receipt-v1.js';
import type { ExtractionPrompt } from './prompt-kit.js';
import type { ExtractionSchema } from './schema-kit.js';

export { DOCUMENT_CLOSE, DOCUMENT_OPEN, type ExtractionPrompt } from './prompt-kit.js';
export type { DomainRuleViolation, ExtractionSchema } from './schema-kit.js';

/** The schema version jobs use when the caller names none. */
export const DEFAULT_SCHEMA_VERSION = 'invoice@1';
/** The prompt version jobs use when the caller names none. */
export const DEFAULT_PROMPT_VERSION = 'invoice-extract@1';

/** Raised when a schema version is not in the registry. */
export class UnknownSchemaVersionError extends RatelaneError {
  override name = 'UnknownSchemaVersionError';
  readonly kind = 'input' as const;
  readonly retryable = false;
  constructor(
    readonly schemaVersion: string,
    options?: { cause?: unknown },
  ) {
    super(`unknown schema version "${schemaVersion}"; known: ${Object.keys(REGISTRY).join(', ')}`, options);
  }
}

const REGISTRY: Readonly<Record<string, ExtractionSchema<unknown>>> = {
  [invoiceV1Entry.schemaVersion]: invoiceV1Entry,
  [receiptV1Entry.schemaVersion]: receiptV1Entry,
};

/** Every registered schema version. */
export function knownSchemaVersions(): string[] {
  return Object.keys(REGISTRY);
}

/**
 * Looks up a schema by version.
 * @throws {UnknownSchemaVersionError} when the version is not registered
 */
export function getExtractionSchema(schemaVersion: string): ExtractionSchema<unknown> {
  const entry = Object.hasOwn(REGISTRY, schemaVersion) ? REGISTRY[schemaVersion] : undefined;
  if (entry === undefined) throw new UnknownSchemaVersionError(schemaVersion);
  return entry;
}

/** True when the schema version is registered and has a prompt of that version. */
export function isKnownPromptVersion(schemaVersion: string, promptVersion: string): boolean {
  const entry = Object.hasOwn(REGISTRY, schemaVersion) ? REGISTRY[schemaVersion] : undefined;
  return entry !== undefined && Object.hasOwn(entry.prompts, promptVersion);
}

/**
 * Looks up a prompt of a schema.
 * @throws {UnknownSchemaVersionError} when the schema version is not registered
 * @returns the prompt, or `undefined` when the schema has no prompt of that version
 */
export function getExtractionPrompt(schemaVersion: string, promptVersion: string): ExtractionPrompt | undefined {
  const entry = getExtractionSchema(schemaVersion);
  return Object.hasOwn(entry.prompts, promptVersion) ? entry.prompts[promptVersion] : undefined;
}
