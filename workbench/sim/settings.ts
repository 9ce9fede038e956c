/**
 * What a simulation run is given: its size, the queue, backoff and Lambda settings (the lane config's
 * defaults), the jobs' token sizes, and how long each step of a record takes in virtual time.
 */
import { DEFAULT_ADMISSION_SETTINGS } from '../../lib/admission/config/settings.js';
import { DEFAULT_LANES } from '../../lib/config/lanes.js';
import { bookingWindowAtStartMs } from '../../lib/extraction/budget.js';
import type { BackoffSettings } from '../../lib/policy/index.js';

/** How long the steps of a record take (virtual ms). */
export interface Timing {
  /** Receive → the model call starts: parse, gate, duplicate-check GetItem, S3 read, admission. */
  preCallMs: number;
  /** A successful call: triangular between these (mean halfway). */
  okLatencyMinMs: number;
  okLatencyMaxMs: number;
  /** A 429 answer: uniform between these. */
  throttleLatencyMinMs: number;
  throttleLatencyMaxMs: number;
  /** A real failure (5xx or timeout): uniform between these. */
  failureLatencyMinMs: number;
  failureLatencyMaxMs: number;
  /** After the call: the commit or the re-send and ledger write. */
  afterCallMs: number;
  /** A hop (not yet eligible) or an admission denial: receive → re-send done. */
  quickRecordMs: number;
  /** Handler overhead per invocation (middy, batch response). */
  invocationOverheadMs: number;
  /** Between the end of an invocation and the mapping's next receive for that slot. */
  pollGapMs: number;
  /** EventBridge Scheduler's precision: a resume runs up to this late (uniform). */
  schedulerJitterMs: number;
}

/** The event source mapping's scale-up (see {@link SimSettings.eventSource}). */
interface EventSourceScaling {
  /** Concurrent batches when messages become available (AWS: 5). */
  initialConcurrency: number;
  /** Concurrent batches added per minute while messages remain (AWS: up to 300), added one at a time at that rate. */
  scaleUpPerMinute: number;
  /**
   * After this long with every consumer idle (nothing to receive) the scale-up starts again from
   * {@link initialConcurrency}, as after a lane pause. AWS documents no figure: one minute is assumed.
   */
  scaleDownAfterMs: number;
}

/** Everything a run needs besides the scenario and the strategy. */
export interface SimSettings {
  jobs: number;
  /**
   * Consumers the lane may run at once: the mapping's MaximumConcurrency (2..1000 in AWS), or the sum of
   * several mappings' (or of `ratelane consume` processes). The event source's scale-up and the account's
   * concurrency bound how many run ({@link SimSettings.eventSource}, {@link SimSettings.accountConcurrency}).
   */
  consumers: number;
  /**
   * How the SQS event source mapping scales (AWS Lambda, standard queues: "Lambda starts processing five
   * batches at a time with five concurrent invocations … increases the number of processes that are
   * reading batches by up to 300 more instances per minute"; it scales back "when traffic is low").
   */
  eventSource: EventSourceScaling;
  /** Lambda's concurrency for the account in the region (default quota 1,000): at most this many consumers run at once. */
  accountConcurrency: number;
  /**
   * Strategy (c): items each owner's bucket is split into (`AdmissionSettings.bucketShards`); absent: as
   * the lane sizes it (`shardsFor` of the consumers that can run and the owners).
   */
  bucketShards?: number | undefined;
  /**
   * Quota owners: the scenario's combined quota split evenly over this many keys, each its own owner
   * (`withOwners`); absent: the scenario's 4.
   */
  owners?: number | undefined;
  /**
   * Strategy (c): whether the lane is limited to the share of its quota owners left while some are out, and
   * to the share of its records the quota keeps busy once its slots lie more than a minute ahead (`booked_ahead`)
   * (`LanePauser.requestCapacity`, as the consumer does); false: only paused when none is left (to measure
   * what the limits save). Default true.
   */
  laneLimit: boolean;
  /** Records per receive (1..10). */
  batchSize: number;
  maxReceiveCount: number;
  visibilityTimeoutSeconds: number;
  backoff: BackoffSettings;
  /** Chance a call admitted by the provider fails for real (5xx / timeout). */
  failureRate: number;
  seed: number;
  /** Message body size (bytes) for SQS's 64 KiB billing chunks. */
  messageBytes: number;
  lambdaMemoryMb: number;
  /** Pollers that keep long-polling (20 s) while the queue has nothing visible. */
  idlePollers: number;
  /** Prompt tokens per job: uniform integer in [min, max]. */
  inputTokensMin: number;
  inputTokensMax: number;
  /** Completion tokens per job: uniform integer in [min, max]. */
  outputTokensMin: number;
  outputTokensMax: number;
  /** Stop after this much virtual time (jobs not done by then count as unfinished). */
  horizonMs: number;
  /**
   * Stop once the consumers have received this many records per job submitted (0: no limit): a work
   * limit that ends a strategy re-sending every job for days (strategy (b) while a daily quota is spent
   * hops each job every 900 s: at 10M jobs, billions of receives) in minutes of wall time instead of
   * hours. Jobs not settled by then count as unfinished, and the run's bill is its bill so far.
   */
  maxReceivesPerJob: number;
  /**
   * Strategy (c): completion tokens admission assumes before a consumer's first calls answer (lib/admission
   * default 512); each consumer then learns the estimate from the usage its calls report.
   */
  admissionOutputTokenEstimate: number;
  /**
   * Strategy (c): how far ahead a record's call may be booked, the record waiting for its slot
   * in-process (billed as the invocation's duration), as the consumer does (`bookWithinMs` of its
   * takes): by default the lane's booking window at the start of an invocation
   * (`bookingWindowAtStartMs`: 2 s with the default lane); 0: never, a denial is re-sent.
   */
  bookWithinMs: number;
  timing: Timing;
}

const LANE_DEFAULTS = DEFAULT_LANES.us!;

/** How long each step takes by default (virtual ms). */
const DEFAULT_TIMING: Timing = Object.freeze({
  preCallMs: 30,
  okLatencyMinMs: 1000,
  okLatencyMaxMs: 3000,
  throttleLatencyMinMs: 100,
  throttleLatencyMaxMs: 400,
  failureLatencyMinMs: 200,
  failureLatencyMaxMs: 3000,
  afterCallMs: 20,
  quickRecordMs: 20,
  invocationOverheadMs: 10,
  pollGapMs: 20,
  schedulerJitterMs: 60_000,
});

/** The defaults: the scale, the lane config's queue, backoff and memory settings. */
export const DEFAULT_SIM_SETTINGS: SimSettings = Object.freeze({
  jobs: 1_000_000,
  consumers: 1000,
  eventSource: Object.freeze({ initialConcurrency: 5, scaleUpPerMinute: 300, scaleDownAfterMs: 60_000 }),
  accountConcurrency: 1000,
  laneLimit: true,
  batchSize: LANE_DEFAULTS.queue.batchSize,
  maxReceiveCount: LANE_DEFAULTS.queue.maxReceiveCount,
  visibilityTimeoutSeconds: LANE_DEFAULTS.queue.visibilityTimeoutSeconds,
  backoff: { ...LANE_DEFAULTS.backoff },
  failureRate: 0.001,
  seed: 1,
  messageBytes: 1024,
  lambdaMemoryMb: LANE_DEFAULTS.consumer.memoryMb,
  idlePollers: 5,
  inputTokensMin: 200,
  inputTokensMax: 1000,
  outputTokensMin: 50,
  outputTokensMax: 250,
  horizonMs: 30 * 86_400_000,
  maxReceivesPerJob: 40,
  admissionOutputTokenEstimate: DEFAULT_ADMISSION_SETTINGS.outputTokenEstimate,
  bookWithinMs: bookingWindowAtStartMs(LANE_DEFAULTS),
  timing: DEFAULT_TIMING,
});

/** Progress of a running simulation. */
export interface SimProgress {
  /** Virtual time since the start (ms). */
  virtualMs: number;
  /** Jobs committed, dead-lettered or rejected so far. */
  terminal: number;
  jobs: number;
  /** Events handled so far. */
  events: number;
  modelCalls: number;
}

/** Throws a `RangeError` for a size the simulator cannot run: jobs 1..2^28, consumers 1 or more, batches of 1..10. */
export function checkSimSettings(settings: Pick<SimSettings, 'jobs' | 'consumers' | 'batchSize'>): void {
  const { jobs, consumers, batchSize } = settings;
  if (!Number.isInteger(jobs) || jobs < 1 || jobs >= 2 ** 28) throw new RangeError(`jobs must be an integer in 1..2^28, got ${jobs}`);
  if (!Number.isInteger(consumers) || consumers < 1) throw new RangeError(`consumers must be a positive integer, got ${consumers}`);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10) throw new RangeError(`batchSize must be 1..10, got ${batchSize}`);
}
