/**
 * Realistic inputs for the report pages: an evaluation report of the queue lane with every bucket, a
 * baseline and one regression; a bench report of three strategies with their drain curves.
 */
import type { BucketDimension, BucketFigures, EvalReport, FieldAccuracy, FieldComparison } from '../../../workbench/drivers/eval/report-model.js';
import type { DrainCurve } from '../../../workbench/drivers/bench/curve.js';
import type { BenchReport, Distribution, StrategyResult } from '../../../workbench/drivers/bench/report.js';
import type { Scorecard } from '../../../workbench/drivers/scorecard.js';
import type { BenchHtmlInput } from '../../../workbench/drivers/bench/html.js';

/** A small deterministic pseudo-random sequence (0..1). */
function randoms(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const FIELDS: readonly [string, string][] = [
  ['invoice@1', 'invoiceNumber'],
  ['invoice@1', 'issueDate'],
  ['invoice@1', 'seller.vatId'],
  ['invoice@1', 'totals.gross'],
  ['invoice@1', 'lineItems'],
  ['receipt@1', 'merchant'],
  ['receipt@1', 'total'],
];

function fields(rate: number, total: number, rand: () => number, only?: string): FieldAccuracy[] {
  return FIELDS.filter(([schema]) => only === undefined || schema === only).map(([schemaVersion, field]) => {
    const correct = Math.min(total, Math.round(total * Math.min(1, rate + (rand() - 0.5) * 0.2)));
    return { schemaVersion, field, correct, total, accuracy: total === 0 ? null : correct / total };
  });
}

function bucket(dimension: BucketDimension, name: string, documents: number, rate: number, rand: () => number, only?: string): BucketFigures {
  const wholeObjectCorrect = Math.round(documents * rate * 0.8);
  return {
    dimension,
    bucket: name,
    documents,
    wholeObjectCorrect,
    wholeObjectAccuracy: wholeObjectCorrect / documents,
    needsReviewShare: 0.05 + rand() * 0.05,
    reviewExpected: { correct: 2, total: 2 },
    fields: fields(rate, documents, rand, only),
  };
}

/**
 * An evaluation report with every dimension bucketed, distributions of a few hundred values, and a
 * baseline where `invoice@1 issueDate` regressed (the gate failed). `fieldName` replaces the first field's name.
 */
export function sampleEvalReport(options: { fieldName?: string; baseline?: boolean } = {}): EvalReport {
  const rand = randoms(7);
  const overallFields = fields(0.9, 120, rand);
  if (options.fieldName !== undefined) overallFields[0]!.field = options.fieldName;
  // The regressed field: 100 of 120 now, against 91% in the baseline.
  Object.assign(overallFields[1]!, { correct: 100, total: 120, accuracy: 100 / 120 });
  const buckets: BucketFigures[] = [
    bucket('language', 'en', 50, 0.93, rand),
    bucket('language', 'de', 40, 0.9, rand),
    bucket('language', 'fr', 30, 0.82, rand),
    bucket('length', 'short (<500 tokens)', 60, 0.94, rand),
    bucket('length', 'medium (500-1999 tokens)', 45, 0.88, rand),
    bucket('length', 'long (2000+ tokens)', 15, 0.75, rand),
    bucket('schema', 'invoice@1', 90, 0.89, rand, 'invoice@1'),
    bucket('schema', 'receipt@1', 30, 0.95, rand, 'receipt@1'),
    bucket('region', 'us', 80, 0.91, rand),
    bucket('region', 'eu', 40, 0.88, rand),
  ];
  if (options.fieldName !== undefined) for (const b of buckets) if (b.fields[0]) b.fields[0].field = options.fieldName;
  const comparisons: FieldComparison[] = overallFields.map((f, i) => {
    const baseline = i === 1 ? 0.91 : Math.min(1, (f.accuracy ?? 0) + (rand() - 0.6) * 0.03);
    const delta = f.accuracy === null ? null : f.accuracy - baseline;
    return {
      schemaVersion: f.schemaVersion,
      field: f.field,
      baseline,
      candidate: f.accuracy,
      delta,
      tolerance: 0.02,
      regressed: delta !== null && delta < -0.02,
    };
  });
  const report: EvalReport = {
    release: {
      id: 'r2026-11-30',
      description: 'invoice prompt v3, receipt prompt v2',
      prompts: { 'invoice@1': 'invoice-extract@3', 'receipt@1': 'receipt-extract@2' },
      normalizerVersion: 'normalize@4',
      scorerVersion: 'score@2',
    },
    lane: 'queue',
    provider: 'fake (local)',
    seed: 42,
    generatedAt: '2026-11-30T12:00:00.000Z',
    overall: {
      documents: 120,
      wholeObjectCorrect: 96,
      wholeObjectAccuracy: 0.8,
      needsReviewShare: 0.075,
      reviewExpected: { correct: 6, total: 6 },
      fields: overallFields,
    },
    buckets,
    tokens: { inputTokens: 154_300, outputTokens: 31_200, costUsd: 0.0419, model: 'gpt-4o-mini', inputTokensPerDocument: 1286, outputTokensPerDocument: 260 },
    operations: {
      submitted: 130,
      committed: 120,
      needsReview: 9,
      rejected: 1,
      deadLettered: 0,
      waiting: 0,
      lost: 0,
      queueAgeMs: { p95: 2350 },
      latencyMs: { p50: 1800, p95: 5200 },
      attemptsPerCompletion: 1.04,
      duplicatesSuppressed: 2,
      unresolvedBatchItems: null,
      regionMismatches: 0,
      elapsedMs: 64_000,
    },
    distributions: {
      latencyMs: Array.from({ length: 120 }, () => Math.round(600 + rand() ** 2 * 6000)),
      queueAgeMs: Array.from({ length: 125 }, () => Math.round(rand() ** 3 * 3000)),
      attempts: Array.from({ length: 125 }, () => (rand() < 0.95 ? 1 : rand() < 0.7 ? 2 : 3)),
    },
  };
  if (options.baseline === false) return report;
  const regressions = comparisons.filter((c) => c.regressed).map((c) => `${c.schemaVersion} ${c.field}`);
  report.baseline = {
    baseline: { ...report.release, id: 'r2026-11-01', description: 'invoice prompt v2, receipt prompt v2', prompts: { 'invoice@1': 'invoice-extract@2' } },
    fields: comparisons,
    bucketRegressions: comparisons
      .filter((c) => c.regressed)
      .map((c) => ({ ...c, dimension: 'language' as const, bucket: 'fr', documents: 30, baseline: 0.93, candidate: 0.8, delta: -0.13 })),
    minBucketDocuments: 20,
    wholeObject: { baseline: 0.83, candidate: 0.8, delta: -0.03 },
    tokens: { baselineInput: 149_800, candidateInput: 154_300, baselineCostUsd: 0.0402, candidateCostUsd: 0.0419 },
    gate: { passed: regressions.length === 0, regressions },
  };
  return report;
}

const D = (p50: number, p99: number, n = 100): Distribution => ({ n, p50, p99, mean: (p50 + p99) / 2 });

function strategy(id: StrategyResult['id'], label: string, figures: Partial<StrategyResult>): StrategyResult {
  return {
    id,
    label,
    description: `${label} strategy`,
    submitted: 60,
    committed: 60,
    deadLettered: 0,
    lost: 0,
    waiting: 0,
    rejected: 0,
    needsReview: 0,
    doubleCommits: 0,
    duplicatesSuppressed: 0,
    modelCalls: 60,
    modelCallsPerCompletion: 1,
    attemptsPerCompletion: 1.05,
    receives: 63,
    admissionDeniedPerCompletion: 0.05,
    gaveUpOn: 0,
    throttled429: 0,
    admissionDenied: 0,
    deferrals: 0,
    failures: 0,
    drainMs: 10_000,
    quotaBoundMinimumMs: 9_000,
    drainRatio: 1.11,
    burstAwareMinimumMs: 7_000,
    burstAwareRatio: 1.43,
    settledMs: 10_100,
    overheadMs: D(12, 40),
    overheadCallingMs: D(14, 45),
    modelMsPerCall: D(80, 200),
    admissionAcquireMs: D(3, 9),
    admissionAcquireAfterFirstMinuteMs: D(2, 5),
    takes: 60,
    conditionFailures: 1,
    conditionFailuresPerTake: 0.017,
    eventLoopDelayMs: { p50: 0.5, p99: 4, max: 12 },
    maxRecordsInFlight: 8,
    meanRecordsInFlight: 4.2,
    wholeBatchFailures: 0,
    elapsedMs: 12_000,
    timedOut: false,
    scorecard: {} as Scorecard,
    ...figures,
  };
}

/** Commit times (ms) of `n` jobs at `perMinute` per `minuteMs` after a burst of `burst`, with jitter. */
function commits(n: number, burst: number, perMinute: number, minuteMs: number, rand: () => number, slow = 1): number[] {
  return Array.from({ length: n }, (_, i) => Math.round(i < burst ? 300 + rand() * 400 : (minuteMs * (i - burst + 1) * slow) / perMinute + rand() * 200)).sort(
    (a, b) => a - b,
  );
}

/** A bench run of three strategies (60 jobs, two lanes of 2 keys × 6 rpm, a 2 s minute) with their curves. */
export function sampleBenchInput(options: { label?: string } = {}): BenchHtmlInput {
  const rand = randoms(11);
  const minuteMs = 2000;
  const lanes = [
    { lane: 'us', jobs: 36, requestsPerMinute: 12 },
    { lane: 'eu', jobs: 24, requestsPerMinute: 12 },
  ];
  const naiveCommits = commits(52, 12, 12, minuteMs, rand, 1.6);
  const rescheduleCommits = commits(60, 24, 24, minuteMs, rand, 1.15);
  const admissionCommits = commits(60, 24, 24, minuteMs, rand);
  const curve = (strategyId: DrainCurve['strategyId'], label: string, offsets: number[]): DrainCurve => ({
    strategyId,
    label,
    submitted: 60,
    commitOffsetsMs: offsets,
    lanes,
    minuteMs,
  });
  const labelC = options.label ?? '(c) admission';
  const report: BenchReport = {
    date: '2026-11-30T12:00:00.000Z',
    machine: {
      cpuModel: 'Test CPU',
      cpus: 2,
      memoryGb: 24,
      os: 'Linux 6.1 x64',
      node: 'v20.20.2',
      loadAverageAtStart: [0.5, 0.4, 0.3],
      loadAverageAtEnd: [1.5, 1, 0.6],
    },
    settings: {
      jobs: 60,
      jobsPerLane: { us: 36, eu: 24 },
      refusedRequestRule: 'openai: a refused request counts toward RPM (fixture)',
      warmup: null,
      keysPerLane: 2,
      providerRpm: 6,
      providerTpm: 1_000_000,
      minuteMs,
      laneRequestsPerMinute: 12,
      providerShare: 1,
      maxReceiveCount: 5,
      consumerConcurrencyPerLane: 2,
      batchSize: 5,
      backoff: { failureBaseSeconds: 1, failureCapSeconds: 30, throttleBaseSeconds: 1, throttleCapSeconds: 60 } as BenchReport['settings']['backoff'],
    },
    strategies: [
      strategy('naive', '(a) naive', {
        committed: 52,
        deadLettered: 8,
        throttled429: 40,
        modelCalls: 104,
        modelCallsPerCompletion: 2,
        drainMs: naiveCommits.at(-1)!,
      }),
      strategy('reschedule', '(b) reschedule', { throttled429: 15, modelCalls: 75, modelCallsPerCompletion: 1.25, drainMs: rescheduleCommits.at(-1)! }),
      strategy('admission', labelC, { drainMs: admissionCommits.at(-1)! }),
    ],
    probe: null,
    floor: null,
    loadedFloor: null,
    targets: null,
    overheadToLoadedFloor: null,
    elapsedMs: 45_000,
  };
  return {
    report,
    curves: [curve('naive', '(a) naive', naiveCommits), curve('reschedule', '(b) reschedule', rescheduleCommits), curve('admission', labelC, admissionCommits)],
  };
}
