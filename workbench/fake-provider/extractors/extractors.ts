/**
 * The fake model's extractors by JSON schema name (`response_format.json_schema.name`, or what the Gemini
 * route derives from the schema): which rule-based extractor answers a request for which schema.
 * Register a new schema's extractor in {@link FAKE_EXTRACTORS}.
 */
import { INVOICE_V1_JSON_SCHEMA_NAME } from '../../../lib/contract/schemas/invoice-v1.js';
import { RatelaneError } from '../../../lib/platform/errors.js';
import { extractInvoice } from './invoice.js';
import { RECEIPT_V1_JSON_SCHEMA_NAME } from '../../../lib/contract/schemas/receipt-v1.js';
import { extractReceipt } from './receipt.js';

/** Raised for a schema name no fake extractor is registered for (the server answers it with a 500). */
export class UnknownFakeSchemaError extends RatelaneError {
  override name = 'UnknownFakeSchemaError';
  readonly kind = 'config' as const;
  readonly retryable = false;
  constructor(readonly schemaName: string) {
    super(`the fake provider has no extractor for schema "${schemaName}"; known: ${Object.keys(FAKE_EXTRACTORS).join(', ')}`);
  }
}

/** Rule-based extractors by JSON schema name. Add one line per schema (e.g. `receipt_v1`). */
const FAKE_EXTRACTORS: Readonly<Record<string, (documentText: string) => unknown>> = {
  [INVOICE_V1_JSON_SCHEMA_NAME]: extractInvoice,
  [RECEIPT_V1_JSON_SCHEMA_NAME]: extractReceipt,
};

/**
 * Extracts the object of schema `schemaName` from the document text with its registered extractor.
 * @throws {UnknownFakeSchemaError} when no extractor is registered for `schemaName`
 * @throws whatever the extractor throws when a required field cannot be found
 */
export function extractForSchema(documentText: string, schemaName: string): unknown {
  const extract = Object.hasOwn(FAKE_EXTRACTORS, schemaName) ? FAKE_EXTRACTORS[schemaName] : undefined;
  if (extract === undefined) throw new UnknownFakeSchemaError(schemaName);
  return extract(documentText);
}
