/**
 * The scenarios of `npm run bench`: each a job set, a provider quota, the keys out
 * of credit, and its own burst-aware bound (a perfect scheduler's drain on that quota). Pure: the
 * clock-dependent part of a bound (where the daily reset falls) comes in as a number.
 *
 * Per lane the keys are `--keys` (default 2), each its own quota owner, and the minute is `--minute-ms`:
 * - `baseline`: the bench without a scenario (the corpus, `--provider-rpm` and `--provider-tpm`, no daily limit);
 * - `uneven-tokens`: one job in ten 5–10× longer ({@link unevenDocuments}); tokens per minute bind
 *   ({@link UNEVEN_TOKENS_TPM} per key), requests per minute are loose (4 × `--provider-rpm`);
 * - `daily-reset`: a fixed daily request quota per key of 60 % of the busiest lane's jobs over its keys,
 *   so it runs out mid-run, and a scaled day twice as long as spending one day's quota takes at the
 *   per-minute limit, so the rest waits for the reset; the provider's day and the consumer's start
 *   when each strategy's stack starts;
 * - `key-out-of-credit`: the first key of each lane answers `insufficient_quota` for the whole run;
 * - `two-consumers`: the baseline's jobs and quota, each lane's consumers split into two processes
 *   (each its own poller, AWS clients, admission store and handler instances; for (c) each an OS
 *   process, `ratelane consume`, else `consumerProcesses` of the local stack) sharing the lane's keys
 *   and rate-state table, the lane's concurrency split between them;
 * - `noisy-neighbour`: tenant A's {@link NOISY_BACKLOG} jobs queued at the start, tenant B's
 *   {@link NOISY_LATER} sent {@link LATER_AFTER_MINUTES} minutes into the drain, equal weights, the
 *   baseline's quota (binding throughout); B is held to its fair share of the quota (half of it);
 * - `urgent-behind-bulk`: {@link URGENT_BACKLOG} bulk jobs queued at the start, {@link URGENT_LATER}
 *   urgent ones sent {@link LATER_AFTER_MINUTES} minutes into the drain, at twice the baseline's
 *   requests per minute (so the urgent jobs' own calls take less than a minute of the lane's quota);
 *   the urgent jobs' p95 time from submission to commit is held to {@link URGENT_P95_MINUTES} minutes.
 * These two ignore `--jobs`: their job counts are the scenario.
 */
import type { LaneSet } from '../../../../lib/config/lanes.js';
import type { DocumentInput } from '../../../../lib/intake/producer.js';
import { RatelaneError } from '../../../../lib/platform/errors.js';
import { dailyBound, requestBound, tokenBound, type LaneLoad, type ScenarioBound } from './bounds.js';
import { LONG_EVERY, providerTokensOf, unevenDocuments } from './docs.js';
import { corpusDocuments } from '../../lanes.js';

/** The scenarios, by name. */
export type BenchScenarioName = 'baseline' | 'uneven-tokens' | 'daily-reset' | 'key-out-of-credit' | 'two-consumers' | 'noisy-neighbour' | 'urgent-behind-bulk';
/** What `--scenario` accepts: a scenario, or `all` (the baseline, then the others). */
export type ScenarioChoice = BenchScenarioName | 'all';

/** The scenarios in the order `all` runs them. */
export const SCENARIO_NAMES: readonly BenchScenarioName[] = [
  'baseline',
  'uneven-tokens',
  'daily-reset',
  'key-out-of-credit',
  'two-consumers',
  'noisy-neighbour',
  'urgent-behind-bulk',
];
/** Every value `--scenario` accepts. */
export const SCENARIO_CHOICES: readonly ScenarioChoice[] = [...SCENARIO_NAMES, 'all'];

/** Tokens per minute per key in `uneven-tokens`: the longest job (about 6 600 tokens) fits one key's minute with admission's margin. */
const UNEVEN_TOKENS_TPM = 10_000;
/** Requests per minute per key in `uneven-tokens`, as a multiple of `--provider-rpm`: loose enough that tokens bind. */
const UNEVEN_TOKENS_RPM_FACTOR = 4;
/** `daily-reset`: each lane's daily quota (all its keys) is this share of the busiest lane's jobs. */
const DAILY_SHARE_OF_JOBS = 0.6;
/** `daily-reset`: the day lasts this many times as long as one day's quota takes at the per-minute limit. */
const DAY_TO_SPEND_RATIO = 2;
/** The daily quota of a scenario without one: never reached. */
export const NO_DAILY_LIMIT = 100_000_000;
/** The key of each lane that `key-out-of-credit` leaves without credit (the lanes' keys are `key-1`, `key-2`, …). */
export const DEAD_KEY_ID = 'key-1';
/** Consumer processes per lane in `two-consumers`. */
const TWO_CONSUMERS_PROCESSES = 2;
/** `noisy-neighbour`: tenant A's backlog and tenant B's later jobs. */
const NOISY_BACKLOG = 2_000;
const NOISY_LATER = 100;
/** `urgent-behind-bulk`: the bulk backlog and the urgent jobs after it. */
const URGENT_BACKLOG = 1_000;
const URGENT_LATER = 50;
/** `urgent-behind-bulk`: requests per minute per key, as a multiple of `--provider-rpm`. */
const URGENT_RPM_FACTOR = 2;
/** The later jobs of both are sent this many provider minutes after the drain started. */
const LATER_AFTER_MINUTES = 4;
/** `urgent-behind-bulk`: the urgent jobs' p95 from submission to commit, in provider minutes, at most. */
export const URGENT_P95_MINUTES = 2;
/** `noisy-neighbour`: tenant B's last commit within this many times its fair share's time. */
export const FAIR_SHARE_RATIO = 1.2;
/** The tenants of `noisy-neighbour`. */
const NOISY_TENANTS = { backlog: 'tenant-a', later: 'tenant-b' } as const;

/**
 * Jobs sent while a scenario's drain runs, and what they are held to: `fair-share` (their last commit,
 * from their submission, against the time their tenant's weighted share of the quota needs for them)
 * or `urgent` (their p95 from submission to commit against {@link URGENT_P95_MINUTES} minutes).
 */
export interface LaterSubmission {
  afterMs: number;
  documents: DocumentInput[];
  heldTo: 'fair-share' | 'urgent';
}

/** The bench's settings a scenario starts from. */
export interface ScenarioInputs {
  jobs: number;
  /** Keys per lane, each its own quota owner. */
  keys: number;
  providerRpm: number;
  providerTpm: number;
  minuteMs: number;
}

/** The provider's quota per key in a scenario, as the fake provider and the lanes' config both get it. */
interface ScenarioQuota {
  providerRpm: number;
  providerTpm: number;
  /** Requests per fixed day. */
  providerDaily: number;
  /** Length of the provider's day (ms). */
  dayMs: number;
  /**
   * The daily quota binds: each strategy's provider day starts when its stack starts, and the
   * consumer's admission is told the same reset (else the provider's day starts when the provider does).
   */
  fixedDay: boolean;
}

/** Which of the bounds of `bounds.ts` a scenario is held to. */
type ScenarioBoundKind = 'requests' | 'tokens' | 'daily';

/** One scenario, ready to run. */
export interface ScenarioPlan {
  name: BenchScenarioName;
  /** What it sets, in one line with its numbers. */
  description: string;
  documents: DocumentInput[];
  quota: ScenarioQuota;
  /** Key ids (of every lane) out of credit for the whole run. */
  outOfCreditKeyIds: string[];
  boundKind: ScenarioBoundKind;
  /** Consumer processes per lane, sharing its keys and rate-state table (the local stack's `consumerProcesses`). */
  consumerProcesses: number;
  /** Where tokens per minute bind: the provider tokens a job takes on average (the mapping is sized by it, as a platform engineer would). */
  tokensPerJob?: number;
  /** Jobs sent while the drain runs (`noisy-neighbour`, `urgent-behind-bulk`). */
  later?: LaterSubmission;
}

/** `documents` as other jobs: their source ids marked `#<mark>`, with `extra` fields (a tenant, a priority). */
function marked(documents: DocumentInput[], mark: string, extra: Partial<DocumentInput>): DocumentInput[] {
  return documents.map((d) => ({ ...d, sourceId: `${d.sourceId}#${mark}`, ...extra }));
}

/** A scenario that cannot run with the given settings. */
export class BenchScenarioError extends RatelaneError {
  override name = 'BenchScenarioError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/** Jobs per lane of `documents`, in the lanes' first-seen order. */
export function jobsPerLane(documents: readonly Pick<DocumentInput, 'region'>[]): Record<string, number> {
  const perLane: Record<string, number> = {};
  for (const doc of documents) perLane[doc.region] = (perLane[doc.region] ?? 0) + 1;
  return perLane;
}

/** `scenario` on `inputs`. @throws {BenchScenarioError} for `key-out-of-credit` with fewer than 2 keys per lane */
export function planScenario(scenario: BenchScenarioName, inputs: ScenarioInputs): ScenarioPlan {
  const { jobs, keys, providerRpm, providerTpm, minuteMs } = inputs;
  const base = { providerRpm, providerTpm, providerDaily: NO_DAILY_LIMIT, dayMs: minuteMs * 1440, fixedDay: false };
  const perLane = `per lane ${keys} key(s), each its own quota owner`;
  switch (scenario) {
    case 'baseline':
      return {
        name: scenario,
        description: `the corpus; ${perLane}, ${providerRpm} rpm and ${providerTpm} tpm per key, no daily limit`,
        documents: corpusDocuments(jobs),
        quota: base,
        outOfCreditKeyIds: [],
        boundKind: 'requests',
        consumerProcesses: 1,
      };
    case 'uneven-tokens': {
      const rpm = providerRpm * UNEVEN_TOKENS_RPM_FACTOR;
      const documents = unevenDocuments(jobs);
      const long = documents.filter((d) => d.lengthFactor > 1).length;
      return {
        name: scenario,
        description: `the corpus with ${long} of ${jobs} jobs (one in ${LONG_EVERY}) 5-10x longer; ${perLane}, ${UNEVEN_TOKENS_TPM} tpm (binding) and ${rpm} rpm per key, no daily limit`,
        documents,
        quota: { ...base, providerRpm: rpm, providerTpm: UNEVEN_TOKENS_TPM },
        outOfCreditKeyIds: [],
        boundKind: 'tokens',
        consumerProcesses: 1,
        tokensPerJob: documents.reduce((n, d) => n + providerTokensOf(d), 0) / Math.max(1, documents.length),
      };
    }
    case 'daily-reset': {
      const documents = corpusDocuments(jobs);
      const busiest = Math.max(...Object.values(jobsPerLane(documents)));
      const daily = Math.max(1, Math.ceil((DAILY_SHARE_OF_JOBS * busiest) / keys));
      const dayMinutes = Math.max(2, Math.ceil((DAY_TO_SPEND_RATIO * daily) / providerRpm));
      return {
        name: scenario,
        description:
          `the corpus; ${perLane}, ${providerRpm} rpm and ${daily} requests per fixed day per key; ` +
          `a day lasts ${dayMinutes} minutes (${dayMinutes * minuteMs} ms) and starts when each strategy's stack starts`,
        documents,
        quota: { ...base, providerDaily: daily, dayMs: dayMinutes * minuteMs, fixedDay: true },
        outOfCreditKeyIds: [],
        boundKind: 'daily',
        consumerProcesses: 1,
      };
    }
    case 'key-out-of-credit':
      if (keys < 2) throw new BenchScenarioError(`scenario key-out-of-credit needs 2 or more keys per lane (one is out of credit), got ${keys}`);
      return {
        name: scenario,
        description: `the corpus; ${perLane}, ${providerRpm} rpm and ${providerTpm} tpm per key; ${DEAD_KEY_ID} of each lane out of credit for the whole run`,
        documents: corpusDocuments(jobs),
        quota: base,
        outOfCreditKeyIds: [DEAD_KEY_ID],
        boundKind: 'requests',
        consumerProcesses: 1,
      };
    case 'two-consumers':
      return {
        name: scenario,
        description:
          `the corpus; ${perLane}, ${providerRpm} rpm and ${providerTpm} tpm per key, no daily limit; each lane's consumers run as ` +
          `${TWO_CONSUMERS_PROCESSES} processes (each its own poller, AWS clients, admission store and handler instances) sharing its keys and rate-state table`,
        documents: corpusDocuments(jobs),
        quota: base,
        outOfCreditKeyIds: [],
        boundKind: 'requests',
        consumerProcesses: TWO_CONSUMERS_PROCESSES,
      };
    case 'noisy-neighbour':
      return {
        name: scenario,
        description:
          `tenant A's ${NOISY_BACKLOG} jobs queued, tenant B's ${NOISY_LATER} sent ${LATER_AFTER_MINUTES} minutes into the drain, equal weights; ` +
          `${perLane}, ${providerRpm} rpm and ${providerTpm} tpm per key (binding), no daily limit`,
        documents: marked(corpusDocuments(NOISY_BACKLOG), 'a', { tenant: NOISY_TENANTS.backlog }),
        quota: base,
        outOfCreditKeyIds: [],
        boundKind: 'requests',
        consumerProcesses: 1,
        later: {
          afterMs: LATER_AFTER_MINUTES * minuteMs,
          documents: marked(corpusDocuments(NOISY_LATER), 'b', { tenant: NOISY_TENANTS.later }),
          heldTo: 'fair-share',
        },
      };
    case 'urgent-behind-bulk': {
      const rpm = providerRpm * URGENT_RPM_FACTOR;
      return {
        name: scenario,
        description:
          `${URGENT_BACKLOG} bulk jobs queued, ${URGENT_LATER} urgent ones sent ${LATER_AFTER_MINUTES} minutes into the drain (class weights urgent 9, bulk 1); ` +
          `${perLane}, ${rpm} rpm and ${providerTpm} tpm per key (binding), no daily limit`,
        documents: corpusDocuments(URGENT_BACKLOG),
        quota: { ...base, providerRpm: rpm },
        outOfCreditKeyIds: [],
        boundKind: 'requests',
        consumerProcesses: 1,
        later: {
          afterMs: LATER_AFTER_MINUTES * minuteMs,
          documents: marked(corpusDocuments(URGENT_LATER), 'urgent', { priority: 'urgent' }),
          heldTo: 'urgent',
        },
      };
    }
  }
}

/** A submitted job as the bound counts it: its lane and its document. */
export interface SentDocument {
  lane: string;
  document: Pick<DocumentInput, 'text' | 'schemaVersion' | 'promptVersion'>;
}

/**
 * Each lane's load: its sent jobs, their tokens (only for a `tokens` bound: counting them runs the
 * fake model once per job), its quota owners with credit, and its limits per key.
 */
export function laneLoads(lanes: LaneSet, sent: readonly SentDocument[], plan: Pick<ScenarioPlan, 'outOfCreditKeyIds' | 'boundKind'>): LaneLoad[] {
  const dead = new Set(plan.outOfCreditKeyIds);
  return Object.values(lanes).flatMap((lane) => {
    const mine = sent.filter((s) => s.lane === lane.name);
    if (mine.length === 0) return [];
    const { requestsPerMinute, tokensPerMinute, requestsPerDay } = lane.provider.limits;
    return [
      {
        lane: lane.name,
        jobs: mine.length,
        tokens: plan.boundKind === 'tokens' ? mine.reduce((n, s) => n + providerTokensOf(s.document), 0) : 0,
        owners: new Set(lane.provider.keys.filter((k) => !dead.has(k.id)).map((k) => k.quotaOwner)).size,
        rpm: requestsPerMinute,
        tpm: tokensPerMinute,
        daily: requestsPerDay,
      },
    ];
  });
}

/**
 * The scenario's bound on `loads`. `firstResetMs`: for a `daily` bound, the first daily reset after
 * the submission started (ms), where the strategy's day began before it.
 */
export function scenarioBound(
  plan: Pick<ScenarioPlan, 'boundKind' | 'quota'>,
  loads: readonly LaneLoad[],
  minuteMs: number,
  firstResetMs: number,
): ScenarioBound {
  switch (plan.boundKind) {
    case 'requests':
      return requestBound(loads, minuteMs);
    case 'tokens':
      return tokenBound(loads, minuteMs);
    case 'daily':
      return dailyBound(loads, minuteMs, firstResetMs, plan.quota.dayMs);
  }
}
