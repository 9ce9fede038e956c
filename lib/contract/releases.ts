/**
 * Releases: what produces an extraction, versioned as one thing. A release names, per schema version,
 * the prompt it ships, and the normalizer and scorer versions its evaluation used, so a scorecard that
 * names its release can be reproduced. A release never changes once named; a change is a new release.
 */
import { RatelaneError } from '../platform/errors.js';
import { getExtractionPrompt, knownSchemaVersions } from './schemas/registry.js';

/** One release. */
export interface Release {
  /** The release id, e.g. `2026.11`. */
  id: string;
  /** What changed, for a reader of a scorecard. */
  description: string;
  /** The prompt version per schema version (every registered schema has one). */
  prompts: Readonly<Record<string, string>>;
  /** The version of the normalizer that evaluations of this release compare with. */
  normalizerVersion: string;
  /** The version of the scorer. */
  scorerVersion: string;
}

/** Raised when a release id is not registered, or a release names what is not registered. */
class UnknownReleaseError extends RatelaneError {
  override name = 'UnknownReleaseError';
  readonly kind = 'input' as const;
  readonly retryable = false;
}

const RELEASES: readonly Release[] = [
  {
    id: '2026.11',
    description: 'the current release: invoice-extract@1 and receipt-extract@1',
    prompts: { 'invoice@1': 'invoice-extract@1', 'receipt@1': 'receipt-extract@1' },
    normalizerVersion: 'normalize@1',
    scorerVersion: 'score@1',
  },
  {
    id: '2026.12-rc1',
    description: 'candidate: the shorter invoice-extract@2 (fewer input tokens), receipts unchanged',
    prompts: { 'invoice@1': 'invoice-extract@2', 'receipt@1': 'receipt-extract@1' },
    normalizerVersion: 'normalize@1',
    scorerVersion: 'score@1',
  },
  {
    id: '2026.12-rc2',
    description: 'candidate: invoice-extract@3 (a worked example for slashed dates without a stated convention), receipts unchanged',
    prompts: { 'invoice@1': 'invoice-extract@3', 'receipt@1': 'receipt-extract@1' },
    normalizerVersion: 'normalize@1',
    scorerVersion: 'score@1',
  },
];

/** The release jobs use when nobody names one. */
export const CURRENT_RELEASE = '2026.11';

/** Every registered release id, oldest first. */
export function knownReleases(): string[] {
  return RELEASES.map((release) => release.id);
}

/**
 * Looks up a release.
 * @throws {UnknownReleaseError} when it is not registered
 */
export function getRelease(id: string): Release {
  const release = RELEASES.find((r) => r.id === id);
  if (release === undefined) throw new UnknownReleaseError(`unknown release "${id}"; known: ${knownReleases().join(', ')}`);
  return release;
}

/**
 * The problems of a release against the schema registry: a schema without a prompt, a prompt that is not
 * registered, a schema that is not registered. Empty when the release can run.
 */
export function releaseProblems(release: Release): string[] {
  const problems: string[] = [];
  for (const schemaVersion of knownSchemaVersions()) {
    if (!Object.hasOwn(release.prompts, schemaVersion)) problems.push(`${release.id}: no prompt for ${schemaVersion}`);
  }
  for (const [schemaVersion, promptVersion] of Object.entries(release.prompts)) {
    if (!knownSchemaVersions().includes(schemaVersion)) problems.push(`${release.id}: unknown schema ${schemaVersion}`);
    else if (getExtractionPrompt(schemaVersion, promptVersion) === undefined) problems.push(`${release.id}: ${schemaVersion} has no prompt ${promptVersion}`);
  }
  return problems;
}
