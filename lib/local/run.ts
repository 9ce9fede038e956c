/**
 * `npm run local`: start the local stack, submit the sample corpus across both lanes (English
 * invoices to `us`, German to `eu`), run until every job is in a terminal state or a time limit,
 * show progress, print the scorecard, stop everything.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { parseArgs } from 'node:util';
import { loadCorpus } from '../../corpus/index.js';
import { resolveLanes, type LaneOverride, type LaneSet } from '../config/lanes.js';
import { isKnownPromptVersion, DEFAULT_PROMPT_VERSION, DEFAULT_SCHEMA_VERSION } from '../contract/schemas/registry.js';
import { submitDocuments, type DocumentInput, type SubmitItemResult, type SubmitProgress, type SubmitResult } from '../queue/producer.js';
import { computeScorecard, formatScorecard, type Scorecard, type SubmittedJob } from './scorecard.js';
import type { FauxqsLocal } from './services.js';
import { startLocalStack, type LocalStack } from './stack.js';

/** Options of one local run (the CLI flags). */
export interface LocalRunOptions {
  jobs: number;
  keys: number;
  providerRpm: number;
  providerTpm: number;
  providerDaily: number;
  /** How long a provider "minute" lasts here; every time setting of the lanes scales with it. */
  minuteMs: number;
  /** How long a provider "day" lasts here (default 1440 minutes). */
  dayMs: number;
  /** Admission (shared key pool, buckets, lane pause) on (default) or off. */
  admission: boolean;
  faults: { serverError: number; timeout: number; garbageJson: number; schemaInvalid: number };
  seed: number;
  timeLimitSeconds: number;
  json: boolean;
  logFile: string | undefined;
}

/** Where a run's output goes. */
export interface RunIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Raised for bad flags; the message is the usage error. */
export class LocalRunUsageError extends Error {
  override name = 'LocalRunUsageError';
}

export const LOCAL_USAGE = `Usage: npm run local -- [options]

Starts DynamoDB Local, fauxqs and a fake model provider on loopback, submits the sample corpus
across the us and eu lanes, runs the consumers until every job is in a terminal state, and prints
a scorecard. Everything started is stopped at the end, on Ctrl-C and on a crash.

  --jobs N              jobs to submit (default: the corpus, 128); documents repeat with new source ids
  --keys K              provider keys per lane, each with its own limits (default 1)
  --provider-rpm N      requests per minute per key (default 600)
  --provider-tpm N      tokens per minute per key (default 1000000)
  --provider-daily N    requests per day per key (default 100000)
  --minute-ms MS        length of a provider "minute" locally (default 6000); the lanes' timeouts and
                        backoff caps scale with it, a day lasts 1440 of these minutes
  --day-ms MS           length of a provider "day" locally (default 1440 minutes), for daily-quota runs
  --no-admission        call without admission (round robin, no shared key pool, no lane pause)
  --fault-5xx R         share of calls answered 500/503 (0..1, default 0)
  --fault-timeout R     share of calls that never answer
  --fault-garbage R     share of answers that are not JSON
  --fault-invalid R     share of answers that break the schema
  --seed N              seed of the fake provider's faults and latencies (default 42)
  --time-limit S        stop waiting after S seconds (default 600)
  --log-file PATH       where consumer logs and EMF metrics go (default .cache/local-run/consumer.log)
  --json                print the scorecard as one JSON object on the last line of stdout
`;

function numberFlag(values: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new LocalRunUsageError(`--${name} must be a number in ${min}..${max}, got "${String(raw)}"`);
  }
  return value;
}

/** Parses the CLI flags (pure). */
export function parseLocalRunArgs(argv: string[]): LocalRunOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      options: {
        jobs: { type: 'string' },
        keys: { type: 'string' },
        'provider-rpm': { type: 'string' },
        'provider-tpm': { type: 'string' },
        'provider-daily': { type: 'string' },
        'minute-ms': { type: 'string' },
        'day-ms': { type: 'string' },
        'no-admission': { type: 'boolean' },
        'fault-5xx': { type: 'string' },
        'fault-timeout': { type: 'string' },
        'fault-garbage': { type: 'string' },
        'fault-invalid': { type: 'string' },
        seed: { type: 'string' },
        'time-limit': { type: 'string' },
        'log-file': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    throw new LocalRunUsageError((error as Error).message);
  }
  const v = parsed.values as Record<string, unknown>;
  if (v.help) throw new LocalRunUsageError('');
  const minuteMs = Math.floor(numberFlag(v, 'minute-ms', 6_000, 1_000, 60_000));
  return {
    jobs: Math.floor(numberFlag(v, 'jobs', 0, 1, 100_000)) || 0,
    keys: Math.floor(numberFlag(v, 'keys', 1, 1, 20)),
    providerRpm: Math.floor(numberFlag(v, 'provider-rpm', 600, 1, 1_000_000)),
    providerTpm: Math.floor(numberFlag(v, 'provider-tpm', 1_000_000, 100, 100_000_000)),
    providerDaily: Math.floor(numberFlag(v, 'provider-daily', 100_000, 1, 100_000_000)),
    minuteMs,
    dayMs: Math.floor(numberFlag(v, 'day-ms', minuteMs * 1440, 1_000, 86_400_000)),
    admission: v['no-admission'] !== true,
    faults: {
      serverError: numberFlag(v, 'fault-5xx', 0, 0, 1),
      timeout: numberFlag(v, 'fault-timeout', 0, 0, 1),
      garbageJson: numberFlag(v, 'fault-garbage', 0, 0, 1),
      schemaInvalid: numberFlag(v, 'fault-invalid', 0, 0, 1),
    },
    seed: Math.floor(numberFlag(v, 'seed', 42, 0, 2 ** 31)),
    timeLimitSeconds: numberFlag(v, 'time-limit', 600, 5, 24 * 3600),
    json: v.json === true,
    logFile: typeof v['log-file'] === 'string' ? v['log-file'] : undefined,
  };
}

/**
 * The lanes of a local run: provider limits and keys from the flags, and every time setting
 * (function timeout, visibility timeout, backoff) scaled by `minuteMs / 60 s`, so a scaled run
 * behaves like a real one at a faster clock.
 */
export function localRunLanes(options: Pick<LocalRunOptions, 'keys' | 'providerRpm' | 'providerTpm' | 'providerDaily' | 'minuteMs'>): LaneSet {
  const scale = options.minuteMs / 60_000;
  const seconds = (s: number): number => Math.max(1, Math.round(s * scale));
  const override = (name: string): LaneOverride => {
    const timeoutSeconds = seconds(60);
    return {
      queue: { visibilityTimeoutSeconds: 6 * timeoutSeconds, receiveWaitTimeSeconds: 1 },
      consumer: { timeoutSeconds, maximumConcurrency: 5 },
      backoff: {
        throttleBaseSeconds: 1,
        throttleCapSeconds: seconds(300),
        failureBaseSeconds: 1,
        failureCapSeconds: seconds(900),
      },
      provider: {
        keys: Array.from({ length: options.keys }, (_, i) => ({ id: `key-${i + 1}`, quotaOwner: `${name}-owner-${i + 1}` })),
        limits: { requestsPerMinute: options.providerRpm, tokensPerMinute: options.providerTpm, requestsPerDay: options.providerDaily },
        timeoutMs: Math.max(1_000, Math.round(30_000 * scale)),
      },
    };
  };
  return resolveLanes({ us: override('us'), eu: override('eu') });
}

/** Counts messages in a queue (visible, in flight, delayed). */
export async function queueDepth(stack: LocalStack, lane: string, which: 'queueUrl' | 'dlqUrl'): Promise<{ visible: number; inFlight: number; delayed: number }> {
  const l = stack.lanes[lane]!;
  const out = await l.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: l[which],
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  const a = out.Attributes ?? {};
  return {
    visible: Number(a.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/** Job ids of the messages in a queue (ready, delayed, in flight), read without receiving them (fauxqs inspection). */
export function jobIdsIn(fauxqs: Pick<FauxqsLocal, 'server'> | undefined, queueName: string): string[] {
  const inspected = fauxqs?.server.inspectQueue(queueName);
  if (!inspected) return [];
  const bodies = [...inspected.messages.ready, ...inspected.messages.delayed, ...inspected.messages.inflight.map((m) => m.message)].map(
    (m) => (m as { body?: string }).body ?? '',
  );
  return bodies.flatMap((body) => {
    try {
      const id = (JSON.parse(body) as { jobId?: unknown }).jobId;
      return typeof id === 'string' ? [id] : [];
    } catch {
      return [];
    }
  });
}

/** The documents of a run: the corpus, repeated with new source ids up to `jobs`. */
export function corpusDocuments(jobs: number): DocumentInput[] {
  const corpus = loadCorpus();
  const total = jobs > 0 ? jobs : corpus.length;
  return Array.from({ length: total }, (_, i) => {
    const doc = corpus[i % corpus.length]!;
    const round = Math.floor(i / corpus.length);
    return {
      text: doc.text,
      sourceId: round === 0 ? doc.sourceId : `${doc.sourceId}#${round}`,
      region: doc.language === 'de' ? 'eu' : 'us',
    };
  });
}

/**
 * The fastest the run could drain on its keys' per-minute request limits: per lane, its jobs divided
 * by the lane's combined limit (quota owners × requests per minute), in scaled minutes; the slowest lane.
 */
export function quotaBoundMinimumMs(lanes: LaneSet, submitted: readonly { lane: string }[], minuteMs: number): number {
  let slowest = 0;
  for (const lane of Object.values(lanes)) {
    const jobs = submitted.filter((j) => j.lane === lane.name).length;
    const perMinute = new Set(lane.provider.keys.map((k) => k.quotaOwner)).size * lane.provider.limits.requestsPerMinute;
    if (jobs > 0 && perMinute > 0) slowest = Math.max(slowest, (jobs / perMinute) * minuteMs);
  }
  return slowest;
}

/** What {@link submitToStack} sent, with the jobs as the scorecard tracks them. */
export interface StackSubmission {
  submission: SubmitResult;
  sent: SubmitItemResult[];
  submitted: SubmittedJob[];
  submitStarted: number;
}

/**
 * Submits documents to a running local stack through the real producer (each lane's own clients and
 * queue), as a service team would.
 *
 * @param clientsFor the producer's clients per region (default: the lane's own)
 */
export async function submitToStack(
  stack: LocalStack,
  lanes: LaneSet,
  documents: DocumentInput[],
  options: { clientsFor?: (region: string) => { sqs: SQSClient; s3: S3Client }; onProgress?: (event: SubmitProgress) => void } = {},
): Promise<StackSubmission> {
  const laneClients = (region: string): { sqs: SQSClient; s3: S3Client } => {
    const lane = Object.values(stack.lanes).find((l) => l.lane.name === region || l.lane.region === region);
    if (!lane) throw new Error(`no local lane for ${region}`);
    return { sqs: lane.clients.sqs, s3: lane.clients.s3 };
  };
  const submitStarted = Date.now();
  const submission = await submitDocuments(
    { documents },
    {
      lanes,
      clientsFor: options.clientsFor ?? laneClients,
      queueUrlFor: (lane) => stack.lanes[lane.name]!.queueUrl,
      now: () => new Date(),
      isKnownVersion: isKnownPromptVersion,
      defaultVersions: { schemaVersion: DEFAULT_SCHEMA_VERSION, promptVersion: DEFAULT_PROMPT_VERSION },
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    },
  );
  const sent = submission.results.filter((r) => r.status === 'sent');
  const submitted: SubmittedJob[] = sent.map((r) => ({ jobId: r.jobId, idempotencyKey: r.idempotencyKey, lane: r.region, createdAt: submitStarted }));
  return { submission, sent, submitted, submitStarted };
}

/** Runs the local pipeline end to end and returns the scorecard. */
export async function runLocal(options: LocalRunOptions, io: RunIo): Promise<Scorecard> {
  const say = (line: string): void => {
    io.stderr.write(`${line}\n`);
  };
  const started = Date.now();
  const lanes = localRunLanes(options);
  const logFile = options.logFile ?? '.cache/local-run/consumer.log';
  say(`ratelane local: starting DynamoDB Local, fauxqs and the fake provider (a provider minute lasts ${options.minuteMs} ms)…`);
  const stack = await startLocalStack({
    lanes,
    logFile,
    provider: {
      limits: { requestsPerMinute: options.providerRpm, tokensPerMinute: options.providerTpm, requestsPerDay: options.providerDaily },
      minuteMs: options.minuteMs,
      dayMs: options.dayMs,
      faults: options.faults,
      seed: options.seed,
    },
    ...(options.admission ? {} : { admission: false as const }),
    onLanePause: (lane, state) =>
      say(
        state.paused
          ? `  lane ${lane} PAUSED until ${state.until?.toISOString()} (${state.reason}): every key is out; messages stay in the queue`
          : `  lane ${lane} resumed`,
      ),
  });
  try {
    say(
      `  up in ${Date.now() - started} ms: DynamoDB Local ${stack.endpoints.dynamodb} (pid ${stack.childPids.join(', ') || '-'}), SQS/S3 ${stack.endpoints.sqs}, provider ${stack.provider.baseUrl}`,
    );
    const documents = corpusDocuments(options.jobs);
    const { submission, sent, submitted, submitStarted } = await submitToStack(stack, lanes, documents);
    const perLane = Object.keys(lanes).map((name) => `${name} ${sent.filter((r) => r.region === name).length}`).join(', ');
    say(`  submitted ${sent.length} of ${documents.length} jobs (${perLane}) in ${Date.now() - submitStarted} ms${submission.failed ? `; ${submission.failed} NOT sent` : ''}`);

    const deadline = started + options.timeLimitSeconds * 1000;
    let quietChecks = 0;
    let timedOut = false;
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      const depths = await Promise.all(Object.keys(stack.lanes).map(async (name) => [await queueDepth(stack, name, 'queueUrl'), await queueDepth(stack, name, 'dlqUrl')] as const));
      const waiting = depths.reduce((n, [q]) => n + q.visible + q.inFlight + q.delayed, 0);
      const delayed = depths.reduce((n, [q]) => n + q.delayed, 0);
      const inFlight = depths.reduce((n, [q]) => n + q.inFlight, 0);
      const dlq = depths.reduce((n, [, d]) => n + d.visible + d.inFlight + d.delayed, 0);
      const m = stack.telemetry.totals.total;
      const p = stack.provider.stats();
      const rateLimited = Object.values(p.rateLimited).reduce((a, b) => a + b, 0);
      const paused = Object.values(stack.lanes).filter((l) => l.pause?.state.paused).map((l) => l.lane.name);
      say(
        `  [${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] committed ${m.Completed ?? 0}/${sent.length} · in queue ${waiting} (delayed ${delayed}, in flight ${inFlight}) · model calls ${m.ModelCalls ?? 0} · 429s ${rateLimited} · admission denied ${m.AdmissionDenied ?? 0} · deferred ${m.Deferred ?? 0} · rejected ${m.Rejected ?? 0} · review ${m.NeedsReview ?? 0} · DLQ ${dlq}${paused.length > 0 ? ` · PAUSED ${paused.join(', ')}` : ''}`,
      );
      const busy = Object.values(stack.lanes).some((l) => (l.poller?.stats.inFlight ?? 0) > 0);
      quietChecks = waiting === 0 && !busy ? quietChecks + 1 : 0;
      if (quietChecks >= 2) break;
      if (Date.now() > deadline) {
        timedOut = true;
        say(`  time limit of ${options.timeLimitSeconds} s reached; ${waiting} job(s) still waiting`);
        break;
      }
    }
    for (const lane of Object.values(stack.lanes)) await lane.poller?.stop();

    const results = (await Promise.all(Object.values(stack.lanes).map((l) => l.results.scanAll()))).flat();
    const ledger = (await Promise.all(Object.values(stack.lanes).map((l) => l.ledger.scanAll()))).flat();
    const card = computeScorecard({
      submitted,
      results: results.map((r) => ({ jobId: r.jobId, idempotencyKey: r.idempotencyKey, committedAt: Date.parse(r.committedAt) })),
      terminalLedger: ledger.flatMap((e) => (e.kind === 'rejected' || e.kind === 'needs_review' ? [{ jobId: e.jobId, kind: e.kind, reason: e.reason }] : [])),
      deadLettered: Object.values(stack.lanes).flatMap((l) => jobIdsIn(stack.fauxqs, l.lane.resources.dlqName)),
      waiting: Object.values(stack.lanes).flatMap((l) => jobIdsIn(stack.fauxqs, l.lane.resources.queueName)),
      metrics: stack.telemetry.totals.total,
      queueAgesMs: stack.telemetry.totals.values.QueueAgeMs ?? [],
      attemptsPerCompletion: stack.telemetry.totals.values.AttemptsPerCompletion ?? [],
      provider: {
        requests: stack.provider.stats().requests,
        rateLimited: Object.values(stack.provider.stats().rateLimited).reduce((a, b) => a + b, 0),
        byKind: { ...stack.provider.stats().rateLimited },
      },
      elapsedMs: Date.now() - started,
      timedOut,
      quotaBoundMinimumMs: quotaBoundMinimumMs(lanes, submitted, options.minuteMs),
    });
    const full: Scorecard = { ...card, notSent: documents.length - sent.length };
    say('');
    io.stdout.write(`${formatScorecard(full)}\n`);
    say(`  consumer logs and EMF metrics: ${logFile}`);
    if (options.json) io.stdout.write(`${JSON.stringify(full)}\n`);
    return full;
  } finally {
    await stack.stop();
  }
}
