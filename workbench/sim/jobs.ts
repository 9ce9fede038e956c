/**
 * The jobs of one simulation run in typed arrays (no object or closure per job): what the policy
 * reads and writes per job, the sizes drawn for it, the grant it has to settle (strategy (c)), and
 * how many jobs reached each terminal state.
 */
import { isoAt, type DeferAction, type JobScheduling } from '../../lib/policy/index.js';
import { Rng } from './rng.js';
import type { LongJobs } from './scenarios.js';
import type { SimSettings } from './settings.js';

/** Not settled yet. */
const ST_PENDING = 0;
/** Its result was committed. */
export const ST_COMMITTED = 1;
/** Dead-lettered (by the redrive policy or the consumer). */
export const ST_DEAD = 2;
/** Rejected or sent to review. */
export const ST_REJECTED = 3;

/** Per-job state and the terminal tallies. */
export class JobTable {
  /** The policy's attempt counter. */
  readonly attempt: Uint16Array;
  /** The policy's deferral counter. */
  readonly deferrals: Uint32Array;
  /** When the job may run (ISO-8601, as the policy keeps it). */
  readonly eligibleAt: string[];
  /** Prompt tokens of the job. */
  readonly inputTokens: Uint16Array;
  /** Completion tokens of the job. */
  readonly outputTokens: Uint16Array;
  /** One of `ST_*`. */
  readonly status: Uint8Array;
  /** Strategy (c): the key of the grant to settle when the call answers (up to `--owners`' 1,000 keys). */
  readonly settleKey: Uint16Array;
  /** Strategy (c): the tokens that grant took. */
  readonly settleTaken: Float64Array;
  /** Strategy (c): the consumer (pool instance) that holds the grant. */
  readonly settleConsumer: Int32Array;
  /** Strategy (c): the bucket shard the grant was taken from. */
  readonly settleShard: Uint8Array;
  /** Strategy (c): when the granted call started (epoch ms). */
  readonly settleCallAt: Float64Array;
  /** With a scenario's long jobs: when each job reached its terminal state (epoch ms; else empty). */
  private readonly settledAt: Float64Array;
  /** Tokens of every job (for the quota bound). */
  totalTokens = 0;
  /** Jobs committed. */
  completed = 0;
  /** Jobs dead-lettered. */
  deadLettered = 0;
  /** Jobs rejected or sent to review. */
  rejected = 0;
  /** Jobs in a terminal state. */
  terminal = 0;
  /** When the last job was settled (epoch ms). */
  lastSettled: number;

  /**
   * `n` jobs eligible at `start`, their sizes drawn from the seed's own stream (the same for every strategy),
   * the last of every `longJobs.every` with its prompt `longJobs.factor` times as long.
   */
  constructor(
    n: number,
    settings: SimSettings,
    start: number,
    withAdmission: boolean,
    private readonly longJobs?: LongJobs | undefined,
  ) {
    this.attempt = new Uint16Array(n);
    this.deferrals = new Uint32Array(n);
    this.eligibleAt = new Array<string>(n).fill(isoAt(start));
    this.inputTokens = new Uint16Array(n);
    this.outputTokens = new Uint16Array(n);
    this.status = new Uint8Array(n);
    this.settleKey = new Uint16Array(withAdmission ? n : 0);
    this.settleTaken = new Float64Array(withAdmission ? n : 0);
    this.settleConsumer = new Int32Array(withAdmission ? n : 0);
    this.settleShard = new Uint8Array(withAdmission ? n : 0);
    this.settleCallAt = new Float64Array(withAdmission ? n : 0);
    this.settledAt = new Float64Array(longJobs ? n : 0);
    const jobRng = Rng.derive(settings.seed, 1);
    for (let j = 0; j < n; j++) {
      const input = jobRng.int(settings.inputTokensMin, settings.inputTokensMax);
      this.inputTokens[j] = this.isLong(j) ? Math.min(0xffff, input * longJobs!.factor) : input;
      this.outputTokens[j] = jobRng.int(settings.outputTokensMin, settings.outputTokensMax);
      this.totalTokens += this.inputTokens[j]! + this.outputTokens[j]!;
    }
    this.lastSettled = start;
  }

  /** What the policy reads of job `j`, in `lane`. */
  scheduling(j: number, lane: string): JobScheduling {
    return { attempt: this.attempt[j]!, deferrals: this.deferrals[j]!, eligibleAt: this.eligibleAt[j]!, region: lane };
  }

  /** Job `j` was re-sent as `action` says: its attempt and deferral counters and eligibility move on. */
  deferred(j: number, action: Pick<DeferAction, 'attempt' | 'deferrals' | 'eligibleAt'>): void {
    this.attempt[j] = Math.min(65535, action.attempt);
    this.deferrals[j] = action.deferrals;
    this.eligibleAt[j] = action.eligibleAt;
  }

  /** Job `j` reached terminal `status` at `at`; throws if it had already. */
  settle(j: number, status: number, at: number): void {
    if (this.status[j] !== ST_PENDING) throw new Error(`job ${j} settled twice`);
    this.status[j] = status;
    this.terminal++;
    if (status === ST_COMMITTED) this.completed++;
    else if (status === ST_DEAD) this.deadLettered++;
    else this.rejected++;
    if (at > this.lastSettled) this.lastSettled = at;
    if (this.settledAt.length > 0) this.settledAt[j] = at;
  }

  /** Whether job `j` is one of the scenario's long jobs. */
  isLong(j: number): boolean {
    return this.longJobs !== undefined && j % this.longJobs.every === this.longJobs.every - 1;
  }

  /** With a scenario's long jobs: their figures and the other jobs', times counted from `from` (epoch ms); else `null`. */
  sizeClasses(from: number): { long: SizeClassFigures; other: SizeClassFigures } | null {
    if (!this.longJobs) return null;
    const figures = (long: boolean): SizeClassFigures => {
      let jobs = 0;
      let deferrals = 0;
      const committedAt: number[] = [];
      for (let j = 0; j < this.status.length; j++) {
        if (this.isLong(j) !== long) continue;
        jobs++;
        deferrals += this.deferrals[j]!;
        if (this.status[j] === ST_COMMITTED) committedAt.push(this.settledAt[j]! - from);
      }
      committedAt.sort((a, b) => a - b);
      const at = (q: number): number | null =>
        committedAt.length > 0 ? committedAt[Math.min(committedAt.length - 1, Math.floor(q * committedAt.length))]! : null;
      return {
        jobs,
        committed: committedAt.length,
        deferralsPerJob: jobs > 0 ? deferrals / jobs : 0,
        halfCommittedAfterMs: at(0.5),
        ninetyPercentCommittedAfterMs: at(0.9),
      };
    };
    return { long: figures(true), other: figures(false) };
  }
}

/** What the jobs of one size class went through (a scenario with long jobs: those, or the others). */
export interface SizeClassFigures {
  jobs: number;
  committed: number;
  /** Re-sends after a throttle or an admission denial, per job of the class (the policy's deferral counter). */
  deferralsPerJob: number;
  /** When half the class's committed jobs were committed, ms after the first receive (null: none committed). */
  halfCommittedAfterMs: number | null;
  /** When 90 % of them were. */
  ninetyPercentCommittedAfterMs: number | null;
}
