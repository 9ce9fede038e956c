/**
 * Who resolves a review, as the ledger records it: the name given (`--reviewer`); else, in AWS, the
 * caller's identity from STS `GetCallerIdentity` in the lane's region (its ARN: one free call, given a few
 * seconds); else the operating system's user name. The source is recorded beside the name.
 */
import { userInfo } from 'node:os';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { ReviewError } from './errors.js';

/** Where a reviewer's name came from. */
type ReviewerSource = 'given' | 'sts' | 'os_user';

/** The reviewer a resolution is recorded under. */
export interface Reviewer {
  name: string;
  source: ReviewerSource;
}

/** The longest reviewer name kept (an IAM assumed-role session ARN fits). */
const MAX_REVIEWER_LENGTH = 512;
/** How long the STS call may take before the OS user stands in (ms). */
const STS_TIMEOUT_MS = 3_000;

/**
 * A reviewer's name as given, trimmed. @throws {@link ReviewError} `invalid_reviewer` for an empty
 * name, one over 512 characters or one with control characters
 */
function checkedReviewer(name: string): string {
  const trimmed = name.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (trimmed === '' || trimmed.length > MAX_REVIEWER_LENGTH || /[\u0000-\u001f\u007f]/.test(trimmed)) {
    throw new ReviewError('invalid_reviewer', `the reviewer must be 1 to ${MAX_REVIEWER_LENGTH} printable characters`);
  }
  return trimmed;
}

/** How {@link reviewerOf} finds the caller. */
export interface ReviewerLookup {
  /** `--reviewer`, when given: it wins. */
  given?: string | undefined;
  /** The lane's region (where STS is asked). */
  region: string;
  /** True with the local stack's endpoints: STS is not asked. */
  local: boolean;
  /** The caller's ARN, or `undefined` (default: STS `GetCallerIdentity` in `region`). */
  callerArn?: ((region: string) => Promise<string | undefined>) | undefined;
  /** The OS user's name (default: `os.userInfo()`, then `USER` / `LOGNAME` / `USERNAME`). */
  osUser?: (() => string | undefined) | undefined;
}

/** The caller's ARN from STS in `region`, or `undefined` when it does not answer in time. */
async function stsCallerArn(region: string): Promise<string | undefined> {
  const sts = new STSClient({ region, maxAttempts: 1 });
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), STS_TIMEOUT_MS);
  try {
    const out = await sts.send(new GetCallerIdentityCommand({}), { abortSignal: abort.signal });
    return out.Arn;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
    sts.destroy();
  }
}

/** The OS user's name, or `undefined`. */
function systemUser(): string | undefined {
  try {
    return userInfo().username || undefined;
  } catch {
    return process.env.USER || process.env.LOGNAME || process.env.USERNAME || undefined;
  }
}

/**
 * Who the reviewer is (see the module's description).
 *
 * @throws {@link ReviewError} `invalid_reviewer` for a bad name given, or when no identity is found at all
 */
export async function reviewerOf(lookup: ReviewerLookup): Promise<Reviewer> {
  if (lookup.given !== undefined) return { name: checkedReviewer(lookup.given), source: 'given' };
  if (!lookup.local) {
    const arn = await (lookup.callerArn ?? stsCallerArn)(lookup.region);
    if (arn) return { name: checkedReviewer(arn), source: 'sts' };
  }
  const user = (lookup.osUser ?? systemUser)();
  if (user) return { name: checkedReviewer(user), source: 'os_user' };
  throw new ReviewError('invalid_reviewer', 'no reviewer identity found (no STS caller, no OS user): name one with --reviewer');
}
