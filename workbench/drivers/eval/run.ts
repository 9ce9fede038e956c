/**
 * `npm run eval`: one release's evaluation on the local stack. Starts the stack (the fake provider with
 * its error model, so prompt versions really differ), sends the evaluation corpus through one lane,
 * waits until every job ended, reads where each ended, and builds the report: per-field accuracy beside
 * the operations figures of the same run.
 */
import { loadEvalCorpus } from '../../corpus/index.js';
import type { LaneSet } from '../../../lib/config/lanes.js';
import type { Release } from '../../../lib/contract/releases.js';
import { buildEvalReport, type EvaluatedDocument } from './report.js';
import type { Distributions, EvalLane, EvalReport, OperationsFigures } from './report-model.js';
import type { ModelErrorRates } from '../../fake-provider/extractors/hard-shapes.js';
import { startLocalStack, type LocalStack } from '../../local-stack/stack.js';
import { batchReconcileIntervalMs, collectBatchFinal, fakeBatchOptions } from '../run/batch-load.js';
import { absorbBatchFinal, evalJobs, evaluatedDocuments, submitThroughLane, type EvalJob } from './lanes.js';
import { localRunLanes } from '../lanes.js';
import { elapsedLabel, stackReadyLine, stopPollers, watchUntilDrained } from '../observe.js';
import { collectFinalState, type FinalState } from '../outcome.js';
import { quantile } from '../scorecard.js';

/** The settings of one evaluation run. */
export interface EvalRunSettings {
  lane: EvalLane;
  seed: number;
  /** The fake provider's error rates per prompt version. */
  modelErrorRates: ModelErrorRates;
  /** Provider keys per region lane, and each key's limits. */
  keys: number;
  providerRpm: number;
  providerTpm: number;
  /** How long a provider "minute" lasts here. */
  minuteMs: number;
  timeLimitSeconds: number;
  /** The deadline a live request states (ms). */
  liveDeadlineMs: number;
  logFile: string;
  /**
   * A real OpenAI-compatible provider instead of the fake one: its base URL and model. The keys come
   * from `RATELANE_<LANE>_PROVIDER_KEYS` (key ids `key-1`…) or the keys file, as for `npm run local`.
   */
  realProvider?: { baseUrl: string; model?: string | undefined } | undefined;
}

/** One release's run: its report and the documents as scored (for a closer look). */
export interface ReleaseRun {
  report: EvalReport;
  documents: EvaluatedDocument[];
  timedOut: boolean;
}

/** The `p` quantile of `values`, rounded to a whole ms (the scorecard's rank rule). */
function percentile(values: readonly number[], p: number): number | null {
  const value = quantile(values, p);
  return value === null ? null : Math.round(value);
}

/** Runs the evaluation corpus through `settings.lane` with `release`, on a stack of its own. */
export async function evaluateRelease(release: Release, settings: EvalRunSettings, say: (line: string) => void): Promise<ReleaseRun> {
  const started = Date.now();
  const corpus = loadEvalCorpus();
  const lanes = onProvider(
    localRunLanes({
      keys: settings.keys,
      providerRpm: settings.providerRpm,
      providerTpm: settings.providerTpm,
      providerDaily: 1_000_000,
      minuteMs: settings.minuteMs,
    }),
    settings.realProvider,
  );
  say(`ratelane eval: release ${release.id} (${Object.values(release.prompts).join(', ')}), ${corpus.length} documents through the ${settings.lane} lane`);
  const stack = await startLocalStack({
    lanes,
    logFile: settings.logFile,
    provider: {
      limits: { requestsPerMinute: settings.providerRpm, tokensPerMinute: settings.providerTpm, requestsPerDay: 1_000_000 },
      minuteMs: settings.minuteMs,
      dayMs: settings.minuteMs * 1440,
      seed: settings.seed,
      modelErrors: { rates: settings.modelErrorRates, seed: settings.seed },
      ...(settings.lane === 'batch'
        ? { batch: fakeBatchOptions({ jobs: corpus.length, dropRate: 0, errorRate: 0, invalidRate: 0, minutes: 1 }, settings.minuteMs) }
        : {}),
    },
    live: settings.lane === 'live',
    ...(settings.realProvider ? { realProvider: true } : {}),
  });
  try {
    say(stackReadyLine(stack, started));
    const deadline = started + settings.timeLimitSeconds * 1000;
    const jobs = evalJobs(corpus, release);
    const submission = await submitThroughLane(stack, lanes, jobs, settings.lane, {
      say,
      deadline,
      reconcileIntervalMs: batchReconcileIntervalMs(settings.minuteMs),
      liveDeadlineMs: settings.liveDeadlineMs,
      liveConcurrency: 8,
    });
    const watched = await watchUntilDrained(stack, {
      intervalMs: 1000,
      deadline,
      mayEnd: () => submission.batch?.ended ?? true,
      onCheck: (snapshot) =>
        say(
          `  [${elapsedLabel(started)} s] committed ${stack.telemetry.totals.total.Completed ?? 0} · in queue ${snapshot.waiting} · DLQ ${snapshot.deadLettered}`,
        ),
    });
    const batchRun = submission.batch ? await submission.batch.done : undefined;
    await stopPollers(stack);
    const final = await collectFinalState(stack);
    const unresolved = batchRun ? absorbBatchFinal(jobs, await collectBatchFinal(stack, batchRun)) : new Set<string>();
    const documents = evaluatedDocuments(jobs, final, unresolved);
    const timedOut = watched.timedOut || (batchRun?.timedOut ?? false);
    const report = buildEvalReport({
      release,
      lane: settings.lane,
      provider: settings.realProvider
        ? `${lanes.us?.provider.kind} ${settings.realProvider.baseUrl} (${lanes.us?.provider.model})`
        : `local fake provider (${stack.provider.baseUrl})`,
      seed: settings.seed,
      generatedAt: new Date(),
      documents,
      operations: operationsOf(stack, jobs, documents, final, { batch: settings.lane === 'batch', elapsedMs: Date.now() - started }),
      distributions: distributionsOf(stack, jobs, final),
    });
    return { report, documents, timedOut };
  } finally {
    await stack.stop();
  }
}

/** The lanes pointed at a real provider's base URL (and model), when one is given. */
function onProvider(lanes: LaneSet, real: EvalRunSettings['realProvider']): LaneSet {
  if (!real) return lanes;
  return Object.fromEntries(
    Object.entries(lanes).map(([name, lane]) => [
      name,
      { ...lane, provider: { ...lane.provider, baseUrl: real.baseUrl, ...(real.model ? { model: real.model } : {}) } },
    ]),
  );
}

function ownResults(jobs: readonly EvalJob[], final: FinalState): FinalState['results'] {
  const keys = new Set(jobs.map((j) => j.idempotencyKey));
  return final.results.filter((r) => keys.has(r.idempotencyKey));
}

/** Each committed job's latency: from its creation to its commit (ms). */
function latenciesOf(jobs: readonly EvalJob[], final: FinalState): number[] {
  return ownResults(jobs, final).map((r) => Math.max(0, Date.parse(r.committedAt) - Date.parse(r.jobCreatedAt)));
}

function operationsOf(
  stack: LocalStack,
  jobs: readonly EvalJob[],
  documents: readonly EvaluatedDocument[],
  final: FinalState,
  run: { batch: boolean; elapsedMs: number },
): OperationsFigures {
  const count = (state: EvaluatedDocument['state']) => documents.filter((d) => d.state === state).length;
  const metrics = stack.telemetry.totals.total;
  const attempts = stack.telemetry.totals.values.AttemptsPerCompletion ?? [];
  const latencies = latenciesOf(jobs, final);
  return {
    submitted: jobs.length,
    committed: count('committed'),
    needsReview: count('needs_review'),
    rejected: count('rejected'),
    deadLettered: count('dead_lettered'),
    waiting: count('waiting'),
    lost: count('lost'),
    queueAgeMs: { p95: percentile(stack.telemetry.totals.values.QueueAgeMs ?? [], 0.95) },
    latencyMs: { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95) },
    attemptsPerCompletion: attempts.length > 0 ? attempts.reduce((a, b) => a + b, 0) / attempts.length : null,
    duplicatesSuppressed: metrics.DuplicateSuppressed ?? 0,
    unresolvedBatchItems: run.batch ? count('unresolved') : null,
    regionMismatches: metrics.RegionMismatch ?? 0,
    elapsedMs: run.elapsedMs,
  };
}

function distributionsOf(stack: LocalStack, jobs: readonly EvalJob[], final: FinalState): Distributions {
  return {
    latencyMs: latenciesOf(jobs, final),
    queueAgeMs: [...(stack.telemetry.totals.values.QueueAgeMs ?? [])],
    attempts: [...(stack.telemetry.totals.values.AttemptsPerCompletion ?? [])],
  };
}
