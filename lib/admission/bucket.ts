/**
 * Token-bucket arithmetic of admission, pure (no clock, no SDK): one bucket per quota owner with
 * three levels — requests and tokens per window (the provider's "minute", scaled locally) and
 * requests per day — each refilling continuously at `limit / window`, capped at `limit`.
 *
 * A take spends 1 request and the call's estimated tokens from every level at once, or nothing. A
 * denied take may **reserve** the next free slot: the bucket remembers until when refills are promised
 * (`reservedUntil`), so callers denied at the same moment are told to come back one after another at
 * the refill rate, instead of all at once (a herd that would be denied again).
 */

/** Capacities and refill windows of one bucket (already reduced by any safety margin). */
export interface BucketLimits {
  /** Requests per window (bucket capacity). */
  requestsPerWindow: number;
  /** Tokens per window (bucket capacity). */
  tokensPerWindow: number;
  /** Length of the window in ms (60 000 in AWS; the scaled minute locally). */
  windowMs: number;
  /** Requests per day (capacity of the daily level). */
  requestsPerDay: number;
  /** Length of the day in ms (86 400 000 in AWS; 1440 scaled minutes locally). */
  dayMs: number;
}

/** How much is left of each level at `updatedAt`. May be negative after a reconcile (debt). */
export interface BucketLevels {
  requests: number;
  tokens: number;
  daily: number;
}

/** A bucket as stored. */
export interface BucketState {
  levels: BucketLevels;
  /** Epoch ms the levels were computed at. */
  updatedAt: number;
  /** Epoch ms until which refills are promised to callers told to come back (0: none). */
  reservedUntil: number;
  /** Incremented by every write; the conditional update checks it. */
  version: number;
  /**
   * The quota owner's cooldown (daily quota, billing, a rate limit of the owner), also kept here so
   * a consumer whose cached cooldowns are stale still learns it on its next take: every cooldown
   * write moves `version`, so the stale take's conditional update fails and returns this.
   */
  cooldown?: { until: number; reason: 'rate_limit' | 'quota_exhausted' | 'billing' } | undefined;
}

/** What one call spends. */
export interface BucketCost {
  requests: number;
  tokens: number;
}

/** Verdict of {@link takeFromBucket}. */
export type TakeVerdict =
  | { admitted: true; next: BucketState }
  | {
      admitted: false;
      /** When the levels alone would allow the call (epoch ms; `Infinity` when they never can). */
      dueAt: number;
      /** When this caller should come back (its reserved slot, or `dueAt`). */
      retryAt: number;
      /** Which level refused, or the owner's cooldown. */
      limitedBy: 'requests' | 'tokens' | 'daily' | 'cooldown';
      /** The state to write when reserving (`reservedUntil` moved on); equal to the input otherwise. */
      next: BucketState;
    };

/** The bucket a quota owner starts with: every level full. */
export function fullBucket(limits: BucketLimits, now: number): BucketState {
  return {
    levels: { requests: limits.requestsPerWindow, tokens: limits.tokensPerWindow, daily: limits.requestsPerDay },
    updatedAt: now,
    reservedUntil: 0,
    version: 0,
  };
}

const refill = (level: number, capacity: number, elapsedMs: number, periodMs: number): number =>
  Math.min(capacity, level + (elapsedMs * capacity) / periodMs);

/** The levels at `now` (refilled since `updatedAt`; a clock behind `updatedAt` refills nothing). */
export function levelsAt(state: BucketState, limits: BucketLimits, now: number): BucketLevels {
  const elapsed = Math.max(0, now - state.updatedAt);
  return {
    requests: refill(state.levels.requests, limits.requestsPerWindow, elapsed, limits.windowMs),
    tokens: refill(state.levels.tokens, limits.tokensPerWindow, elapsed, limits.windowMs),
    daily: refill(state.levels.daily, limits.requestsPerDay, elapsed, limits.dayMs),
  };
}

/** A cost the bucket can ever satisfy: a call larger than a whole level asks for the whole level. */
export function clampCost(cost: BucketCost, limits: BucketLimits): BucketCost {
  return {
    requests: Math.min(Math.max(0, cost.requests), limits.requestsPerWindow, limits.requestsPerDay),
    tokens: Math.min(Math.max(0, cost.tokens), limits.tokensPerWindow),
  };
}

/** Milliseconds one call's refill takes (the spacing between reserved slots); daily excluded. */
export function slotMs(cost: BucketCost, limits: BucketLimits): number {
  return Math.max((cost.requests * limits.windowMs) / limits.requestsPerWindow, (cost.tokens * limits.windowMs) / limits.tokensPerWindow);
}

const EPSILON = 1e-9;

/**
 * Takes `cost` from the bucket at `now`, or says when to come back. With `reserve`, a denial also
 * moves `reservedUntil` one slot past the returned `retryAt` (the caller writes `next` back).
 */
export function takeFromBucket(state: BucketState | undefined, limits: BucketLimits, cost: BucketCost, now: number, options: { reserve: boolean }): TakeVerdict {
  const current = state ?? fullBucket(limits, now);
  const at = Math.max(now, current.updatedAt);
  if (current.cooldown && current.cooldown.until > at) {
    return { admitted: false, dueAt: current.cooldown.until, retryAt: current.cooldown.until, limitedBy: 'cooldown', next: current };
  }
  const levels = levelsAt(current, limits, at);
  const need = clampCost(cost, limits);
  const waits: ['requests' | 'tokens' | 'daily', number][] = [
    ['daily', need.requests > 0 ? missingMs(need.requests, levels.daily, limits.requestsPerDay, limits.dayMs) : 0],
    ['requests', need.requests > 0 ? missingMs(need.requests, levels.requests, limits.requestsPerWindow, limits.windowMs) : 0],
    ['tokens', need.tokens > 0 ? missingMs(need.tokens, levels.tokens, limits.tokensPerWindow, limits.windowMs) : 0],
  ];
  const worst = waits.reduce((a, b) => (b[1] > a[1] ? b : a));
  if (worst[1] <= 0) {
    return {
      admitted: true,
      next: {
        levels: { requests: levels.requests - need.requests, tokens: levels.tokens - need.tokens, daily: levels.daily - need.requests },
        updatedAt: at,
        reservedUntil: current.reservedUntil,
        version: current.version + 1,
        ...(current.cooldown ? { cooldown: current.cooldown } : {}),
      },
    };
  }
  const dueAt = at + worst[1];
  const retryAt = Math.max(dueAt, current.reservedUntil > at ? current.reservedUntil : 0);
  const next: BucketState = options.reserve
    ? { ...current, levels, updatedAt: at, reservedUntil: retryAt + slotMs(need, limits), version: current.version + 1 }
    : current;
  return { admitted: false, dueAt, retryAt, limitedBy: worst[0], next };
}

function missingMs(amount: number, level: number, capacity: number, periodMs: number): number {
  const missing = amount - level;
  return missing <= EPSILON ? 0 : (missing * periodMs) / capacity;
}

/**
 * Corrects the token level after the call by `deltaTokens` (real usage minus the estimate taken;
 * negative gives tokens back). The level may go into debt down to minus one window's tokens.
 */
export function adjustTokens(state: BucketState, limits: BucketLimits, deltaTokens: number, now: number): BucketState {
  const at = Math.max(now, state.updatedAt);
  const levels = levelsAt(state, limits, at);
  const tokens = Math.max(-limits.tokensPerWindow, Math.min(limits.tokensPerWindow, levels.tokens - deltaTokens));
  return { ...state, levels: { ...levels, tokens }, updatedAt: at, version: state.version + 1 };
}

/** The bucket with the owner's cooldown set to `cooldown`, unless one ending later is there. */
export function withCooldown(state: BucketState | undefined, limits: BucketLimits, cooldown: NonNullable<BucketState['cooldown']>, now: number): BucketState {
  const current = state ?? fullBucket(limits, now);
  if (current.cooldown && current.cooldown.until >= cooldown.until) return current;
  return { ...current, cooldown, version: current.version + 1 };
}
