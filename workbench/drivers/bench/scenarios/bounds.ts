/**
 * The bounds of the bench scenarios: a perfect scheduler's drain time on each scenario's quota, per
 * lane, the slowest lane's being the scenario's bound. Pure: no clock, no I/O.
 *
 * Every bound is burst-aware, as the baseline's is: the provider's per-minute buckets start full, so
 * one minute's requests (or tokens) go at once, then the rest at the limit. With `n` units to send
 * and a lane limit of `perMinute` (quota owners with credit × the per-key limit), that is
 * `max(0, n − perMinute) / perMinute` minutes.
 */
import { burstMinutes } from '../../lanes.js';

/** One lane's share of a scenario: its jobs, what they cost, and the limits of its keys with credit. */
export interface LaneLoad {
  lane: string;
  jobs: number;
  /** Tokens the jobs cost the provider's TPM budget, one successful call each. */
  tokens: number;
  /** Quota owners with credit (an owner out of credit serves nothing). */
  owners: number;
  /** Per owner: requests per minute, tokens per minute, requests per (fixed, scaled) day. */
  rpm: number;
  tpm: number;
  daily: number;
}

/** A bound for one lane: its value, and the figures it came from. */
interface LaneBound {
  lane: string;
  ms: number;
  /** How it was computed, with the numbers, e.g. "tokens: (161410 − 18200) / 18200 min = 7.87 min". */
  detail: string;
}

/** A scenario's bound: the slowest lane's, with how it was computed. */
export interface ScenarioBound {
  ms: number;
  /** The formula in words (the same for every lane). */
  formula: string;
  perLane: LaneBound[];
}

const fixed = (v: number, digits = 2): string => (Number.isInteger(v) ? String(v) : v.toFixed(digits));

/** The slowest lane's bound. */
function slowest(formula: string, perLane: LaneBound[]): ScenarioBound {
  return { ms: perLane.reduce((m, l) => Math.max(m, l.ms), 0), formula, perLane };
}

/**
 * Requests per minute only (the baseline's burst-aware minimum), on the owners with credit:
 * `max(0, jobs − owners × rpm) / (owners × rpm)` minutes. `key-out-of-credit` uses it with the dead
 * key left out, so a dead key may cost the lane nothing but the call that found it out.
 */
export function requestBound(loads: readonly LaneLoad[], minuteMs: number): ScenarioBound {
  return slowest(
    'requests: max(0, jobs - owners x RPM) / (owners x RPM) minutes, counting only the quota owners with credit; the slowest lane',
    loads.map((l) => {
      const perMinute = l.owners * l.rpm;
      const minutes = burstMinutes(l.jobs, perMinute);
      return { lane: l.lane, ms: minutes * minuteMs, detail: `${l.jobs} jobs, ${l.owners} owner(s) x ${l.rpm} rpm: ${fixed(minutes)} min` };
    }),
  );
}

/**
 * Tokens per minute or requests per minute, whichever takes longer, per lane: tokens
 * `max(0, T − owners × TPM) / (owners × TPM)` minutes, `T` the tokens of the lane's jobs (one
 * successful call each); requests as {@link requestBound}.
 */
export function tokenBound(loads: readonly LaneLoad[], minuteMs: number): ScenarioBound {
  return slowest(
    "max(tokens: max(0, T - owners x TPM) / (owners x TPM), requests: max(0, jobs - owners x RPM) / (owners x RPM)) minutes, T the tokens of the lane's jobs at one successful call each; the slowest lane",
    loads.map((l) => {
      const byTokens = burstMinutes(l.tokens, l.owners * l.tpm);
      const byRequests = burstMinutes(l.jobs, l.owners * l.rpm);
      return {
        lane: l.lane,
        ms: Math.max(byTokens, byRequests) * minuteMs,
        detail: `${l.jobs} jobs, ${l.tokens} tokens, ${l.owners} owner(s) x ${l.tpm} tpm / ${l.rpm} rpm: tokens ${fixed(byTokens)} min, requests ${fixed(byRequests)} min`,
      };
    }),
  );
}

/**
 * Requests per minute and a fixed daily quota that resets `firstResetMs` after the start and every
 * `dayMs` after that: a perfect scheduler sends at the per-minute limit (the bucket starting full)
 * until the day's quota is spent, waits for the reset, and goes on (the bucket refilled meanwhile).
 * The first day's quota is whole at the start. Jobs are counted as a fluid, like the other bounds.
 */
export function dailyBound(loads: readonly LaneLoad[], minuteMs: number, firstResetMs: number, dayMs: number): ScenarioBound {
  const first = firstResetAfterStart(firstResetMs, dayMs);
  return slowest(
    "requests at owners x RPM per minute (the first minute's at once) while the day's owners x RPD last, then the wait for the daily reset, and on; the slowest lane",
    loads.map((l) => {
      const { ms, resets } = dailyDrain(l.jobs, l.owners * l.rpm, l.owners * l.daily, minuteMs, first, dayMs);
      return {
        lane: l.lane,
        ms,
        detail: `${l.jobs} jobs, ${l.owners} owner(s) x ${l.rpm} rpm / ${l.daily} per day, first reset after ${fixed(first / minuteMs)} min: ${fixed(ms / minuteMs)} min (the day's quota ran out ${resets} time(s))`,
      };
    }),
  );
}

/** The first reset strictly after the start (ms): `firstResetMs` moved by whole days into `(0, dayMs]`. */
function firstResetAfterStart(firstResetMs: number, dayMs: number): number {
  const r = firstResetMs % dayMs;
  return r > 0 ? r : r + dayMs;
}

/** The drain time (ms) of `jobs` at `perMinute` with `perDay` per fixed day (see {@link dailyBound}). */
export function dailyDrainMs(jobs: number, perMinute: number, perDay: number, minuteMs: number, firstResetMs: number, dayMs: number): number {
  return dailyDrain(jobs, perMinute, perDay, minuteMs, firstResetAfterStart(firstResetMs, dayMs), dayMs).ms;
}

/** {@link dailyDrainMs}, and how many times the day's quota ran out and the rest waited for a reset; `firstReset` in `(0, dayMs]`. */
function dailyDrain(jobs: number, perMinute: number, perDay: number, minuteMs: number, firstReset: number, dayMs: number): { ms: number; resets: number } {
  if (jobs <= 0) return { ms: 0, resets: 0 };
  if (perMinute <= 0 || perDay <= 0) return { ms: Number.POSITIVE_INFINITY, resets: 0 };
  const rate = perMinute / minuteMs;
  let t = 0;
  let level = perMinute;
  let left = jobs;
  let dayEnd = firstReset;
  let waited = 0;
  for (let day = 0; day < 100_000; day++) {
    const n = Math.min(left, perDay);
    // `level` at once from the bucket, the rest at the refill rate.
    const finish = t + Math.max(0, n - level) / rate;
    if (finish <= dayEnd) {
      left -= n;
      if (left <= 1e-9) return { ms: finish, resets: waited };
      // The day's quota is spent: the bucket refills until the reset, which the rest waits for.
      level = Math.min(perMinute, Math.max(0, level - n) + (dayEnd - finish) * rate);
      waited += 1;
    } else {
      // The day ends first: what the bucket let through by then is sent, the rest goes on the new day.
      left -= level + (dayEnd - t) * rate;
      level = 0;
    }
    t = dayEnd;
    dayEnd += dayMs;
  }
  return { ms: Number.POSITIVE_INFINITY, resets: 0 };
}

/**
 * The time later jobs need at their flow's weighted `share` of each lane's quota, per lane
 * `jobs / (owners × RPM × share)` minutes: no burst (the backlog they join keeps the buckets empty).
 */
export function fairShareBound(loads: readonly LaneLoad[], share: number, minuteMs: number): ScenarioBound {
  return slowest(
    "jobs / (owners x RPM x share) minutes, share the flow's weight over the backlogged flows' weights; the slowest lane",
    loads.map((l) => {
      const minutes = l.jobs / (l.owners * l.rpm * share);
      return {
        lane: l.lane,
        ms: minutes * minuteMs,
        detail: `${l.jobs} jobs, ${l.owners} owner(s) x ${l.rpm} rpm x share ${fixed(share)}: ${fixed(minutes)} min`,
      };
    }),
  );
}
