/**
 * Shared by the admission tests (`bucket/`, `decisions/`, `drivers/`): the bucket limits they use
 * (6 requests and 6 000 tokens a minute, 100 requests a day) and the clock's start (00:00 UTC).
 */
import assert from 'node:assert/strict';
import { levelsAt } from '../../../lib/admission/bucket/token-bucket.js';
import type { BucketLevels, BucketLimits, BucketState } from '../../../lib/admission/model/bucket.js';

export const LIMITS: BucketLimits = { requestsPerWindow: 6, tokensPerWindow: 6000, windowMs: 60_000, requestsPerDay: 100, dayMs: 86_400_000 };
export const T0 = Date.parse('2026-01-01T00:00:00Z');

/** What is left of each level of a stored bucket at `at` (default {@link T0}) with `limits` (default {@link LIMITS}). */
export function levelsOf(bucket: BucketState | undefined, limits: BucketLimits = LIMITS, at = T0): BucketLevels {
  assert.ok(bucket, 'a bucket is stored');
  return levelsAt(bucket, limits, at);
}

/**
 * Asserts `actual` is `expected` within floating-point noise (`tolerance`; a level of many tokens a
 * minute, read from a clock in epoch ms, is exact to a few hundredths of a token).
 */
export function assertNear(actual: number, expected: number, message?: string, tolerance = 1e-6): void {
  assert.ok(Math.abs(actual - expected) < tolerance, `${message ?? 'value'}: ${actual}, expected ${expected}`);
}
