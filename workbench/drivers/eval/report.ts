/**
 * Assembles an evaluation report from the evaluated documents: the scorer's figures for the whole
 * corpus and for every bucket (language, input length, schema, region), the tokens and their cost,
 * beside the operations figures of the same run.
 */
import type { Release } from '../../../lib/contract/releases.js';
import { tokenCostUsd } from './model-prices.js';
import type { BucketDimension, BucketFigures, Distributions, EvalLane, EvalReport, OperationsFigures, TokenFigures } from './report-model.js';
import { releaseStamp } from '../release.js';
import { accuracyOf, scoreDocument, type DocumentScore, type EvalOutcomeState } from './score.js';

/** One corpus document with what the run made of it. */
export interface EvaluatedDocument {
  id: string;
  language: string;
  schemaVersion: string;
  /** The region lane it ran in. */
  region: string;
  /** Its estimated input tokens (the pipeline's own estimate, about 4 bytes a token). */
  inputTokenEstimate: number;
  expected: Record<string, unknown>;
  expectedOutcome: 'committed' | 'needs_review';
  state: EvalOutcomeState;
  result?: Record<string, unknown> | undefined;
  usage?: { inputTokens: number; outputTokens: number } | undefined;
  model?: string | undefined;
}

/** Input-length buckets by estimated tokens: the upper bound of each (the last is open). */
const LENGTH_BUCKETS: readonly { name: string; below: number }[] = [
  { name: 'short (<500 tokens)', below: 500 },
  { name: 'medium (500-1999 tokens)', below: 2_000 },
  { name: 'long (2000+ tokens)', below: Number.POSITIVE_INFINITY },
];

/** The length bucket of an input of `tokens` estimated tokens. */
export function lengthBucket(tokens: number): string {
  return (LENGTH_BUCKETS.find((b) => tokens < b.below) ?? LENGTH_BUCKETS.at(-1)!).name;
}

const DIMENSIONS: readonly { dimension: BucketDimension; of: (doc: EvaluatedDocument) => string }[] = [
  { dimension: 'language', of: (doc) => doc.language },
  { dimension: 'length', of: (doc) => lengthBucket(doc.inputTokenEstimate) },
  { dimension: 'schema', of: (doc) => doc.schemaVersion },
  { dimension: 'region', of: (doc) => doc.region },
];

function bucketsOf(documents: readonly EvaluatedDocument[], scores: readonly DocumentScore[]): BucketFigures[] {
  const buckets: BucketFigures[] = [];
  for (const { dimension, of } of DIMENSIONS) {
    const order = (bucket: string): number => (dimension === 'length' ? LENGTH_BUCKETS.findIndex((b) => b.name === bucket) : 0);
    const values = [...new Set(documents.map(of))].sort((a, b) => order(a) - order(b) || a.localeCompare(b));
    for (const bucket of values) {
      const inBucket = scores.filter((_, i) => of(documents[i]!) === bucket);
      buckets.push({ dimension, bucket, ...accuracyOf(inBucket) });
    }
  }
  return buckets;
}

function tokensOf(documents: readonly EvaluatedDocument[], batch: boolean): TokenFigures {
  const committed = documents.filter((d) => d.usage !== undefined);
  const inputTokens = committed.reduce((n, d) => n + d.usage!.inputTokens, 0);
  const outputTokens = committed.reduce((n, d) => n + d.usage!.outputTokens, 0);
  const models = [...new Set(committed.map((d) => d.model).filter((m): m is string => m !== undefined))];
  const costs = models.map((model) => {
    const own = committed.filter((d) => d.model === model);
    const cost = (d: EvaluatedDocument) => tokenCostUsd(model, d.usage!.inputTokens, d.usage!.outputTokens, batch);
    return own.every((d) => cost(d) !== null) ? own.reduce((sum, d) => sum + cost(d)!, 0) : null;
  });
  return {
    inputTokens,
    outputTokens,
    costUsd: costs.length > 0 && costs.every((c) => c !== null) ? costs.reduce((a, b) => a! + b!, 0) : null,
    model: models.length === 1 ? models[0]! : models.length === 0 ? null : models.join(', '),
    inputTokensPerDocument: committed.length > 0 ? Math.round(inputTokens / committed.length) : null,
    outputTokensPerDocument: committed.length > 0 ? Math.round(outputTokens / committed.length) : null,
  };
}

/** Everything a report is built from. */
export interface ReportInputs {
  release: Release;
  lane: EvalLane;
  provider: string;
  seed: number;
  generatedAt: Date;
  documents: readonly EvaluatedDocument[];
  operations: OperationsFigures;
  distributions: Distributions;
}

/** Builds the report of one evaluation run (without a baseline; see `compareWithBaseline`). */
export function buildEvalReport(inputs: ReportInputs): EvalReport {
  const scores = inputs.documents.map((doc) =>
    scoreDocument({ schemaVersion: doc.schemaVersion, expected: doc.expected, expectedOutcome: doc.expectedOutcome, state: doc.state, result: doc.result }),
  );
  return {
    release: releaseStamp(inputs.release),
    lane: inputs.lane,
    provider: inputs.provider,
    seed: inputs.seed,
    generatedAt: inputs.generatedAt.toISOString(),
    overall: accuracyOf(scores),
    buckets: bucketsOf(inputs.documents, scores),
    tokens: tokensOf(inputs.documents, inputs.lane === 'batch'),
    operations: inputs.operations,
    distributions: inputs.distributions,
  };
}
