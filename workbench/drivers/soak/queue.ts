/**
 * Whether slowness multiplies messages: the soak samples its lanes' queues (fauxqs inspection, no SQS
 * call) about once a second from the first submission to the end of the run, and keeps
 *
 * - the peak: the most messages the lane queues held at once (visible + in flight + delayed), which a
 *   run that does not multiply keeps within `submitted + injected duplicate messages`. A deferral sends
 *   the job's new message before the original is deleted, so for a moment both are there: an original
 *   in flight beside a waiting copy of its job counts once (if it is failed back instead of deleted, it
 *   waits too, and then both count);
 * - re-sends beside an earlier copy: messages of a job waiting (visible or delayed, not in flight)
 *   while a copy of the same job re-sent later (more `deferrals`) is also in the queue, beyond the
 *   copies the soak itself injected for that job. Such a copy is a second chain of the job: its batch
 *   failed after the re-send had gone out (a crash after a re-send does this on purpose).
 *
 * Sampling can miss a copy that came and went between two samples: the counts are a lower bound.
 */
import type { LocalStack } from '../../local-stack/stack.js';
import { inspectMessages, type InspectedMessage } from '../observe.js';

/** Messages of the lane queues at one sample. */
interface QueueSample {
  at: number;
  total: number;
  visible: number;
  inFlight: number;
  delayed: number;
}

/** What the sampler found over the run. */
export interface QueueMultiplication {
  /** The most messages the lane queues held at one sample (visible + in flight + delayed; an original in flight beside a waiting copy of its job once). */
  peak: number;
  /** When it was first seen, in ms since the run started (null before any sample). */
  peakAtMs: number | null;
  /** Samples taken. */
  samples: number;
  /** Distinct messages seen waiting beside a later re-send of the same job (beyond injected duplicates). */
  resentWhileQueued: number;
  /** Distinct jobs that had such a copy: jobs with two chains at once. */
  jobsWithSeveralChains: number;
  /** The most messages one job had in the queue at one sample. */
  mostCopiesOfOneJob: number;
}

/** Samples the lane queues on a timer; read its figures at any time. */
export interface QueueSampler {
  /** Takes one sample now (also done by the timer); undefined when the stack has no inspectable fauxqs. */
  sample(): QueueSample | undefined;
  /** The last sample taken. */
  readonly last: QueueSample | undefined;
  /** The figures so far. */
  figures(): QueueMultiplication;
  /** Tells the sampler how many copies of each job the soak injected on purpose. */
  setInjectedDuplicates(byJob: ReadonlyMap<string, number>): void;
  /** Stops the timer (idempotent). */
  stop(): void;
}

/** Starts sampling the stack's lane queues every `intervalMs` (timer unref'd). */
export function startQueueSampler(stack: LocalStack, runStarted: number, intervalMs = 1000): QueueSampler {
  let injected: ReadonlyMap<string, number> = new Map();
  let last: QueueSample | undefined;
  let peak = 0;
  let peakAtMs: number | null = null;
  let samples = 0;
  let mostCopiesOfOneJob = 0;
  const staleMessages = new Set<string>();
  const forkedJobs = new Set<string>();

  const sample = (): QueueSample | undefined => {
    if (!stack.fauxqs) return undefined;
    const messages = Object.values(stack.lanes).flatMap((l) => inspectMessages(stack.fauxqs, l.lane.resources.queueName));
    const at = Date.now();
    const current: QueueSample = {
      at,
      total: messages.length,
      visible: messages.filter((m) => m.state === 'ready').length,
      inFlight: messages.filter((m) => m.state === 'inFlight').length,
      delayed: messages.filter((m) => m.state === 'delayed').length,
    };
    samples += 1;
    last = current;
    const byJob = new Map<string, InspectedMessage[]>();
    for (const m of messages) {
      if (m.jobId === undefined) continue;
      const copies = byJob.get(m.jobId);
      if (copies) copies.push(m);
      else byJob.set(m.jobId, [m]);
    }
    let handedOver = 0;
    for (const copies of byJob.values()) {
      if (copies.some((c) => c.state !== 'inFlight')) handedOver += copies.filter((c) => c.state === 'inFlight').length;
    }
    if (current.total - handedOver > peak) {
      peak = current.total - handedOver;
      peakAtMs = at - runStarted;
    }
    for (const [jobId, copies] of byJob) {
      mostCopiesOfOneJob = Math.max(mostCopiesOfOneJob, copies.length);
      if (copies.length < 2) continue;
      const newest = Math.max(...copies.map((c) => c.deferrals ?? 0));
      const stale = copies.filter((c) => c.state !== 'inFlight' && (c.deferrals ?? 0) < newest).sort((a, b) => (a.deferrals ?? 0) - (b.deferrals ?? 0));
      const excess = stale.length - (injected.get(jobId) ?? 0);
      if (excess <= 0) continue;
      forkedJobs.add(jobId);
      for (const copy of stale.slice(0, excess)) staleMessages.add(copy.messageId);
    }
    return current;
  };

  const timer = setInterval(() => {
    try {
      sample();
    } catch {
      // an inspection that fails is a missed sample, never a failed run
    }
  }, intervalMs);
  timer.unref();

  return {
    sample,
    get last() {
      return last;
    },
    figures: () => ({
      peak,
      peakAtMs,
      samples,
      resentWhileQueued: staleMessages.size,
      jobsWithSeveralChains: forkedJobs.size,
      mostCopiesOfOneJob,
    }),
    setInjectedDuplicates: (byJob) => {
      injected = byJob;
    },
    stop: () => clearInterval(timer),
  };
}
