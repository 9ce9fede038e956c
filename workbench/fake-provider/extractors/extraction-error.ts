/**
 * The one shape of the fake provider's extractor errors: a field the schema requires could not be found
 * in the document text. Each extractor has its own subclass (its `name`), so callers can tell them apart.
 */
import { RatelaneError } from '../../../lib/platform/errors.js';

/** Raised when a field the schema requires cannot be found. The message names the field, never document text. */
export abstract class FieldExtractionError extends RatelaneError {
  override name: string;
  readonly kind = 'input' as const;
  readonly retryable = false;

  /**
   * @param name the subclass's name (the error's `name`)
   * @param field the schema path of the field that could not be found, e.g. `seller.name`
   */
  constructor(
    name: string,
    readonly field: string,
    options?: { cause?: unknown },
  ) {
    super(`could not extract ${field}`, options);
    this.name = name;
  }
}
