/**
 * The soak's watch: from the first submission to the end, progress lines every 5 s, and the run's end
 * when it drains, reaches its time limit, stalls or crashes.
 */
import { shortMessage } from '../../../lib/platform/errors.js';
import type { LocalStack } from '../../local-stack/stack.js';
import { elapsedLabel, watchUntilDrained, type DrainSnapshot } from '../observe.js';
import type { SoakOptions } from './soak.js';
import type { FaultLog } from './fault-log.js';
import type { QueueSampler } from './queue.js';
import type { SoakEnd } from './report.js';

/** What the watch reads of the run as it goes: jobs and duplicates sent so far, and whether the submission is still on. */
export interface WatchedRun {
  sent(): number;
  duplicates: number;
  submitting: boolean;
}

/**
 * Waits until every queue is empty, nothing is in flight and no credit outage is on, or the time limit,
 * or a stall (no job settled and no model call for the stall limit, no lane paused), or a crash; progress every 5 s.
 */
export async function watchSoak(
  stack: LocalStack,
  options: SoakOptions,
  run: WatchedRun,
  log: FaultLog,
  sampler: QueueSampler,
  mayEnd: () => boolean,
  started: number,
  say: (line: string) => void,
  signal?: AbortSignal,
): Promise<Exclude<SoakEnd, 'crashed'>> {
  let lastProgress = 0;
  const progress = (q: DrainSnapshot): void => {
    lastProgress = Date.now();
    const m = stack.telemetry.totals.total;
    const p = stack.provider.stats();
    const throttled = Object.values(p.rateLimited).reduce((a, b) => a + b, 0);
    const crashed = Object.values(log.crashes).reduce((a, b) => a + b, 0);
    const batchFailures = Object.values(log.wholeBatchFailures).reduce((a, b) => a + b, 0);
    const { peak, resentWhileQueued } = sampler.figures();
    const sent = run.sent();
    const bound = sent + run.duplicates;
    say(
      `  [${elapsedLabel(started)} s]${run.submitting ? ' (submitting)' : ''} committed ${m.Completed ?? 0}/${sent} · in queue ${q.waiting} (in flight ${q.inFlight}, delayed ${q.delayed}; peak ${peak}/${bound}${peak > bound && !run.submitting ? ' EXCEEDED' : ''}) · ` +
        `DLQ ${q.deadLettered} · model calls ${m.ModelCalls ?? 0} · 429s ${throttled} · 5xx ${p.faults.serverError} · timeouts ${p.faults.timeout} · bad output ${p.faults.garbageJson + p.faults.schemaInvalid} · ` +
        `deferred ${m.Deferred ?? 0} · failed ${m.Failed ?? 0} · review ${m.NeedsReview ?? 0} · duplicates ${m.DuplicateSuppressed ?? 0} · crashes ${crashed} · ` +
        `batch failures ${batchFailures}${resentWhileQueued ? ` · re-sent beside a copy ${resentWhileQueued}` : ''}${q.paused.length ? ` · PAUSED ${q.paused.join(', ')}` : ''}`,
    );
  };
  // Progress: a job settled (committed, review, rejected, dead-lettered, a duplicate suppressed) or a model call.
  let mark = -1;
  let markAt = Date.now();
  const stalled = (q: DrainSnapshot): boolean => {
    const m = stack.telemetry.totals.total;
    const now = (m.Completed ?? 0) + (m.NeedsReview ?? 0) + (m.Rejected ?? 0) + (m.DuplicateSuppressed ?? 0) + (m.ModelCalls ?? 0) + q.deadLettered;
    if (now !== mark || q.paused.length > 0) {
      mark = now;
      markAt = Date.now();
      return false;
    }
    return options.stallLimitSeconds > 0 && Date.now() - markAt > options.stallLimitSeconds * 1000;
  };
  const { end } = await watchUntilDrained(stack, {
    intervalMs: 1000,
    deadline: started + options.timeLimitSeconds * 1000,
    readTimeoutMs: 10_000,
    mayEnd,
    stalled,
    ...(signal ? { signal } : {}),
    onStall: (stalls, error) =>
      say(
        `  queue depths did not answer within 10 s${error ? ` (${shortMessage(error, 120)})` : ''} (${stalls} time(s)); poller stats ${JSON.stringify(Object.fromEntries(Object.values(stack.lanes).map((l) => [l.lane.name, l.poller?.stats])))}`,
      ),
    onCheck: (snapshot, end) => {
      if (Date.now() - lastProgress >= 5000 || end !== undefined) progress(snapshot);
      if (end === 'timeLimit') say(`  time limit of ${options.timeLimitSeconds} s reached; ${snapshot.waiting} message(s) still waiting`);
      if (end === 'stalled') {
        say(`  STALLED: no job settled and no model call for ${options.stallLimitSeconds} s; ${snapshot.waiting} message(s) still waiting`);
      }
    },
  });
  return end === 'aborted' ? 'timeLimit' : end;
}
