/**
 * What a simulation run reports: the figures of one strategy in one scenario, assembled from the
 * run's tallies, the queue's, the provider's and admission's counters, priced per million jobs.
 */
import { costPerMillionJobs, type CostPerMillion, type Usage } from './cost.js';
import type { JobTable, SizeClassFigures } from './jobs.js';
import type { ProviderCounters, ProviderModel } from './provider-model.js';
import { quotaBoundMs, type Scenario } from './scenarios.js';
import { ITEM_WRITE_CEILING, type AdmissionCounters, type SimKeyPool } from './sim-key-pool.js';
import type { SqsCounters, SqsModel } from './sqs-model.js';
import type { Strategy } from './strategies.js';

/**
 * Why a run ended: `done` (every job settled, or nothing left to happen), `horizon` (its virtual time
 * ran out: `SimSettings.horizonMs`) or `receive-limit` (its work limit: `SimSettings.maxReceivesPerJob`).
 */
export type StoppedBy = 'done' | 'horizon' | 'receive-limit';

/** Figures of one strategy in one scenario. */
export interface StrategyResult {
  scenario: string;
  strategy: string;
  label: string;
  jobs: number;
  completed: number;
  deadLettered: number;
  rejected: number;
  /** Jobs neither settled nor in the queue (must be 0). */
  lost: number;
  /** Jobs still queued when the run stopped (see {@link StrategyResult.stoppedBy}). */
  unfinished: number;
  /**
   * Why the run ended. A run stopped before every job settled reports what it did until then: its drain
   * (and drain over bound) and its bill are lower bounds.
   */
  stoppedBy: StoppedBy;
  /**
   * First job received → last job settled (committed, dead-lettered or rejected), ms; for a run stopped
   * with jobs unfinished, first job received → the stop.
   */
  drainMs: number;
  boundMs: number;
  drainOverBound: number;
  modelCalls: number;
  callsPerCompletion: number;
  rateLimited: number;
  quotaExhausted: number;
  failedCalls: number;
  /** Calls that did not produce a completion: 429s and failed calls. */
  wastedCalls: number;
  /** Records delivered to consumers. */
  receives: number;
  /** Re-sends of jobs not yet eligible (waits past 900 s). */
  hops: number;
  /** Re-sends after a throttle or an admission denial. */
  deferrals: number;
  admissionDenials: number;
  lanePauses: number;
  /** Lane limits claimed (see `Tally.laneLimits`). */
  laneLimits: number;
  usage: Usage;
  costPerMillion: CostPerMillion;
  sqs: SqsCounters;
  provider: ProviderCounters;
  admission: AdmissionCounters | null;
  /**
   * The consumers: how many the run asked for, how many could run (the account's concurrency), the most
   * that ran at once and how long after the first receive they first did (the event source's scale-up).
   */
  fleet: { configured: number; cap: number; peak: number; peakAfterMs: number };
  /** (c): each bucket item's most conditional writes in one second (`AdmissionCounters.peakItemWritesPerSecond`); null without admission. */
  peakItemWritesPerSecond: Record<string, number> | null;
  /** (c): when each item's peak second began, in ms after the scenario's start; null without admission. */
  peakItemWritesAfterMs: Record<string, number> | null;
  /** Write units per second DynamoDB serves to one item. */
  itemWriteCeiling: number;
  /** (c): conditional bucket writes lost to another consumer's write, per take (grant or denial); null without admission. */
  conditionFailuresPerTake: number | null;
  /** A scenario with long jobs (`Scenario.longJobs`): theirs and the other jobs' figures; else null. */
  sizeClasses: { long: SizeClassFigures; other: SizeClassFigures } | null;
  events: number;
  wallMs: number;
}

/** What a run counts besides the jobs' states. */
export interface Tally {
  /** The first receive (epoch ms; `Infinity` before it). */
  firstReceive: number;
  receives: number;
  hops: number;
  deferrals: number;
  admissionDenials: number;
  lanePauses: number;
  /** Lane limits claimed (some quota owners out: the mapping's maximum concurrency lowered to the share left). */
  laneLimits: number;
  /** EventBridge Scheduler schedules created (one per pause or limit). */
  schedules: number;
  /** DynamoDB request units outside admission (job claims, duplicate checks, commits, ledger, pause claims). */
  dynamoReads: number;
  dynamoWrites: number;
  /** S3 GETs of documents (one per receive that is read: every record the consumer claims). */
  s3Gets: number;
  invocations: number;
  /** The most consumers in an invocation at once. */
  peakConsumers: number;
  /** When that many consumers first ran at once (epoch ms). */
  peakConsumersAt: number;
  /** Lambda duration × memory, in GB-ms. */
  gbMs: number;
  events: number;
}

/** A run's tallies before it starts. */
export function newTally(): Tally {
  return {
    firstReceive: Infinity,
    receives: 0,
    hops: 0,
    deferrals: 0,
    admissionDenials: 0,
    lanePauses: 0,
    laneLimits: 0,
    schedules: 0,
    dynamoReads: 0,
    dynamoWrites: 0,
    s3Gets: 0,
    invocations: 0,
    peakConsumers: 0,
    peakConsumersAt: 0,
    gbMs: 0,
    events: 0,
  };
}

/** The figures of a finished run (its queue's empty receives already counted). */
export function strategyResult(run: {
  scenario: Scenario;
  strategy: Strategy;
  jobs: JobTable;
  /** How many jobs were submitted. */
  submitted: number;
  tally: Tally;
  sqs: SqsModel;
  provider: ProviderModel;
  admission: SimKeyPool | null;
  wallMs: number;
  /** The consumers the run may use (settings' consumers within the account's concurrency). */
  fleet: { configured: number; cap: number };
  stoppedBy: StoppedBy;
  /** When the run ended (epoch ms of virtual time). */
  stoppedAt: number;
}): StrategyResult {
  const { scenario, strategy, jobs, submitted, tally, sqs, admission, stoppedBy } = run;
  const unsettled = submitted - jobs.terminal;
  const lost = Math.max(0, unsettled - sqs.size);
  const unfinished = unsettled - lost;
  const lastAt = stoppedBy !== 'done' && unfinished > 0 ? run.stoppedAt : jobs.lastSettled;
  const drainMs = lastAt - Math.min(tally.firstReceive, lastAt);
  const boundMs = quotaBoundMs(scenario, submitted, jobs.totalTokens);
  const units = admission?.counters;
  const usage: Usage = {
    sqsRequests: sqs.counters.billedRequests,
    dynamoReadUnits: tally.dynamoReads + (units ? units.cooldownReads : 0),
    dynamoWriteUnits: tally.dynamoWrites + (units ? units.bucketWrites + units.bucketConflicts + units.cooldownWrites : 0),
    s3Gets: tally.s3Gets,
    lambdaInvocations: tally.invocations,
    lambdaGbSeconds: tally.gbMs / 1000,
    schedules: tally.schedules,
  };
  const provider = { ...run.provider.counters };
  const wasted = provider.rateLimited + provider.quotaExhausted + provider.failures;
  return {
    scenario: scenario.id,
    strategy: strategy.id,
    label: strategy.label,
    jobs: submitted,
    completed: jobs.completed,
    deadLettered: jobs.deadLettered,
    rejected: jobs.rejected,
    lost,
    unfinished,
    stoppedBy,
    drainMs,
    boundMs,
    drainOverBound: boundMs > 0 ? drainMs / boundMs : 0,
    modelCalls: provider.calls,
    callsPerCompletion: jobs.completed > 0 ? provider.calls / jobs.completed : Infinity,
    rateLimited: provider.rateLimited,
    quotaExhausted: provider.quotaExhausted,
    failedCalls: provider.failures,
    wastedCalls: wasted,
    receives: tally.receives,
    hops: tally.hops,
    deferrals: tally.deferrals,
    admissionDenials: tally.admissionDenials,
    lanePauses: tally.lanePauses,
    laneLimits: tally.laneLimits,
    usage,
    costPerMillion: costPerMillionJobs(usage, submitted),
    sqs: { ...sqs.counters },
    provider,
    admission: units ? { ...units } : null,
    fleet: { ...run.fleet, peak: tally.peakConsumers, peakAfterMs: Math.max(0, tally.peakConsumersAt - Math.min(tally.firstReceive, tally.peakConsumersAt)) },
    peakItemWritesPerSecond: units ? units.peakItemWritesPerSecond : null,
    peakItemWritesAfterMs: units ? Object.fromEntries(Object.entries(units.peakItemWritesAt).map(([item, at]) => [item, at - scenario.start])) : null,
    itemWriteCeiling: ITEM_WRITE_CEILING,
    conditionFailuresPerTake: units && units.grants + units.denials > 0 ? units.bucketConflicts / (units.grants + units.denials) : null,
    sizeClasses: jobs.sizeClasses(Math.min(tally.firstReceive, lastAt)),
    events: tally.events,
    wallMs: run.wallMs,
  };
}
