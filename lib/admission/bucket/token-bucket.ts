/**
 * Token-bucket arithmetic of admission, pure (no clock, no SDK): one bucket per quota owner with
 * three levels — requests and tokens per window (the provider's "minute", scaled locally), refilling
 * continuously at `limit / window` capped at `limit`, and requests per day.
 *
 * The daily level is by default a **fixed window**, as providers' daily quotas are: it comes back
 * whole at the daily reset (`dayResetAt`: the next configured reset — 00:00 UTC plus
 * `dailyResetOffsetMs` — or the reset a provider stated with a quota error, see {@link withCooldown})
 * and repeats every `dayMs` from there. `dailyWindow: 'continuous'` keeps a bucket refilling at
 * `limit / day` instead (OpenAI's RPD behaves so).
 *
 * A take spends 1 request and the call's estimated tokens from every level at once, or nothing. A
 * denied take may **reserve** the next free slot: the bucket remembers until when refills are promised
 * (`reservedUntil`), so callers denied at the same moment are told to come back one after another at
 * the refill rate, instead of all at once (a herd that would be denied again). Slots promised after
 * the current day's reset also count against that future day's quota (`reservedDaily` for the day
 * ending at `reservedDayEnd`): once a day's quota is promised, the next slot is the day after.
 */
import type { BucketCost, BucketLevels, BucketLimits, BucketState, Flow, Lease } from '../model/bucket.js';
import { flowShare, flowStanding, withFlow } from './flows.js';

/** Verdict of {@link takeFromBucket}. */
export type TakeVerdict =
  | {
      admitted: true;
      next: BucketState;
      /**
       * When the call may start (epoch ms): the take's clock for a call that fits now; for a
       * **booking** (see {@link TakeOptions.bookWithinMs}) the time its cost has refilled, which the
       * caller waits for before calling.
       */
      startAt: number;
      /** Calls the same write set aside for the taking instance (`lease.ts`; set by the pool's take, never here). */
      lease?: Lease | undefined;
    }
  | {
      admitted: false;
      /** When the levels alone would allow the call (epoch ms; `Infinity` when they never can). */
      dueAt: number;
      /**
       * When this caller should come back: the bucket's next free slot (after the slots already
       * reserved, and in a day whose quota is not yet all promised), or the cooldown's end. The same
       * with or without `reserve`, so a caller can compare owners before reserving on one.
       */
      retryAt: number;
      /** Which level refused, or the owner's cooldown. */
      limitedBy: 'requests' | 'tokens' | 'daily' | 'cooldown' | 'probing';
      /** The state to write when reserving (`reservedUntil` moved on); equal to the input otherwise. */
      next: BucketState;
    };

/** Whether the daily level is a fixed window (the default), not a continuous refill. */
export const isFixedDay = (limits: BucketLimits): boolean => limits.dailyWindow !== 'continuous';

/** The first configured daily reset strictly after `at` (fixed daily window). */
export function configuredDailyReset(limits: BucketLimits, at: number): number {
  const offset = limits.dailyResetOffsetMs ?? 0;
  return (Math.floor((at - offset) / limits.dayMs) + 1) * limits.dayMs + offset;
}

/**
 * The end of the fixed day `at` falls in, as `state` knows it: its `dayResetAt` when `at` is before
 * it, else the following resets every `dayMs` from there; without one, the configured reset.
 */
function dailyResetAt(state: BucketState, limits: BucketLimits, at: number): number {
  const known = state.dayResetAt !== undefined && state.dayResetAt > 0 ? state.dayResetAt : configuredDailyReset(limits, state.updatedAt);
  if (at < known) return known;
  return known + (Math.floor((at - known) / limits.dayMs) + 1) * limits.dayMs;
}

/** The share of a window the per-window levels hold (`burstShare`, within 0..1; default 1). */
export const burstShareOf = (limits: BucketLimits): number => Math.min(1, Math.max(0, limits.burstShare ?? 1));

/** What the per-window levels hold at most: a window's requests and tokens times the burst share. */
export function bucketCapacity(limits: BucketLimits): { requests: number; tokens: number } {
  const share = burstShareOf(limits);
  return { requests: limits.requestsPerWindow * share, tokens: limits.tokensPerWindow * share };
}

/** The bucket a quota owner starts with: every level full. */
export function fullBucket(limits: BucketLimits, now: number): BucketState {
  const capacity = bucketCapacity(limits);
  return {
    levels: { requests: capacity.requests, tokens: capacity.tokens, daily: limits.requestsPerDay },
    updatedAt: now,
    reservedUntil: 0,
    version: 0,
    ...(isFixedDay(limits) ? { dayResetAt: configuredDailyReset(limits, now) } : {}),
  };
}

/** `level` refilled over `elapsedMs` at `perPeriod` per `periodMs`, up to `capacity`. */
const refill = (level: number, perPeriod: number, elapsedMs: number, periodMs: number, capacity = perPeriod): number =>
  Math.min(capacity, level + (elapsedMs * perPeriod) / periodMs);

/** The levels at `now` (refilled since `updatedAt`; a clock behind `updatedAt` refills nothing). */
export function levelsAt(state: BucketState, limits: BucketLimits, now: number): BucketLevels {
  const elapsed = Math.max(0, now - state.updatedAt);
  let daily: number;
  if (isFixedDay(limits)) {
    const resetAt = dailyResetAt(state, limits, state.updatedAt);
    daily = now >= resetAt ? limits.requestsPerDay : Math.min(limits.requestsPerDay, state.levels.daily);
  } else {
    daily = refill(state.levels.daily, limits.requestsPerDay, elapsed, limits.dayMs);
  }
  const capacity = bucketCapacity(limits);
  return {
    requests: refill(state.levels.requests, limits.requestsPerWindow, elapsed, limits.windowMs, capacity.requests),
    tokens: refill(state.levels.tokens, limits.tokensPerWindow, elapsed, limits.windowMs, capacity.tokens),
    daily,
  };
}

/** `state` brought forward to `at`: levels refilled, the fixed day moved on. Version unchanged. */
export function advance(state: BucketState, limits: BucketLimits, at: number): BucketState {
  const levels = levelsAt(state, limits, at);
  return isFixedDay(limits) ? { ...state, levels, updatedAt: at, dayResetAt: dailyResetAt(state, limits, at) } : { ...state, levels, updatedAt: at };
}

/** A cost the bucket can ever satisfy: a call larger than a whole level asks for the whole level. */
export function clampCost(cost: BucketCost, limits: BucketLimits): BucketCost {
  const capacity = bucketCapacity(limits);
  return {
    requests: Math.min(Math.max(0, cost.requests), capacity.requests, limits.requestsPerDay),
    tokens: Math.min(Math.max(0, cost.tokens), capacity.tokens),
  };
}

/**
 * Milliseconds one call's refill takes: the spacing between reserved slots. A continuous daily level
 * counts once it is what binds (`dailyBinds`); a fixed day is accounted by whole days instead (see
 * `reservedDaily`).
 */
function slotMs(cost: BucketCost, limits: BucketLimits, dailyBinds = false): number {
  const minute = Math.max((cost.requests * limits.windowMs) / limits.requestsPerWindow, (cost.tokens * limits.windowMs) / limits.tokensPerWindow);
  return dailyBinds && !isFixedDay(limits) ? Math.max(minute, (cost.requests * limits.dayMs) / limits.requestsPerDay) : minute;
}

const EPSILON = 1e-9;

/** How {@link takeFromBucket} treats a call that does not fit now. */
export interface TakeOptions {
  /** A denial moves `reservedUntil` one slot past the returned `retryAt` (the caller writes `next` back). */
  reserve: boolean;
  /**
   * Book the call instead of denying it when the per-window levels have its cost within this many ms
   * (absent or 0: never book): the cost is taken now, the levels go into debt, and the verdict's
   * `startAt` is when they would have held it — a provider bucket refilling at the same rate holds it
   * then too, since every earlier booking calls at its own `startAt`. Later takes see the debt and
   * book behind it. Never for a spent daily quota or a cooling owner (those waits are long).
   */
  bookWithinMs?: number | undefined;
  /**
   * The flow the call belongs to (`flows.ts`): a grant moves its virtual time on, a denial is told its
   * flow's next slot, and a flow served ahead of another active one books nothing. Absent: the bucket's one shared timeline.
   */
  flow?: Flow | undefined;
}

/**
 * Takes `cost` from the bucket at `now`, books it a little later (`bookWithinMs`), or says when to
 * come back. With `reserve`, a denial also moves `reservedUntil` one slot past the returned `retryAt`.
 */
export function takeFromBucket(state: BucketState | undefined, limits: BucketLimits, cost: BucketCost, now: number, options: TakeOptions): TakeVerdict {
  const current = state ?? fullBucket(limits, now);
  const at = Math.max(now, current.updatedAt);
  if (current.cooldown && current.cooldown.until > at) {
    return { admitted: false, dueAt: current.cooldown.until, retryAt: current.cooldown.until, limitedBy: 'cooldown', next: current };
  }
  const moved = advance(current, limits, at);
  const { levels } = moved;
  const fixedDay = isFixedDay(limits);
  const resetAt = fixedDay ? moved.dayResetAt! : Infinity;
  const need = clampCost(cost, limits);
  const dailyWait =
    need.requests <= 0
      ? 0
      : fixedDay
        ? levels.daily - need.requests >= -EPSILON
          ? 0
          : resetAt - at
        : missingMs(need.requests, levels.daily, limits.requestsPerDay, limits.dayMs);
  const waits: ['requests' | 'tokens' | 'daily', number][] = [
    ['daily', dailyWait],
    ['requests', need.requests > 0 ? missingMs(need.requests, levels.requests, limits.requestsPerWindow, limits.windowMs) : 0],
    ['tokens', need.tokens > 0 ? missingMs(need.tokens, levels.tokens, limits.tokensPerWindow, limits.windowMs) : 0],
  ];
  const worst = waits.reduce((a, b) => (b[1] > a[1] ? b : a));
  const { flow } = options;
  const standing = flow ? flowStanding(moved, flow, at) : undefined;
  const booking = worst[1] > 0 && dailyWait <= 0 && worst[1] <= (options.bookWithinMs ?? 0) && !standing?.yields;
  if (worst[1] <= 0 || booking) {
    const startAt = at + Math.max(0, worst[1]);
    return {
      admitted: true,
      startAt,
      next: {
        ...moved,
        levels: { requests: levels.requests - need.requests, tokens: levels.tokens - need.tokens, daily: levels.daily - need.requests },
        ...(flow && standing ? { flows: withFlow(moved, flow, standing.kept, { served: slotMs(need, limits) / flowShare(moved, flow, at) }, at) } : {}),
        version: current.version + 1,
      },
    };
  }
  const dueAt = at + worst[1];
  // The next free slot: after the slots already promised (to this flow), and in a day whose quota is not all promised.
  const promisedUntil = standing ? standing.until : current.reservedUntil;
  let slot = Math.max(dueAt, promisedUntil > at ? promisedUntil : 0);
  let promised = { daily: moved.reservedDaily ?? 0, dayEnd: moved.reservedDayEnd ?? 0 };
  if (fixedDay && need.requests > 0 && slot >= resetAt) {
    // A later day: it starts whole, less what is already promised to slots in it.
    let dayEnd = resetAt + (Math.floor((slot - resetAt) / limits.dayMs) + 1) * limits.dayMs;
    let already = promised.dayEnd === dayEnd ? promised.daily : 0;
    if (already + need.requests > limits.requestsPerDay + EPSILON) {
      slot = dayEnd;
      dayEnd += limits.dayMs;
      already = 0;
    }
    promised = { daily: already + need.requests, dayEnd };
    // A spent day ends with nothing called until its reset: the next day starts with its per-window
    // levels refilled, so its first window's calls go at its start together, the rest one refill apart.
    if (worst[0] === 'daily') slot = Math.max(dueAt, burstSlot(moved, limits, need, at, dayEnd - limits.dayMs, promised.daily));
  }
  // A flow's timeline moves on by one call's refill over its share of the flows with promised slots.
  const until = slot + slotMs(need, limits, worst[0] === 'daily') / (flow ? flowShare(moved, flow, slot) : 1);
  const timeline =
    flow && standing?.kept ? { reservedUntil: current.reservedUntil, flows: withFlow(moved, flow, true, { until }, at) } : { reservedUntil: until };
  const next: BucketState = options.reserve
    ? {
        ...moved,
        ...timeline,
        ...(fixedDay ? { reservedDaily: promised.daily, reservedDayEnd: promised.dayEnd } : {}),
        version: current.version + 1,
      }
    : current;
  return { admitted: false, dueAt, retryAt: slot, limitedBy: worst[0], next };
}

/**
 * The slot of the `nth` call (counting this one) promised to the day starting at `dayStart`, no call
 * made before it: the per-window levels refill until then (full, unless `dayStart` is too near), and
 * the calls they hold go at `dayStart`; each further call one refill later.
 */
function burstSlot(moved: BucketState, limits: BucketLimits, need: BucketCost, at: number, dayStart: number, nth: number): number {
  const capacity = bucketCapacity(limits);
  const fullInMs = Math.max(
    missingMs(capacity.requests, moved.levels.requests, limits.requestsPerWindow, limits.windowMs),
    missingMs(capacity.tokens, moved.levels.tokens, limits.tokensPerWindow, limits.windowMs),
  );
  // A full bucket holds `burstShare` of a window's refill.
  const heldMs = burstShareOf(limits) * limits.windowMs - Math.max(0, fullInMs - (dayStart - at));
  return dayStart + Math.max(0, nth * slotMs(need, limits) - heldMs);
}

/** How long until `level` holds `amount`, refilling `perPeriod` per `periodMs` (ms). */
function missingMs(amount: number, level: number, perPeriod: number, periodMs: number): number {
  const missing = amount - level;
  return missing <= EPSILON ? 0 : (missing * periodMs) / perPeriod;
}

/**
 * Corrects the token level after the call by `deltaTokens` (real usage minus the estimate taken;
 * negative gives tokens back). The level may go into debt down to minus one window's tokens.
 */
export function adjustTokens(state: BucketState, limits: BucketLimits, deltaTokens: number, now: number): BucketState {
  const moved = advance(state, limits, Math.max(now, state.updatedAt));
  const tokens = Math.max(-limits.tokensPerWindow, Math.min(bucketCapacity(limits).tokens, moved.levels.tokens - deltaTokens));
  return { ...moved, levels: { ...moved.levels, tokens }, version: state.version + 1 };
}

/**
 * The bucket with the owner's cooldown set to `cooldown`, unless one ending later is there. A
 * `quota_exhausted` cooldown also says when the provider's day resets (the reset it stated, or when
 * the policy checks again): with a fixed daily window the day is re-aligned to end then, so the
 * quota comes back whole at the provider's reset and every `dayMs` after it.
 */
export function withCooldown(state: BucketState | undefined, limits: BucketLimits, cooldown: NonNullable<BucketState['cooldown']>, now: number): BucketState {
  const current = state ?? fullBucket(limits, now);
  if (current.cooldown && current.cooldown.until >= cooldown.until) return current;
  if (cooldown.reason === 'quota_exhausted' && isFixedDay(limits)) {
    const at = Math.max(now, current.updatedAt);
    if (cooldown.until > at) {
      const moved = advance(current, limits, at);
      return { ...moved, dayResetAt: cooldown.until, reservedDaily: 0, reservedDayEnd: 0, cooldown, version: current.version + 1 };
    }
  }
  return { ...current, cooldown, version: current.version + 1 };
}
