/**
 * Shared by the admission tests (`bucket/`, `decisions/`, `drivers/`): the bucket limits they use
 * (6 requests and 6 000 tokens a minute, 100 requests a day) and the clock's start (00:00 UTC).
 */
import type { BucketLimits } from '../../../lib/admission/model/bucket.js';

export const LIMITS: BucketLimits = { requestsPerWindow: 6, tokensPerWindow: 6000, windowMs: 60_000, requestsPerDay: 100, dayMs: 86_400_000 };
export const T0 = Date.parse('2026-01-01T00:00:00Z');
