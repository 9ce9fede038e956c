/**
 * The one table that maps an error, at the step it happened, to what it means for the job: a
 * rejection with its ledger reason (waiting never helps), an outcome for the policy to decide on (a
 * real failure or a provider's verdict), or an error the core does not know (thrown on, so the lane
 * retries the whole record).
 */
import type { JobOutcome, RejectReason } from '../policy/index.js';
import { ProviderError, ProviderTransportError } from '../providers/model.js';
import { errorName } from '../platform/errors.js';
import type { RejectionReason, ReviewReason } from '../platform/telemetry.js';
import { DocumentStoreError } from '../store/documents.js';
import { StoreRecordInvalidError, StoreUnavailableError } from '../store/errors.js';

/** Where in the core an error happened. */
export type FailureStep = 'document_read' | 'claim' | 'admission' | 'model_call' | 'commit';

/** What an error means for the job. */
export type FailureVerdict =
  /** Reject for good: `reason` goes to the ledger, `policyReason` is the policy's family of it. */
  | { type: 'reject'; reason: RejectionReason; policyReason: RejectReason; detail: string }
  /** A person must look at the job: `reason` goes to the ledger (no retry, no further model call). */
  | { type: 'review'; reason: ReviewReason; detail: string }
  /** Ask the policy (`decide`) what to do with `outcome`. */
  | { type: 'decide'; outcome: JobOutcome; detail: string }
  /** Not ours to interpret: throw it on (the record fails whole and comes back). */
  | { type: 'rethrow' };

/** What a rule may know besides the error. */
export interface FailureContext {
  /** The key the failed model call used. */
  keyId?: string | undefined;
}

interface FailureRule {
  step: FailureStep;
  matches(error: unknown): boolean;
  verdict(error: never, context: FailureContext): FailureVerdict;
}

const rule = <E>(step: FailureStep, matches: (error: unknown) => error is E, verdict: (error: E, context: FailureContext) => FailureVerdict): FailureRule => ({
  step,
  matches,
  verdict: verdict as FailureRule['verdict'],
});

const any = (_error: unknown): _error is unknown => true;
const isDocumentError =
  (code: string) =>
  (error: unknown): error is DocumentStoreError =>
    error instanceof DocumentStoreError && error.details.code === code;
const isProviderError = (error: unknown): error is ProviderError => error instanceof ProviderError;
const isTooLarge = (error: unknown): error is ProviderError => error instanceof ProviderError && error.requestTooLarge;
const isTransportError = (error: unknown): error is ProviderTransportError => error instanceof ProviderTransportError;
const isStoreUnavailable = (error: unknown): error is StoreUnavailableError => error instanceof StoreUnavailableError;
const isRecordInvalid = (error: unknown): error is StoreRecordInvalidError => error instanceof StoreRecordInvalidError;
const unknownTransport = (detail: string): FailureVerdict => ({ type: 'decide', outcome: { kind: 'transport_failure', cause: 'unknown' }, detail });

/** The table, first match wins within a step. */
const FAILURE_TABLE: readonly FailureRule[] = [
  rule('document_read', isDocumentError('NoSuchKey'), () => ({
    type: 'reject',
    reason: 'input_missing',
    policyReason: 'invalid_body',
    detail: 'input NoSuchKey',
  })),
  rule('document_read', isDocumentError('ContentHashMismatch'), () => ({
    type: 'reject',
    reason: 'input_hash_mismatch',
    policyReason: 'invalid_body',
    detail: 'input ContentHashMismatch',
  })),
  rule('document_read', any, (error) => unknownTransport(`document read failed: ${error instanceof DocumentStoreError ? error.details.code : 'unknown'}`)),
  rule('claim', any, (error) => unknownTransport(`idempotency-key claim unavailable: ${errorName(error) ?? 'Error'}`)),
  rule('admission', any, (error) => unknownTransport(`admission unavailable: ${errorName(error) ?? 'Error'}`)),
  rule('model_call', isTooLarge, (_error, { keyId }) => ({
    type: 'reject',
    reason: 'too_large',
    policyReason: 'invalid_body',
    detail: `request larger than the provider's whole per-minute budget (key ${keyId})`,
  })),
  rule('model_call', isProviderError, (error, { keyId }) => ({
    type: 'decide',
    outcome: { kind: 'provider_error', classification: error.classification },
    detail: `${error.classification.kind} from key ${keyId} (HTTP ${error.status})`,
  })),
  rule('model_call', isTransportError, (error) => ({
    type: 'decide',
    outcome: { kind: 'transport_failure', cause: error.timedOut ? 'timeout' : 'network' },
    detail: error.timedOut ? 'model call timed out' : 'model connection failed',
  })),
  rule('model_call', any, (error) => unknownTransport(`unexpected error ${errorName(error) ?? 'unknown'}`)),
  rule('commit', isStoreUnavailable, (error) => unknownTransport(`results store unavailable (${error.sdkErrorName ?? 'error'})`)),
  rule('commit', isRecordInvalid, (error) => ({ type: 'review', reason: 'result_unstorable', detail: error.message })),
];

/** What `error`, raised at `step`, means for the job (see the table above). */
export function failureVerdict(step: FailureStep, error: unknown, context: FailureContext = {}): FailureVerdict {
  for (const r of FAILURE_TABLE) {
    if (r.step === step && r.matches(error)) return r.verdict(error as never, context);
  }
  return { type: 'rethrow' };
}

/** A provider's throttle: a rate limit, a spent quota, a billing problem or a bad key (not a real failure of the job). */
export function isThrottle(
  outcome: JobOutcome,
): outcome is Extract<JobOutcome, { kind: 'provider_error' }> & { classification: { kind: 'rate_limit' | 'quota_exhausted' | 'billing' | 'auth' } } {
  if (outcome.kind !== 'provider_error') return false;
  const kind = outcome.classification.kind;
  return kind === 'rate_limit' || kind === 'quota_exhausted' || kind === 'billing' || kind === 'auth';
}
