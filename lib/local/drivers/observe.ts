/**
 * How the drivers watch a running local stack: queue depths, the job ids still in a queue, the
 * provider's counts, and {@link watchUntilDrained}, the loop that waits until every queue is empty and
 * nothing is in flight (or a time limit), reporting each check.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { OutputStream } from '../../commands/command.js';
import type { FauxqsLocal } from '../services/services.js';
import type { LocalStack } from '../stack.js';

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
export async function queueDepth(stack: LocalStack, lane: string, which: 'queueUrl' | 'dlqUrl'): Promise<QueueDepth> {
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

/** Every lane's queues at one check, summed over the lanes. */
export interface DrainSnapshot {
  /** Messages in the lane queues: visible, in flight or delayed. */
  waiting: number;
  delayed: number;
  inFlight: number;
  /** Messages in the DLQs. */
  deadLettered: number;
  /** Whether some poller has an invocation running. */
  busy: boolean;
  /** Lanes paused now. */
  paused: string[];
}

/** Reads every lane's queue and DLQ depths once. */
export async function drainSnapshot(stack: LocalStack): Promise<DrainSnapshot> {
  const depths = await Promise.all(
    Object.keys(stack.lanes).map(async (name) => [await queueDepth(stack, name, 'queueUrl'), await queueDepth(stack, name, 'dlqUrl')] as const),
  );
  const lanes = Object.values(stack.lanes);
  return {
    waiting: depths.reduce((n, [q]) => n + q.visible + q.inFlight + q.delayed, 0),
    delayed: depths.reduce((n, [q]) => n + q.delayed, 0),
    inFlight: depths.reduce((n, [q]) => n + q.inFlight, 0),
    deadLettered: depths.reduce((n, [, d]) => n + d.visible + d.inFlight + d.delayed, 0),
    busy: lanes.some((l) => (l.poller?.stats.inFlight ?? 0) > 0),
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
  for (const lane of Object.values(stack.lanes)) await lane.poller?.stop();
}

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
  /**
   * Sees every check: `end` is `'drained'` on the check that ends the watch (two quiet checks in a
   * row), `'timeLimit'` when the deadline passed, else undefined.
   */
  onCheck(snapshot: DrainSnapshot, end: 'drained' | 'timeLimit' | undefined): void;
  /** A check whose depths did not answer within `readTimeoutMs` (how many so far). */
  onStall?(stalls: number): void;
}

/** How a watch ended. */
export interface DrainResult {
  timedOut: boolean;
  /** When the last quiet streak began (epoch ms), or null when the watch did not end drained. */
  quietSince: number | null;
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

/**
 * Checks the queues every `intervalMs` until two checks in a row find every queue empty and no
 * poller busy (and `mayEnd()`), or the deadline passes.
 */
export async function watchUntilDrained(stack: LocalStack, watch: DrainWatch): Promise<DrainResult> {
  let quietChecks = 0;
  let quietSince: number | null = null;
  let stalls = 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, watch.intervalMs));
    const snapshot = watch.readTimeoutMs === undefined ? await drainSnapshot(stack) : await orTimeout(drainSnapshot(stack), watch.readTimeoutMs);
    if (!snapshot) {
      stalls += 1;
      watch.onStall?.(stalls);
      if (Date.now() > watch.deadline) return { timedOut: true, quietSince: null };
      continue;
    }
    if (snapshot.waiting === 0 && !snapshot.busy && (watch.mayEnd?.() ?? true)) {
      quietSince ??= Date.now();
      quietChecks += 1;
    } else {
      quietSince = null;
      quietChecks = 0;
    }
    if (quietChecks >= 2) {
      watch.onCheck(snapshot, 'drained');
      return { timedOut: false, quietSince };
    }
    if (Date.now() > watch.deadline) {
      watch.onCheck(snapshot, 'timeLimit');
      return { timedOut: true, quietSince: null };
    }
    watch.onCheck(snapshot, undefined);
  }
}
