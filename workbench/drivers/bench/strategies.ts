/**
 * The strategies `npm run bench` compares, as in the simulator (workbench/sim/strategies.ts):
 * - (a) naive: every failure, a 429 included, is a real failure: back through the visibility timeout
 *   with the lane's exponential backoff (capped full jitter from `ApproximateReceiveCount`), and the
 *   redrive policy dead-letters it after `maxReceiveCount` (5) receives. No re-send, no admission. Done
 *   by reclassifying the model adapter's throttle errors as `not_rate_limit` before the consumer sees
 *   them, so the consumer and the policy run unchanged.
 * - (b) reschedule: 429s are deferred by a re-send with `DelaySeconds` (the policy's defer path);
 *   admission off (keys round robin, no shared cooldowns, no lane pause).
 * - (c) admission: (b) plus admission control (shared key pool, token buckets per quota owner,
 *   cooldowns, lane pause).
 *
 * Each strategy gets its own queues, bucket and tables (a name suffix) and a fresh fake provider.
 */
import { AWS_LIMITS, type LaneConfig, type LaneSet } from '../../../lib/config/lanes.js';
import { recordsAdmissionCanStart } from '../../../lib/extraction/budget.js';
import { ProviderError, type ExtractionRequest, type ExtractionResponse, type ModelAdapter } from '../../../lib/providers/model.js';
import { NO_DAILY_LIMIT, type ScenarioChoice, type ScenarioPlan } from './scenarios/scenarios.js';
import { localRunLanes, type LocalLaneSettings } from '../lanes.js';
import { withOverrides } from '../overrides.js';

/** The strategies the bench compares. */
export type BenchStrategyId = 'naive' | 'reschedule' | 'admission';

/** One strategy: what changes in the consumer's wiring. */
export interface BenchStrategy {
  id: BenchStrategyId;
  label: string;
  description: string;
  /** Throttles (429s) are handed to the consumer as real failures. */
  throttleIsFailure: boolean;
  /** Admission control on. */
  admission: boolean;
}

/** Options of one bench run (the CLI flags). */
export interface BenchOptions {
  jobs: number;
  /** Provider keys per lane (each its own quota owner). */
  keys: number;
  providerRpm: number;
  providerTpm: number;
  /** How long a provider "minute" lasts here; the lanes' time settings scale with it. */
  minuteMs: number;
  strategies: BenchStrategyId[];
  /** Messages each floor loop times (after a short warm-up); 0 skips the floors. */
  floorMessages: number;
  /** Jobs the overhead probe sends one at a time through the consumer of (c); 0 skips it. */
  probeMessages: number;
  /** Floor messages that warm the emulators before anything is measured (`warmEmulators`); 0 skips the warm-up. */
  warmupMessages: number;
  seed: number;
  /** Per strategy: stop waiting after this many seconds. */
  timeLimitSeconds: number;
  /** Exit 1 when strategy (c) misses a target (default: targets are reported, not enforced). */
  strict: boolean;
  json: boolean;
  logFile: string | undefined;
  /** Write the HTML report (drain curves against the quota line) to this file after the run (the baseline's). */
  html?: string;
  /** Which scenario to run (absent: the baseline; see `scenarios/scenarios.ts`). */
  scenario?: ScenarioChoice;
  /**
   * The share of each per-minute limit the lanes are configured with that the fake provider serves (absent: 1):
   * a config that overstates the quota, or another client spending the rest. The bounds are the provider's.
   */
  providerShare?: number;
}

/** A per-minute limit as the fake provider serves it at `share` of the configured one (at least 1). */
export function servedLimit(configured: number, share = 1): number {
  return share >= 1 ? configured : Math.max(1, Math.floor(configured * share));
}

/** `lanes` with the per-minute limits the fake provider serves (`BenchOptions.providerShare`): what the bounds are worked out on. */
export function servedLanes(lanes: LaneSet, share = 1): LaneSet {
  if (share >= 1) return lanes;
  return Object.fromEntries(
    Object.entries(lanes).map(([name, lane]) => {
      const { requestsPerMinute, tokensPerMinute } = lane.provider.limits;
      const limits = {
        ...lane.provider.limits,
        requestsPerMinute: servedLimit(requestsPerMinute, share),
        tokensPerMinute: servedLimit(tokensPerMinute, share),
      };
      return [name, { ...lane, provider: { ...lane.provider, limits } }];
    }),
  );
}

/** Where the bench's consumer logs go by default. */
export const BENCH_LOG_FILE = '.cache/bench/consumer.log';

/** Every strategy, by id. */
export const BENCH_STRATEGIES: Readonly<Record<BenchStrategyId, BenchStrategy>> = Object.freeze({
  naive: {
    id: 'naive',
    label: '(a) naive',
    description: 'every failure incl. 429 -> visibility-timeout backoff, DLQ after 5 receives; no admission',
    throttleIsFailure: true,
    admission: false,
  },
  reschedule: {
    id: 'reschedule',
    label: '(b) reschedule',
    description: '429 -> re-send with DelaySeconds (policy defer path); no admission',
    throttleIsFailure: false,
    admission: false,
  },
  admission: {
    id: 'admission',
    label: '(c) admission',
    description: '(b) + admission: key pool, token buckets, shared cooldowns, lane pause',
    throttleIsFailure: false,
    admission: true,
  },
});

/** The strategies in the order they run and are reported. */
export const STRATEGY_ORDER: readonly BenchStrategyId[] = ['naive', 'reschedule', 'admission'];
/** The names `--strategies` accepts: a letter or the id. */
export const STRATEGY_ALIASES: Readonly<Record<string, BenchStrategyId>> = {
  a: 'naive',
  naive: 'naive',
  b: 'reschedule',
  reschedule: 'reschedule',
  c: 'admission',
  admission: 'admission',
};

/** Targets for strategy (c), as the README states them ("Benchmark results"). */
export const BENCH_TARGETS = Object.freeze({
  /** drain time / burst-aware minimum (a perfect scheduler's drain), at most; only for a strategy that committed every job */
  burstAwareRatio: 1.05,
  /** model calls per completion, at most */
  modelCallsPerCompletion: 1.03,
  /** receives per completion (first delivery, re-sends and redeliveries), at most */
  attemptsPerCompletion: 1.1,
  /** admission denials (each a re-send and another take) per completion, at most */
  admissionDeniedPerCompletion: 0.1,
  deadLettered: 0,
  lost: 0,
  /** consumer overhead p50 / floor p50, at most */
  overheadToFloor: 2,
  /** p99 of an admission take over the whole drain, its start included (ms), at most */
  admissionAcquireP99Ms: 50,
  /** conditional bucket writes lost to another consumer's write, per take, at most */
  conditionFailuresPerTake: 0.05,
});

const THROTTLE_KINDS = new Set(['rate_limit', 'quota_exhausted', 'billing']);

/**
 * The naive consumer's view of the model: a throttle (429) is an ordinary provider error
 * (`not_rate_limit`), so the consumer fails it through the visibility timeout like any other.
 */
export function naiveModel(model: ModelAdapter): ModelAdapter {
  return withOverrides(model, {
    extract: async (request: ExtractionRequest): Promise<ExtractionResponse> => {
      try {
        return await model.extract(request);
      } catch (error) {
        if (error instanceof ProviderError && THROTTLE_KINDS.has(error.classification.kind)) {
          throw new ProviderError(
            error.message,
            error.provider,
            error.status,
            { kind: 'not_rate_limit', retryAfterMs: null, resetAt: null },
            {
              cause: error,
              requestTooLarge: error.requestTooLarge,
            },
          );
        }
        throw error;
      }
    },
  });
}

/**
 * The share of what admission can start within a record's in-process wait that the bench's mapping
 * holds in flight: the rest of the wait is headroom for the time a record spends before its take
 * (the poller's receive, the claim, the document read, a take under load).
 */
const IN_FLIGHT_SHARE = 0.75;
/** At most this many concurrent invocations per lane (Lambda's mapping starts with five pollers). */
const BENCH_MAX_POLLERS = 5;

/**
 * The bench lanes of one strategy: `localRunLanes` with every resource name suffixed by `tag`, and
 * each lane's event source mapping sized to its quota (a platform engineer's `maximumConcurrency` ×
 * `batchSize`): about {@link IN_FLIGHT_SHARE} of what admission can start within a record's
 * in-process wait (`recordsAdmissionCanStart`), in up to {@link BENCH_MAX_POLLERS} invocations of
 * small batches, so a poller whose records are done pulls again while the others' are still booked.
 * Where tokens per minute bind, `tokensPerJob` (the jobs' mean) sizes it by the calls the tokens hold.
 * A mapping holding more records receives them only to send them back. Every strategy runs with the
 * same mapping. The daily quota is `providerDaily` when given, else one never reached.
 */
export function benchLanes(
  options: Omit<LocalLaneSettings, 'providerDaily'> & { providerDaily?: number; tokensPerJob?: number | undefined },
  tag: string,
): LaneSet {
  const base = localRunLanes({ ...options, providerDaily: options.providerDaily ?? NO_DAILY_LIMIT });
  return Object.fromEntries(
    Object.entries(base).map(([name, lane]) => {
      const startable = recordsAdmissionCanStart(lane, options.minuteMs, options.tokensPerJob);
      const inFlight = Math.max(AWS_LIMITS.minMaximumConcurrency, Math.floor(IN_FLIGHT_SHARE * startable));
      const pollers = Math.min(BENCH_MAX_POLLERS, inFlight);
      const batchSize = Math.min(AWS_LIMITS.maxBatchEntries, Math.max(1, Math.floor(inFlight / pollers)));
      return [
        name,
        {
          ...lane,
          queue: { ...lane.queue, batchSize },
          consumer: { ...lane.consumer, maximumConcurrency: pollers },
          resources: Object.fromEntries(Object.entries(lane.resources).map(([k, v]) => [k, `${v}-${tag}`])) as LaneConfig['resources'],
        },
      ];
    }),
  );
}

/** The bench lanes of `plan`'s quota: {@link benchLanes}, the mapping sized by the plan's tokens a job where those bind. */
export function scenarioLanes(options: BenchOptions, plan: Pick<ScenarioPlan, 'quota' | 'tokensPerJob'>, tag: string): LaneSet {
  return benchLanes({ ...options, ...plan.quota, tokensPerJob: plan.tokensPerJob }, tag);
}
