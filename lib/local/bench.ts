/**
 * `npm run bench`: the same job set, in one run, through three strategies on the local stack
 * (DynamoDB Local, fauxqs, the fake provider at a fixed quota, the real consumer under the
 * Lambda-like poller), then the consumer's own overhead beside a floor measured on the same emulators.
 *
 * Strategies (as in the simulator, lib/sim/strategies.ts):
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
 * Each strategy gets its own queues, bucket and tables (a name suffix) and a fresh fake provider, on
 * one DynamoDB Local and one fauxqs that the bench starts and stops.
 *
 * Consumer overhead per record = its time in `processRecord` minus the time inside the model adapter
 * (`ConsumerDeps.onRecordTiming`). It is reported three ways, each beside a floor on the same emulators
 * (a loop: per message, a bare ReceiveMessage, one conditional PutItem — the consumer's own
 * commit-once write — and a DeleteMessage):
 * - under load, per strategy (every record of a batch runs at once, all on 2 CPUs), beside the floor
 *   run with as many loops at once as (c) had records in flight on average (informational);
 * - the probe: the (c) consumer with one job at a time and a quota that never binds, beside the floor
 *   one message at a time: the same conditions on both sides, so this pair is the target's figure.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { loadCorpus } from '../../corpus/index.js';
import type { LaneConfig, LaneSet } from '../config/lanes.js';
import type { KeyPool } from '../admission/keys.js';
import type { ConsumerDeps, RecordTiming } from '../consumer/process-record.js';
import { DEFAULT_PROMPT_VERSION, DEFAULT_SCHEMA_VERSION, isKnownPromptVersion } from '../contract/schemas/registry.js';
import { ProviderError, type ExtractionRequest, type ExtractionResponse, type ModelAdapter } from '../providers/model.js';
import { submitDocuments } from '../queue/producer.js';
import { ensureTable } from '../store/ensure-table.js';
import { ResultStore, type ResultRecord } from '../store/results.js';
import { RESULTS_TABLE } from '../store/tables.js';
import { createAwsClients, type ServiceEndpoints } from '../aws/clients.js';
import { extractInvoice } from './invoice-extractor.js';
import { onShutdown } from './processes.js';
import { corpusDocuments, jobIdsIn, localRunLanes, queueDepth, quotaBoundMinimumMs, submitToStack, type RunIo } from './run.js';
import { computeScorecard, quantile, type Scorecard } from './scorecard.js';
import { startDynamoLocal, startFauxqsLocal, type FauxqsLocal } from './services.js';
import { withOverrides } from './soak.js';
import { startLocalStack, type LocalStack } from './stack.js';

// ---------------------------------------------------------------------------------------------
// Strategies

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

const STRATEGY_ORDER: readonly BenchStrategyId[] = ['naive', 'reschedule', 'admission'];
const STRATEGY_ALIASES: Record<string, BenchStrategyId> = { a: 'naive', naive: 'naive', b: 'reschedule', reschedule: 'reschedule', c: 'admission', admission: 'admission' };

/** Targets for strategy (c), from issue 8. */
export const BENCH_TARGETS = Object.freeze({
  /** drain time / quota-bound minimum, at most */
  drainRatio: 1.15,
  /** model calls per completion, at most */
  modelCallsPerCompletion: 1.03,
  deadLettered: 0,
  lost: 0,
  /** consumer overhead p50 / floor p50, at most */
  overheadToFloor: 2,
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
          throw new ProviderError(error.message, error.provider, error.status, { kind: 'not_rate_limit', retryAfterMs: null, resetAt: null }, {
            cause: error,
            requestTooLarge: error.requestTooLarge,
          });
        }
        throw error;
      }
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Options

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
  seed: number;
  /** Per strategy: stop waiting after this many seconds. */
  timeLimitSeconds: number;
  /** Exit 1 when strategy (c) misses a target (default: targets are reported, not enforced). */
  strict: boolean;
  json: boolean;
  logFile: string | undefined;
}

/** Raised for bad flags; the message is the usage error (empty for `--help`). */
export class BenchUsageError extends Error {
  override name = 'BenchUsageError';
}

export const BENCH_USAGE = `Usage: npm run bench -- [options]

Runs the same job set through three strategies on the local stack (DynamoDB Local, fauxqs, the fake
provider at a fixed quota, the real consumer under a Lambda-like poller), one after the other:
  (a) naive       every failure, 429 included, back through the visibility timeout with exponential
                  backoff; dead-lettered after maxReceiveCount (5) receives; no admission
  (b) reschedule  429s re-sent with DelaySeconds (the policy's defer path); no admission
  (c) admission   (b) plus admission control (key pool, token buckets, cooldowns, lane pause)
Per strategy: drain time / quota-bound minimum, model calls per completion, 429s, dead-lettered,
duplicates, lost, and the consumer's own overhead per message (record time minus model time), beside a
floor measured on the same emulators (bare receive + one conditional put + delete per message).
Progress goes to stderr, the table to stdout.

  --jobs N              jobs (default 300; corpus documents repeated, English to us, German to eu)
  --keys K              provider keys per lane, each its own quota owner (default 2)
  --provider-rpm N      requests per minute per key (default 8)
  --provider-tpm N      tokens per minute per key (default 1000000: requests bind, not tokens)
  --minute-ms MS        length of a provider "minute" (default 3000); lane timeouts and backoff scale with it
  --strategies LIST     which to run, comma-separated: a|naive, b|reschedule, c|admission (default all)
  --probe-messages N    jobs sent one at a time through the (c) consumer, for its overhead without
                        contention (default 100; 0 skips it)
  --floor-messages N    messages each floor loop times (default 300; 0 skips the floors)
  --seed N              seed of the fake provider's latencies (default 42)
  --time-limit S        per strategy, stop waiting after S seconds (default 300)
  --log-file PATH       consumer logs and EMF metrics (default .cache/bench/consumer.log)
  --strict              exit 1 when strategy (c) misses a target (default: reported only)
  --json                also print the report as one JSON object on the last line of stdout
`;

function numberFlag(values: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (typeof raw !== 'string' || raw.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    throw new BenchUsageError(`--${name} must be a number in ${min}..${max}, got "${String(raw)}"`);
  }
  return value;
}

const STRING_FLAGS = ['jobs', 'keys', 'provider-rpm', 'provider-tpm', 'minute-ms', 'strategies', 'floor-messages', 'probe-messages', 'seed', 'time-limit', 'log-file'] as const;

/** Parses the CLI flags (pure). @throws {BenchUsageError} */
export function parseBenchArgs(argv: string[]): BenchOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(STRING_FLAGS.map((name) => [name, { type: 'string' as const }])),
        strict: { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    throw new BenchUsageError((error as Error).message);
  }
  const v = parsed.values as Record<string, unknown>;
  if (v.help) throw new BenchUsageError('');
  let strategies: BenchStrategyId[] = [...STRATEGY_ORDER];
  if (typeof v.strategies === 'string') {
    const asked = new Set<BenchStrategyId>();
    for (const name of v.strategies.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean)) {
      const id = STRATEGY_ALIASES[name];
      if (!id) throw new BenchUsageError(`--strategies: unknown strategy "${name}" (use a|naive, b|reschedule, c|admission)`);
      asked.add(id);
    }
    if (asked.size === 0) throw new BenchUsageError('--strategies must name at least one strategy');
    strategies = STRATEGY_ORDER.filter((id) => asked.has(id));
  }
  return {
    jobs: Math.floor(numberFlag(v, 'jobs', 300, 1, 100_000)),
    keys: Math.floor(numberFlag(v, 'keys', 2, 1, 20)),
    providerRpm: Math.floor(numberFlag(v, 'provider-rpm', 8, 1, 1_000_000)),
    providerTpm: Math.floor(numberFlag(v, 'provider-tpm', 1_000_000, 1_000, 100_000_000)),
    minuteMs: Math.floor(numberFlag(v, 'minute-ms', 3000, 1000, 60_000)),
    strategies,
    floorMessages: Math.floor(numberFlag(v, 'floor-messages', 300, 0, 100_000)),
    probeMessages: Math.floor(numberFlag(v, 'probe-messages', 100, 0, 10_000)),
    seed: Math.floor(numberFlag(v, 'seed', 42, 0, 2 ** 31)),
    timeLimitSeconds: numberFlag(v, 'time-limit', 300, 5, 24 * 3600),
    strict: v.strict === true,
    json: v.json === true,
    logFile: typeof v['log-file'] === 'string' ? v['log-file'] : undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// Report

/** A distribution's summary (ms); nulls when there were no values. */
export interface Distribution {
  n: number;
  p50: number | null;
  p99: number | null;
  mean: number | null;
}

/** What one strategy did. */
export interface StrategyResult {
  id: BenchStrategyId;
  label: string;
  description: string;
  submitted: number;
  committed: number;
  deadLettered: number;
  lost: number;
  /** Still in the queue at the end (only after a time limit). */
  waiting: number;
  rejected: number;
  needsReview: number;
  /** Idempotency keys committed more than once (must be 0). */
  doubleCommits: number;
  /** Deliveries of an already committed job that the consumer answered from the results table. */
  duplicatesSuppressed: number;
  modelCalls: number;
  modelCallsPerCompletion: number | null;
  /** 429s the provider answered. */
  throttled429: number;
  /** Calls admission turned away without calling the provider. */
  admissionDenied: number;
  /** Re-sends with DelaySeconds (throttles and admission denials). */
  deferrals: number;
  /** Real failures (visibility backoff), 429s included under (a). */
  failures: number;
  /** First submission to last commit (ms). */
  drainMs: number | null;
  /** Jobs / (quota owners × RPM), slowest lane, in scaled minutes (the scorecard's bound). */
  quotaBoundMinimumMs: number | null;
  drainRatio: number | null;
  /**
   * The same bound less the provider's first-minute burst (its RPM buckets start full): the slowest
   * lane's (jobs − limit) / limit minutes. A perfect scheduler's drain time.
   */
  burstAwareMinimumMs: number;
  burstAwareRatio: number | null;
  /** First submission until every job was in a terminal state (ms), or null on a time limit. */
  settledMs: number | null;
  /** Consumer overhead per record: record time minus time inside the model adapter (ms). */
  overheadMs: Distribution;
  /** The same, for records that called the model and settled (typically the commits). */
  overheadCallingMs: Distribution;
  /** Time inside the model adapter per call (ms). */
  modelMsPerCall: Distribution;
  /** Time of each admission `acquire` (ms): the shared key pool's DynamoDB reads and conditional writes under (c). */
  admissionAcquireMs: Distribution;
  /**
   * Event-loop delay of this process while the strategy ran (ms): fauxqs, the fake provider, the
   * poller and every consumer share it, so it is part of every record's time.
   */
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  /** Most records the consumers of all lanes held at once. */
  maxRecordsInFlight: number;
  /** Records in flight (all lanes) as each record saw it when its batch arrived, on average. */
  meanRecordsInFlight: number;
  /** Whole-batch failures the poller saw (a timeout or a crash: should be 0). */
  wholeBatchFailures: number;
  elapsedMs: number;
  timedOut: boolean;
  scorecard: Scorecard;
}

/** The floor: per message, a bare receive, one conditional put and a delete on the same emulators. */
export interface FloorResult {
  messages: number;
  concurrency: number;
  totalMs: Distribution;
  receiveMs: Distribution;
  putMs: Distribution;
  deleteMs: Distribution;
}

/** The consumer of (c) with one job at a time: its overhead without contention. */
export interface OverheadProbe {
  messages: number;
  /** Record time minus model time (ms). */
  overheadMs: Distribution;
  /** Time inside the model adapter per record (ms), for scale. */
  modelMs: Distribution;
  /**
   * The AWS calls the consumer made per job, by command (the poller's receive and delete not
   * included), with their p50 (ms): where the overhead goes.
   */
  callsPerJob: Record<string, { perJob: number; p50Ms: number | null }>;
}

/** One target of strategy (c): the value measured and whether it is met (null: not measured). */
export interface TargetCheck {
  target: number;
  value: number | null;
  met: boolean | null;
}

/** Everything one bench run found. */
export interface BenchReport {
  date: string;
  machine: { cpuModel: string; cpus: number; memoryGb: number; os: string; node: string; loadAverageAtStart: number[]; loadAverageAtEnd: number[] };
  settings: {
    jobs: number;
    jobsPerLane: Record<string, number>;
    keysPerLane: number;
    providerRpm: number;
    providerTpm: number;
    minuteMs: number;
    /** Requests per scaled minute per lane (quota owners × RPM). */
    laneRequestsPerMinute: number;
    maxReceiveCount: number;
    consumerConcurrencyPerLane: number;
    batchSize: number;
    backoff: LaneConfig['backoff'];
  };
  strategies: StrategyResult[];
  /** (c)'s consumer, one job at a time (null: skipped). */
  probe: OverheadProbe | null;
  /** The floor, one message at a time (null: skipped). */
  floor: FloorResult | null;
  /**
   * The floor with as many loops at once as records were in flight in (c), on average: what the same
   * emulators give the bare work under that load (null: skipped, or (c) did not run).
   */
  loadedFloor: FloorResult | null;
  targets: {
    drainRatio: TargetCheck;
    modelCallsPerCompletion: TargetCheck;
    deadLettered: TargetCheck;
    lost: TargetCheck;
    /** The probe's p50 over the floor's p50: the same conditions on both sides (one message at a time). */
    overheadToFloor: TargetCheck;
  } | null;
  /** (c)'s overhead p50 during its run over the loaded floor's p50 (informational). */
  overheadToLoadedFloor: number | null;
  elapsedMs: number;
}

function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** p50, p99 and mean of `values` (ms, rounded to 0.01). */
export function distribution(values: readonly number[]): Distribution {
  if (values.length === 0) return { n: 0, p50: null, p99: null, mean: null };
  const r = (v: number | null): number | null => (v === null ? null : round(v, 2));
  return { n: values.length, p50: r(quantile(values, 0.5)), p99: r(quantile(values, 0.99)), mean: r(values.reduce((a, b) => a + b, 0) / values.length) };
}

/** Strategy (c)'s figures against the targets (null when (c) did not run). */
export function checkTargets(strategies: readonly StrategyResult[], probe: OverheadProbe | null, floor: FloorResult | null): BenchReport['targets'] {
  const c = strategies.find((s) => s.id === 'admission');
  if (!c) return null;
  const check = (target: number, value: number | null): TargetCheck => ({ target, value, met: value === null ? null : value <= target });
  const overhead = probe?.overheadMs.p50 != null && floor?.totalMs.p50 ? round(probe.overheadMs.p50 / floor.totalMs.p50, 2) : null;
  return {
    drainRatio: check(BENCH_TARGETS.drainRatio, c.timedOut ? null : c.drainRatio),
    modelCallsPerCompletion: check(BENCH_TARGETS.modelCallsPerCompletion, c.modelCallsPerCompletion),
    deadLettered: check(BENCH_TARGETS.deadLettered, c.deadLettered),
    lost: check(BENCH_TARGETS.lost, c.lost),
    overheadToFloor: check(BENCH_TARGETS.overheadToFloor, overhead),
  };
}

/**
 * 0 when every strategy finished in time with nothing lost and nothing committed twice (and, with
 * `--strict`, strategy (c) met every target); else 1. Naive dead-letters by design: that is not a failure.
 */
export function benchExitCode(report: BenchReport, options: Pick<BenchOptions, 'strict'> = { strict: false }): number {
  const clean = report.strategies.every((s) => !s.timedOut && s.lost === 0 && s.doubleCommits === 0);
  if (!clean) return 1;
  if (options.strict && report.targets && Object.values(report.targets).some((t) => t.met !== true)) return 1;
  return 0;
}

/** Renders the report's table for people. */
export function formatBenchReport(report: BenchReport): string {
  const s = report.settings;
  const ms = (v: number | null): string => (v === null ? '-' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);
  const num = (v: number | null, digits = 2): string => (v === null ? '-' : v.toFixed(digits));
  const pair = (d: Distribution): string => (d.p50 === null ? '-' : `${num(d.p50)} / ${num(d.p99)}`);
  const target = (t: TargetCheck | undefined, text: string): string => (t ? `${text} ${t.met === null ? '(n/a)' : t.met ? 'met' : 'MISSED'}` : '');
  const t = report.targets ?? undefined;
  const rows: [string, ...string[]][] = [
    ['', ...report.strategies.map((x) => x.label), 'target (c)'],
    ['drain / quota-bound minimum', ...report.strategies.map((x) => (x.drainRatio === null ? '-' : `${num(x.drainRatio)}x${x.timedOut ? ' (time limit)' : ''}`)), target(t?.drainRatio, '<= 1.15x')],
    ['  drain time (last commit)', ...report.strategies.map((x) => ms(x.drainMs)), ''],
    ['  quota-bound minimum', ...report.strategies.map((x) => ms(x.quotaBoundMinimumMs)), ''],
    ['  drain / burst-aware minimum', ...report.strategies.map((x) => (x.burstAwareRatio === null ? '-' : `${num(x.burstAwareRatio)}x`)), ''],
    ['  all jobs settled after', ...report.strategies.map((x) => ms(x.settledMs)), ''],
    ['committed', ...report.strategies.map((x) => `${x.committed} of ${x.submitted}`), ''],
    ['model calls per completion', ...report.strategies.map((x) => `${num(x.modelCallsPerCompletion)} (${x.modelCalls})`), target(t?.modelCallsPerCompletion, '<= 1.03')],
    ['429s', ...report.strategies.map((x) => String(x.throttled429)), ''],
    ['admission denied (no call)', ...report.strategies.map((x) => String(x.admissionDenied)), ''],
    ['re-sends / visibility failures', ...report.strategies.map((x) => `${x.deferrals} / ${x.failures}`), ''],
    ['dead-lettered', ...report.strategies.map((x) => String(x.deadLettered)), target(t?.deadLettered, '0')],
    ['duplicates: double commits / suppressed', ...report.strategies.map((x) => `${x.doubleCommits} / ${x.duplicatesSuppressed}`), ''],
    ['lost', ...report.strategies.map((x) => String(x.lost)), target(t?.lost, '0')],
    ['consumer overhead under load p50 / p99 (ms)', ...report.strategies.map((x) => pair(x.overheadMs)), ''],
    ['  records with a model call (ms)', ...report.strategies.map((x) => pair(x.overheadCallingMs)), ''],
    ['  records timed', ...report.strategies.map((x) => String(x.overheadMs.n)), ''],
    ['  admission acquire p50 / p99 (ms)', ...report.strategies.map((x) => pair(x.admissionAcquireMs)), ''],
    ['  records in flight: mean seen / most', ...report.strategies.map((x) => `${num(x.meanRecordsInFlight, 1)} / ${x.maxRecordsInFlight}`), ''],
    ['  event-loop delay p50 / p99 (ms)', ...report.strategies.map((x) => `${num(x.eventLoopDelayMs.p50)} / ${num(x.eventLoopDelayMs.p99)}`), ''],
    ['model adapter time per call p50 (ms)', ...report.strategies.map((x) => num(x.modelMsPerCall.p50)), ''],
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const lines = rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd());
  const floorLine = (label: string, f: FloorResult | null): string =>
    f
      ? `${label} (${f.concurrency} at a time, ${f.messages} messages): p50 / p99 ${pair(f.totalMs)} ms (receive ${pair(f.receiveMs)}, put ${pair(f.putMs)}, delete ${pair(f.deleteMs)})`
      : `${label}: not measured`;
  const probe = report.probe;
  const overheadLines = [
    'Consumer overhead per message, excluding model time, beside the floor (bare receive + one conditional put + delete',
    'per message, a loop on the same DynamoDB Local and fauxqs):',
    probe
      ? `  (c) consumer, one job at a time (${probe.messages} jobs): p50 / p99 ${pair(probe.overheadMs)} ms (model adapter ${pair(probe.modelMs)} ms)`
      : '  (c) consumer, one job at a time: not measured (--probe-messages 0)',
    ...(probe
      ? [
          `    its AWS calls per job (p50 ms): ${Object.entries(probe.callsPerJob)
            .map(([name, c]) => `${name} ${c.perJob} (${num(c.p50Ms)})`)
            .join(', ')}`,
        ]
      : []),
    `  ${floorLine('floor', report.floor)}`,
    `  => ${target(t?.overheadToFloor, `consumer p50 / floor p50 = ${num(t?.overheadToFloor.value ?? null)}x, target <= 2x:`)}`,
    `  ${floorLine('floor under (c)\'s load', report.loadedFloor)}`,
    `  => (c) under load p50 / loaded floor p50 = ${num(report.overheadToLoadedFloor)}x (informational)`,
  ];
  const lanes = Object.entries(s.jobsPerLane).map(([lane, n]) => `${lane} ${n}`).join(', ');
  const m = report.machine;
  return [
    `ratelane bench — ${report.date}`,
    `machine: ${m.cpus} x ${m.cpuModel}, ${m.memoryGb} GB, ${m.os}, Node ${m.node}; load average at start ${m.loadAverageAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${m.loadAverageAtEnd.map((l) => l.toFixed(2)).join(' ')}`,
    `jobs: ${s.jobs} (${lanes}); per lane ${s.keysPerLane} key(s) x ${s.providerRpm} rpm = ${s.laneRequestsPerMinute} requests per provider minute; a minute lasts ${s.minuteMs} ms; ` +
      `maxReceiveCount ${s.maxReceiveCount}; ${s.consumerConcurrencyPerLane} concurrent invocations x batch ${s.batchSize} per lane; ` +
      `failure backoff ${s.backoff.failureBaseSeconds}..${s.backoff.failureCapSeconds} s, throttle backoff ${s.backoff.throttleBaseSeconds}..${s.backoff.throttleCapSeconds} s`,
    '',
    ...lines,
    '',
    ...overheadLines,
    '',
    'quota-bound minimum: jobs / (keys x rpm) of the slowest lane, in provider minutes. The provider\'s RPM buckets start full,',
    'so one minute of requests can go at once: the burst-aware minimum leaves that minute out (a perfect drain).',
    'Consumer overhead: from the start of processRecord until it settled or threw, minus the time inside the model adapter;',
    'the poller\'s receive and delete (Lambda\'s event source mapping in AWS) are not in it, but are in the floor. Under load,',
    'every record of a batch runs at once, and DynamoDB Local, fauxqs, the fake provider and the consumers share 2 CPUs.',
    `total run time ${(report.elapsedMs / 1000).toFixed(1)} s`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// The run

/** The bench lanes of one strategy: `localRunLanes` with every resource name suffixed by `tag`. */
export function benchLanes(options: Pick<BenchOptions, 'keys' | 'providerRpm' | 'providerTpm' | 'minuteMs'>, tag: string): LaneSet {
  const base = localRunLanes({ ...options, providerDaily: 100_000_000 });
  return Object.fromEntries(
    Object.entries(base).map(([name, lane]) => [
      name,
      {
        ...lane,
        resources: Object.fromEntries(Object.entries(lane.resources).map(([k, v]) => [k, `${v}-${tag}`])) as LaneConfig['resources'],
      },
    ]),
  );
}

/** The slowest lane's drain time with a perfect scheduler: the first minute's requests at once, then the limit. */
function burstAwareMinimumMs(lanes: LaneSet, submitted: readonly { lane: string }[], minuteMs: number): number {
  let slowest = 0;
  for (const lane of Object.values(lanes)) {
    const jobs = submitted.filter((j) => j.lane === lane.name).length;
    const perMinute = new Set(lane.provider.keys.map((k) => k.quotaOwner)).size * lane.provider.limits.requestsPerMinute;
    if (jobs > 0 && perMinute > 0) slowest = Math.max(slowest, (Math.max(0, jobs - perMinute) / perMinute) * minuteMs);
  }
  return slowest;
}

interface SharedServices {
  endpoints: ServiceEndpoints;
  fauxqs: FauxqsLocal;
  dynamoPid: number | undefined;
  stop(): Promise<void>;
}

async function startServices(): Promise<SharedServices> {
  const [dynamo, fauxqs] = await Promise.all([startDynamoLocal(), startFauxqsLocal()]);
  return {
    endpoints: { sqs: fauxqs.endpoint, s3: fauxqs.endpoint, dynamodb: dynamo.endpoint },
    fauxqs,
    dynamoPid: dynamo.pid,
    stop: async () => {
      await Promise.allSettled([dynamo.stop(), fauxqs.stop()]);
    },
  };
}

async function runStrategy(strategy: BenchStrategy, options: BenchOptions, services: SharedServices, say: (line: string) => void): Promise<StrategyResult> {
  const started = Date.now();
  const tag = `${strategy.id.slice(0, 5)}-${randomBytes(3).toString('hex')}`;
  const lanes = benchLanes(options, tag);
  const timings: RecordTiming[] = [];
  const acquireMs: number[] = [];
  let wholeBatchFailures = 0;
  let recordsInFlight = 0;
  let maxRecordsInFlight = 0;
  let inFlightSeen = 0;
  let recordsReceived = 0;
  const timedKeys = (keys: KeyPool): KeyPool =>
    withOverrides(keys, {
      acquire: async (request) => {
        const t0 = performance.now();
        try {
          return await keys.acquire(request);
        } finally {
          acquireMs.push(performance.now() - t0);
        }
      },
    });
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  const stack: LocalStack = await startLocalStack({
    lanes,
    endpoints: services.endpoints,
    logFile: options.logFile ?? '.cache/bench/consumer.log',
    provider: {
      limits: { requestsPerMinute: options.providerRpm, tokensPerMinute: options.providerTpm, requestsPerDay: 100_000_000 },
      minuteMs: options.minuteMs,
      dayMs: options.minuteMs * 1440,
      seed: options.seed,
    },
    ...(strategy.admission ? {} : { admission: false as const }),
    overrideDeps: (_lane, deps): ConsumerDeps => ({
      ...deps,
      ...(strategy.throttleIsFailure ? { model: naiveModel(deps.model) } : {}),
      keys: timedKeys(deps.keys),
      onRecordTiming: (timing) => timings.push(timing),
    }),
    onPollerEvent: (_lane, event) => {
      if (event.type === 'batchFailed') wholeBatchFailures += 1;
      if (event.type === 'batchReceived') {
        recordsInFlight += event.messageIds.length;
        maxRecordsInFlight = Math.max(maxRecordsInFlight, recordsInFlight);
        inFlightSeen += recordsInFlight * event.messageIds.length;
        recordsReceived += event.messageIds.length;
      }
      if (event.type === 'invocationFinished') recordsInFlight -= event.records;
    },
    onLanePause: (lane, state) => say(`  ${strategy.label}: lane ${lane} ${state.paused ? `PAUSED until ${state.until?.toISOString()} (${state.reason})` : 'resumed'}`),
  });
  try {
    const documents = corpusDocuments(options.jobs);
    loopDelay.enable();
    const { submission, sent, submitted, submitStarted } = await submitToStack(stack, lanes, documents);
    const bound = quotaBoundMinimumMs(lanes, submitted, options.minuteMs);
    say(
      `${strategy.label}: submitted ${sent.length} of ${documents.length} jobs in ${Date.now() - submitStarted} ms${submission.failed ? ` (${submission.failed} NOT sent)` : ''}; quota-bound minimum ${(bound / 1000).toFixed(1)} s`,
    );

    const deadline = submitStarted + options.timeLimitSeconds * 1000;
    const progressEveryMs = Math.max(2_000, Math.min(10_000, bound / 6));
    let lastProgress = Date.now();
    let quietSince: number | null = null;
    let quietChecks = 0;
    let timedOut = false;
    const progress = (depthLine: string): void => {
      const m = stack.telemetry.totals.total;
      const p = stack.provider.stats();
      const throttled = Object.values(p.rateLimited).reduce((a, b) => a + b, 0);
      say(
        `  [${strategy.label} ${((Date.now() - submitStarted) / 1000).toFixed(0).padStart(4)} s] committed ${m.Completed ?? 0}/${sent.length} · ${depthLine} · model calls ${m.ModelCalls ?? 0} · 429s ${throttled} · denied ${m.AdmissionDenied ?? 0} · re-sent ${m.Deferred ?? 0} · failed ${m.Failed ?? 0}`,
      );
    };
    for (;;) {
      await new Promise((r) => setTimeout(r, 500));
      const depths = await Promise.all(Object.keys(stack.lanes).map(async (name) => [await queueDepth(stack, name, 'queueUrl'), await queueDepth(stack, name, 'dlqUrl')] as const));
      const waiting = depths.reduce((n, [q]) => n + q.visible + q.inFlight + q.delayed, 0);
      const busy = Object.values(stack.lanes).some((l) => (l.poller?.stats.inFlight ?? 0) > 0);
      const dlq = depths.reduce((n, [, d]) => n + d.visible + d.inFlight + d.delayed, 0);
      if (waiting === 0 && !busy) {
        quietSince ??= Date.now();
        quietChecks += 1;
      } else {
        quietSince = null;
        quietChecks = 0;
      }
      const depthLine = `in queue ${waiting} (delayed ${depths.reduce((n, [q]) => n + q.delayed, 0)}) · DLQ ${dlq}`;
      if (Date.now() - lastProgress >= progressEveryMs) {
        lastProgress = Date.now();
        progress(depthLine);
      }
      if (quietChecks >= 2) {
        progress(depthLine);
        break;
      }
      if (Date.now() > deadline) {
        timedOut = true;
        progress(depthLine);
        say(`  ${strategy.label}: time limit of ${options.timeLimitSeconds} s reached; ${waiting} message(s) still waiting`);
        break;
      }
    }
    loopDelay.disable();
    for (const lane of Object.values(stack.lanes)) await lane.poller?.stop();

    const results = (await Promise.all(Object.values(stack.lanes).map((l) => l.results.scanAll()))).flat();
    const ledger = (await Promise.all(Object.values(stack.lanes).map((l) => l.ledger.scanAll()))).flat();
    const stats = stack.provider.stats();
    const card = computeScorecard({
      submitted,
      results: results.map((r) => ({ jobId: r.jobId, idempotencyKey: r.idempotencyKey, committedAt: Date.parse(r.committedAt) })),
      terminalLedger: ledger.flatMap((e) => (e.kind === 'rejected' || e.kind === 'needs_review' ? [{ jobId: e.jobId, kind: e.kind, reason: e.reason }] : [])),
      deadLettered: Object.values(stack.lanes).flatMap((l) => jobIdsIn(services.fauxqs, l.lane.resources.dlqName)),
      waiting: Object.values(stack.lanes).flatMap((l) => jobIdsIn(services.fauxqs, l.lane.resources.queueName)),
      metrics: stack.telemetry.totals.total,
      queueAgesMs: stack.telemetry.totals.values.QueueAgeMs ?? [],
      attemptsPerCompletion: stack.telemetry.totals.values.AttemptsPerCompletion ?? [],
      provider: { requests: stats.requests, rateLimited: Object.values(stats.rateLimited).reduce((a, b) => a + b, 0), byKind: { ...stats.rateLimited } },
      elapsedMs: Date.now() - submitStarted,
      timedOut,
      quotaBoundMinimumMs: bound,
    });
    const scorecard: Scorecard = { ...card, notSent: documents.length - sent.length };
    const burst = burstAwareMinimumMs(lanes, submitted, options.minuteMs);
    const m = stack.telemetry.totals.total;
    const overhead = timings.map((t) => Math.max(0, t.totalMs - t.modelMs));
    const calling = timings.filter((t) => t.modelCalls > 0 && t.settled).map((t) => Math.max(0, t.totalMs - t.modelMs));
    const perCall = timings.filter((t) => t.modelCalls > 0).map((t) => t.modelMs / t.modelCalls);
    const result: StrategyResult = {
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
      failures: m.Failed ?? 0,
      drainMs: scorecard.drainMs,
      quotaBoundMinimumMs: scorecard.quotaBoundMinimumMs,
      drainRatio: scorecard.drainRatio,
      burstAwareMinimumMs: Math.round(burst),
      burstAwareRatio: scorecard.drainMs !== null && burst > 0 ? round(scorecard.drainMs / burst) : null,
      settledMs: timedOut || quietSince === null ? null : quietSince - submitStarted,
      overheadMs: distribution(overhead),
      overheadCallingMs: distribution(calling),
      modelMsPerCall: distribution(perCall),
      admissionAcquireMs: distribution(acquireMs),
      // The histogram holds each 10 ms timer's whole interval: the delay is what exceeds 10 ms.
      eventLoopDelayMs: {
        p50: round(Math.max(0, loopDelay.percentile(50) / 1e6 - 10), 2),
        p99: round(Math.max(0, loopDelay.percentile(99) / 1e6 - 10), 2),
        max: round(Math.max(0, loopDelay.max / 1e6 - 10), 2),
      },
      maxRecordsInFlight,
      meanRecordsInFlight: recordsReceived > 0 ? round(inFlightSeen / recordsReceived, 1) : 0,
      wholeBatchFailures,
      elapsedMs: Date.now() - started,
      timedOut,
      scorecard,
    };
    say(
      `${strategy.label}: done in ${(result.elapsedMs / 1000).toFixed(1)} s: committed ${result.committed}, dead-lettered ${result.deadLettered}, lost ${result.lost}, ` +
        `drain ${result.drainRatio ?? '-'}x the bound, ${result.modelCallsPerCompletion ?? '-'} calls per completion, overhead p50 ${result.overheadMs.p50 ?? '-'} ms`,
    );
    return result;
  } finally {
    await stack.stop();
  }
}

/** The record the floor writes: the size and shape of a real commit. */
function floorRecordTemplate(): ResultRecord {
  const doc = loadCorpus()[0]!;
  const now = new Date().toISOString();
  return {
    idempotencyKey: 'floor',
    jobId: 'floor',
    region: 'us',
    schemaVersion: DEFAULT_SCHEMA_VERSION,
    promptVersion: DEFAULT_PROMPT_VERSION,
    result: extractInvoice(doc.text) as unknown as Record<string, unknown>,
    usage: { inputTokens: 900, outputTokens: 300 },
    model: 'fake',
    attempt: 0,
    deferrals: 0,
    modelCalls: 1,
    committedAt: now,
    jobCreatedAt: now,
  };
}

/**
 * The floor: per message, a bare ReceiveMessage (one message, no wait), one conditional PutItem
 * (`ResultStore.commitOnce`, the consumer's own commit) and a DeleteMessage, timed end to end.
 */
export async function measureFloor(endpoints: ServiceEndpoints, options: { messages: number; concurrency: number; warmup?: number }): Promise<FloorResult> {
  const clients = createAwsClients('us-east-1', endpoints);
  const tag = randomBytes(4).toString('hex');
  try {
    const created = await clients.sqs.send(new CreateQueueCommand({ QueueName: `ratelane-bench-floor-${tag}`, Attributes: { VisibilityTimeout: '60' } }));
    const queueUrl = created.QueueUrl!;
    const tableName = `ratelane-bench-floor-${tag}`;
    await ensureTable(clients.dynamodb, tableName, RESULTS_TABLE);
    const store = new ResultStore({ dynamodb: clients.dynamodb, tableName });
    const template = floorRecordTemplate();
    const warmup = options.warmup ?? Math.min(30, options.messages);
    const total = options.messages + warmup;
    // Bodies of a job message's size.
    const body = (i: number): string => JSON.stringify({ jobId: `floor-${tag}-${i}`, pad: 'x'.repeat(700) });
    for (let i = 0; i < total; i += 10) {
      const n = Math.min(10, total - i);
      await clients.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: Array.from({ length: n }, (_, j) => ({ Id: String(j), MessageBody: body(i + j) })) }));
    }
    const totals: number[] = [];
    const receives: number[] = [];
    const puts: number[] = [];
    const deletes: number[] = [];
    let taken = 0;
    const loop = async (): Promise<void> => {
      for (;;) {
        const index = taken++;
        if (index >= total) return;
        const t0 = performance.now();
        const out = await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 0 }));
        const message = out.Messages?.[0];
        if (!message) return;
        const t1 = performance.now();
        const id = (JSON.parse(message.Body ?? '{}') as { jobId?: string }).jobId ?? `floor-${index}`;
        await store.commitOnce({ ...template, idempotencyKey: id, jobId: id });
        const t2 = performance.now();
        await clients.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
        const t3 = performance.now();
        if (index < warmup) continue;
        totals.push(t3 - t0);
        receives.push(t1 - t0);
        puts.push(t2 - t1);
        deletes.push(t3 - t2);
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, () => loop()));
    return {
      messages: totals.length,
      concurrency: options.concurrency,
      totalMs: distribution(totals),
      receiveMs: distribution(receives),
      putMs: distribution(puts),
      deleteMs: distribution(deletes),
    };
  } finally {
    clients.destroy();
  }
}

/**
 * The consumer of (c) (admission on) with one job at a time and a quota that never binds: each job is
 * submitted when the one before it has settled, so the record meets no other record. The first few
 * are a warm-up and not counted.
 */
async function probeOverhead(options: BenchOptions, services: SharedServices, messages: number): Promise<OverheadProbe> {
  const lanes = benchLanes({ ...options, providerRpm: 1_000_000 }, `probe-${randomBytes(3).toString('hex')}`);
  let waiter: ((timing: RecordTiming) => void) | undefined;
  const stack = await startLocalStack({
    lanes,
    endpoints: services.endpoints,
    logFile: options.logFile ?? '.cache/bench/consumer.log',
    provider: { limits: { requestsPerMinute: 1_000_000, tokensPerMinute: 100_000_000, requestsPerDay: 100_000_000 }, minuteMs: options.minuteMs, dayMs: options.minuteMs * 1440, seed: options.seed },
    overrideDeps: (_lane, deps): ConsumerDeps => ({ ...deps, onRecordTiming: (timing) => waiter?.(timing) }),
  });
  const producer = createAwsClients(lanes.us!.region, services.endpoints);
  try {
    const warmup = Math.min(10, messages);
    const documents = corpusDocuments(messages + warmup).map((d) => ({ ...d, region: 'us' }));
    const overhead: number[] = [];
    const model: number[] = [];
    const calls: Record<string, number[]> = {};
    let counting = false;
    const consumerClients = stack.lanes.us!.clients;
    for (const client of [consumerClients.sqs, consumerClients.s3, consumerClients.dynamodb]) {
      // The consumer's clients are also the poller's: its ReceiveMessage and DeleteMessageBatch are left out.
      (client.middlewareStack as { add(mw: unknown, options: unknown): void }).add(
        (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
          const started = performance.now();
          try {
            return await next(args);
          } finally {
            const name = context.commandName ?? 'unknown';
            if (counting && name !== 'ReceiveMessageCommand' && name !== 'DeleteMessageBatchCommand') (calls[name.replace(/Command$/, '')] ??= []).push(performance.now() - started);
          }
        },
        { step: 'initialize', name: 'benchProbeTiming' },
      );
    }
    for (let i = 0; i < documents.length; i++) {
      const settled = new Promise<RecordTiming>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('overhead probe: a job did not settle within 30 s')), 30_000);
        waiter = (timing) => {
          if (!timing.settled) return;
          clearTimeout(timer);
          resolve(timing);
        };
      });
      const submission = await submitDocuments(
        { documents: [documents[i]!] },
        {
          lanes,
          clientsFor: () => ({ sqs: producer.sqs, s3: producer.s3 }),
          queueUrlFor: (lane) => stack.lanes[lane.name]!.queueUrl,
          now: () => new Date(),
          isKnownVersion: isKnownPromptVersion,
          defaultVersions: { schemaVersion: DEFAULT_SCHEMA_VERSION, promptVersion: DEFAULT_PROMPT_VERSION },
        },
      );
      if (submission.failed > 0) throw new Error('overhead probe: a job could not be submitted');
      counting = i >= warmup;
      const timing = await settled;
      counting = false;
      if (i < warmup) continue;
      overhead.push(Math.max(0, timing.totalMs - timing.modelMs));
      model.push(timing.modelMs);
    }
    const callsPerJob = Object.fromEntries(
      Object.entries(calls)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, times]) => [name, { perJob: round(times.length / Math.max(1, overhead.length), 2), p50Ms: distribution(times).p50 }]),
    );
    return { messages: overhead.length, overheadMs: distribution(overhead), modelMs: distribution(model), callsPerJob };
  } finally {
    waiter = undefined;
    producer.destroy();
    await stack.stop();
  }
}

function machine(): Omit<BenchReport['machine'], 'loadAverageAtEnd'> {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpus: cpus.length,
    memoryGb: round(os.totalmem() / 1024 ** 3, 1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadAverageAtStart: os.loadavg().map((l) => round(l, 2)),
  };
}

/** Runs the bench and returns its report (printed to `io`; `--json` adds one JSON line at the end). */
export async function runBench(options: BenchOptions, io: RunIo): Promise<BenchReport> {
  const say = (line: string): void => {
    io.stderr.write(`${line}\n`);
  };
  const started = Date.now();
  const host = machine();
  const probeLanes = benchLanes(options, 'probe');
  const anyLane = Object.values(probeLanes)[0]!;
  const jobsPerLane: Record<string, number> = {};
  for (const doc of corpusDocuments(options.jobs)) jobsPerLane[doc.region] = (jobsPerLane[doc.region] ?? 0) + 1;
  say(
    `ratelane bench: ${options.jobs} jobs, ${options.keys} key(s) per lane x ${options.providerRpm} rpm, a provider minute lasts ${options.minuteMs} ms; ` +
      `strategies ${options.strategies.join(', ')}; load average ${host.loadAverageAtStart.join(' ')} on ${host.cpus} CPU(s)`,
  );
  say('  starting DynamoDB Local and fauxqs…');
  const services = await startServices();
  const unregister = onShutdown(() => services.stop());
  try {
    say(`  up in ${Date.now() - started} ms: DynamoDB Local ${services.endpoints.dynamodb} (pid ${services.dynamoPid ?? '-'}), SQS/S3 ${services.endpoints.sqs}`);
    const strategies: StrategyResult[] = [];
    for (const id of options.strategies) {
      const strategy = BENCH_STRATEGIES[id];
      say(`${strategy.label}: ${strategy.description}`);
      strategies.push(await runStrategy(strategy, options, services, say));
    }
    let probe: OverheadProbe | null = null;
    if (options.probeMessages > 0) {
      say(`overhead probe: ${options.probeMessages} jobs, one at a time, through the consumer of (c) (quota not binding)…`);
      probe = await probeOverhead(options, services, options.probeMessages);
      say(`overhead probe: p50 ${probe.overheadMs.p50} ms, p99 ${probe.overheadMs.p99} ms`);
    }
    let floor: FloorResult | null = null;
    let loadedFloor: FloorResult | null = null;
    if (options.floorMessages > 0) {
      say(`floor: ${options.floorMessages} messages, one at a time: receive + conditional put + delete on the same emulators…`);
      floor = await measureFloor(services.endpoints, { messages: options.floorMessages, concurrency: 1 });
      say(`floor: p50 ${floor.totalMs.p50} ms, p99 ${floor.totalMs.p99} ms`);
      const c = strategies.find((x) => x.id === 'admission');
      if (c && c.meanRecordsInFlight > 1) {
        const concurrency = Math.max(2, Math.round(c.meanRecordsInFlight));
        say(`floor under load: ${options.floorMessages} messages, ${concurrency} at a time (the records (c) had in flight on average)…`);
        loadedFloor = await measureFloor(services.endpoints, { messages: Math.max(options.floorMessages, concurrency * 3), concurrency });
        say(`floor under load: p50 ${loadedFloor.totalMs.p50} ms, p99 ${loadedFloor.totalMs.p99} ms`);
      }
    }
    const cUnderLoad = strategies.find((x) => x.id === 'admission')?.overheadMs.p50 ?? null;
    const report: BenchReport = {
      date: new Date(started).toISOString(),
      machine: { ...host, loadAverageAtEnd: os.loadavg().map((l) => round(l, 2)) },
      settings: {
        jobs: options.jobs,
        jobsPerLane,
        keysPerLane: options.keys,
        providerRpm: options.providerRpm,
        providerTpm: options.providerTpm,
        minuteMs: options.minuteMs,
        laneRequestsPerMinute: options.keys * options.providerRpm,
        maxReceiveCount: anyLane.queue.maxReceiveCount,
        consumerConcurrencyPerLane: anyLane.consumer.maximumConcurrency,
        batchSize: anyLane.queue.batchSize,
        backoff: anyLane.backoff,
      },
      strategies,
      probe,
      floor,
      loadedFloor,
      targets: checkTargets(strategies, probe, floor),
      overheadToLoadedFloor: cUnderLoad !== null && loadedFloor?.totalMs.p50 ? round(cUnderLoad / loadedFloor.totalMs.p50, 2) : null,
      elapsedMs: Date.now() - started,
    };
    say('');
    io.stdout.write(`${formatBenchReport(report)}\n`);
    if (options.json) io.stdout.write(`${JSON.stringify(report)}\n`);
    return report;
  } finally {
    unregister();
    await services.stop();
  }
}
