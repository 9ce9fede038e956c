/**
 * The producer client a service team's code uses: `submit` documents to a lane (each stored in the
 * lane's bucket under its content hash, its job sent to the lane's queue, with every check the CLI
 * makes), then `status` or `wait` for the job. Credentials are the AWS SDK's default chain (or the ones
 * given); the lanes are the ones deployed (`resolveLane` declarations, or a resolved set), each in
 * its own account's bucket. `endpoints` points the client at the local stack instead of AWS.
 *
 * `status` reads through the lane's live API when the client is given its URL (`liveApis`: SigV4-signed,
 * the API answers a job to its owner only), else from the lane's results and ledger tables
 * (`dynamodb:GetItem` and `Query` on them: an operator's or the producing service's read).
 *
 * `erase` erases a source in one lane (its results, ledger entries and documents; a tombstone left): an
 * operator's action, with write access to the lane's tables and bucket. `cancel` cancels a job that is not
 * committed (its cancel marker in the lane's ledger: no further model call, never committed).
 */
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { type LaneConfig, type LaneInput, laneInAccount, laneSetOf, type LaneSet, resolveLane } from '../config/lanes.js';
import { eraseSource, type ErasureReceipt, laneEraseDeps } from '../erasure/erase.js';
import { submitDocuments, type DocumentInput, type SubmitProgress, type SubmitResult } from '../intake/producer.js';
import { type AwsClients, createAwsClients, type ServiceEndpoints } from '../platform/clients.js';
import { RatelaneError } from '../platform/errors.js';
import { realSleep } from '../platform/sleep.js';
import type { CancelOutcome } from '../store/cancellation.js';
import { jobStatus, type JobStatusView } from '../store/job-status.js';
import { liveStatus } from './live-status.js';
import { laneStores } from '../store/lane-stores.js';

/** What a {@link RatelaneClientError} is about. */
export type ClientErrorCode = 'unknown_lane' | 'no_lanes' | 'account_required' | 'wait_timeout' | 'wait_aborted' | 'forbidden' | 'unavailable';

/** An error of the client itself, with a code to branch on (submission errors: `SubmissionRejectedError`). */
export class RatelaneClientError extends RatelaneError {
  override name = 'RatelaneClientError';
  readonly kind: 'input' | 'config' | 'unavailable';
  readonly retryable: boolean;

  constructor(
    readonly code: ClientErrorCode,
    message: string,
    options: { cause?: unknown; lastStatus?: JobStatusView } = {},
  ) {
    super(message, options);
    this.kind = code === 'wait_timeout' || code === 'wait_aborted' || code === 'unavailable' ? 'unavailable' : code === 'unknown_lane' ? 'input' : 'config';
    this.retryable = code === 'wait_timeout' || code === 'unavailable';
    this.lastStatus = options.lastStatus;
  }

  /** For `wait_timeout` and `wait_aborted`: the job's state when the wait ended. */
  readonly lastStatus: JobStatusView | undefined;
}

/** How a {@link RatelaneClient} reaches its lanes. */
export interface RatelaneClientOptions {
  /** The lanes as declared (name, region, what differs from the defaults) or as resolved. */
  lanes: readonly LaneInput[] | LaneSet;
  /**
   * The AWS account the lanes are deployed in (their buckets are named after it). Required for AWS;
   * not used with `endpoints`.
   */
  account?: string;
  /** The local stack's endpoints instead of AWS. */
  endpoints?: ServiceEndpoints;
  /** Credentials for AWS (default: the SDK's default chain). */
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /**
   * Each lane's live API base URL (its stack's `LiveApiUrl` output), by lane name: `status` and `wait` read
   * through it, signed with the client's credentials, and see only the jobs of their own principal (and
   * every job for the lane's readers). A lane without one is read from its tables.
   */
  liveApis?: Readonly<Record<string, string>>;
  /** The clock and the wait between polls (tests). */
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
}

/** Options of {@link RatelaneClient.wait}. */
export interface WaitOptions {
  /** The lane the job was submitted to (default: the client's only lane). */
  lane?: string;
  /** How long to wait at most (ms). @default 60000 */
  timeoutMs?: number;
  /** First wait between reads (ms); it doubles up to 5 s. @default 500 */
  pollMs?: number;
  /** Ends the wait early (`wait_aborted`). */
  signal?: AbortSignal;
}

/** A job's state once nothing more happens to it without a person: committed, needs review, rejected, dead-lettered, erased or cancelled. */
export type SettledStatus = Extract<JobStatusView, { state: 'committed' | 'needs_review' | 'rejected' | 'dead_lettered' | 'erased' | 'cancelled' }>;

const SETTLED = new Set<JobStatusView['state']>(['committed', 'needs_review', 'rejected', 'dead_lettered', 'erased', 'cancelled']);

/** What {@link RatelaneClient.cancel} did, in which lane. */
export type CancelResult = CancelOutcome & { lane: string; region: string; jobId: string };
const MAX_POLL_MS = 5_000;

/** The client of one set of lanes (see the module's description). Call {@link close} when done. */
export class RatelaneClient {
  readonly lanes: LaneSet;
  private readonly clients = new Map<string, AwsClients>();

  constructor(private readonly options: RatelaneClientOptions) {
    const given = Array.isArray(options.lanes) ? laneSetOf((options.lanes as readonly LaneInput[]).map(resolveLane)) : (options.lanes as LaneSet);
    if (Object.keys(given).length === 0) throw new RatelaneClientError('no_lanes', 'the client was given no lanes');
    if (options.endpoints) {
      this.lanes = given;
    } else {
      const account = options.account;
      if (account === undefined || !/^\d{12}$/.test(account)) {
        throw new RatelaneClientError('account_required', `the lanes' AWS account is required for AWS (12 digits), got ${JSON.stringify(account)}`);
      }
      this.lanes = Object.freeze(Object.fromEntries(Object.entries(given).map(([name, lane]) => [name, laneInAccount(lane, account)])));
    }
  }

  /**
   * Validates, stores and enqueues documents (`DocumentInput.region` names the lane). Invalid documents
   * come back `rejected` with a reason (or, with `atomic`, nothing is sent and `SubmissionRejectedError`
   * is thrown); a document that could not be stored or sent comes back `failed` with the error.
   */
  submit(
    documents: DocumentInput | readonly DocumentInput[],
    options: { atomic?: boolean; onProgress?: (event: SubmitProgress) => void } = {},
  ): Promise<SubmitResult> {
    return submitDocuments(
      { documents: Array.isArray(documents) ? [...documents] : [documents as DocumentInput] },
      {
        lanes: this.lanes,
        clientsFor: (region) => this.clientsOf(region),
        now: this.options.now ?? (() => new Date()),
        ...(this.options.sleep ? { sleep: this.options.sleep } : {}),
        ...(options.atomic !== undefined ? { atomic: options.atomic } : {}),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      },
    );
  }

  /** The job's state in its lane: `committed` (with the result), `pending`, `received`, `needs_review`, `rejected`, `dead_lettered`, `erased`, `cancelled` or `unknown`. */
  async status(jobId: string, options: { lane?: string } = {}): Promise<JobStatusView> {
    const lane = this.laneOf(options.lane);
    const clients = this.clientsOf(lane.region);
    const api = this.options.liveApis?.[lane.name];
    if (api !== undefined) {
      const read = await liveStatus({ baseUrl: api, jobId, region: lane.region, credentials: this.options.credentials ?? clients.dynamodb.config.credentials });
      if ('view' in read) return read.view;
      throw new RatelaneClientError(
        read.failure.kind,
        `the live API of lane ${lane.name} answered ${read.failure.status || 'nothing'} for job ${jobId}: ${read.failure.detail}`,
      );
    }
    const { erasure, results, ledger, cancellations } = laneStores(lane, clients.dynamodb);
    return jobStatus(jobId, { results, ledger, erasure, cancellations });
  }

  /**
   * Reads the job's state until it is settled (committed, needs review, rejected, dead-lettered) and
   * returns it.
   *
   * @throws {@link RatelaneClientError} `wait_timeout` after `timeoutMs` (with the last state), `wait_aborted` when `signal` fires
   */
  async wait(jobId: string, options: WaitOptions = {}): Promise<SettledStatus> {
    const now = this.options.now ?? (() => new Date());
    const sleep = this.options.sleep ?? realSleep;
    const timeoutMs = options.timeoutMs ?? 60_000;
    const until = now().getTime() + timeoutMs;
    let pollMs = options.pollMs ?? 500;
    for (;;) {
      const status = await this.status(jobId, options.lane !== undefined ? { lane: options.lane } : {});
      if (SETTLED.has(status.state)) return status as SettledStatus;
      if (options.signal?.aborted)
        throw new RatelaneClientError('wait_aborted', `the wait for job ${jobId} was aborted (state ${status.state})`, { lastStatus: status });
      const left = until - now().getTime();
      if (left <= 0) {
        throw new RatelaneClientError('wait_timeout', `job ${jobId} is still ${status.state} after ${timeoutMs} ms`, { lastStatus: status });
      }
      await sleep(Math.min(pollMs, left));
      pollMs = Math.min(pollMs * 2, MAX_POLL_MS);
    }
  }

  /**
   * Erases a source in one lane (`ratelane erase`): lays its tombstone (from then on the lane runs no job of
   * it), then removes each job of it the lane claimed (its result, its ledger entries) and its documents, and
   * returns the receipt (`found: false` when the lane held nothing of it). Only that lane is touched: a source
   * submitted to several lanes is erased in each. Running it again removes what appeared since.
   *
   * @param request.by who erases (recorded on the tombstone and each job's erased marker)
   * @throws {@link RatelaneClientError} `unknown_lane`; `ErasureError` when a store or the bucket failed (what
   *   was removed stays removed: call it again); a `TypeError` for a source id no job could carry (1-512 characters)
   */
  async erase(request: { lane: string; sourceId: string; by: string }): Promise<ErasureReceipt> {
    const lane = this.laneOf(request.lane);
    const clients = this.clientsOf(lane.region);
    return eraseSource(laneEraseDeps(lane, clients, { now: this.options.now, local: this.options.endpoints !== undefined }), {
      sourceId: request.sourceId,
      by: request.by,
    });
  }

  /**
   * Cancels a job in its lane (`ratelane cancel`) unless it is committed: `cancelled` (from then on it makes
   * no model call and is never committed; a job still queued is stopped when it is received),
   * `already_cancelled`, or `committed` (nothing changed). An operator's action, with write access to the
   * lane's ledger.
   *
   * @param request.by who cancels (recorded on the job's cancel marker)
   * @throws {@link RatelaneClientError} `unknown_lane`; `StoreUnavailableError` when the lane's tables failed (call it again)
   */
  async cancel(request: { lane: string; jobId: string; by: string }): Promise<CancelResult> {
    const lane = this.laneOf(request.lane);
    const { cancellations } = laneStores(lane, this.clientsOf(lane.region).dynamodb, this.options.now ? { now: this.options.now } : {});
    const outcome = await cancellations.cancel(request.jobId, request.by);
    return { lane: lane.name, region: lane.region, jobId: request.jobId, ...outcome };
  }

  /** Closes the SDK clients' sockets. */
  close(): void {
    for (const clients of this.clients.values()) clients.destroy();
    this.clients.clear();
  }

  private laneOf(name: string | undefined): LaneConfig {
    const names = Object.keys(this.lanes);
    const chosen = name ?? (names.length === 1 ? names[0] : undefined);
    const lane = chosen !== undefined ? this.lanes[chosen] : undefined;
    if (!lane) {
      throw new RatelaneClientError(
        'unknown_lane',
        name === undefined ? `name the job's lane (one of ${names.join(', ')})` : `unknown lane "${name}"; the client's lanes: ${names.join(', ')}`,
      );
    }
    return lane;
  }

  private clientsOf(region: string): AwsClients {
    let clients = this.clients.get(region);
    if (!clients) {
      clients = createAwsClients(region, this.options.endpoints, this.options.credentials);
      this.clients.set(region, clients);
    }
    return clients;
  }
}
