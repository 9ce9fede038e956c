/**
 * The evaluation report: what `npm run eval` prints, writes as JSON and draws as HTML. Every figure is
 * computed from the run's stores and counters (see `workbench/drivers/eval/`); this module only names the shape.
 */
import type { ReleaseStamp } from '../release.js';

/** The lanes an evaluation can run the corpus through. */
export type EvalLane = 'queue' | 'live' | 'batch';

/** The dimensions a report buckets by. */
export type BucketDimension = 'language' | 'length' | 'schema' | 'region';

/** How often one field was right. `accuracy` is `correct / total`, null when `total` is 0. */
export interface FieldAccuracy {
  /** The schema the field belongs to, e.g. `invoice@1`. */
  schemaVersion: string;
  /** The field's path, e.g. `issueDate`, `seller.vatId`, `lineItems`. */
  field: string;
  correct: number;
  total: number;
  accuracy: number | null;
}

/** The figures of one set of documents (the whole corpus, or one bucket of it). */
export interface AccuracyFigures {
  /** Documents scored (every document of the set that was expected to commit). */
  documents: number;
  /** Documents whose every field was right. */
  wholeObjectCorrect: number;
  wholeObjectAccuracy: number | null;
  /** Documents that ended in review, as a share of the set's documents (0..1). */
  needsReviewShare: number | null;
  /** Documents reviewed as "must go to review" (totals that disagree) that did: `correct` of `total`. */
  reviewExpected: { correct: number; total: number };
  fields: FieldAccuracy[];
}

/** One bucket: a value of a dimension (`language` = `fr`, `length` = `long`, …) with its figures. */
export interface BucketFigures extends AccuracyFigures {
  dimension: BucketDimension;
  bucket: string;
}

/** Tokens the committed jobs spent (every model call of each, repairs included, as its result records them) and their cost at the list price; jobs that ended elsewhere are not counted. */
export interface TokenFigures {
  inputTokens: number;
  outputTokens: number;
  /** USD at the list price of `model`; null when the model has no known price. */
  costUsd: number | null;
  model: string | null;
  /** Per committed document. */
  inputTokensPerDocument: number | null;
  outputTokensPerDocument: number | null;
}

/** The operations of the same run, beside the quality figures. */
export interface OperationsFigures {
  submitted: number;
  committed: number;
  needsReview: number;
  rejected: number;
  deadLettered: number;
  waiting: number;
  lost: number;
  queueAgeMs: { p95: number | null };
  latencyMs: { p50: number | null; p95: number | null };
  attemptsPerCompletion: number | null;
  duplicatesSuppressed: number;
  /** Batch items with no result (null when the batch lane did not run). */
  unresolvedBatchItems: number | null;
  regionMismatches: number;
  elapsedMs: number;
}

/** Raw values the distributions are drawn from. */
export interface Distributions {
  /** End-to-end latency of each committed job (ms). */
  latencyMs: number[];
  /** Queue age of each completion the consumer reported (ms). */
  queueAgeMs: number[];
  /** Attempts of each completion. */
  attempts: number[];
}

/** One field beside its baseline. */
export interface FieldComparison {
  schemaVersion: string;
  field: string;
  baseline: number | null;
  candidate: number | null;
  /** `candidate − baseline` (accuracy points, −1..1); null when either is null. */
  delta: number | null;
  /** The drop the gate tolerates for this field (0..1). */
  tolerance: number;
  regressed: boolean;
}

/** A field that regressed inside one bucket (a language, a length, a region) big enough to judge. */
export interface BucketRegression extends FieldComparison {
  dimension: BucketDimension;
  bucket: string;
  /** Documents of the bucket scored for the field (the smaller of the two runs). */
  documents: number;
}

/** The comparison with a baseline and the gate's verdict. */
export interface BaselineComparison {
  baseline: ReleaseStamp;
  fields: FieldComparison[];
  /**
   * Fields that regressed inside a bucket of at least `minBucketDocuments` documents, so that a drop in
   * one language or length is not hidden by the overall figure.
   */
  bucketRegressions: BucketRegression[];
  minBucketDocuments: number;
  wholeObject: { baseline: number | null; candidate: number | null; delta: number | null };
  tokens: { baselineInput: number; candidateInput: number; baselineCostUsd: number | null; candidateCostUsd: number | null };
  gate: { passed: boolean; regressions: string[] };
}

/** The whole report of one evaluation run. */
export interface EvalReport {
  release: ReleaseStamp;
  lane: EvalLane;
  /** Where the answers came from: the local fake provider, or a real provider. */
  provider: string;
  seed: number;
  generatedAt: string;
  overall: AccuracyFigures;
  buckets: BucketFigures[];
  tokens: TokenFigures;
  operations: OperationsFigures;
  distributions: Distributions;
  baseline?: BaselineComparison;
}
