/**
 * The release gate: a candidate's per-field accuracy beside its baseline's, and a verdict. A field
 * regresses when its accuracy drops by more than its tolerance; one regression fails the gate.
 */
import type { BaselineComparison, EvalReport, FieldComparison } from './report-model.js';

/** How much each field may drop (accuracy points, 0..1) before the gate fails. */
export interface GateTolerance {
  /** For every field without its own entry. */
  default: number;
  /** Per field, keyed `schemaVersion field` (e.g. `invoice@1 currency`). */
  fields?: Readonly<Record<string, number>>;
}

/** The gate's default: any drop of more than two accuracy points fails. */
export const DEFAULT_GATE_TOLERANCE: GateTolerance = { default: 0.02 };

/** Float noise below this never counts as a drop. */
const EPSILON = 1e-9;

function toleranceFor(tolerance: GateTolerance, schemaVersion: string, field: string): number {
  const own = tolerance.fields?.[`${schemaVersion} ${field}`];
  return own ?? tolerance.default;
}

function delta(candidate: number | null, baseline: number | null): number | null {
  return candidate === null || baseline === null ? null : candidate - baseline;
}

/**
 * Compares a candidate report with its baseline, field by field (every field of either). A field the
 * baseline scored and the candidate did not (no document of that schema committed) regresses too.
 */
export function compareWithBaseline(candidate: EvalReport, baseline: EvalReport, tolerance: GateTolerance = DEFAULT_GATE_TOLERANCE): BaselineComparison {
  const key = (f: { schemaVersion: string; field: string }) => `${f.schemaVersion} ${f.field}`;
  const candidateFields = new Map(candidate.overall.fields.map((f) => [key(f), f]));
  const baselineFields = new Map(baseline.overall.fields.map((f) => [key(f), f]));
  const keys = [...new Set([...baselineFields.keys(), ...candidateFields.keys()])];
  const fields: FieldComparison[] = keys.map((k) => {
    const b = baselineFields.get(k);
    const c = candidateFields.get(k);
    const [schemaVersion, field] = [(b ?? c)!.schemaVersion, (b ?? c)!.field];
    const allowed = toleranceFor(tolerance, schemaVersion, field);
    const before = b?.accuracy ?? null;
    const after = c?.accuracy ?? null;
    const change = delta(after, before);
    const regressed = before !== null && (after === null || before - after > allowed + EPSILON);
    return { schemaVersion, field, baseline: before, candidate: after, delta: change, tolerance: allowed, regressed };
  });
  const regressions = fields
    .filter((f) => f.regressed)
    .map((f) => `${f.schemaVersion} ${f.field}: ${pct(f.baseline)} → ${pct(f.candidate)} (tolerance ${pct(f.tolerance)})`);
  return {
    baseline: baseline.release,
    fields,
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
