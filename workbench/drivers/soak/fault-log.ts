/**
 * The soak's fault log: the seeded decisions of the consumer faults (crashes, store and SQS outages)
 * and the counters of what they and the poller saw (crashes, outages, commits per key, whole-batch
 * failures, failed deletes).
 */
import type { PollerEvent } from '../../local-stack/poller/poller.js';
import type { SoakOptions } from './soak.js';
import { crashInvocation, type CrashPoint, type DepFaults, type OutagePoint } from './faults.js';

/** What the injected faults did, counted as the run goes. */
export interface FaultLog {
  faults: DepFaults;
  crashes: Record<CrashPoint, number>;
  /** Copies of jobs a crash made: re-sent by an invocation that then died (its originals come back too). */
  crashCopies: number;
  outages: Record<OutagePoint, number>;
  /** Commits that reached the store and committed, per idempotency key. */
  commitsByKey: Map<string, number>;
  wholeBatchFailures: Record<string, number>;
  wholeBatchFailureExamples: Record<string, string>;
  deleteFailures: number;
  onPollerEvent(event: PollerEvent): void;
}

/** The fault decisions of a soak (seeded), and the counters of what they and the poller saw. */
export function faultLog(options: SoakOptions, chance: (p: number) => boolean): FaultLog {
  const log: FaultLog = {
    crashes: { afterModelCall: 0, afterCommit: 0, afterResend: 0 },
    crashCopies: 0,
    outages: { commit: 0, send: 0, visibility: 0 },
    commitsByKey: new Map(),
    wholeBatchFailures: {},
    wholeBatchFailureExamples: {},
    deleteFailures: 0,
    faults: {
      crash: (point) => {
        const hit = chance(options.crashes);
        if (hit) log.crashes[point] += 1;
        return hit;
      },
      onCrash: crashInvocation,
      outage: (point) => {
        const hit = chance(point === 'commit' ? options.storeOutages : options.sqsOutages);
        if (hit) log.outages[point] += 1;
        return hit;
      },
      onCommit: (record, status) => {
        if (status === 'committed') log.commitsByKey.set(record.idempotencyKey, (log.commitsByKey.get(record.idempotencyKey) ?? 0) + 1);
      },
    },
    onPollerEvent: (event) => {
      if (event.type === 'batchFailed') {
        log.wholeBatchFailures[event.reason] = (log.wholeBatchFailures[event.reason] ?? 0) + 1;
        log.wholeBatchFailureExamples[event.reason] ??= `${(event.error as Error)?.name ?? 'Error'}: ${event.message}`.slice(0, 300);
      }
      if (event.type === 'deleteFailed') log.deleteFailures += event.failures.length;
    },
  };
  return log;
}
