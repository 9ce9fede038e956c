/**
 * The simulated workloads and the quota-bound minimum each is measured against.
 *
 * Both scenarios: 1,000,000 jobs submitted at once, 1,000 concurrent consumers (the mapping's
 * MaximumConcurrency), batches of 10, 4 provider keys (each its own quota owner) with 10,000
 * requests and 10,000,000 tokens per minute each (the shape of an OpenAI usage-tier-4 limit for a
 * small model; an assumption, not a quote). Jobs carry 200-1,000 prompt tokens and produce 50-250
 * completion tokens (uniform, seeded): ~750 tokens a call, so requests, not tokens, bind.
 *
 * - `minute`: no daily quota that matters (14.4M requests per key per day). Bound: jobs / 40,000
 *   requests a minute = 25 min.
 * - `day`: 200,000 requests per key per day, a fixed window that resets at 00:00 UTC; the run starts
 *   at 20:00 UTC. The 800,000 calls of the first day go at the minute limit (20 min), then every key
 *   is out until midnight; the last 200,000 go after the reset. Bound: 4 h 05 min.
 * - `tokens` (not in the default run: `--scenario tokens` or `all`): 3,000,000 tokens per minute per key,
 *   and one job in ten has a prompt 8 times as long (1,600-8,000 tokens): about 1,170 tokens a call on
 *   average, so tokens, not requests, bind — the bench's `uneven-tokens` at scale and in real time.
 *   The report shows the long jobs apart from the others (`SizeClassFigures`). Bound: 1 h 36 min.
 */
import type { KeyLimits } from './provider-model.js';

/** The scenarios' names. */
export type ScenarioId = 'minute' | 'day' | 'tokens';

/** Jobs with a longer prompt: the last of every `every` jobs has its drawn prompt `factor` times as long. */
export interface LongJobs {
  every: number;
  factor: number;
}

/** One workload: when it starts, the provider's keys and their limits, and the jobs' sizes where they are uneven. */
export interface Scenario {
  id: ScenarioId;
  title: string;
  /** Virtual start (epoch ms). */
  start: number;
  /** The daily reset, as ms after 00:00 UTC. */
  dailyResetOffsetMs: number;
  keys: number;
  limits: KeyLimits;
  /** Some jobs' prompts longer than the settings' range; absent: every job drawn from it. */
  longJobs?: LongJobs | undefined;
}

/** The scenarios (see the file's comment). */
export const SCENARIOS: Readonly<Record<ScenarioId, Scenario>> = Object.freeze({
  minute: {
    id: 'minute',
    title: 'minute-bound: 4 keys x 10,000 RPM / 10M TPM, no binding daily quota',
    start: Date.parse('2026-03-02T09:00:00.000Z'),
    dailyResetOffsetMs: 0,
    keys: 4,
    limits: { requestsPerMinute: 10_000, tokensPerMinute: 10_000_000, requestsPerDay: 14_400_000 },
  },
  day: {
    id: 'day',
    title: 'day-bound: 4 keys x 10,000 RPM / 10M TPM / 200,000 RPD (reset 00:00 UTC), start 20:00 UTC',
    start: Date.parse('2026-03-02T20:00:00.000Z'),
    dailyResetOffsetMs: 0,
    keys: 4,
    limits: { requestsPerMinute: 10_000, tokensPerMinute: 10_000_000, requestsPerDay: 200_000 },
  },
  tokens: {
    id: 'tokens',
    title: 'token-bound: 4 keys x 10,000 RPM / 3M TPM, one job in ten with an 8x prompt',
    start: Date.parse('2026-03-02T09:00:00.000Z'),
    dailyResetOffsetMs: 0,
    keys: 4,
    limits: { requestsPerMinute: 10_000, tokensPerMinute: 3_000_000, requestsPerDay: 14_400_000 },
    longJobs: { every: 10, factor: 8 },
  },
});

/**
 * `scenario` with its combined quota split evenly over `owners` keys, each its own quota owner (every
 * per-key limit times the scenario's keys over `owners`, rounded down, so the bound stays a real
 * minimum): tens of owners sharing one lane's quota, as a lane with many provider accounts has. The
 * scenario itself when `owners` is absent or its own count.
 */
export function withOwners(scenario: Scenario, owners: number | undefined): Scenario {
  if (owners === undefined || owners === scenario.keys) return scenario;
  if (!Number.isInteger(owners) || owners < 1) throw new RangeError(`owners must be a positive integer, got ${owners}`);
  const split = (limit: number) => Math.floor((limit * scenario.keys) / owners);
  const limits = {
    requestsPerMinute: split(scenario.limits.requestsPerMinute),
    tokensPerMinute: split(scenario.limits.tokensPerMinute),
    requestsPerDay: split(scenario.limits.requestsPerDay),
  };
  const each = `${limits.requestsPerMinute.toLocaleString('en-US')} RPM / ${limits.tokensPerMinute.toLocaleString('en-US')} TPM / ${limits.requestsPerDay.toLocaleString('en-US')} RPD`;
  return { ...scenario, keys: owners, limits, title: `${scenario.title}; split over ${owners} keys (${each} each)` };
}

/** Every scenario, in the order the tables show them (`--scenario all`). */
export const SCENARIO_IDS: readonly ScenarioId[] = ['minute', 'day', 'tokens'];
/** The scenarios a run without `--scenario` simulates. */
export const DEFAULT_SCENARIO_IDS: readonly ScenarioId[] = ['minute', 'day'];

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/**
 * The quota-bound minimum drain time in ms — a perfect scheduler's: the time the combined limits
 * need for `jobs` calls of `totalTokens` tokens (one call per job), at the per-minute rate (requests
 * or tokens, whichever binds), waiting for each daily reset whenever the day's combined quota is
 * spent. Burst-aware, as the bench's bounds are: the providers' per-minute buckets start full, and
 * are full again after a wait for a reset, so a minute's calls go at once each time.
 */
export function quotaBoundMs(scenario: Pick<Scenario, 'start' | 'dailyResetOffsetMs' | 'keys' | 'limits'>, jobs: number, totalTokens: number): number {
  if (jobs <= 0) return 0;
  const { keys, limits } = scenario;
  const meanTokens = totalTokens / jobs;
  const callsPerMs = keys * Math.min(limits.requestsPerMinute / MINUTE_MS, meanTokens > 0 ? limits.tokensPerMinute / (MINUTE_MS * meanTokens) : Infinity);
  const perDay = keys * limits.requestsPerDay;
  const burst = callsPerMs * MINUTE_MS;
  let remaining = jobs;
  let t = scenario.start;
  // Full buckets: at the start, and after a wait for a reset (not when the rate ran through a day's end).
  let full = true;
  for (let guard = 0; guard < 100_000; guard++) {
    const windowEnd = (Math.floor((t - scenario.dailyResetOffsetMs) / DAY_MS) + 1) * DAY_MS + scenario.dailyResetOffsetMs;
    const atOnce = full ? Math.min(burst, perDay) : 0;
    const canDo = Math.min(perDay, atOnce + (windowEnd - t) * callsPerMs);
    if (remaining <= canDo) return t + Math.max(0, remaining - atOnce) / callsPerMs - scenario.start;
    remaining -= canDo;
    full = canDo >= perDay;
    t = windowEnd;
  }
  throw new RangeError('quota bound does not converge');
}
