/**
 * What the soak puts into a run besides the consumer faults: documents carrying a sentinel string,
 * duplicate deliveries of some job messages, a key out of credit for a while (and the operator's
 * resume after it), and the scan of the log file for what must never be in it.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { SendMessageBatchCommand, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { loadCorpus } from '../../corpus/index.js';
import { createAwsClients, type AwsClients } from '../../../lib/platform/clients.js';
import { runResumeCommand } from '../../../lib/cli/resume.js';
import type { LaneSet } from '../../../lib/config/lanes.js';
import type { DocumentInput } from '../../../lib/intake/producer.js';
import { RatelaneError } from '../../../lib/platform/errors.js';
import type { RandomSource } from '../../../lib/platform/random.js';
import { localKeySecret, type LocalStack } from '../../local-stack/stack.js';
import { corpusDocuments } from '../lanes.js';

/** A per-run sentinel: document text that must never reach a log line or a metric. */
export function newSentinel(): string {
  return `SOAK-SENTINEL-${randomBytes(6).toString('hex')}`;
}

/** The soak's documents: the corpus repeated; a share carries the sentinel in a line item. */
export function soakDocuments(jobs: number, sentinel: string, share: number, random: RandomSource): { documents: DocumentInput[]; sentinelDocuments: number } {
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

/** The size of a file, or 0 when it does not exist yet. */
export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Counts the lines of a file (from a byte offset) that contain any of the needles. */
export async function scanLog(path: string, fromByte: number, needles: Record<string, string>): Promise<{ lines: number; hits: Record<string, number> }> {
  const hits = Object.fromEntries(Object.keys(needles).map((k) => [k, 0]));
  let lines = 0;
  const size = fileSize(path);
  if (size <= fromByte) return { lines, hits };
  const reader = createInterface({ input: createReadStream(path, { start: fromByte, encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of reader) {
    if (!line) continue;
    lines += 1;
    for (const [name, needle] of Object.entries(needles)) if (line.includes(needle)) hits[name]! += 1;
  }
  return { lines, hits };
}

/** One job message the producer sent, as it went out. */
interface SentEntry {
  region: string;
  queueUrl: string;
  entry: SendMessageBatchRequestEntry;
}

/** The producer's own clients, which keep a copy of every entry they sent (for the duplicates). */
export interface CapturingProducer {
  clientsFor(region: string): AwsClients;
  readonly sent: SentEntry[];
  destroy(): void;
}

/** Producer clients per region on the stack's endpoints that record every successfully sent entry. */
export function capturingProducer(stack: LocalStack): CapturingProducer {
  const sent: SentEntry[] = [];
  const byRegion = new Map<string, AwsClients>();
  const clientsFor = (region: string): AwsClients => {
    let clients = byRegion.get(region);
    if (!clients) {
      clients = createAwsClients(region, stack.endpoints);
      clients.sqs.middlewareStack.add(
        (next, context) => async (args) => {
          const output = await next(args);
          if (context.commandName === 'SendMessageBatchCommand') {
            const input = args.input as { QueueUrl: string; Entries: SendMessageBatchRequestEntry[] };
            const ok = new Set(((output.output as { Successful?: { Id?: string }[] }).Successful ?? []).map((s) => s.Id));
            for (const entry of input.Entries) if (ok.has(entry.Id)) sent.push({ region, queueUrl: input.QueueUrl, entry });
          }
          return output;
        },
        { step: 'initialize', name: 'soakCaptureSends' },
      );
      byRegion.set(region, clients);
    }
    return clients;
  };
  return {
    clientsFor,
    sent,
    destroy: () => {
      for (const clients of byRegion.values()) clients.destroy();
    },
  };
}

/** The duplicate deliveries a soak injected: how many SQS accepted, and how many per job id. */
export interface InjectedDuplicates {
  messages: number;
  byJob: Map<string, number>;
}

/** The job id of a job message body, if it has one. */
function jobIdOf(body: string | undefined): string | undefined {
  try {
    const id = (JSON.parse(body ?? '') as { jobId?: unknown }).jobId;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Duplicate deliveries: sends again the entries `chance(share)` picks, in batches of 10 per queue,
 * half at once and half 1..10 s later. Returns how many duplicates SQS accepted, and for which jobs.
 */
export async function sendDuplicates(
  producer: CapturingProducer,
  share: number,
  chance: (p: number) => boolean,
  random: RandomSource,
): Promise<InjectedDuplicates> {
  const injected: InjectedDuplicates = { messages: 0, byJob: new Map() };
  const duplicates = producer.sent.filter(() => chance(share));
  for (let i = 0; i < duplicates.length; i += 10) {
    const chunk = duplicates.slice(i, i + 10);
    const byQueue = new Map<string, typeof chunk>();
    for (const d of chunk) byQueue.set(d.queueUrl, [...(byQueue.get(d.queueUrl) ?? []), d]);
    for (const [queueUrl, items] of byQueue) {
      const out = await producer.clientsFor(items[0]!.region).sqs.send(
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
      for (const ok of out.Successful ?? []) {
        injected.messages += 1;
        const jobId = jobIdOf(items[Number(ok.Id?.slice(3))]?.entry.MessageBody);
        if (jobId !== undefined) injected.byJob.set(jobId, (injected.byJob.get(jobId) ?? 0) + 1);
      }
    }
  }
  return injected;
}

/** The jobs the producer sent (job id and idempotency key), read from the captured message bodies. */
export function sentJobs(producer: CapturingProducer): { jobId: string; idempotencyKey: string; region: string }[] {
  return producer.sent.flatMap((s) => {
    try {
      const job = JSON.parse(s.entry.MessageBody ?? '') as { jobId?: unknown; idempotencyKey?: unknown };
      return typeof job.jobId === 'string' ? [{ jobId: job.jobId, idempotencyKey: String(job.idempotencyKey ?? ''), region: s.region }] : [];
    } catch {
      return [];
    }
  });
}

/** The `ratelane resume` an operator ran exited with an error code. */
class OperatorResumeError extends RatelaneError {
  override name = 'OperatorResumeError';
  readonly kind = 'internal' as const;
  readonly retryable = true;
}

/**
 * An operator's resume of a lane after a billing problem is fixed (`ratelane resume --lane <name>
 * --clear billing`), plus the local poller's resume, which the command leaves to the stack's timer.
 */
export async function operatorResume(
  stack: LocalStack,
  name: string,
  lanes: LaneSet = Object.fromEntries(Object.values(stack.lanes).map((l) => [l.lane.name, l.lane])),
): Promise<void> {
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
  if (code !== 0) throw new OperatorResumeError(`ratelane resume exited ${code}`);
  await lane.pause?.resume();
}

/** Key-1 of every lane out of credit for a while, then an operator's resume of every lane. */
export interface CreditOutage {
  /** Whether the keys are out of credit now. */
  readonly active: boolean;
  /** How long the keys were out of credit in all (ms). */
  readonly totalMs: number;
  /** Ends the outage now if it is on (credit back, then the operator's resume). */
  end(): Promise<void>;
  /** Cancels the timers (the run is over). */
  dispose(): void;
}

/**
 * Schedules the soak's credit outage: one provider minute in, key-1 of every lane runs out of credit
 * for `minutes` provider minutes (none when 0); then the operator resumes every lane.
 */
export function scheduleCreditOutage(
  stack: LocalStack,
  lanes: LaneSet,
  options: { minutes: number; minuteMs: number },
  say: (line: string) => void,
): CreditOutage {
  const keys = options.minutes > 0 ? Object.keys(lanes).map((name) => localKeySecret(name, 'key-1')) : [];
  const timers: NodeJS.Timeout[] = [];
  let totalMs = 0;
  let startedAt: number | undefined;
  const end = async (): Promise<void> => {
    if (startedAt === undefined) return;
    for (const key of keys) stack.provider.setKeyOutOfCredit(key, false);
    totalMs += Date.now() - startedAt;
    startedAt = undefined;
    // What the operator does once the bill is paid: lift the billing cooldowns and resume each lane.
    for (const name of Object.keys(lanes))
      await operatorResume(stack, name, lanes).catch((error: unknown) => say(`  resume of lane ${name} failed: ${(error as Error).message}`));
    say(`  key-1 of every lane has credit again; lanes resumed (billing cooldowns cleared)`);
  };
  if (keys.length > 0) {
    timers.push(
      setTimeout(() => {
        for (const key of keys) stack.provider.setKeyOutOfCredit(key, true);
        startedAt = Date.now();
        say(`  key-1 of every lane is out of credit for ${options.minutes} provider minute(s)`);
        timers.push(setTimeout(() => void end(), options.minutes * options.minuteMs));
      }, options.minuteMs),
    );
  }
  return {
    get active() {
      return startedAt !== undefined;
    },
    get totalMs() {
      return totalMs;
    },
    end,
    dispose: () => {
      for (const timer of timers) clearTimeout(timer);
    },
  };
}
