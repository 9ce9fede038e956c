/**
 * The drain curve of one bench strategy (committed jobs over time) and the quota line it is drawn
 * against (the most jobs the keys' per-minute request limits let commit by each moment). Pure.
 *
 * Time 0 is the first submission (every job of a strategy is stamped with the submission's start),
 * the same origin as the report's drain time (`drainMs`: first submission to last commit).
 *
 * The quota line, per lane with `jobs` jobs and a combined limit of `perMinute` requests per scaled
 * minute (distinct quota owners × requests per minute, as `quotaBoundMinimumMs` counts it), summed
 * over the lanes:
 *
 *     quota(t)       = Σ lanes min(jobs, perMinute × t / minuteMs)
 *     burstAware(t)  = Σ lanes min(jobs, perMinute × (1 + t / minuteMs))
 *
 * `quota` reaches every job at exactly `quotaBoundMinimumMs` (the slowest lane's jobs / perMinute);
 * `burstAware` starts with one minute's requests at once (the provider's buckets start full) and
 * reaches every job at `burstAwareMinimumMs`. Both assume one model call per job and no processing
 * time, so a real drain is at best slightly right of (below) them.
 */
import { type LaneSet, quotaOwnerCount } from '../../../lib/config/lanes.js';
import type { BenchStrategyId } from './strategies.js';

/** A lane's share of the job set and its combined request limit. */
export interface LaneQuota {
  lane: string;
  jobs: number;
  /** Distinct quota owners × requests per scaled minute. */
  requestsPerMinute: number;
}

/** One strategy's drain: when each job committed, and the lanes' quotas. */
export interface DrainCurve {
  strategyId: BenchStrategyId;
  label: string;
  submitted: number;
  /** Milliseconds after the first submission at which each submitted job first committed, ascending. */
  commitOffsetsMs: number[];
  lanes: LaneQuota[];
  /** Length of a provider "minute" (ms). */
  minuteMs: number;
}

/** A point of a line: `y` jobs at `x` ms. */
export interface CurvePoint {
  x: number;
  y: number;
}

/** Per lane with submitted jobs: its jobs and its combined per-minute request limit. */
function laneQuotas(lanes: LaneSet, submitted: readonly { lane: string }[]): LaneQuota[] {
  return Object.values(lanes).flatMap((lane) => {
    const jobs = submitted.filter((j) => j.lane === lane.name).length;
    const requestsPerMinute = quotaOwnerCount(lane) * lane.provider.limits.requestsPerMinute;
    return jobs > 0 ? [{ lane: lane.name, jobs, requestsPerMinute }] : [];
  });
}

/**
 * The drain curve of a strategy from its results: each submitted job's first commit, relative to the
 * first submission (results of other jobs are ignored; a job committed twice counts once).
 */
export function drainCurveOf(
  strategy: { id: BenchStrategyId; label: string },
  submitted: readonly { jobId: string; lane: string; createdAt: number }[],
  results: readonly { jobId: string; committedAt: string | number }[],
  lanes: LaneSet,
  minuteMs: number,
): DrainCurve {
  const origin = submitted.length > 0 ? Math.min(...submitted.map((j) => j.createdAt)) : 0;
  const ids = new Set(submitted.map((j) => j.jobId));
  const first = new Map<string, number>();
  for (const r of results) {
    if (!ids.has(r.jobId)) continue;
    const at = typeof r.committedAt === 'number' ? r.committedAt : Date.parse(r.committedAt);
    if (!Number.isFinite(at)) continue;
    first.set(r.jobId, Math.min(first.get(r.jobId) ?? Number.POSITIVE_INFINITY, at));
  }
  return {
    strategyId: strategy.id,
    label: strategy.label,
    submitted: submitted.length,
    commitOffsetsMs: [...first.values()].map((at) => Math.max(0, at - origin)).sort((a, b) => a - b),
    lanes: laneQuotas(lanes, submitted),
    minuteMs,
  };
}

/** The most jobs the lanes' limits let commit by `t` ms (see the module's doc; `burst`: buckets start full). */
export function quotaAt(lanes: readonly LaneQuota[], minuteMs: number, t: number, burst = false): number {
  const minutes = Math.max(0, t) / minuteMs + (burst ? 1 : 0);
  return lanes.reduce((sum, l) => sum + Math.min(l.jobs, l.requestsPerMinute * minutes), 0);
}

/**
 * The quota line as the points where its slope changes (it is linear between them): t = 0, each
 * lane's finish, and `untilMs` (held flat at every job once all lanes finished).
 */
export function quotaLine(lanes: readonly LaneQuota[], minuteMs: number, untilMs: number, burst = false): CurvePoint[] {
  const finishes = lanes.map((l) => Math.max(0, (l.jobs / l.requestsPerMinute - (burst ? 1 : 0)) * minuteMs));
  const xs = [...new Set([0, ...finishes, Math.max(untilMs, ...finishes)])].sort((a, b) => a - b);
  return xs.map((x) => ({ x: Math.round(x), y: Math.round(quotaAt(lanes, minuteMs, x, burst) * 100) / 100 }));
}

/**
 * The committed-over-time steps of a curve: (0, 0), then (t, n) at each commit (the n-th commit at
 * t); at most `maxPoints` points (evenly thinned, the last commit always kept).
 */
export function committedSteps(commitOffsetsMs: readonly number[], maxPoints = 1000): CurvePoint[] {
  const all = commitOffsetsMs.map((x, i) => ({ x: Math.round(x), y: i + 1 }));
  if (all.length <= maxPoints) return [{ x: 0, y: 0 }, ...all];
  const step = all.length / maxPoints;
  const kept = Array.from({ length: maxPoints - 1 }, (_, i) => all[Math.floor(i * step)]!);
  return [{ x: 0, y: 0 }, ...kept, all.at(-1)!];
}
