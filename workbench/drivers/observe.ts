/**
 * How the drivers watch a running local stack: queue depths, the messages and job ids in a queue
 * (fauxqs inspection), the provider's counts, and {@link watchUntilDrained}, the loop that waits until
 * every queue is empty and nothing is in flight (or a time limit, a stall, an abort), reporting each check.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { OutputStream } from '../../lib/cli/command.js';
import type { FauxqsLocal } from '../local-stack/services/services.js';
import type { LocalStack } from '../local-stack/stack.js';

/** Writes one line (a newline is added) to a stream; the drivers' progress goes to stderr this way. */
export function lineWriter(stream: OutputStream): (line: string) => void {
  return (line) => {
    stream.write(`${line}\n`);
  };
}

/** Messages in a queue, by state. */
export interface QueueDepth {
  visible: number;
  inFlight: number;
  delayed: number;
}

/** Counts messages in a lane's queue or DLQ (visible, in flight, delayed). */
async function queueDepth(stack: LocalStack, lane: string, which: 'queueUrl' | 'dlqUrl'): Promise<QueueDepth> {
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

/** One message of a queue as fauxqs inspection shows it (read without receiving it). */
export interface InspectedMessage {
  messageId: string;
  /** The job id of its body, when the body is a job. */
  jobId: string | undefined;
  /** The job's `deferrals` (how many times it was re-sent for later), when the body is a job. */
  deferrals: number | undefined;
  /** The job's idempotency key and lane, when the body is a job. */
  idempotencyKey: string | undefined;
  lane: string | undefined;
  state: 'ready' | 'delayed' | 'inFlight';
  /** Since when it is in its state (epoch ms): in flight since its first receive, queued since it is due. */
  since: number;
}

/** Every message of a queue (ready, delayed, in flight), read without receiving it (fauxqs inspection); empty when the queue cannot be inspected. */
export function inspectMessages(fauxqs: Pick<FauxqsLocal, 'server'> | undefined, queueName: string): InspectedMessage[] {
  const inspected = fauxqs?.server.inspectQueue(queueName);
  if (!inspected) return [];
  const { ready, delayed, inflight } = inspected.messages;
  type Inspected = { messageId?: string; body?: string; sentTimestamp?: number; delayUntil?: number; approximateFirstReceiveTimestamp?: number };
  const one = (m: Inspected, state: InspectedMessage['state']): InspectedMessage => {
    let job: { jobId?: unknown; deferrals?: unknown; idempotencyKey?: unknown; region?: unknown } = {};
    try {
      job = JSON.parse(m.body ?? '') ?? {};
    } catch {
      // not a job
    }
    const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    const since = (state === 'inFlight' ? m.approximateFirstReceiveTimestamp : m.delayUntil) ?? m.sentTimestamp ?? 0;
    return {
      messageId: m.messageId ?? '',
      jobId: text(job.jobId),
      deferrals: typeof job.deferrals === 'number' ? job.deferrals : undefined,
      idempotencyKey: text(job.idempotencyKey),
      lane: text(job.region),
      state,
      since,
    };
  };
  return [...ready.map((m) => one(m, 'ready')), ...delayed.map((m) => one(m, 'delayed')), ...inflight.map((m) => one(m.message, 'inFlight'))];
}

/** Counts a queue's messages by state from fauxqs inspection (no SQS call); `undefined` when it cannot be inspected. */
export function inspectDepth(fauxqs: Pick<FauxqsLocal, 'server'> | undefined, queueName: string): QueueDepth | undefined {
  const inspected = fauxqs?.server.inspectQueue(queueName);
  if (!inspected) return undefined;
  const { ready, delayed, inflight } = inspected.messages;
  return { visible: ready.length, inFlight: inflight.length, delayed: delayed.length };
}

/** Job ids of the messages in a queue (ready, delayed, in flight), read without receiving them (fauxqs inspection). */
export function jobIdsIn(fauxqs: Pick<FauxqsLocal, 'server'> | undefined, queueName: string): string[] {
  return inspectMessages(fauxqs, queueName).flatMap((m) => (m.jobId === undefined ? [] : [m.jobId]));
}

/** Every lane's queues at one check, summed over the lanes. */
export interface DrainSnapshot {
  /** Messages in the lane queues: visible, in flight or delayed. */
  waiting: number;
  visible: number;
  delayed: number;
  inFlight: number;
  /** Messages in the DLQs. */
  deadLettered: number;
  /** Whether some poller has an invocation running. */
  busy: boolean;
  /** Lanes paused now. */
  paused: string[];
}

/**
 * Reads every lane's queue and DLQ depths once: by fauxqs inspection when the stack runs its own
 * fauxqs (no SQS call, so a saturated client cannot hold the reading up), else with GetQueueAttributes.
 */
async function drainSnapshot(stack: LocalStack): Promise<DrainSnapshot> {
  const depth = async (name: string, which: 'queueUrl' | 'dlqUrl'): Promise<QueueDepth> => {
    const resources = stack.lanes[name]!.lane.resources;
    return inspectDepth(stack.fauxqs, which === 'queueUrl' ? resources.queueName : resources.dlqName) ?? (await queueDepth(stack, name, which));
  };
  const depths = await Promise.all(Object.keys(stack.lanes).map(async (name) => [await depth(name, 'queueUrl'), await depth(name, 'dlqUrl')] as const));
  const lanes = Object.values(stack.lanes);
  return {
    waiting: depths.reduce((n, [q]) => n + q.visible + q.inFlight + q.delayed, 0),
    visible: depths.reduce((n, [q]) => n + q.visible, 0),
    delayed: depths.reduce((n, [q]) => n + q.delayed, 0),
    inFlight: depths.reduce((n, [q]) => n + q.inFlight, 0),
    deadLettered: depths.reduce((n, [, d]) => n + d.visible + d.inFlight + d.delayed, 0),
    busy: lanes.some((l) => l.pollers.some((p) => p.stats.inFlight > 0)),
    paused: lanes.filter((l) => l.pause?.state.paused).map((l) => l.lane.name),
  };
}

/** The fake provider's counts, as the scorecard takes them: requests, 429s, 429s by kind. */
export function providerTotals(stack: LocalStack): { requests: number; rateLimited: number; byKind: Record<string, number> } {
  const stats = stack.provider.stats();
  return { requests: stats.requests, rateLimited: Object.values(stats.rateLimited).reduce((a, b) => a + b, 0), byKind: { ...stats.rateLimited } };
}

/** The "up in … ms" line after a stack started: where DynamoDB Local, fauxqs and the provider listen. */
export function stackReadyLine(stack: LocalStack, started: number): string {
  return `  up in ${Date.now() - started} ms: DynamoDB Local ${stack.endpoints.dynamodb} (pid ${stack.childPids.join(', ') || '-'}), SQS/S3 ${stack.endpoints.sqs}, provider ${stack.provider.baseUrl}`;
}

/** Seconds since `from`, right-aligned for progress lines (`[  12 s]`). */
export function elapsedLabel(from: number): string {
  return ((Date.now() - from) / 1000).toFixed(0).padStart(4);
}

/** Stops every lane's poller (running invocations finish first). */
export async function stopPollers(stack: LocalStack): Promise<void> {
  for (const lane of Object.values(stack.lanes)) for (const poller of lane.pollers) await poller.stop();
}

/**
 * Runs `work` with every poller of the stack paused (resolved once their receives in flight have
 * returned), then resumes them all at once; returns what `work` returned and when they resumed (epoch ms).
 */
export async function whilePollersPaused<T>(stack: LocalStack, work: () => Promise<T>): Promise<{ value: T; resumedAt: number }> {
  const pollers = Object.values(stack.lanes).flatMap((lane) => lane.pollers);
  await Promise.all(pollers.map((poller) => poller.pause()));
  try {
    const value = await work();
    return { value, resumedAt: Date.now() };
  } finally {
    for (const poller of pollers) poller.resume();
  }
}

/** How a watch ended: the stack drained, the deadline passed, `stalled()` said so, or `signal` aborted it. */
type DrainEnd = 'drained' | 'timeLimit' | 'stalled' | 'aborted';

/** How the drain is watched. */
export interface DrainWatch {
  /** Pause between two checks (ms). */
  intervalMs: number;
  /** Give up at this time (epoch ms). */
  deadline: number;
  /** Stop waiting for one check's depths after this long (the check is skipped); default: wait. */
  readTimeoutMs?: number;
  /** An extra condition for the stack to count as drained (default: always). */
  mayEnd?: () => boolean;
  /** Ends the watch as `'stalled'` when it returns true for a check that did not drain (default: never). */
  stalled?: (snapshot: DrainSnapshot) => boolean;
  /** Ends the watch as `'aborted'` at the next check once aborted. */
  signal?: AbortSignal;
  /**
   * Sees every check: `end` is `'drained'` on the check that ends the watch (two quiet checks in a
   * row), `'timeLimit'` when the deadline passed, `'stalled'` when `stalled()` said so, else undefined.
   */
  onCheck(snapshot: DrainSnapshot, end: Exclude<DrainEnd, 'aborted'> | undefined): void;
  /** A check whose depths did not answer within `readTimeoutMs`, or failed (how many so far, and the error). */
  onStall?(stalls: number, error?: unknown): void;
}

/** How a watch ended. */
export interface DrainResult {
  /** True when it did not end drained (time limit, stall or abort). */
  timedOut: boolean;
  end: DrainEnd;
  /** When the last quiet streak began (epoch ms), or null when the watch did not end drained. */
  quietSince: number | null;
  /** The last snapshot read, if any. */
  last: DrainSnapshot | undefined;
}

/** `promise`'s value, or `undefined` when it has not settled within `ms`. */
export async function orTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
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

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Checks the queues every `intervalMs` until two checks in a row find every queue empty and no
 * poller busy (and `mayEnd()`), or the deadline passes, or `stalled()` says so, or `signal` aborts.
 * A check whose reading fails or does not answer in time is skipped (`onStall`), never thrown.
 */
export async function watchUntilDrained(stack: LocalStack, watch: DrainWatch): Promise<DrainResult> {
  let quietChecks = 0;
  let quietSince: number | null = null;
  let stalls = 0;
  let last: DrainSnapshot | undefined;
  for (;;) {
    await pause(watch.intervalMs, watch.signal);
    if (watch.signal?.aborted) return { timedOut: true, end: 'aborted', quietSince: null, last };
    let snapshot: DrainSnapshot | undefined;
    let failure: unknown;
    try {
      snapshot = watch.readTimeoutMs === undefined ? await drainSnapshot(stack) : await orTimeout(drainSnapshot(stack), watch.readTimeoutMs);
    } catch (error) {
      failure = error;
    }
    if (!snapshot) {
      stalls += 1;
      watch.onStall?.(stalls, failure);
      if (Date.now() > watch.deadline) return { timedOut: true, end: 'timeLimit', quietSince: null, last };
      continue;
    }
    last = snapshot;
    if (snapshot.waiting === 0 && !snapshot.busy && (watch.mayEnd?.() ?? true)) {
      quietSince ??= Date.now();
      quietChecks += 1;
    } else {
      quietSince = null;
      quietChecks = 0;
    }
    if (quietChecks >= 2) {
      watch.onCheck(snapshot, 'drained');
      return { timedOut: false, end: 'drained', quietSince, last };
    }
    if (Date.now() > watch.deadline) {
      watch.onCheck(snapshot, 'timeLimit');
      return { timedOut: true, end: 'timeLimit', quietSince: null, last };
    }
    if (quietChecks === 0 && watch.stalled?.(snapshot)) {
      watch.onCheck(snapshot, 'stalled');
      return { timedOut: true, end: 'stalled', quietSince: null, last };
    }
    watch.onCheck(snapshot, undefined);
  }
}
