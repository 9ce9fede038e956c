/**
 * One strategy of `npm run bench`: its own lanes (a name suffix) and fake provider on the shared
 * DynamoDB Local and fauxqs, the job set submitted at once, watched until it drained, then measured.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { SharedKeyPool } from '../../../lib/admission/drivers/shared-key-pool.js';
import type { LaneSet } from '../../../lib/config/lanes.js';
import type { ConsumerDeps, RecordTiming } from '../../../lib/lanes/queue/process-record.js';
import type { PollerEvent } from '../../local-stack/poller/events.js';
import type { LocalServices } from '../../local-stack/services/services.js';
import { laneChangeLine } from '../../local-stack/pause.js';
import { startLocalStack, type LocalStack } from '../../local-stack/stack.js';
import { drainCurveOf, type DrainCurve } from './curve.js';
import { distribution, type LaterFigures, type StrategyResult } from './report.js';
import { fairShareBound, type ScenarioBound } from './scenarios/bounds.js';
import {
  laneLoads,
  planScenario,
  scenarioBound,
  URGENT_P95_MINUTES,
  type LaterSubmission,
  type ScenarioPlan,
  type SentDocument,
} from './scenarios/scenarios.js';
import { BENCH_LOG_FILE, naiveModel, scenarioLanes, servedLanes, servedLimit, type BenchOptions, type BenchStrategy } from './strategies.js';
import { quotaBoundMinimumMs, writeLanesFile } from '../lanes.js';
import type { ConsumerEvent } from '../consume/consume.js';
import { spawnConsumer } from '../consume/processes.js';
import { localKeySecret } from '../../local-stack/stack.js';
import { collectFinalState, scorecardOf } from '../outcome.js';
import { elapsedLabel, stopPollers, watchUntilDrained, whilePollersPaused, type DrainSnapshot } from '../observe.js';
import { timedAcquires } from '../overrides.js';
import { round, type Scorecard } from '../scorecard.js';
import { submitToStack, type StackSubmission } from '../submit.js';

/** What the consumers and pollers of one strategy showed while it ran. */
interface StrategyProbe {
  timings: RecordTiming[];
  /** Time of each admission `acquire` (ms). */
  acquireMs: number[];
  /** When each of them began (epoch ms). */
  acquireAt: number[];
  /** Each consumer instance's admission counts (`SharedKeyPool.counts`). */
  poolCounts: SharedKeyPool['counts'][];
  wholeBatchFailures: number;
  recordsInFlight: number;
  maxRecordsInFlight: number;
  /** Records in flight as each record saw it on arrival, summed. */
  inFlightSeen: number;
  recordsReceived: number;
  loopDelay: IntervalHistogram;
  /** The strategy's consumer: the naive model when throttles are failures, timed key pool and records. */
  overrideDeps(deps: ConsumerDeps): ConsumerDeps;
  onPollerEvent(event: PollerEvent): void;
}

/** One strategy's run: its figures (the report's), its drain curve (for the HTML page) and its scenario's bound. */
export interface StrategyRun {
  result: StrategyResult;
  curve: DrainCurve;
  /** The bound its drain is held to (the result's `burstAwareMinimumMs`), with how it was computed. */
  bound: ScenarioBound;
}

/**
 * Runs one strategy on the shared services and measures it, on `plan`'s job set and quota (default:
 * the baseline's). Its drain is held to the plan's bound on the jobs it submitted.
 */
export async function runStrategy(
  strategy: BenchStrategy,
  options: BenchOptions,
  services: LocalServices,
  say: (line: string) => void,
  plan: ScenarioPlan = planScenario('baseline', options),
): Promise<StrategyRun> {
  const started = Date.now();
  const lanes = scenarioLanes(options, plan, `${strategy.id.slice(0, 5)}-${randomBytes(3).toString('hex')}`);
  // The limits the fake provider serves: the bounds' (the lanes' own where `--provider-share` is 1).
  const served = servedLanes(lanes, options.providerShare);
  const probe = strategyProbe(strategy);
  // A binding daily quota: the provider's day and the consumer's start now, together.
  const dayStartMs = plan.quota.fixedDay ? Date.now() : undefined;
  // Several consumer processes of (c): each its own OS process (`ratelane consume`), as two fleets are.
  const osProcesses = plan.consumerProcesses > 1 && strategy.admission;
  const stack = await startStrategyStack(strategy, options, services, lanes, probe, say, { plan, dayStartMs, consumers: !osProcesses });
  let fleet: ConsumerFleet | undefined;
  try {
    const documents = plan.documents;
    // The backlog is queued before the consumers start, as every bound assumes (all jobs there at 0),
    // and the producer's sends do not share the consumers' first seconds (one Node.js process here,
    // apart in AWS). The clock starts when the pollers do (consumer processes: all at once, each ready).
    const queued = osProcesses
      ? await (async () => {
          const value = await submitToStack(stack, lanes, documents);
          fleet = await startConsumerFleet(stack, plan, options, probe, say, strategy.label);
          return { value, resumedAt: fleet.readyAt };
        })()
      : await whilePollersPaused(stack, () => submitToStack(stack, lanes, documents));
    probe.loopDelay.enable();
    const first = startedAt(queued.value, queued.resumedAt);
    const later = plan.later ? await submitLater(stack, lanes, plan.later, first.submitStarted, say, strategy.label) : undefined;
    const submission = later ? withLater(first, later) : first;
    const allDocuments = plan.later ? [...documents, ...plan.later.documents] : documents;
    const bound = quotaBoundMinimumMs(served, submission.submitted, options.minuteMs);
    const { submission: result, sent, submitStarted } = submission;
    const sentDocuments = sent.map((r) => ({ lane: r.region, document: allDocuments[r.index]! }));
    const firstResetMs = dayStartMs === undefined ? 0 : dayStartMs + plan.quota.dayMs - submitStarted;
    const held = scenarioBound(plan, laneLoads(served, sentDocuments, plan), options.minuteMs, firstResetMs);
    say(
      `${strategy.label}: queued ${first.sent.length} of ${documents.length} jobs in ${queued.resumedAt - queued.value.submitStarted} ms before its consumers started` +
        `${later ? `, ${later.sent.length} more ${later.submitStarted - first.submitStarted} ms into the drain` : ''}${result.failed ? ` (${result.failed} NOT sent)` : ''}; quota-bound minimum ${(bound / 1000).toFixed(1)} s` +
        (plan.name === 'baseline' ? '' : `; scenario bound ${(held.ms / 1000).toFixed(1)} s`),
    );
    const { timedOut, quietSince } = await watchStrategy(stack, strategy, options, submission, bound, say);
    probe.loopDelay.disable();
    if (fleet) await fleet.stop();
    else await stopPollers(stack);
    const final = await collectFinalState(stack, services.fauxqs);
    const scorecard = scorecardOf(stack, final, submission, {
      metrics: stack.telemetry.totals.total,
      elapsedMs: Date.now() - submitStarted,
      timedOut,
      quotaBoundMinimumMs: bound,
    });
    const measured = strategyResult(strategy, probe, scorecard, {
      failures: stack.telemetry.totals.total.Failed ?? 0,
      burstAwareMs: held.ms,
      settledMs: timedOut || quietSince === null ? null : quietSince - submitStarted,
      elapsedMs: Date.now() - started,
      timedOut,
      firstMinuteEndsAt: submitStarted + options.minuteMs,
      receives: stack.telemetry.totals.values.QueueAgeMs?.length ?? 0,
      later:
        later && plan.later
          ? laterFigures(plan.later, later, final.results, served, sentDocuments.slice(first.sent.length), {
              minuteMs: options.minuteMs,
              backlogTenant: documents[0]?.tenant,
            })
          : undefined,
    });
    say(
      `${strategy.label}: done in ${(measured.elapsedMs / 1000).toFixed(1)} s: committed ${measured.committed}, dead-lettered ${measured.deadLettered}, lost ${measured.lost}, ` +
        `${measured.gaveUpOn > 0 ? `gave up on ${measured.gaveUpOn}` : `drain ${measured.burstAwareRatio ?? '-'}x the ${plan.name === 'baseline' ? 'burst-aware minimum' : 'scenario bound'}`}, ` +
        `${measured.modelCallsPerCompletion ?? '-'} calls, ${measured.attemptsPerCompletion ?? '-'} attempts and ${measured.admissionDeniedPerCompletion ?? '-'} denials per completion, ` +
        `overhead p50 ${measured.overheadMs.p50 ?? '-'} ms`,
    );
    return { result: measured, curve: drainCurveOf(strategy, submission.submitted, final.results, served, options.minuteMs), bound: held };
  } finally {
    await fleet?.stop();
    await stack.stop();
  }
}

/** The consumer processes of a strategy, each `ratelane consume` as a child process. */
interface ConsumerFleet {
  /** When they were all told to poll, every one ready (epoch ms). */
  readyAt: number;
  /** SIGTERM to each; resolves once all exited (once: later calls wait for the same). */
  stop(): Promise<void>;
}

/**
 * Starts `plan.consumerProcesses` consumer processes per lane of `stack` (`ratelane consume`, each an
 * OS process of its own, the lane's concurrency split as the local stack splits it), feeding their
 * events into `probe` and their log lines into the stack's telemetry, as in-process consumers feed them.
 * Each is held until all are ready, then all poll at once: the drain's clock starts there, as the
 * in-process pollers all resume at once (processes that come up apart, 0.1-0.8 s on this machine, would
 * hand the first one the lane's start alone).
 */
async function startConsumerFleet(
  stack: LocalStack,
  plan: ScenarioPlan,
  options: BenchOptions,
  probe: StrategyProbe,
  say: (line: string) => void,
  label: string,
): Promise<ConsumerFleet> {
  const lanesFile = join(dirname(options.logFile ?? BENCH_LOG_FILE), `lanes-${randomBytes(3).toString('hex')}.json`);
  // The lanes as provisioned, their provider the fake one.
  writeLanesFile(lanesFile, Object.fromEntries(Object.entries(stack.lanes).map(([name, l]) => [name, l.lane])));
  const processes = plan.consumerProcesses;
  const onEvent = (event: ConsumerEvent): void => {
    if (event.type === 'poller') probe.onPollerEvent(event.event);
    else if (event.type === 'timing') probe.timings.push(event.timing);
    else if (event.type === 'take') {
      probe.acquireMs.push(event.ms);
      probe.acquireAt.push(event.at);
    } else if (event.type === 'log') stack.telemetry.line(event.line);
    else if (event.type === 'counts') probe.poolCounts.push({ takes: event.takes, conditionFailures: event.conditionFailures });
  };
  const children = Object.values(stack.lanes).flatMap((l) => {
    const total = l.lane.consumer.maximumConcurrency;
    return Array.from({ length: processes }, (_, index) =>
      spawnConsumer({
        lanesFile,
        lane: l.lane.name,
        endpoints: stack.endpoints,
        minuteMs: options.minuteMs,
        dayMs: plan.quota.dayMs,
        concurrency: Math.max(2, Math.floor(total / processes) + (index < total % processes ? 1 : 0)),
        onEvent,
        hold: true,
      }),
    );
  });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      const ends = await Promise.all(children.map((c) => c.stop()));
      // The lanes file is the fleet's own: one per run would pile up beside the consumer log.
      rmSync(lanesFile, { force: true });
      const failed = ends.filter((e) => e.code !== 0);
      if (failed.length > 0) say(`  ${label}: ${failed.length} consumer process(es) exited with ${failed.map((e) => e.code).join(', ')}`);
    })());
  try {
    const ready = await Promise.all(children.map((c) => c.ready));
    const readyAt = Date.now();
    for (const child of children) child.start();
    say(
      `  ${label}: ${children.length} consumer processes ready (pids ${children.map((c) => c.child.pid).join(', ')}), ${processes} per lane, ` +
        `the last ${Math.max(...ready) - Math.min(...ready)} ms after the first; all started together`,
    );
    return { readyAt, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Sends `later`'s jobs `afterMs` after `drainStarted` (their clock starts when they are sent). */
async function submitLater(
  stack: LocalStack,
  lanes: LaneSet,
  later: LaterSubmission,
  drainStarted: number,
  say: (line: string) => void,
  label: string,
): Promise<StackSubmission> {
  await sleep(Math.max(0, drainStarted + later.afterMs - Date.now()));
  const sent = await submitToStack(stack, lanes, later.documents);
  say(`  [${label} ${elapsedLabel(drainStarted)} s] sent ${sent.sent.length} later job(s) (${later.heldTo === 'urgent' ? 'urgent' : 'another tenant'})`);
  return sent;
}

/** `first` and the `later` submission as one (the later items' indexes after the first's documents). */
function withLater(first: StackSubmission, later: StackSubmission): StackSubmission {
  const offset = first.submission.total;
  const shift = <T extends { index: number }>(r: T): T => ({ ...r, index: r.index + offset });
  const a = first.submission;
  const b = later.submission;
  return {
    submission: {
      total: a.total + b.total,
      sent: a.sent + b.sent,
      failed: a.failed + b.failed,
      rejected: a.rejected + b.rejected,
      results: [...a.results, ...b.results.map(shift)],
    },
    sent: [...first.sent, ...later.sent.map(shift)],
    submitted: [...first.submitted, ...later.submitted],
    submitStarted: first.submitStarted,
  };
}

/**
 * The later jobs' figures: when they were sent, their last commit and p95 from their submission, and
 * what they are held to — their flow's fair share of the quota (the bound of `fairShareBound`, the
 * share from the lane's fairness weights: the later tenant against the backlog's) or the urgent p95 limit.
 */
function laterFigures(
  plan: LaterSubmission,
  later: StackSubmission,
  results: readonly { jobId: string; committedAt: string }[],
  lanes: LaneSet,
  sentDocuments: SentDocument[],
  { minuteMs, backlogTenant }: { minuteMs: number; backlogTenant: string | undefined },
): LaterFigures {
  const committedAt = new Map(results.map((r) => [r.jobId, Date.parse(r.committedAt)]));
  const waits = later.submitted.flatMap((j) => (committedAt.has(j.jobId) ? [committedAt.get(j.jobId)! - j.createdAt] : [])).sort((x, y) => x - y);
  const all = waits.length === later.submitted.length && waits.length > 0;
  const lastCommitMs = all ? waits.at(-1)! : null;
  const p95Ms = all ? waits[Math.min(waits.length - 1, Math.ceil(0.95 * waits.length) - 1)]! : null;
  if (plan.heldTo === 'urgent') {
    const limitMs = URGENT_P95_MINUTES * minuteMs;
    return {
      heldTo: 'urgent',
      jobs: later.submitted.length,
      committed: waits.length,
      lastCommitMs,
      p95Ms,
      boundMs: limitMs,
      boundDetail: `${URGENT_P95_MINUTES} provider minutes`,
      ratio: p95Ms === null ? null : round(p95Ms / limitMs),
    };
  }
  const fairness = Object.values(lanes)[0]!.fairness;
  const weightOf = (tenant: string | undefined): number =>
    tenant === undefined ? fairness.defaultTenantWeight : (fairness.tenantWeights[tenant] ?? fairness.defaultTenantWeight);
  const mine = weightOf(plan.documents[0]?.tenant);
  const share = mine / (mine + weightOf(backlogTenant));
  const bound = fairShareBound(laneLoads(lanes, sentDocuments, { outOfCreditKeyIds: [], boundKind: 'requests' }), share, minuteMs);
  return {
    heldTo: 'fair-share',
    jobs: later.submitted.length,
    committed: waits.length,
    lastCommitMs,
    p95Ms,
    boundMs: Math.round(bound.ms),
    boundDetail: bound.perLane.map((l) => `${l.lane}: ${l.detail}`).join('; '),
    ratio: lastCommitMs === null ? null : round(lastCommitMs / bound.ms),
  };
}

/** `submission` with its clock (its start, and every job's `createdAt`) at `at`: when the consumers started. */
function startedAt(submission: StackSubmission, at: number): StackSubmission {
  return { ...submission, submitStarted: at, submitted: submission.submitted.map((job) => ({ ...job, createdAt: at })) };
}

/** The counters of one strategy, and the consumer wiring that feeds them. */
function strategyProbe(strategy: BenchStrategy): StrategyProbe {
  const probe: StrategyProbe = {
    timings: [],
    acquireMs: [],
    acquireAt: [],
    poolCounts: [],
    wholeBatchFailures: 0,
    recordsInFlight: 0,
    maxRecordsInFlight: 0,
    inFlightSeen: 0,
    recordsReceived: 0,
    loopDelay: monitorEventLoopDelay({ resolution: 10 }),
    overrideDeps: (deps) => {
      if (deps.keys instanceof SharedKeyPool) probe.poolCounts.push(deps.keys.counts);
      return {
        ...deps,
        ...(strategy.throttleIsFailure ? { model: naiveModel(deps.model) } : {}),
        keys: timedAcquires(deps.keys, (ms, at) => {
          probe.acquireMs.push(ms);
          probe.acquireAt.push(at);
        }),
        onRecordTiming: (timing) => probe.timings.push(timing),
      };
    },
    onPollerEvent: (event) => {
      if (event.type === 'batchFailed') probe.wholeBatchFailures += 1;
      if (event.type === 'batchReceived') {
        probe.recordsInFlight += event.messageIds.length;
        probe.maxRecordsInFlight = Math.max(probe.maxRecordsInFlight, probe.recordsInFlight);
        probe.inFlightSeen += probe.recordsInFlight * event.messageIds.length;
        probe.recordsReceived += event.messageIds.length;
      }
      if (event.type === 'invocationFinished') probe.recordsInFlight -= event.records;
    },
  };
  return probe;
}

/**
 * Starts the strategy's stack on the shared services: its lanes, a fresh provider at the scenario's
 * quota (its dead keys out of credit; its day starting at `dayStartMs` when given, the consumer's
 * admission told the same reset), its consumer.
 */
async function startStrategyStack(
  strategy: BenchStrategy,
  options: BenchOptions,
  services: LocalServices,
  lanes: LaneSet,
  probe: StrategyProbe,
  say: (line: string) => void,
  { plan, dayStartMs, consumers }: { plan: ScenarioPlan; dayStartMs: number | undefined; consumers: boolean },
): Promise<LocalStack> {
  const { quota } = plan;
  const dead = new Set(plan.outOfCreditKeyIds);
  const outOfCreditKeys = Object.values(lanes).flatMap((lane) => lane.provider.keys.filter((k) => dead.has(k.id)).map((k) => localKeySecret(lane.name, k.id)));
  const admission = !strategy.admission
    ? { admission: false as const }
    : dayStartMs === undefined
      ? {}
      : { admission: { settings: { dailyResetOffsetMs: dayStartMs % quota.dayMs } } };
  return startLocalStack({
    lanes,
    consumers,
    consumerProcesses: plan.consumerProcesses,
    endpoints: services.endpoints,
    logFile: options.logFile ?? BENCH_LOG_FILE,
    provider: {
      limits: {
        requestsPerMinute: servedLimit(quota.providerRpm, options.providerShare),
        tokensPerMinute: servedLimit(quota.providerTpm, options.providerShare),
        requestsPerDay: quota.providerDaily,
      },
      minuteMs: options.minuteMs,
      dayMs: quota.dayMs,
      seed: options.seed,
      ...(dayStartMs === undefined ? {} : { dayStartMs }),
      ...(outOfCreditKeys.length > 0 ? { outOfCreditKeys } : {}),
    },
    ...admission,
    overrideDeps: (_lane, deps) => probe.overrideDeps(deps),
    onPollerEvent: (_lane, event) => probe.onPollerEvent(event),
    onLanePause: (lane, state) => say(`  ${strategy.label}: ${laneChangeLine(lane, state)}`),
  });
}

/** Waits until the strategy's queues drained (checks every 500 ms), with progress every 2..10 s. */
async function watchStrategy(
  stack: LocalStack,
  strategy: BenchStrategy,
  options: BenchOptions,
  { sent, submitStarted }: StackSubmission,
  bound: number,
  say: (line: string) => void,
): Promise<{ timedOut: boolean; quietSince: number | null }> {
  const progressEveryMs = Math.max(2_000, Math.min(10_000, bound / 6));
  let lastProgress = Date.now();
  const progress = (q: DrainSnapshot): void => {
    const m = stack.telemetry.totals.total;
    const throttled = Object.values(stack.provider.stats().rateLimited).reduce((a, b) => a + b, 0);
    say(
      `  [${strategy.label} ${elapsedLabel(submitStarted)} s] committed ${m.Completed ?? 0}/${sent.length} · in queue ${q.waiting} (delayed ${q.delayed}) · DLQ ${q.deadLettered} · ` +
        `model calls ${m.ModelCalls ?? 0} · 429s ${throttled} · denied ${m.AdmissionDenied ?? 0} · re-sent ${m.Deferred ?? 0} · failed ${m.Failed ?? 0}`,
    );
  };
  return watchUntilDrained(stack, {
    intervalMs: 500,
    deadline: submitStarted + options.timeLimitSeconds * 1000,
    onCheck: (snapshot, end) => {
      if (Date.now() - lastProgress >= progressEveryMs) {
        lastProgress = Date.now();
        progress(snapshot);
      }
      if (end) progress(snapshot);
      if (end === 'timeLimit') say(`  ${strategy.label}: time limit of ${options.timeLimitSeconds} s reached; ${snapshot.waiting} message(s) still waiting`);
    },
  });
}

/** What the run counted beside the scorecard. */
interface StrategyFigures {
  /** Real failures (the consumer's `Failed` metric). */
  failures: number;
  burstAwareMs: number;
  settledMs: number | null;
  elapsedMs: number;
  timedOut: boolean;
  /** When the drain's first provider minute ended (epoch ms). */
  firstMinuteEndsAt: number;
  /** Receives the consumer handled (it reports each one's `QueueAgeMs`). */
  receives: number;
  /** The jobs sent while the drain ran, and what they are held to. */
  later: LaterFigures | undefined;
}

/** The consumer instances' takes and conditional-check failures, summed. */
function conflictFigures(counts: readonly SharedKeyPool['counts'][]): Pick<StrategyResult, 'takes' | 'conditionFailures' | 'conditionFailuresPerTake'> {
  const takes = counts.reduce((sum, c) => sum + c.takes, 0);
  const conditionFailures = counts.reduce((sum, c) => sum + c.conditionFailures, 0);
  return { takes, conditionFailures, conditionFailuresPerTake: takes > 0 ? round(conditionFailures / takes, 3) : null };
}

/** One strategy's figures: the scorecard's, the consumer overhead and the event-loop delay. */
function strategyResult(strategy: BenchStrategy, probe: StrategyProbe, scorecard: Scorecard, figures: StrategyFigures): StrategyResult {
  const { timings, loopDelay } = probe;
  // A booked slot's in-process wait is scheduling, like a message's delay, not the consumer's overhead.
  const own = (t: RecordTiming): number => Math.max(0, t.totalMs - t.modelMs - t.admissionWaitMs);
  const overhead = timings.map(own);
  const calling = timings.filter((t) => t.modelCalls > 0 && t.settled).map(own);
  const perCall = timings.filter((t) => t.modelCalls > 0).map((t) => t.modelMs / t.modelCalls);
  const burst = figures.burstAwareMs;
  return {
    id: strategy.id,
    label: strategy.label,
    description: strategy.description,
    submitted: scorecard.submitted,
    committed: scorecard.committed,
    deadLettered: scorecard.deadLettered,
    lost: scorecard.lost,
    waiting: scorecard.waiting,
    rejected: scorecard.rejected,
    needsReview: scorecard.needsReview,
    doubleCommits: scorecard.doubleCommits,
    duplicatesSuppressed: scorecard.duplicatesSuppressed,
    modelCalls: scorecard.modelCalls,
    modelCallsPerCompletion: scorecard.modelCallsPerCompletion,
    throttled429: scorecard.throttled429,
    admissionDenied: scorecard.admissionDenied,
    deferrals: scorecard.deferrals,
    failures: figures.failures,
    drainMs: scorecard.drainMs,
    quotaBoundMinimumMs: scorecard.quotaBoundMinimumMs,
    drainRatio: scorecard.drainRatio,
    burstAwareMinimumMs: Math.round(burst),
    // A ratio only for a strategy that committed every job: giving up on some would flatter its drain.
    burstAwareRatio: scorecard.drainMs !== null && burst > 0 && scorecard.committed === scorecard.submitted ? round(scorecard.drainMs / burst) : null,
    // Every receive, also of the jobs never committed: the mean over committed jobs alone would show a
    // strategy that gives up on most jobs at about 1.
    attemptsPerCompletion: scorecard.committed > 0 ? round(figures.receives / scorecard.committed) : null,
    receives: figures.receives,
    admissionDeniedPerCompletion: scorecard.committed > 0 ? round(scorecard.admissionDenied / scorecard.committed) : null,
    gaveUpOn: scorecard.submitted - scorecard.committed,
    settledMs: figures.settledMs,
    overheadMs: distribution(overhead),
    overheadCallingMs: distribution(calling),
    modelMsPerCall: distribution(perCall),
    admissionAcquireMs: distribution(probe.acquireMs),
    admissionAcquireAfterFirstMinuteMs: distribution(probe.acquireMs.filter((_, i) => probe.acquireAt[i]! >= figures.firstMinuteEndsAt)),
    ...conflictFigures(probe.poolCounts),
    // The histogram holds each 10 ms timer's whole interval: the delay is what exceeds 10 ms.
    eventLoopDelayMs: {
      p50: round(Math.max(0, loopDelay.percentile(50) / 1e6 - 10), 2),
      p99: round(Math.max(0, loopDelay.percentile(99) / 1e6 - 10), 2),
      max: round(Math.max(0, loopDelay.max / 1e6 - 10), 2),
    },
    maxRecordsInFlight: probe.maxRecordsInFlight,
    meanRecordsInFlight: probe.recordsReceived > 0 ? round(probe.inFlightSeen / probe.recordsReceived, 1) : 0,
    wholeBatchFailures: probe.wholeBatchFailures,
    ...(figures.later ? { later: figures.later } : {}),
    elapsedMs: figures.elapsedMs,
    timedOut: figures.timedOut,
    scorecard,
  };
}
