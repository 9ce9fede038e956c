/**
 * Errors of the extraction core.
 */
import { RatelaneError } from '../platform/errors.js';

/** An invariant of the core was broken (a bug): the record fails whole and comes back. */
export class InternalError extends RatelaneError {
  override name = 'InternalError';
  readonly kind = 'internal' as const;
  readonly retryable = true;
}
