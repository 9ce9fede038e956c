/**
 * The jobs of one simulation run in typed arrays (no object or closure per job): what the policy
 * reads and writes per job, the sizes drawn for it, the grant it has to settle (strategy (c)), and
 * how many jobs reached each terminal state.
 */
import { isoAt, type DeferAction, type JobScheduling } from '../../lib/policy/index.js';
import { Rng } from './rng.js';
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
  /** Strategy (c): the key of the grant to settle when the call answers. */
  readonly settleKey: Int8Array;
  /** Strategy (c): the tokens that grant took. */
  readonly settleTaken: Float64Array;
  /** Strategy (c): the consumer (pool instance) that holds the grant. */
  readonly settleConsumer: Int32Array;
  /** Strategy (c): the bucket shard the grant was taken from. */
  readonly settleShard: Uint8Array;
  /** Strategy (c): when the granted call started (epoch ms). */
  readonly settleCallAt: Float64Array;
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

  /** `n` jobs eligible at `start`, their sizes drawn from the seed's own stream (the same for every strategy). */
  constructor(n: number, settings: SimSettings, start: number, withAdmission: boolean) {
    this.attempt = new Uint16Array(n);
    this.deferrals = new Uint32Array(n);
    this.eligibleAt = new Array<string>(n).fill(isoAt(start));
    this.inputTokens = new Uint16Array(n);
    this.outputTokens = new Uint16Array(n);
    this.status = new Uint8Array(n);
    this.settleKey = new Int8Array(withAdmission ? n : 0);
    this.settleTaken = new Float64Array(withAdmission ? n : 0);
    this.settleConsumer = new Int32Array(withAdmission ? n : 0);
    this.settleShard = new Uint8Array(withAdmission ? n : 0);
    this.settleCallAt = new Float64Array(withAdmission ? n : 0);
    const jobRng = Rng.derive(settings.seed, 1);
    for (let j = 0; j < n; j++) {
      this.inputTokens[j] = jobRng.int(settings.inputTokensMin, settings.inputTokensMax);
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
  }
}
