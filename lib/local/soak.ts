/**
 * `npm run soak`: N jobs (default 5,000) through the local stack with faults injected at given rates,
 * then a reconciliation.
 *
 * Faults: provider 429s of each kind (small per-key rpm / tpm / daily limits, and one key per lane out
 * of credit for a while), 5xx, timeouts, garbage and schema-invalid output (the fake provider, seeded);
 * duplicate deliveries (some job messages are sent twice, some of the copies later); DynamoDB and SQS
 * unavailable for some calls; and consumer crashes between steps — after the model call (before the
 * commit), after the commit (before the acknowledgement) and after a re-send (before the
 * acknowledgement). A crash is a call that never returns: the poller's function timeout ends the
 * invocation and the whole batch comes back after its visibility timeout, as in Lambda.
 *
 * Reconciliation: every submitted job is looked up in every place a job can end (results tables,
 * ledgers, DLQs, queues) and given exactly one final state; `lost` counts jobs found nowhere,
 * `doubleCommits` idempotency keys committed more than once (seen by the commit itself and in the
 * results tables). Some documents carry a sentinel string: it must appear in no log line and no metric.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { loadCorpus } from '../../corpus/index.js';
import { runResumeCommand } from '../admission/resume-cli.js';
import type { LaneSet } from '../config/lanes.js';
import type { ConsumerDeps } from '../consumer/process-record.js';
import type { ExtractionRequest, ExtractionResponse } from '../providers/model.js';
import type { DocumentInput } from '../queue/producer.js';
import { StoreUnavailableError } from '../store/errors.js';
import type { CommitOutcome, ResultRecord } from '../store/results.js';
import { createAwsClients, type AwsClients } from '../aws/clients.js';
import { mulberry32 } from './fake-provider/faults.js';
import { corpusDocuments, jobIdsIn, localRunLanes, queueDepth, submitToStack, type RunIo } from './run.js';
import { computeScorecard, type Scorecard } from './scorecard.js';
import { localKeySecret, startLocalStack, type LocalStack } from './stack.js';

// ---------------------------------------------------------------------------------------------
// Fault points around the consumer's dependencies (also used by the fault tests)

/** Where a consumer can die between two steps. */
export type CrashPoint = 'afterModelCall' | 'afterCommit' | 'afterResend';

/** A dependency call that can find its service unavailable (the call is not made). */
export type OutagePoint = 'commit' | 'send' | 'visibility';

/** Decides, call by call, where faults happen around a consumer's dependencies. */
export interface DepFaults {
  /** Whether the consumer dies at this point now. */
  crash?(point: CrashPoint): boolean;
  /** Whether this call finds its service unavailable now (it throws as the SDK adapter would). */
  outage?(point: OutagePoint): boolean;
  /**
   * What a crash does. Default: a promise that never settles — a process that died answers nothing,
   * so the invocation ends by the function timeout and its whole batch comes back.
   */
  onCrash?(point: CrashPoint): Promise<never>;
  /** Sees every commit attempt that reached the store, with what it did. */
  onCommit?(record: ResultRecord, status: CommitOutcome['status']): void;
}

/** A crash's default effect: never settle. */
export const neverSettles = (): Promise<never> => new Promise<never>(() => undefined);

/**
 * A view of `target` with some members replaced; every other member is read from `target` (methods
 * bound to it), so it works for classes with private (`#`) fields.
 */
export function withOverrides<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.prototype.hasOwnProperty.call(overrides, property)) return (overrides as Record<PropertyKey, unknown>)[property];
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}

/** The error an SQS call gets when the service is unavailable. */
export function sqsUnavailableError(command: string): Error {
  return Object.assign(new Error(`injected: SQS unavailable for ${command}`), { name: 'ServiceUnavailable', $fault: 'server', $metadata: { httpStatusCode: 503 } });
}

/**
 * The consumer's dependencies with faults: the model (crash after a call), the results store
 * (unavailable, crash after a commit) and the SQS client the consumer sends with (SendMessage or
 * ChangeMessageVisibility unavailable, crash after a SendMessage). Everything else is untouched.
 */
export function withDepFaults(deps: ConsumerDeps, faults: DepFaults): ConsumerDeps {
  const crash = (point: CrashPoint): Promise<never> => (faults.onCrash ?? neverSettles)(point);
  const model = withOverrides(deps.model, {
    extract: async (request: ExtractionRequest): Promise<ExtractionResponse> => {
      const response = await deps.model.extract(request);
      if (faults.crash?.('afterModelCall')) return crash('afterModelCall');
      return response;
    },
  });
  const results = withOverrides(deps.results, {
    commitOnce: async (record: ResultRecord): Promise<CommitOutcome> => {
      if (faults.outage?.('commit')) {
        throw new StoreUnavailableError('PutItem', deps.results.tableName, {
          cause: Object.assign(new Error('injected: DynamoDB unavailable'), { name: 'ServiceUnavailable' }),
        });
      }
      const outcome = await deps.results.commitOnce(record);
      faults.onCommit?.(record, outcome.status);
      if (faults.crash?.('afterCommit')) return crash('afterCommit');
      return outcome;
    },
  });
  const realSend = deps.sqs.send.bind(deps.sqs) as (command: unknown, options?: unknown) => Promise<unknown>;
  const send = async (command: unknown, options?: unknown): Promise<unknown> => {
    const isSend = command instanceof SendMessageCommand;
    const isVisibility = command instanceof ChangeMessageVisibilityCommand;
    if ((isSend && faults.outage?.('send')) || (isVisibility && faults.outage?.('visibility'))) {
      throw sqsUnavailableError(isSend ? 'SendMessage' : 'ChangeMessageVisibility');
    }
    const out = await realSend(command, options);
    if (isSend && faults.crash?.('afterResend')) return crash('afterResend');
    return out;
  };
  const sqs = withOverrides(deps.sqs, { send: send as unknown as SQSClient['send'] });
  return { ...deps, model, results, sqs };
}

// ---------------------------------------------------------------------------------------------
// Options

/** Options of one soak (the CLI flags). */
export interface SoakOptions {
  jobs: number;
  /** Provider keys per lane; key-1 of each lane runs out of credit for a while. */
  keys: number;
  providerRpm: number;
  providerTpm: number;
  providerDaily: number;
  /** How many provider minutes a provider "day" lasts (the daily budget refills continuously over it). */
  dayMinutes: number;
  /** How long a provider "minute" lasts here; every time setting of the lanes scales with it. */
  minuteMs: number;
  /** Provider faults, as shares of admitted calls. */
  faults: { serverError: number; timeout: number; garbageJson: number; schemaInvalid: number };
  /** Share of jobs whose message is sent twice. */
  duplicates: number;
  /** Chance of a consumer crash at each crash point it passes. */
  crashes: number;
  /** Share of commits that find DynamoDB unavailable. */
  storeOutages: number;
  /** Share of the consumer's SendMessage / ChangeMessageVisibility calls that find SQS unavailable. */
  sqsOutages: number;
  /** Provider minutes key-1 of each lane is out of credit (0: never), starting one minute in. */
  creditOutageMinutes: number;
  /** Share of documents that carry the sentinel string. */
  sentinels: number;
  /** Admission (shared key pool, buckets, lane pause) on (default) or off. */
  admission: boolean;
  seed: number;
  timeLimitSeconds: number;
  json: boolean;
  logFile: string | undefined;
}

/** Raised for bad flags; the message is the usage error (empty for `--help`). */
export class SoakUsageError extends Error {
  override name = 'SoakUsageError';
}

export const SOAK_USAGE = `Usage: npm run soak -- [options]

Runs N jobs through the local stack (DynamoDB Local, fauxqs, the fake provider, the real consumer
under a Lambda-like poller) with faults injected at the given rates, waits until every job has
settled, then reconciles: every submitted job must be in exactly one terminal state, none lost,
none committed twice, and the sentinel string of some documents in no log line or metric.

  --jobs N              jobs to submit (default 5000), corpus documents repeated with new source ids
  --keys K              provider keys per lane (default 2); key-1 of each lane runs out of credit
  --provider-rpm N      requests per minute per key (default 60)
  --provider-tpm N      tokens per minute per key (default 45000)
  --provider-daily N    requests per day per key (default 400); the daily budget refills continuously
  --day-minutes N       provider minutes in a provider day (default 12)
  --minute-ms MS        length of a provider "minute" (default 3000); lane timeouts and backoff scale with it
  --fault-5xx R         share of provider calls answered 500/503 (0..1, default 0.02)
  --fault-timeout R     share of provider calls that never answer (default 0.01)
  --fault-garbage R     share of answers that are not JSON (default 0.02)
  --fault-invalid R     share of answers that break the schema (default 0.02)
  --duplicates R        share of jobs whose message is sent twice (default 0.05)
  --crash R             chance of a consumer crash at each crash point: after the model call, after
                        the commit, after a re-send (default 0.002)
  --fault-store R       share of commits that find DynamoDB unavailable (default 0.01)
  --fault-sqs R         share of the consumer's SendMessage/ChangeMessageVisibility calls that find
                        SQS unavailable (default 0.01)
  --credit-outage M     provider minutes key-1 of each lane is out of credit, from minute 1 (default 3;
                        0: never); then an operator resumes each lane (ratelane resume --clear billing)
  --sentinels R         share of documents carrying the sentinel string (default 0.05)
  --no-admission        call without admission (round robin, no shared key pool, no lane pause)
  --seed N              seed of every injected fault (default 42)
  --time-limit S        stop waiting after S seconds (default 900)
  --log-file PATH       where consumer logs and EMF metrics go (default .cache/soak/consumer.log)
  --json                print the report as one JSON object on the last line of stdout
`;

function numberFlag(values: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (typeof raw !== 'string' || raw.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    throw new SoakUsageError(`--${name} must be a number in ${min}..${max}, got "${String(raw)}"`);
  }
  return value;
}

const FLAGS = [
  'jobs',
  'keys',
  'provider-rpm',
  'provider-tpm',
  'provider-daily',
  'day-minutes',
  'minute-ms',
  'fault-5xx',
  'fault-timeout',
  'fault-garbage',
  'fault-invalid',
  'duplicates',
  'crash',
  'fault-store',
  'fault-sqs',
  'credit-outage',
  'sentinels',
  'seed',
  'time-limit',
  'log-file',
] as const;

/** Parses the CLI flags (pure). @throws {SoakUsageError} */
export function parseSoakArgs(argv: string[]): SoakOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(FLAGS.map((name) => [name, { type: 'string' as const }])),
        json: { type: 'boolean' },
        'no-admission': { type: 'boolean' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    throw new SoakUsageError((error as Error).message);
  }
  const v = parsed.values as Record<string, unknown>;
  if (v.help) throw new SoakUsageError('');
  const faults = {
    serverError: numberFlag(v, 'fault-5xx', 0.02, 0, 1),
    timeout: numberFlag(v, 'fault-timeout', 0.01, 0, 1),
    garbageJson: numberFlag(v, 'fault-garbage', 0.02, 0, 1),
    schemaInvalid: numberFlag(v, 'fault-invalid', 0.02, 0, 1),
  };
  if (faults.serverError + faults.timeout + faults.garbageJson + faults.schemaInvalid > 1) {
    throw new SoakUsageError('--fault-5xx, --fault-timeout, --fault-garbage and --fault-invalid must add up to at most 1');
  }
  return {
    jobs: Math.floor(numberFlag(v, 'jobs', 5000, 1, 100_000)),
    keys: Math.floor(numberFlag(v, 'keys', 2, 1, 20)),
    providerRpm: Math.floor(numberFlag(v, 'provider-rpm', 60, 1, 1_000_000)),
    providerTpm: Math.floor(numberFlag(v, 'provider-tpm', 45_000, 1_000, 100_000_000)),
    providerDaily: Math.floor(numberFlag(v, 'provider-daily', 400, 1, 100_000_000)),
    dayMinutes: numberFlag(v, 'day-minutes', 12, 1, 1440),
    minuteMs: Math.floor(numberFlag(v, 'minute-ms', 3000, 1000, 60_000)),
    faults,
    duplicates: numberFlag(v, 'duplicates', 0.05, 0, 1),
    crashes: numberFlag(v, 'crash', 0.002, 0, 0.5),
    storeOutages: numberFlag(v, 'fault-store', 0.01, 0, 0.5),
    sqsOutages: numberFlag(v, 'fault-sqs', 0.01, 0, 0.5),
    creditOutageMinutes: numberFlag(v, 'credit-outage', 3, 0, 1440),
    sentinels: numberFlag(v, 'sentinels', 0.05, 0, 1),
    admission: v['no-admission'] !== true,
    seed: Math.floor(numberFlag(v, 'seed', 42, 0, 2 ** 31)),
    timeLimitSeconds: numberFlag(v, 'time-limit', 900, 5, 24 * 3600),
    json: v.json === true,
    logFile: typeof v['log-file'] === 'string' ? v['log-file'] : undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// Report

/** Where a job was found at the end. */
export type SoakState = 'committed' | 'needs_review' | 'rejected' | 'dead_lettered' | 'waiting';

/** Precedence of a job's final state when copies of it ended in several places (a commit wins). */
export const STATE_PRECEDENCE: readonly SoakState[] = ['committed', 'needs_review', 'rejected', 'dead_lettered', 'waiting'];

/** What a soak found. */
export interface SoakReport {
  /** Jobs asked for. */
  jobs: number;
  /** Jobs the producer sent (the reconciliation's universe). */
  submitted: number;
  /** Jobs the producer could not send (reported at intake, not part of `submitted`). */
  notSent: number;
  /** Final state of each submitted job, counted: these add up to `submitted - lost`. */
  states: Record<SoakState, number>;
  /** Submitted jobs found in no place at all. */
  lost: number;
  /** Idempotency keys committed more than once. */
  doubleCommits: number;
  /**
   * Jobs whose copies (a duplicate delivery, a crash after a re-send) ended in more than one place,
   * e.g. committed and also dead-lettered; the final state is the first of {@link STATE_PRECEDENCE}.
   */
  multiState: number;
  /** Up to 10 of them: job id and every place it was found. */
  multiStateExamples: { jobId: string; places: SoakState[] }[];
  /** Results items of jobs that were never submitted (must be 0). */
  strayResults: number;
  injected: {
    duplicateMessages: number;
    crashes: Record<CrashPoint, number>;
    outages: Record<OutagePoint, number>;
    creditOutageMs: number;
    providerFaults: Record<string, number>;
  };
  /** Invocations the poller counted failed as a whole (by reason: `timeout` is how a crash ends), and failed deletes. */
  poller: { wholeBatchFailures: Record<string, number>; wholeBatchFailureExamples: Record<string, string>; deleteFailures: number };
  /** 429s the provider answered, by kind (`insufficient_quota` is out of credit). */
  throttled: Record<string, number>;
  /** Consumer metric totals (EMF). */
  metrics: Record<string, number>;
  sentinel: {
    documents: number;
    /** Log lines (logs and EMF metrics) that contain the sentinel: must be 0. */
    leaks: number;
    /** Ledger entries that contain it: must be 0. */
    ledgerLeaks: number;
    /** Log lines that contain a provider key secret: must be 0. */
    secretLeaks: number;
    logLines: number;
    unstructuredLines: number;
  };
  /** The `npm run local` scorecard over the same stores. */
  scorecard: Scorecard;
  elapsedMs: number;
  timedOut: boolean;
}

/** 0 when the soak passed (nothing lost, nothing committed twice, no leak, in time); else 1. */
export function soakExitCode(report: SoakReport): number {
  const clean = report.lost === 0 && report.doubleCommits === 0 && report.strayResults === 0 && report.sentinel.leaks === 0;
  return clean && report.sentinel.ledgerLeaks === 0 && report.sentinel.secretLeaks === 0 && !report.timedOut ? 0 : 1;
}

/** Renders the report for people. */
export function formatSoakReport(report: SoakReport): string {
  const entries = (record: Record<string, number>): string =>
    Object.entries(record)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || '-';
  const m = report.metrics;
  const rows: [string, string][] = [
    ['submitted', `${report.submitted} of ${report.jobs}${report.notSent ? ` (${report.notSent} NOT sent)` : ''}`],
    ...STATE_PRECEDENCE.map((s): [string, string] => [`  ${s}`, String(report.states[s])]),
    ['LOST', String(report.lost)],
    ['DOUBLE COMMITS', String(report.doubleCommits)],
    ['jobs in several places', `${report.multiState}${report.multiState ? ' (a copy of a committed job also ended elsewhere; the commit counts)' : ''}`],
    ['duplicate messages sent', String(report.injected.duplicateMessages)],
    ['duplicates suppressed', String(m.DuplicateSuppressed ?? 0)],
    ['crashes injected', entries(report.injected.crashes)],
    ['outages injected', entries(report.injected.outages)],
    ['provider faults', entries(report.injected.providerFaults)],
    ['whole-batch failures', entries(report.poller.wholeBatchFailures)],
    ['429s', entries(report.throttled)],
    ['key out of credit for', `${(report.injected.creditOutageMs / 1000).toFixed(1)} s`],
    ['model calls', String(m.ModelCalls ?? 0)],
    ['deferrals / real failures', `${m.Deferred ?? 0} / ${m.Failed ?? 0}`],
    ['billing alarms', String(m.BillingAlarm ?? 0)],
    ['validation failures', String(m.ValidationFailed ?? 0)],
    ['sentinel documents', String(report.sentinel.documents)],
    ['sentinel in logs / ledger', `${report.sentinel.leaks} / ${report.sentinel.ledgerLeaks} (of ${report.sentinel.logLines} log lines)`],
    ['key secrets in logs', String(report.sentinel.secretLeaks)],
    ['elapsed', `${(report.elapsedMs / 1000).toFixed(1)} s${report.timedOut ? ' (time limit reached)' : ''}`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return ['ratelane soak — reconciliation', ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)].join('\n');
}

/**
 * Gives each submitted job exactly one final state from where it was found (pure). A job found in
 * several places gets the first of {@link STATE_PRECEDENCE}; a job found nowhere is lost.
 */
export function reconcile(
  submitted: readonly { jobId: string }[],
  found: Readonly<Record<SoakState, Iterable<string>>>,
): { states: Record<SoakState, number>; lost: string[]; multiState: { jobId: string; places: SoakState[] }[] } {
  const places = new Map<string, Set<SoakState>>(submitted.map((j) => [j.jobId, new Set<SoakState>()]));
  for (const state of STATE_PRECEDENCE) {
    for (const jobId of found[state]) places.get(jobId)?.add(state);
  }
  const states = Object.fromEntries(STATE_PRECEDENCE.map((s) => [s, 0])) as Record<SoakState, number>;
  const lost: string[] = [];
  const multiState: { jobId: string; places: SoakState[] }[] = [];
  for (const [jobId, set] of places) {
    const final = STATE_PRECEDENCE.find((s) => set.has(s));
    if (!final) {
      lost.push(jobId);
      continue;
    }
    states[final] += 1;
    if (set.size > 1) multiState.push({ jobId, places: STATE_PRECEDENCE.filter((s) => set.has(s)) });
  }
  return { states, lost, multiState };
}

// ---------------------------------------------------------------------------------------------
// The run

/** A per-run sentinel: document text that must never reach a log line or a metric. */
export function newSentinel(): string {
  return `SOAK-SENTINEL-${randomBytes(6).toString('hex')}`;
}

/** The soak's documents: the corpus repeated; a share carries the sentinel in a line item. */
export function soakDocuments(jobs: number, sentinel: string, share: number, random: () => number): { documents: DocumentInput[]; sentinelDocuments: number } {
  const corpus = loadCorpus();
  let sentinelDocuments = 0;
  const documents = corpusDocuments(jobs).map((doc, i) => {
    if (random() >= share) return doc;
    const description = corpus[i % corpus.length]!.expected.lineItems[0]?.description;
    if (!description || !doc.text!.includes(description)) return doc;
    sentinelDocuments += 1;
    return { ...doc, text: doc.text!.replace(description, `${description} ${sentinel}`) };
  });
  return { documents, sentinelDocuments };
}

/** `promise`'s value, or `undefined` when it has not settled within `ms`. */
async function orTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Counts the lines of a file (from a byte offset) that contain any of the needles. */
async function scanLog(path: string, fromByte: number, needles: Record<string, string>): Promise<{ lines: number; hits: Record<string, number> }> {
  const hits = Object.fromEntries(Object.keys(needles).map((k) => [k, 0]));
  let lines = 0;
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {
    return { lines, hits };
  }
  if (size <= fromByte) return { lines, hits };
  const reader = createInterface({ input: createReadStream(path, { start: fromByte, encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of reader) {
    if (!line) continue;
    lines += 1;
    for (const [name, needle] of Object.entries(needles)) if (line.includes(needle)) hits[name]! += 1;
  }
  return { lines, hits };
}

/**
 * An operator's resume of a lane after a billing problem is fixed (`ratelane resume --lane <name>
 * --clear billing`), plus the local poller's resume, which the command leaves to the stack's timer.
 */
export async function operatorResume(stack: LocalStack, name: string, lanes: LaneSet = Object.fromEntries(Object.values(stack.lanes).map((l) => [l.lane.name, l.lane]))): Promise<void> {
  const lane = stack.lanes[name];
  if (!lane?.admission) return;
  const store = lane.admission.store;
  const quiet = { write: () => true };
  const code = await runResumeCommand(['--lane', name, '--clear', 'billing', '--endpoints', JSON.stringify(stack.endpoints)], {
    stdout: quiet,
    stderr: quiet,
    lanes,
    rateState: () => store,
  });
  if (code !== 0) throw new Error(`ratelane resume exited ${code}`);
  await lane.pause?.resume();
}

/** Runs the soak and returns its report (printed to `io`; `--json` adds one JSON line at the end). */
export async function runSoak(options: SoakOptions, io: RunIo): Promise<SoakReport> {
  const say = (line: string): void => {
    io.stderr.write(`${line}\n`);
  };
  const started = Date.now();
  const random = mulberry32(options.seed ^ 0x50a4);
  const chance = (p: number): boolean => p > 0 && random() < p;
  const lanes = localRunLanes(options);
  const logFile = options.logFile ?? '.cache/soak/consumer.log';
  let logOffset = 0;
  try {
    logOffset = statSync(logFile).size;
  } catch {
    // a new file
  }

  const crashes: Record<CrashPoint, number> = { afterModelCall: 0, afterCommit: 0, afterResend: 0 };
  const outages: Record<OutagePoint, number> = { commit: 0, send: 0, visibility: 0 };
  const commitsByKey = new Map<string, number>();
  const wholeBatchFailures: Record<string, number> = {};
  const wholeBatchFailureExamples: Record<string, string> = {};
  let deleteFailures = 0;
  const faults: DepFaults = {
    crash: (point) => {
      const hit = chance(options.crashes);
      if (hit) crashes[point] += 1;
      return hit;
    },
    outage: (point) => {
      const hit = chance(point === 'commit' ? options.storeOutages : options.sqsOutages);
      if (hit) outages[point] += 1;
      return hit;
    },
    onCommit: (record, status) => {
      if (status === 'committed') commitsByKey.set(record.idempotencyKey, (commitsByKey.get(record.idempotencyKey) ?? 0) + 1);
    },
  };

  say(`ratelane soak: ${options.jobs} jobs; starting DynamoDB Local, fauxqs and the fake provider (a provider minute lasts ${options.minuteMs} ms)…`);
  const stack: LocalStack = await startLocalStack({
    lanes,
    logFile,
    provider: {
      limits: { requestsPerMinute: options.providerRpm, tokensPerMinute: options.providerTpm, requestsPerDay: options.providerDaily },
      minuteMs: options.minuteMs,
      dayMs: Math.round(options.minuteMs * options.dayMinutes),
      dailyWindow: 'continuous',
      faults: options.faults,
      seed: options.seed,
    },
    overrideDeps: (_lane, deps) => withDepFaults(deps, faults),
    ...(options.admission ? {} : { admission: false as const }),
    onLanePause: (lane, state) => say(state.paused ? `  lane ${lane} PAUSED until ${state.until?.toISOString()} (${state.reason})` : `  lane ${lane} resumed`),
    onPollerEvent: (_lane, event) => {
      if (event.type === 'batchFailed') {
        wholeBatchFailures[event.reason] = (wholeBatchFailures[event.reason] ?? 0) + 1;
        wholeBatchFailureExamples[event.reason] ??= `${(event.error as Error)?.name ?? 'Error'}: ${event.message}`.slice(0, 300);
      }
      if (event.type === 'deleteFailed') deleteFailures += event.failures.length;
    },
  });
  const timers: NodeJS.Timeout[] = [];
  const producerClients: AwsClients[] = [];
  try {
    say(`  up in ${Date.now() - started} ms: DynamoDB Local ${stack.endpoints.dynamodb} (pid ${stack.childPids.join(', ') || '-'}), SQS/S3 ${stack.endpoints.sqs}, provider ${stack.provider.baseUrl}`);

    // A key per lane out of credit for a while.
    const creditKeys = options.creditOutageMinutes > 0 ? Object.keys(lanes).map((name) => localKeySecret(name, 'key-1')) : [];
    let creditOutageMs = 0;
    let creditOutageStarted: number | undefined;
    const endCreditOutage = async (): Promise<void> => {
      if (creditOutageStarted === undefined) return;
      for (const key of creditKeys) stack.provider.setKeyOutOfCredit(key, false);
      creditOutageMs += Date.now() - creditOutageStarted;
      creditOutageStarted = undefined;
      // What the operator does once the bill is paid: lift the billing cooldowns and resume each lane.
      for (const name of Object.keys(lanes)) await operatorResume(stack, name, lanes).catch((error: unknown) => say(`  resume of lane ${name} failed: ${(error as Error).message}`));
      say(`  key-1 of every lane has credit again; lanes resumed (billing cooldowns cleared)`);
    };
    if (creditKeys.length > 0) {
      timers.push(
        setTimeout(() => {
          for (const key of creditKeys) stack.provider.setKeyOutOfCredit(key, true);
          creditOutageStarted = Date.now();
          say(`  key-1 of every lane is out of credit for ${options.creditOutageMinutes} provider minute(s)`);
          timers.push(setTimeout(() => void endCreditOutage(), options.creditOutageMinutes * options.minuteMs));
        }, options.minuteMs),
      );
    }

    // The producer sends through its own clients, which keep a copy of every entry for the duplicates.
    const sentEntries: { region: string; queueUrl: string; entry: SendMessageBatchRequestEntry }[] = [];
    const clientsByRegion = new Map<string, AwsClients>();
    const producerClientsFor = (region: string): AwsClients => {
      let clients = clientsByRegion.get(region);
      if (!clients) {
        clients = createAwsClients(region, stack.endpoints);
        producerClients.push(clients);
        clients.sqs.middlewareStack.add(
          (next, context) => async (args) => {
            const output = await next(args);
            if (context.commandName === 'SendMessageBatchCommand') {
              const input = args.input as { QueueUrl: string; Entries: SendMessageBatchRequestEntry[] };
              const ok = new Set(((output.output as { Successful?: { Id?: string }[] }).Successful ?? []).map((s) => s.Id));
              for (const entry of input.Entries) if (ok.has(entry.Id)) sentEntries.push({ region, queueUrl: input.QueueUrl, entry });
            }
            return output;
          },
          { step: 'initialize', name: 'soakCaptureSends' },
        );
        clientsByRegion.set(region, clients);
      }
      return clients;
    };

    const sentinel = newSentinel();
    const { documents, sentinelDocuments } = soakDocuments(options.jobs, sentinel, options.sentinels, random);
    const { submission, sent, submitted, submitStarted } = await submitToStack(stack, lanes, documents, {
      clientsFor: (region) => {
        const clients = producerClientsFor(region);
        return { sqs: clients.sqs, s3: clients.s3 };
      },
      onProgress: (event) => {
        if (event.type === 'batch' && event.batch % 50 === 0) say(`  submitting: ${event.region} batch ${event.batch}`);
      },
    });
    say(`  submitted ${sent.length} of ${documents.length} jobs in ${Date.now() - submitStarted} ms (${sentinelDocuments} carry the sentinel)${submission.failed ? `; ${submission.failed} NOT sent` : ''}`);

    // Duplicate deliveries: some messages again, half of them at once and half a few seconds later.
    let duplicateMessages = 0;
    const duplicates = sentEntries.filter(() => chance(options.duplicates));
    for (let i = 0; i < duplicates.length; i += 10) {
      const chunk = duplicates.slice(i, i + 10);
      const byQueue = new Map<string, typeof chunk>();
      for (const d of chunk) byQueue.set(d.queueUrl, [...(byQueue.get(d.queueUrl) ?? []), d]);
      for (const [queueUrl, items] of byQueue) {
        const out = await producerClientsFor(items[0]!.region).sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: items.map((d, j) => ({
              Id: `dup${j}`,
              MessageBody: d.entry.MessageBody,
              MessageAttributes: d.entry.MessageAttributes,
              DelaySeconds: random() < 0.5 ? 0 : 1 + Math.floor(random() * 10),
            })),
          }),
        );
        duplicateMessages += out.Successful?.length ?? 0;
      }
    }
    say(`  sent ${duplicateMessages} duplicate message(s)`);

    // Wait until every queue is empty and nothing is in flight.
    const deadline = started + options.timeLimitSeconds * 1000;
    let quietChecks = 0;
    let timedOut = false;
    let lastProgress = 0;
    let stalledChecks = 0;
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      const depths = await orTimeout(
        Promise.all(Object.keys(stack.lanes).map(async (name) => [await queueDepth(stack, name, 'queueUrl'), await queueDepth(stack, name, 'dlqUrl')] as const)),
        10_000,
      );
      if (!depths) {
        stalledChecks += 1;
        say(`  queue depths did not answer within 10 s (${stalledChecks} time(s)); poller stats ${JSON.stringify(Object.fromEntries(Object.values(stack.lanes).map((l) => [l.lane.name, l.poller?.stats])))}`);
        if (Date.now() > deadline) {
          timedOut = true;
          break;
        }
        continue;
      }
      const waiting = depths.reduce((n, [q]) => n + q.visible + q.inFlight + q.delayed, 0);
      const busy = Object.values(stack.lanes).some((l) => (l.poller?.stats.inFlight ?? 0) > 0);
      quietChecks = waiting === 0 && !busy && creditOutageStarted === undefined ? quietChecks + 1 : 0;
      if (Date.now() - lastProgress >= 5000 || quietChecks >= 2) {
        lastProgress = Date.now();
        const dlq = depths.reduce((n, [, d]) => n + d.visible + d.inFlight + d.delayed, 0);
        const m = stack.telemetry.totals.total;
        const p = stack.provider.stats();
        const throttled = Object.values(p.rateLimited).reduce((a, b) => a + b, 0);
        const crashed = Object.values(crashes).reduce((a, b) => a + b, 0);
        const paused = Object.values(stack.lanes).filter((l) => l.pause?.state.paused).map((l) => l.lane.name);
        say(
          `  [${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] committed ${m.Completed ?? 0}/${sent.length} · in queue ${waiting} · DLQ ${dlq} · model calls ${m.ModelCalls ?? 0} · 429s ${throttled} · 5xx ${p.faults.serverError} · timeouts ${p.faults.timeout} · bad output ${p.faults.garbageJson + p.faults.schemaInvalid} · deferred ${m.Deferred ?? 0} · failed ${m.Failed ?? 0} · review ${m.NeedsReview ?? 0} · duplicates ${m.DuplicateSuppressed ?? 0} · crashes ${crashed} · batch failures ${Object.values(wholeBatchFailures).reduce((a, b) => a + b, 0)}${paused.length ? ` · PAUSED ${paused.join(', ')}` : ''}`,
        );
      }
      if (quietChecks >= 2) break;
      if (Date.now() > deadline) {
        timedOut = true;
        say(`  time limit of ${options.timeLimitSeconds} s reached; ${waiting} message(s) still waiting`);
        break;
      }
    }
    await endCreditOutage();
    for (const lane of Object.values(stack.lanes)) await lane.poller?.stop();

    // Reconciliation: look every job up everywhere.
    const laneList = Object.values(stack.lanes);
    const results = (await Promise.all(laneList.map((l) => l.results.scanAll()))).flat();
    const ledger = (await Promise.all(laneList.map((l) => l.ledger.scanAll()))).flat();
    const deadLettered = laneList.flatMap((l) => jobIdsIn(stack.fauxqs, l.lane.resources.dlqName));
    const waitingIds = laneList.flatMap((l) => jobIdsIn(stack.fauxqs, l.lane.resources.queueName));
    const terminalLedger = ledger.flatMap((e) => (e.kind === 'rejected' || e.kind === 'needs_review' ? [{ jobId: e.jobId, kind: e.kind, reason: e.reason }] : []));
    const providerStats = stack.provider.stats();
    const metrics = { ...stack.telemetry.totals.total };
    const scorecard: Scorecard = {
      ...computeScorecard({
        submitted,
        results: results.map((r) => ({ jobId: r.jobId, idempotencyKey: r.idempotencyKey, committedAt: Date.parse(r.committedAt) })),
        terminalLedger,
        deadLettered,
        waiting: waitingIds,
        metrics,
        queueAgesMs: stack.telemetry.totals.values.QueueAgeMs ?? [],
        attemptsPerCompletion: stack.telemetry.totals.values.AttemptsPerCompletion ?? [],
        provider: {
          requests: providerStats.requests,
          rateLimited: Object.values(providerStats.rateLimited).reduce((a, b) => a + b, 0),
          byKind: { ...providerStats.rateLimited },
        },
        elapsedMs: Date.now() - started,
        timedOut,
      }),
      notSent: documents.length - sent.length,
    };
    const { states, lost, multiState } = reconcile(submitted, {
      committed: results.map((r) => r.jobId),
      needs_review: terminalLedger.filter((e) => e.kind === 'needs_review').map((e) => e.jobId),
      rejected: terminalLedger.filter((e) => e.kind === 'rejected').map((e) => e.jobId),
      dead_lettered: deadLettered,
      waiting: waitingIds,
    });
    const submittedIds = new Set(submitted.map((j) => j.jobId));
    const doubleCommits = Math.max(scorecard.doubleCommits, [...commitsByKey.values()].filter((n) => n > 1).length);
    const ledgerLeaks = ledger.filter((e) => JSON.stringify(e).includes(sentinel)).length;
    const unstructuredLines = stack.telemetry.unstructuredLines;

    await stack.stop(); // flushes the log file
    const scan = await scanLog(logFile, logOffset, { sentinel, secret: 'sk-local-' });
    const report: SoakReport = {
      jobs: options.jobs,
      submitted: submitted.length,
      notSent: documents.length - sent.length,
      states,
      lost: lost.length,
      doubleCommits,
      multiState: multiState.length,
      multiStateExamples: multiState.slice(0, 10),
      strayResults: results.filter((r) => !submittedIds.has(r.jobId)).length,
      injected: {
        duplicateMessages,
        crashes,
        outages,
        creditOutageMs,
        providerFaults: { ...providerStats.faults },
      },
      throttled: { ...providerStats.rateLimited },
      poller: { wholeBatchFailures, wholeBatchFailureExamples, deleteFailures },
      metrics,
      sentinel: {
        documents: sentinelDocuments,
        leaks: scan.hits.sentinel ?? 0,
        ledgerLeaks,
        secretLeaks: scan.hits.secret ?? 0,
        logLines: scan.lines,
        unstructuredLines,
      },
      scorecard,
      elapsedMs: Date.now() - started,
      timedOut,
    };
    say('');
    io.stdout.write(`${formatSoakReport(report)}\n`);
    say(`  consumer logs and EMF metrics: ${logFile}`);
    if (options.json) io.stdout.write(`${JSON.stringify(report)}\n`);
    return report;
  } finally {
    for (const timer of timers) clearTimeout(timer);
    for (const clients of producerClients) clients.destroy();
    await stack.stop();
  }
}
