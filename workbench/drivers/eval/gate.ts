/**
 * The release gate: a candidate's per-field accuracy beside its baseline's, and a verdict. A field
 * regresses when its accuracy drops by more than its tolerance; one regression fails the gate.
 */
import type { BaselineComparison, BucketRegression, EvalReport, FieldComparison } from './report-model.js';

/** How much each field may drop (accuracy points, 0..1) before the gate fails. */
export interface GateTolerance {
  /** For every field without its own entry. */
  default: number;
  /** Per field, keyed `schemaVersion field` (e.g. `invoice@1 currency`). */
  fields?: Readonly<Record<string, number>>;
  /**
   * Buckets (language, length, schema, region) with at least this many documents are gated too, with
   * the same tolerances; smaller ones swing too much on one document to judge. Default 20.
   */
  minBucketDocuments?: number;
}

/** The gate's default: any drop of more than two accuracy points fails, overall and in a bucket of 20 documents or more. */
export const DEFAULT_GATE_TOLERANCE: GateTolerance = { default: 0.02, minBucketDocuments: 20 };

/** Float noise below this never counts as a drop. */
const EPSILON = 1e-9;

function toleranceFor(tolerance: GateTolerance, schemaVersion: string, field: string): number {
  const own = tolerance.fields?.[`${schemaVersion} ${field}`];
  return own ?? tolerance.default;
}

function delta(candidate: number | null, baseline: number | null): number | null {
  return candidate === null || baseline === null ? null : candidate - baseline;
}

type FieldFigure = { schemaVersion: string; field: string; accuracy: number | null; total: number };

const keyOf = (f: { schemaVersion: string; field: string }): string => `${f.schemaVersion} ${f.field}`;

/** Every field of either side, compared. A field the baseline scored and the candidate did not regresses. */
function compareFields(
  candidate: readonly FieldFigure[],
  baseline: readonly FieldFigure[],
  tolerance: GateTolerance,
): (FieldComparison & { documents: number })[] {
  const after = new Map(candidate.map((f) => [keyOf(f), f]));
  const before = new Map(baseline.map((f) => [keyOf(f), f]));
  return [...new Set([...before.keys(), ...after.keys()])].map((k) => {
    const b = before.get(k);
    const c = after.get(k);
    const { schemaVersion, field } = (b ?? c)!;
    const allowed = toleranceFor(tolerance, schemaVersion, field);
    const was = b?.accuracy ?? null;
    const now = c?.accuracy ?? null;
    const regressed = was !== null && (now === null || was - now > allowed + EPSILON);
    return {
      schemaVersion,
      field,
      baseline: was,
      candidate: now,
      delta: delta(now, was),
      tolerance: allowed,
      regressed,
      documents: Math.min(b?.total ?? 0, c?.total ?? 0),
    };
  });
}

/** The fields that regressed inside a bucket both runs scored with at least `minimum` documents. */
function bucketRegressions(candidate: EvalReport, baseline: EvalReport, tolerance: GateTolerance, minimum: number): BucketRegression[] {
  return baseline.buckets.flatMap((b) => {
    const c = candidate.buckets.find((x) => x.dimension === b.dimension && x.bucket === b.bucket);
    if (c === undefined) return [];
    return compareFields(c.fields, b.fields, tolerance)
      .filter((f) => f.regressed && f.documents >= minimum)
      .map((f) => ({ ...f, dimension: b.dimension, bucket: b.bucket }));
  });
}

/**
 * Compares a candidate report with its baseline, field by field (every field of either), overall and
 * in every bucket of at least `minBucketDocuments` documents.
 */
export function compareWithBaseline(candidate: EvalReport, baseline: EvalReport, tolerance: GateTolerance = DEFAULT_GATE_TOLERANCE): BaselineComparison {
  const minBucketDocuments = tolerance.minBucketDocuments ?? DEFAULT_GATE_TOLERANCE.minBucketDocuments ?? 20;
  const fields: FieldComparison[] = compareFields(candidate.overall.fields, baseline.overall.fields, tolerance).map(({ documents: _documents, ...f }) => f);
  const inBuckets = bucketRegressions(candidate, baseline, tolerance, minBucketDocuments);
  const regressions = [
    ...fields.filter((f) => f.regressed).map((f) => `${keyOf(f)}: ${pct(f.baseline)} → ${pct(f.candidate)} (tolerance ${pct(f.tolerance)})`),
    ...inBuckets.map(
      (f) => `${keyOf(f)} [${f.dimension} ${f.bucket}, ${f.documents} documents]: ${pct(f.baseline)} → ${pct(f.candidate)} (tolerance ${pct(f.tolerance)})`,
    ),
  ];
  return {
    baseline: baseline.release,
    fields,
    bucketRegressions: inBuckets,
    minBucketDocuments,
    wholeObject: {
      baseline: baseline.overall.wholeObjectAccuracy,
      candidate: candidate.overall.wholeObjectAccuracy,
      delta: delta(candidate.overall.wholeObjectAccuracy, baseline.overall.wholeObjectAccuracy),
    },
    tokens: {
      baselineInput: baseline.tokens.inputTokens,
      candidateInput: candidate.tokens.inputTokens,
      baselineCostUsd: baseline.tokens.costUsd,
      candidateCostUsd: candidate.tokens.costUsd,
    },
    gate: { passed: regressions.length === 0, regressions },
  };
}

/** An accuracy as a percentage with one decimal, `-` for null. */
export function pct(value: number | null): string {
  return value === null ? '-' : `${(value * 100).toFixed(1)} %`;
}
