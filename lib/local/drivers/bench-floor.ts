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
import { loadCorpus } from '../../../corpus/index.js';
import { createAwsClients, type ServiceEndpoints } from '../../aws/clients.js';
import type { ConsumerDeps, RecordTiming } from '../../consumer/process-record.js';
import { DEFAULT_PROMPT_VERSION, DEFAULT_SCHEMA_VERSION } from '../../contract/schemas/registry.js';
import { submitDocuments } from '../../queue/producer.js';
import { RatelaneError } from '../../shared/errors.js';
import { ensureTable } from '../../store/ensure-table.js';
import { ResultStore, type ResultRecord } from '../../store/results.js';
import { RESULTS_TABLE } from '../../store/tables.js';
import { extractInvoice } from '../fake-provider/invoice-extractor.js';
import type { LocalServices } from '../services/services.js';
import { startLocalStack } from '../stack.js';
import type { BenchOptions } from './bench.js';
import { distribution, round, type FloorResult, type OverheadProbe } from './bench-report.js';
import { benchLanes } from './bench-strategies.js';
import { corpusDocuments } from './lanes.js';

/** The overhead probe could not submit a job, or a job did not settle in time. */
export class BenchProbeError extends RatelaneError {
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
      await clients.sqs.send(
        new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: Array.from({ length: n }, (_, j) => ({ Id: String(j), MessageBody: body(i + j) })) }),
      );
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
export async function probeOverhead(options: BenchOptions, services: LocalServices, messages: number): Promise<OverheadProbe> {
  const lanes = benchLanes({ ...options, providerRpm: 1_000_000 }, `probe-${randomBytes(3).toString('hex')}`);
  let waiter: ((timing: RecordTiming) => void) | undefined;
  const stack = await startLocalStack({
    lanes,
    endpoints: services.endpoints,
    logFile: options.logFile ?? '.cache/bench/consumer.log',
    provider: {
      limits: { requestsPerMinute: 1_000_000, tokensPerMinute: 100_000_000, requestsPerDay: 100_000_000 },
      minuteMs: options.minuteMs,
      dayMs: options.minuteMs * 1440,
      seed: options.seed,
    },
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
            if (counting && name !== 'ReceiveMessageCommand' && name !== 'DeleteMessageBatchCommand')
              (calls[name.replace(/Command$/, '')] ??= []).push(performance.now() - started);
          }
        },
        { step: 'initialize', name: 'benchProbeTiming' },
      );
    }
    for (let i = 0; i < documents.length; i++) {
      const settled = new Promise<RecordTiming>((resolve, reject) => {
        const timer = setTimeout(() => reject(new BenchProbeError('overhead probe: a job did not settle within 30 s')), 30_000);
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
        },
      );
      if (submission.failed > 0) throw new BenchProbeError('overhead probe: a job could not be submitted');
      counting = i >= warmup;
      const timing = await settled;
      counting = false;
      if (i < warmup) continue;
      overhead.push(Math.max(0, timing.totalMs - timing.modelMs - timing.admissionWaitMs));
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
