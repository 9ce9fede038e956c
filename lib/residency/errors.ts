/**
 * The residency map's error: the templates it should read cannot be had (aws-cdk-lib is not installed,
 * a cdk.out folder is missing or not a cloud assembly).
 */
import { RatelaneError } from '../platform/errors.js';

/** The templates of the lane stacks cannot be read or synthesized; the message says what to install or give. */
export class ResidencyInputError extends RatelaneError {
  override name = 'ResidencyInputError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}
