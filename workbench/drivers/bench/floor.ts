/**
 * The bench's measures of the consumer's own overhead, each on the same emulators as the strategies:
 * - the floor: a loop that per message does a bare ReceiveMessage, one conditional PutItem (the
 *   consumer's own commit-once write) and a DeleteMessage — the least any consumer does;
 * - the probe: the (c) consumer with one job at a time and a quota that never binds, so its records
 *   meet no contention: the same conditions as the floor run one message at a time.
 * Overhead per record = its time in `processRecord` minus the time inside the model adapter
 * (`ConsumerDeps.onRecordTiming`).
 */
import { randomBytes } from 'node:crypto';
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { loadCorpus } from '../../corpus/index.js';
import { createAwsClients, type ServiceEndpoints } from '../../../lib/platform/clients.js';
import type { ConsumerDeps, RecordTiming } from '../../../lib/lanes/queue/process-record.js';
import { DEFAULT_PROMPT_VERSION, DEFAULT_SCHEMA_VERSION } from '../../../lib/contract/schemas/registry.js';
import { submitDocuments } from '../../../lib/intake/producer.js';
import { RatelaneError } from '../../../lib/platform/errors.js';
import { ensureTable } from '../../../lib/store/ensure-table.js';
import { ResultStore, type ResultRecord } from '../../../lib/store/results.js';
import { RESULTS_TABLE } from '../../../lib/store/tables.js';
import { extractInvoice } from '../../fake-provider/extractors/invoice.js';
import type { LocalServices } from '../../local-stack/services/services.js';
import { startLocalStack } from '../../local-stack/stack.js';
import { distribution, type FloorResult, type OverheadProbe, type WarmupResult } from './report.js';
import { round } from '../scorecard.js';
import { BENCH_LOG_FILE, benchLanes, type BenchOptions } from './strategies.js';
import { corpusDocuments } from '../lanes.js';

/** The overhead probe could not submit a job, or a job did not settle in time. */
class BenchProbeError extends RatelaneError {
  override name = 'BenchProbeError';
  readonly kind = 'internal' as const;
  readonly retryable = true;
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

/** Timings one loop gathered: per message (floor) or per record (probe). */
interface FloorSamples {
  totals: number[];
  receives: number[];
  puts: number[];
  deletes: number[];
}

/** A floor loop on its own queue and table: `run` times messages; `result` summarises what it counted. */
interface FloorLoop {
  run(messages: number, concurrency: number, counted: boolean): Promise<void>;
  result(concurrency: number): FloorResult;
  /** Forgets what was counted so far. */
  reset(): void;
  close(): void;
}

/**
 * The floor: per message, a bare ReceiveMessage (one message, no wait), one conditional PutItem
 * (`ResultStore.commitOnce`, the consumer's own commit) and a DeleteMessage, timed end to end.
 */
async function openFloor(endpoints: ServiceEndpoints): Promise<FloorLoop> {
  const clients = createAwsClients('us-east-1', endpoints);
  const tag = randomBytes(4).toString('hex');
  const samples: FloorSamples = { totals: [], receives: [], puts: [], deletes: [] };
  let sent = 0;
  try {
    const created = await clients.sqs.send(new CreateQueueCommand({ QueueName: `ratelane-bench-floor-${tag}`, Attributes: { VisibilityTimeout: '60' } }));
    const queueUrl = created.QueueUrl!;
    const tableName = `ratelane-bench-floor-${tag}`;
    await ensureTable(clients.dynamodb, tableName, RESULTS_TABLE);
    const store = new ResultStore({ dynamodb: clients.dynamodb, tableName });
    const template = floorRecordTemplate();
    // Bodies of a job message's size.
    const body = (i: number): string => JSON.stringify({ jobId: `floor-${tag}-${i}`, pad: 'x'.repeat(700) });
    const run = async (messages: number, concurrency: number, counted: boolean): Promise<void> => {
      for (let i = 0; i < messages; i += 10) {
        const n = Math.min(10, messages - i);
        await clients.sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: Array.from({ length: n }, (_, j) => ({ Id: String(j), MessageBody: body(sent + i + j) })),
          }),
        );
      }
      sent += messages;
      let taken = 0;
      const loop = async (): Promise<void> => {
        while (taken++ < messages) {
          const t0 = performance.now();
          const out = await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 0 }));
          const message = out.Messages?.[0];
          if (!message) return;
          const t1 = performance.now();
          const id = (JSON.parse(message.Body ?? '{}') as { jobId?: string }).jobId ?? `floor-${tag}-${taken}`;
          await store.commitOnce({ ...template, idempotencyKey: id, jobId: id });
          const t2 = performance.now();
          await clients.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
          const t3 = performance.now();
          if (!counted) continue;
          samples.totals.push(t3 - t0);
          samples.receives.push(t1 - t0);
          samples.puts.push(t2 - t1);
          samples.deletes.push(t3 - t2);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, () => loop()));
    };
    return {
      run,
      result: (concurrency) => ({
        messages: samples.totals.length,
        concurrency,
        totalMs: distribution(samples.totals),
        receiveMs: distribution(samples.receives),
        putMs: distribution(samples.puts),
        deleteMs: distribution(samples.deletes),
      }),
      reset: () => {
        for (const list of Object.values(samples)) list.length = 0;
      },
      close: () => clients.destroy(),
    };
  } catch (error) {
    clients.destroy();
    throw error;
  }
}

/** The floor alone: a warm-up (not counted), then `messages` timed with `concurrency` loops at once. */
export async function measureFloor(endpoints: ServiceEndpoints, options: { messages: number; concurrency: number; warmup?: number }): Promise<FloorResult> {
  const floor = await openFloor(endpoints);
  try {
    await floor.run(options.warmup ?? Math.min(30, options.messages), options.concurrency, false);
    await floor.run(options.messages, options.concurrency, true);
    return floor.result(options.concurrency);
  } finally {
    floor.close();
  }
}

/** Floor loops at once while warming: the records a strategy's consumers have in flight. */
export const WARMUP_CONCURRENCY = 10;
/** Jobs the warm-up sends through the consumer of (c), one at a time. */
export const WARMUP_PROBE_JOBS = 20;
/** Messages at each end of the warm-up whose p50 is reported. */
const WARMUP_SAMPLE = 100;

/**
 * Warms the emulators before anything is measured: `messages` of the floor loop, 10 at a time, then
 * {@link WARMUP_PROBE_JOBS} jobs through the (c) consumer (its takes, reads and commits), counted nowhere. DynamoDB
 * Local's JVM compiles its code as it runs: on a cold start its first seconds under load run several
 * times slower (a conditional put's p50 at 10 at a time: about 30 ms, then 10 ms after some 1,000
 * writes), a phase DynamoDB itself does not have. Without it, whichever strategy runs first pays it.
 */
export async function warmEmulators(options: BenchOptions, services: LocalServices, messages: number): Promise<WarmupResult> {
  const started = performance.now();
  const sample = Math.min(WARMUP_SAMPLE, Math.floor(messages / 2));
  const floor = await openFloor(services.endpoints);
  let firstP50Ms: number | null = null;
  let lastP50Ms: number | null = null;
  try {
    await floor.run(sample, WARMUP_CONCURRENCY, true);
    firstP50Ms = floor.result(WARMUP_CONCURRENCY).totalMs.p50;
    floor.reset();
    await floor.run(messages - 2 * sample, WARMUP_CONCURRENCY, false);
    await floor.run(sample, WARMUP_CONCURRENCY, true);
    lastP50Ms = floor.result(WARMUP_CONCURRENCY).totalMs.p50;
  } finally {
    floor.close();
  }
  const probe = await openProbe(options, services);
  try {
    await probe.run(WARMUP_PROBE_JOBS, false);
  } finally {
    await probe.close();
  }
  return {
    messages,
    concurrency: WARMUP_CONCURRENCY,
    sampleMessages: sample,
    probeJobs: WARMUP_PROBE_JOBS,
    firstP50Ms,
    lastP50Ms,
    elapsedMs: round(performance.now() - started, 0),
  };
}

/** The probe's consumer on its own stack: `run` sends jobs one at a time; `result` summarises what it counted. */
interface ProbeLoop {
  run(jobs: number, counted: boolean): Promise<void>;
  result(): OverheadProbe;
  close(): Promise<void>;
}

/**
 * The consumer of (c) (admission on) with one job at a time and a quota that never binds: each job is
 * submitted when the one before it has settled, so the record meets no other record.
 */
async function openProbe(options: BenchOptions, services: LocalServices): Promise<ProbeLoop> {
  const lanes = benchLanes({ ...options, providerRpm: 1_000_000 }, `probe-${randomBytes(3).toString('hex')}`);
  let waiter: ((timing: RecordTiming) => void) | undefined;
  const stack = await startLocalStack({
    lanes,
    endpoints: services.endpoints,
    logFile: options.logFile ?? BENCH_LOG_FILE,
    provider: {
      limits: { requestsPerMinute: 1_000_000, tokensPerMinute: 100_000_000, requestsPerDay: 100_000_000 },
      minuteMs: options.minuteMs,
      dayMs: options.minuteMs * 1440,
      seed: options.seed,
    },
    overrideDeps: (_lane, deps): ConsumerDeps => ({ ...deps, onRecordTiming: (timing) => waiter?.(timing) }),
  });
  const producer = createAwsClients(lanes.us!.region, services.endpoints);
  const overhead: number[] = [];
  const model: number[] = [];
  const calls: Record<string, number[]> = {};
  let counting = false;
  let sent = 0;
  const consumerClients = stack.lanes.us!.clients;
  for (const client of [consumerClients.sqs, consumerClients.s3, consumerClients.dynamodb]) {
    (client.middlewareStack as { add(mw: unknown, options: unknown): void }).add(
      (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
        const started = performance.now();
        try {
          return await next(args);
        } finally {
          if (counting) (calls[(context.commandName ?? 'unknown').replace(/Command$/, '')] ??= []).push(performance.now() - started);
        }
      },
      { step: 'initialize', name: 'benchProbeTiming' },
    );
  }
  const runOne = async (document: ReturnType<typeof corpusDocuments>[number], counted: boolean): Promise<void> => {
    const settled = new Promise<RecordTiming>((resolve, reject) => {
      const timer = setTimeout(() => reject(new BenchProbeError('overhead probe: a job did not settle within 30 s')), 30_000);
      waiter = (timing) => {
        if (!timing.settled) return;
        clearTimeout(timer);
        resolve(timing);
      };
    });
    const submission = await submitDocuments(
      { documents: [document] },
      {
        lanes,
        clientsFor: () => ({ sqs: producer.sqs, s3: producer.s3 }),
        queueUrlFor: (lane) => stack.lanes[lane.name]!.queueUrl,
        now: () => new Date(),
      },
    );
    if (submission.failed > 0) throw new BenchProbeError('overhead probe: a job could not be submitted');
    counting = counted;
    try {
      const timing = await settled;
      if (!counted) return;
      overhead.push(Math.max(0, timing.totalMs - timing.modelMs - timing.admissionWaitMs));
      model.push(timing.modelMs);
    } finally {
      counting = false;
    }
  };
  return {
    run: async (jobs, counted) => {
      const documents = corpusDocuments(sent + jobs)
        .slice(sent)
        .map((d) => ({ ...d, region: 'us' }));
      sent += jobs;
      for (const document of documents) await runOne(document, counted);
    },
    result: () => ({
      messages: overhead.length,
      overheadMs: distribution(overhead),
      modelMs: distribution(model),
      // The consumer's clients are also the poller's, but the poller's receive and delete come before
      // and after the record's timing: only the record's own calls are counted.
      callsPerJob: Object.fromEntries(
        Object.entries(calls)
          .filter(([name]) => name !== 'ReceiveMessage' && name !== 'DeleteMessageBatch')
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([name, times]) => [name, { perJob: round(times.length / Math.max(1, overhead.length), 2), p50Ms: distribution(times).p50 }]),
      ),
    }),
    close: async () => {
      waiter = undefined;
      producer.destroy();
      await stack.stop();
    },
  };
}

/** The probe alone: a warm-up of a few jobs (not counted), then `messages` jobs one at a time. */
export async function probeOverhead(options: BenchOptions, services: LocalServices, messages: number): Promise<OverheadProbe> {
  const probe = await openProbe(options, services);
  try {
    await probe.run(Math.min(10, messages), false);
    await probe.run(messages, true);
    return probe.result();
  } finally {
    await probe.close();
  }
}

/**
 * The probe and the floor one message at a time, in alternating rounds after a warm-up of each, so
 * both meet the same state of the machine and of the emulators (DynamoDB Local's JIT and garbage
 * collector, the tables the run made): run one after the other, their p50s drift apart by up to 2x
 * on this machine, more than the ratio they are compared by.
 */
export async function probeBesideFloor(
  options: BenchOptions,
  services: LocalServices,
  counts: { probeMessages: number; floorMessages: number; rounds?: number },
): Promise<{ probe: OverheadProbe; floor: FloorResult }> {
  const rounds = Math.max(1, Math.min(counts.rounds ?? 5, counts.probeMessages, counts.floorMessages));
  const probe = await openProbe(options, services);
  try {
    const floor = await openFloor(services.endpoints);
    try {
      await probe.run(Math.min(10, counts.probeMessages), false);
      await floor.run(Math.min(30, counts.floorMessages), 1, false);
      for (let r = 0; r < rounds; r++) {
        const share = (total: number): number => Math.floor(((r + 1) * total) / rounds) - Math.floor((r * total) / rounds);
        await probe.run(share(counts.probeMessages), true);
        await floor.run(share(counts.floorMessages), 1, true);
      }
      return { probe: probe.result(), floor: floor.result(1) };
    } finally {
      floor.close();
    }
  } finally {
    await probe.close();
  }
}
