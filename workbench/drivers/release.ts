/**
 * The release a driver's run ran with, as its report carries it: the release id, its prompts per
 * schema, its normalizer and scorer (`npm run local` prints it above the scorecard, `npm run eval`
 * above the per-field table).
 */
import type { Release } from '../../lib/contract/releases.js';

/** The release that produced a report, and what it is made of. */
export interface ReleaseStamp {
  id: string;
  description: string;
  prompts: Record<string, string>;
  normalizerVersion: string;
  scorerVersion: string;
}

/** The stamp a report carries of the release that produced it. */
export function releaseStamp(release: Release): ReleaseStamp {
  return {
    id: release.id,
    description: release.description,
    prompts: { ...release.prompts },
    normalizerVersion: release.normalizerVersion,
    scorerVersion: release.scorerVersion,
  };
}

/** The release line: id, prompts per schema, normalizer and scorer. */
export function releaseLine(report: { release: ReleaseStamp }): string {
  const r = report.release;
  const prompts = Object.entries(r.prompts)
    .map(([schema, prompt]) => `${schema}: ${prompt}`)
    .join(', ');
  return `release ${r.id} (${prompts}; ${r.normalizerVersion}, ${r.scorerVersion})`;
}
