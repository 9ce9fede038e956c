/**
 * The lane config's error ({@link LaneConfigError}), in its own module so the lane config and its
 * deployment checks (`deploy-checks.ts`) both raise it without importing each other. Re-exported by `lanes.ts`.
 */
import { RatelaneError } from '../platform/errors.js';

/** Raised when a lane config or override does not validate. */
export class LaneConfigError extends RatelaneError {
  override name = 'LaneConfigError';
  readonly kind = 'config' as const;
  readonly retryable = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Raised where a lane's text would go to a model endpoint that is not approved for the lane's geography
 * (`endpoints.ts`, `endpointProblem`): nothing was sent. A person fixes the lane's config.
 */
export class EndpointNotApprovedError extends RatelaneError {
  override name = 'EndpointNotApprovedError';
  readonly kind = 'config' as const;
  readonly retryable = false;
  constructor(
    message: string,
    /** The host that was refused. */
    readonly host: string,
  ) {
    super(message);
  }
}
