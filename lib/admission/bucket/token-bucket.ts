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
import type { BucketCondition, BucketCost, BucketLevels, BucketLimits, BucketState, BucketUpdate, Flow, Lease, ProviderLimits } from '../model/bucket.js';
import { flowChanges, flowShare, flowStanding } from './flows.js';
import { advanceClock, applyUpdate, CLOCK_SLACK_MS, composeUpdates, EMPTY_BUCKET, UpdateBuilder } from './item-update.js';

/** Verdict of {@link takeFromBucket}. */
export type TakeVerdict =
  | {
      admitted: true;
      /** The bucket as the take leaves it (as cached; the stored one may hold other consumers' takes too). */
      next: BucketState;
      /** The conditional update that takes the call (the quota its condition). */
      update: BucketUpdate | undefined;
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
      /** The state the reservation leaves (its timeline moved on); the input otherwise. */
      next: BucketState;
      /** With `reserve`: the update that reserves the slot. */
      update?: BucketUpdate | undefined;
      /** With `reserveBy`: the slot lies past it, so nothing was reserved here (the caller tries another owner). */
      passedOver?: true | undefined;
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
export function dayEndAt(state: BucketState | undefined, limits: BucketLimits, at: number): number {
  const stored = state?.dayResetAt ?? 0;
  if (stored <= 0) return configuredDailyReset(limits, at);
  if (at < stored) return stored;
  return stored + (Math.floor((at - stored) / limits.dayMs) + 1) * limits.dayMs;
}

/** The share of a window the per-window levels hold (`burstShare`, within 0..1; default 1). */
export const burstShareOf = (limits: BucketLimits): number => Math.min(1, Math.max(0, limits.burstShare ?? 1));

/** What the per-window levels hold at most: a window's requests and tokens times the burst share. */
function bucketCapacity(limits: BucketLimits): { requests: number; tokens: number } {
  const share = burstShareOf(limits);
  return { requests: limits.requestsPerWindow * share, tokens: limits.tokensPerWindow * share };
}

/** How long an empty per-window level takes to fill (ms): its capacity over its rate, the same for both. */
export const holdMs = (limits: BucketLimits): number => burstShareOf(limits) * limits.windowMs;

/** What `need` costs each clock (ms of its level's refill). */
export function costMs(need: BucketCost, limits: BucketLimits): { requests: number; tokens: number; daily: number } {
  return {
    requests: (need.requests * limits.windowMs) / limits.requestsPerWindow,
    tokens: (need.tokens * limits.windowMs) / limits.tokensPerWindow,
    daily: (need.requests * limits.dayMs) / limits.requestsPerDay,
  };
}

/** A level of `capacity` refilling over `fillMs`, full again at `fullAt`, at `t`. */
const levelAt = (capacity: number, fillMs: number, fullAt: number | undefined, t: number): number =>
  capacity - (Math.max(0, (fullAt ?? 0) - t) * capacity) / fillMs;

/** The levels at `t`. */
export function levelsAt(state: BucketState | undefined, limits: BucketLimits, t: number): BucketLevels {
  const capacity = bucketCapacity(limits);
  const hold = holdMs(limits);
  let daily: number;
  if (isFixedDay(limits)) {
    const sameDay = state !== undefined && (state.dayResetAt ?? 0) > t;
    daily = limits.requestsPerDay - (sameDay ? (state.dailyUsed ?? 0) : 0);
  } else daily = levelAt(limits.requestsPerDay, limits.dayMs, state?.dailyFullAt, t);
  return {
    requests: hold > 0 ? levelAt(capacity.requests, hold, state?.requestsFullAt, t) : 0,
    tokens: hold > 0 ? levelAt(capacity.tokens, hold, state?.tokensFullAt, t) : 0,
    daily,
  };
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
  /** A denial moves `reservedUntil` one slot past the returned `retryAt` (its update reserves it). */
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
   * A grant decided on the cached bucket (booked within `bookWithinMs`, or fitting now) still lands when
   * the stored bucket, which other consumers' takes may have moved on, has the call within this many ms
   * (its condition's room): the call is then booked on the stored bucket's slot (see `retimed` in
   * `changes.ts`) instead of its write failing. Never for a flow that yields.
   */
  bookIfStoredMs?: number | undefined;
  /**
   * One start horizon for the calls whose tokens refill within this many ms: such a call books tokens only
   * when it can start by its window less this (as a call of this size must, to end within the window), not
   * later because it is small. Without it, where tokens bind, a backlog of smaller calls keeps the booking
   * window full to its edge, where they still fit and a larger call never does: it is denied at every take
   * while they last. The same for the stored bucket's room (`bookIfStoredMs`). Absent or 0: none.
   */
  tokensHeadroomMs?: number | undefined;
  /**
   * With `reserve`: reserve only a slot at or before this time (epoch ms). A later slot — the timeline stored
   * further ahead than this caller's cache showed, where other callers' reservations piled up — is passed over
   * (`passedOver`, nothing written), and the reservation's write holds only while the stored timeline is no
   * later. Absent: any slot.
   */
  reserveBy?: number | undefined;
  /**
   * Decide as if the flow yielded to none: the call's times on the stored bucket its write landed on (a
   * grant's booking there does not depend on the flows' order, which only said whether to book).
   */
  onStored?: boolean | undefined;
  /**
   * The flow the call belongs to (`flows.ts`): a grant moves its virtual time on, a denial is told its
   * flow's next slot, and a flow served ahead of another active one books nothing. Absent: the bucket's one shared timeline.
   */
  flow?: Flow | undefined;
}

/** The condition every take and reservation carries: the owner is not cooling (a stale cache learns the cooldown from the failed write). */
const notCooling = (u: UpdateBuilder, at: number): UpdateBuilder =>
  u.require({
    any: [
      { field: 'coolUntil', missing: true },
      { field: 'coolUntil', cmp: '<=', value: at },
    ],
  });

/**
 * Takes `cost` from the bucket at `now`, books it a little later (`bookWithinMs`), or says when to
 * come back. The grant's update moves each level's "full again" time on by the call's cost under the
 * condition that the call still fits (within the booking window when booking is allowed); with
 * `reserve`, a denial's update moves the retry timeline one slot past the returned `retryAt`.
 */
export function takeFromBucket(state: BucketState | undefined, limits: BucketLimits, cost: BucketCost, now: number, options: TakeOptions): TakeVerdict {
  const current = state ?? EMPTY_BUCKET;
  const at = now;
  if (current.cooldown && current.cooldown.until > at) {
    return { admitted: false, dueAt: current.cooldown.until, retryAt: current.cooldown.until, limitedBy: 'cooldown', next: current };
  }
  const levels = levelsAt(state, limits, at);
  const fixedDay = isFixedDay(limits);
  const resetAt = fixedDay ? dayEndAt(state, limits, at) : Infinity;
  const need = clampCost(cost, limits);
  const dailyWait =
    need.requests <= 0
      ? 0
      : fixedDay
        ? levels.daily - need.requests >= -EPSILON
          ? 0
          : resetAt - at
        : missingMs(need.requests, levels.daily, limits.requestsPerDay, limits.dayMs);
  // The longest wait binds (the daily one on a tie, then the requests'): scalars, not an array a call.
  let limitedBy: 'requests' | 'tokens' | 'daily' = 'daily';
  let waitMs = dailyWait;
  const requestsWait = need.requests > 0 ? missingMs(need.requests, levels.requests, limits.requestsPerWindow, limits.windowMs) : 0;
  if (requestsWait > waitMs) {
    limitedBy = 'requests';
    waitMs = requestsWait;
  }
  const tokensWait = need.tokens > 0 ? missingMs(need.tokens, levels.tokens, limits.tokensPerWindow, limits.windowMs) : 0;
  if (tokensWait > waitMs) {
    limitedBy = 'tokens';
    waitMs = tokensWait;
  }
  const { flow } = options;
  const standing = flow ? flowStanding(current, flow, at) : undefined;
  const yields = standing?.yields === true && !options.onStored;
  const mayBook = (options.bookWithinMs ?? 0) > 0 && !yields;
  const bookMs = mayBook ? (options.bookWithinMs ?? 0) : 0;
  const spend = costMs(need, limits);
  // What the tokens' clock may book: a call smaller than the headroom (`tokensHeadroomMs`) must start by the
  // window less the headroom, as a call that large must.
  const kept = Math.max(0, (options.tokensHeadroomMs ?? 0) - spend.tokens);
  const tokensBookMs = Math.max(0, bookMs - kept);
  const booking = waitMs > 0 && dailyWait <= 0 && mayBook && waitMs <= bookMs && tokensWait <= tokensBookMs;
  if (waitMs <= 0 || booking) {
    const u = notCooling(new UpdateBuilder(), at);
    const room = holdMs(limits) + (yields ? 0 : Math.max(bookMs, options.bookIfStoredMs ?? 0));
    const tokensRoom = holdMs(limits) + (yields ? 0 : Math.max(tokensBookMs, (options.bookIfStoredMs ?? 0) - kept));
    // A clock cached less than one request slot behind the present moves on by ADD (see `advanceClock`).
    const near = limits.windowMs / limits.requestsPerWindow;
    if (need.requests > 0) advanceClock(u, 'requestsFullAt', state?.requestsFullAt, at, spend.requests, 0, at + room - spend.requests, near);
    if (need.tokens > 0) advanceClock(u, 'tokensFullAt', state?.tokensFullAt, at, spend.tokens, 0, at + tokensRoom - spend.tokens, near);
    if (need.requests > 0) takeDaily(u, state, limits, need.requests, at, resetAt, spend.daily);
    if (flow && standing) flowChanges(u, current, flow, standing.kept, { served: slotMs(need, limits) / flowShare(current, flow, at) }, at);
    const update = u.build();
    return { admitted: true, startAt: at + Math.max(0, waitMs), update, next: update ? applyUpdate(state, update) : current };
  }
  const dueAt = at + waitMs;
  // The next free slot: after the slots already promised (to this flow), and in a day whose quota is not all promised.
  const promisedUntil = standing ? standing.until : current.reservedUntil;
  const promised = promisedUntil > at ? promisedUntil : 0;
  let slot = Math.max(dueAt, promised);
  let promise: { daily: number; dayEnd: number; added: boolean } | undefined;
  if (fixedDay && need.requests > 0 && slot >= resetAt) {
    // A later day: it starts whole, less what is already promised to slots in it.
    let dayEnd = resetAt + (Math.floor((slot - resetAt) / limits.dayMs) + 1) * limits.dayMs;
    let already = (current.reservedDayEnd ?? 0) === dayEnd ? (current.reservedDaily ?? 0) : 0;
    if (already + need.requests > limits.requestsPerDay + EPSILON) {
      slot = dayEnd;
      dayEnd += limits.dayMs;
      already = 0;
    }
    promise = { daily: already + need.requests, dayEnd, added: already > 0 };
    // A spent day ends with nothing called until its reset: the next day starts with its per-window
    // levels refilled, so its first window's calls go at its start together, the rest one refill apart.
    if (limitedBy === 'daily') slot = Math.max(dueAt, burstSlot(state, limits, need, at, dayEnd - limits.dayMs, promise.daily));
  }
  if (!options.reserve) return { admitted: false, dueAt, retryAt: slot, limitedBy, next: current };
  if (options.reserveBy !== undefined && slot > options.reserveBy) return { admitted: false, dueAt, retryAt: slot, limitedBy, next: current, passedOver: true };
  // A timeline moves on by one call's refill over its flow's share of the flows with promised slots.
  const inc = slotMs(need, limits, limitedBy === 'daily') / (flow ? flowShare(current, flow, slot) : 1);
  const u = notCooling(new UpdateBuilder(), at);
  // Only while the call still does not fit: a stale cache that denies it learns the stored levels instead.
  u.require(stillRefused(limitedBy, state, limits, need, at, limitedBy === 'tokens' ? tokensBookMs : bookMs, resetAt));
  const own = flow && standing?.kept;
  const field = own ? (`flow:${flow.id}:until` as const) : 'reservedUntil';
  const cached = own ? current.flows?.[flow.id]?.until : state?.reservedUntil;
  // Past what is promised: the timeline moves from the slot; else on from where it is.
  advanceClock(u, field, cached, slot > promised ? slot : dueAt, inc, 0, options.reserveBy);
  if (own) flowChanges(u, current, flow, true, {}, at);
  if (promise) {
    if (promise.added) {
      u.add('reservedDaily', need.requests);
      u.require({ field: 'reservedDayEnd', cmp: '=', value: promise.dayEnd });
      u.require({ field: 'reservedDaily', cmp: '<=', value: limits.requestsPerDay - need.requests + EPSILON });
    } else {
      u.set('reservedDaily', need.requests).set('reservedDayEnd', promise.dayEnd);
      u.require({
        any: [
          { field: 'reservedDayEnd', missing: true },
          { field: 'reservedDayEnd', cmp: '<>', value: promise.dayEnd },
        ],
      });
    }
  }
  const update = u.build();
  return { admitted: false, dueAt, retryAt: slot, limitedBy, next: update ? applyUpdate(state, update) : current, update };
}

/** The condition that the stored `level` still refuses a call of `need` at `at` (booked within `bookMs`), as it did the cached one. */
function stillRefused(
  level: 'requests' | 'tokens' | 'daily',
  state: BucketState | undefined,
  limits: BucketLimits,
  need: BucketCost,
  at: number,
  bookMs: number,
  dayEnd: number,
): BucketCondition {
  const inc = costMs(need, limits);
  const edge = at - CLOCK_SLACK_MS;
  if (level === 'requests') return { field: 'requestsFullAt', cmp: '>', value: edge + holdMs(limits) + bookMs - inc.requests };
  if (level === 'tokens') return { field: 'tokensFullAt', cmp: '>', value: edge + holdMs(limits) + bookMs - inc.tokens };
  if (!isFixedDay(limits)) return { field: 'dailyFullAt', cmp: '>', value: edge + limits.dayMs - inc.daily };
  // A day stored as ending later than the cached one (a provider's reset) refuses too.
  return state?.dayResetAt === dayEnd
    ? {
        all: [
          { field: 'dayResetAt', cmp: '=', value: dayEnd },
          { field: 'dailyUsed', cmp: '>', value: limits.requestsPerDay - need.requests + EPSILON },
        ],
      }
    : { field: 'dayResetAt', cmp: '>', value: at };
}

/**
 * The daily level's part of a take of `requests` at `at` (in the fixed day ending `dayEnd`): counted in
 * the day as stored, or the day started — under the condition that the stored day is the same and
 * holds them (or has ended); a continuous day's clock moves on by `incMs` like the per-window levels'.
 */
function takeDaily(u: UpdateBuilder, state: BucketState | undefined, limits: BucketLimits, requests: number, at: number, dayEnd: number, incMs: number): void {
  if (!isFixedDay(limits)) {
    advanceClock(u, 'dailyFullAt', state?.dailyFullAt, at, incMs, 0, at + limits.dayMs - incMs);
    return;
  }
  if ((state?.dayResetAt ?? 0) === dayEnd) {
    u.add('dailyUsed', requests);
    u.require({ field: 'dayResetAt', cmp: '=', value: dayEnd });
    u.require({ field: 'dailyUsed', cmp: '<=', value: limits.requestsPerDay - requests + EPSILON });
  } else {
    u.set('dayResetAt', dayEnd).set('dailyUsed', requests);
    u.require({
      any: [
        { field: 'dayResetAt', missing: true },
        { field: 'dayResetAt', cmp: '<=', value: at },
      ],
    });
  }
}

/**
 * The slot of the `nth` call (counting this one) promised to the day starting at `dayStart`, no call
 * made before it: the per-window levels refill until then (full, unless `dayStart` is too near), and
 * the calls they hold go at `dayStart`; each further call one refill later.
 */
function burstSlot(state: BucketState | undefined, limits: BucketLimits, need: BucketCost, at: number, dayStart: number, nth: number): number {
  const fullInMs = Math.max(0, (state?.requestsFullAt ?? 0) - at, (state?.tokensFullAt ?? 0) - at);
  // A full bucket holds `burstShare` of a window's refill.
  const heldMs = holdMs(limits) - Math.max(0, fullInMs - (dayStart - at));
  return dayStart + Math.max(0, nth * slotMs(need, limits) - heldMs);
}

/** How long until `level` holds `amount`, refilling `perPeriod` per `periodMs` (ms). */
function missingMs(amount: number, level: number, perPeriod: number, periodMs: number): number {
  const missing = amount - level;
  return missing <= EPSILON ? 0 : (missing * periodMs) / perPeriod;
}

/**
 * Corrects the token level after the call by `deltaTokens` (real usage minus the estimate taken;
 * negative gives tokens back): its clock moves by the tokens' refill time, unconditionally (a level
 * given back past full is full; the next take starts its clock from the present).
 */
export function adjustTokens(limits: BucketLimits, deltaTokens: number): BucketUpdate | undefined {
  return new UpdateBuilder().add('tokensFullAt', (deltaTokens * limits.windowMs) / limits.tokensPerWindow).build();
}

/** What a rate cut leaves of the share of its configured rates the owner had then. */
const RATE_CUT_FACTOR = 0.75;
/** The least share a rate cut leaves. */
const RATE_CUT_FLOOR = 0.25;
/** How much of its configured rates a cut owner gets back per window (a cut to 0.75 is whole again after 5). */
export const RATE_CUT_RECOVERY_PER_WINDOW = 0.05;
/** A rate limit cuts the owner's rates when another came at most this many windows before it (one alone is a blip). */
export const RATE_CUT_AFTER_WINDOWS = 3;

/**
 * The share of its configured rates the owner's bucket admits at `now`: 1, or after a rate cut what the cut
 * left, recovering by {@link RATE_CUT_RECOVERY_PER_WINDOW} a window until whole.
 */
export function rateShareAt(state: BucketState | undefined, limits: BucketLimits, now: number): number {
  if (state?.rateCut === undefined || state.rateCutAt === undefined) return 1;
  return Math.min(1, state.rateCut + (RATE_CUT_RECOVERY_PER_WINDOW * Math.max(0, now - state.rateCutAt)) / limits.windowMs);
}

/**
 * `limits` with its per-window rates (and so its bursts) as the bucket admits them at `now`: at the share
 * a rate cut left ({@link rateShareAt}), and no higher than the owner's figures the provider stated
 * ({@link statedLimitsUpdate}) at the bucket's {@link BucketLimits.ownerShare}.
 */
export function ratedLimits(limits: BucketLimits, state: BucketState | undefined, now: number): BucketLimits {
  const share = rateShareAt(state, limits, now);
  const own = limits.ownerShare ?? 1;
  const requests = Math.min(limits.requestsPerWindow * share, (state?.statedRequests ?? Infinity) * own);
  const tokens = Math.min(limits.tokensPerWindow * share, (state?.statedTokens ?? Infinity) * own);
  return requests >= limits.requestsPerWindow && tokens >= limits.tokensPerWindow
    ? limits
    : { ...limits, requestsPerWindow: requests, tokensPerWindow: tokens };
}

/**
 * The update recording the owner's per-window limits a provider stated on an answer (`stated`): a figure
 * below the owner's configured one (this bucket's limit over its {@link BucketLimits.ownerShare}) is kept
 * for {@link ratedLimits}; a figure at or above it removes one kept before (the provider raised it, or the
 * config was lowered); a figure not stated changes nothing. No condition: the last answer's figure
 * stands. `undefined` when the bucket holds what it would write.
 */
export function statedLimitsUpdate(state: BucketState | undefined, limits: BucketLimits, stated: ProviderLimits): BucketUpdate | undefined {
  const own = limits.ownerShare ?? 1;
  const u = new UpdateBuilder();
  const record = (field: 'statedRequests' | 'statedTokens', told: number | undefined, configured: number) => {
    if (told === undefined || !(Number.isFinite(told) && told > 0)) return;
    const kept = told < configured / own ? told : undefined;
    if (kept === state?.[field]) return;
    if (kept === undefined) u.remove(field);
    else u.set(field, kept);
  };
  record('statedRequests', stated.requestsPerWindow, limits.requestsPerWindow);
  record('statedTokens', stated.tokensPerWindow, limits.tokensPerWindow);
  return u.build();
}

/**
 * The update recording a rate limit the provider answered at `now`, its requests back at `until`: the
 * provider's count, not the bucket's, said the owner was spent — another client of the same quota, or
 * limits lower than configured. The bucket then holds one call at `until` and refills from there (its
 * requests clock set forward, under the condition that it stood earlier: it never moves back). When another
 * rate limit came within {@link RATE_CUT_AFTER_WINDOWS} windows and no cut within the last window, the
 * owner's rates are also cut by {@link RATE_CUT_FACTOR} (at most one cut a window, under that condition),
 * to recover slowly: a lane whose calls keep meeting a provider that allows fewer settles below it instead
 * of meeting it with a refused call, which the provider may count too, at every refill.
 */
export function rateLimitedUpdate(state: BucketState | undefined, limits: BucketLimits, now: number, until: number): BucketUpdate {
  const cut = new UpdateBuilder().set('rateLimitedAt', now);
  const again = (state?.rateLimitedAt ?? -Infinity) >= now - RATE_CUT_AFTER_WINDOWS * limits.windowMs;
  if (again && (state?.rateCutAt ?? -Infinity) <= now - limits.windowMs) {
    cut.set('rateCut', Math.max(RATE_CUT_FLOOR, rateShareAt(state, limits, now) * RATE_CUT_FACTOR)).set('rateCutAt', now);
    cut.require({
      any: [
        { field: 'rateCutAt', missing: true },
        { field: 'rateCutAt', cmp: '<=', value: now - limits.windowMs },
      ],
    });
  }
  const recorded = cut.build()!;
  const rated = ratedLimits(limits, applyUpdate(state, recorded), until);
  // (Less the clocks' slack: one whole call at `until` whatever the rounding of a cut rate.)
  const target = until + Math.max(0, holdMs(rated) - rated.windowMs / rated.requestsPerWindow) - CLOCK_SLACK_MS;
  if ((state?.requestsFullAt ?? -Infinity) >= target) return recorded;
  const spent = new UpdateBuilder().set('requestsFullAt', target).require({
    any: [
      { field: 'requestsFullAt', missing: true },
      { field: 'requestsFullAt', cmp: '<', value: target },
    ],
  });
  return composeUpdates(recorded, spent.build())!;
}

/**
 * The update setting the owner's cooldown to `cooldown` (`undefined` when one ending as late is
 * cached; the condition checks the stored one too). A `quota_exhausted` cooldown also says when the
 * provider's day resets (the reset it stated, or when the policy checks again): with a fixed daily
 * window the day is re-aligned to end then, so the quota comes back whole at the provider's reset
 * and every `dayMs` after it.
 */
export function cooldownUpdate(
  state: BucketState | undefined,
  limits: BucketLimits,
  cooldown: NonNullable<BucketState['cooldown']>,
  now: number,
): UpdateBuilder | undefined {
  if (state?.cooldown && state.cooldown.until >= cooldown.until) return undefined;
  const u = new UpdateBuilder().set('coolUntil', cooldown.until).set('coolReason', cooldown.reason);
  u.require({
    any: [
      { field: 'coolUntil', missing: true },
      { field: 'coolUntil', cmp: '<', value: cooldown.until },
    ],
  });
  if (cooldown.reason === 'quota_exhausted' && isFixedDay(limits) && cooldown.until > now) {
    const used = (state?.dayResetAt ?? 0) > now ? (state?.dailyUsed ?? 0) : 0;
    u.set('dayResetAt', cooldown.until).set('dailyUsed', used).set('reservedDaily', 0).set('reservedDayEnd', 0);
  }
  return u;
}
