/**
 * The key pool's decisions, once, for every driver: which key takes a call (or when to come back,
 * and whether the whole lane is out), how a call's real usage is settled, how a cooldown is recorded,
 * how many keys a cooldown leaves. docs/admission.md tells the story; the bucket
 * arithmetic in `bucket/` and the key choice in `choice.ts` are what this file decides with.
 *
 * Every decision is a generator function that `yield`s the rate-state operations it needs
 * ({@link StoreOp}) and is resumed with their answers, and keeps what one pool instance remembers in
 * a {@link PoolState}. Two drivers run it:
 * - `SharedKeyPool` (`drivers/shared-key-pool.ts`) awaits each operation against the lane's
 *   `RateStateStore` (DynamoDB), and serializes the bucket updates of one quota owner within the
 *   instance (the `lock` / `unlock` operations);
 * - the virtual-time simulator (`workbench/sim/sim-key-pool.ts`) answers each operation at once from an
 *   in-memory table (`runSync` in `drivers/sync.ts`), counting the DynamoDB request units it would cost.
 *
 * What a pool instance remembers: the cooldowns read, for `cooldownCacheMs` (then read ahead, beside
 * the decisions that still use them; its first read runs beside its first decision:
 * `cooldown-cache.ts`; a 429's follow-ups, `keysLeft` and `laneOut`, read them fresh); the last
 * bucket state seen per quota owner (a take is one conditional write whose condition is the quota:
 * on a stale cache it still lands while the quota allows; one the quota refuses returns the current
 * bucket, and for a window after that the instance reads before its next write of it: `bucket-update.ts`); the round-robin cursor; the calls leased to it
 * (`bucket/lease.ts`); and the output-token estimate, learned from the usage each call reports (see
 * `AdmissionSettings.outputTokenEstimate`).
 */
import { AWS_LIMITS } from '../../config/schema.js';
import { RatelaneError } from '../../platform/errors.js';
import type { Cooldown, LaneOutReason } from '../../policy/index.js';
import { coolChange, rateLimitedChange, releaseChange, settleChange, takeChange, takeWrites, type TakeArg } from '../bucket/changes.js';
import { isProbe } from '../bucket/first-calls.js';
import { givenBackWhileValid, type LeaseTerms, leaseValidityMs, spendLease } from '../bucket/lease.js';
import { clampCost, costMs, isFixedDay, levelsAt, ratedLimits, statedLimitsUpdate, type TakeVerdict } from '../bucket/token-bucket.js';
import { learnOutputEstimate } from '../config/settings.js';
import type { BucketCost, BucketState, Flow, Lease, ProviderLimits } from '../model/bucket.js';
import { EMPTY_SNAPSHOT, RECHECKED, type CooldownSnapshot, type CoolOutcome, type KeyRef } from '../model/cooldowns.js';
import { update } from './bucket-update.js';
import { blockerOf, chooseKeys, cooldownRecordOf, keysLeftAfter, laneCapacity, type DailyOut, type LaneCapacity } from './choice.js';
import { cooldowns, cooldownsOrBeside, firstCooldowns, learnCooldown as learn } from './cooldown-cache.js';
import {
  beginDecision,
  bucketIdOf,
  learnBucket,
  learnedSince,
  noteAsks,
  ownersOf,
  SETTLE_CARRY_SHARE,
  staleSinceProof,
  type PoolConfig,
  type PoolOps,
  type PoolState,
} from './pool-state.js';

/**
 * A key whose owner's daily quota is spent counts as out (for the lane's capacity and pause) only when
 * its reset is at least this many windows away: a minute in AWS, the shortest pause its resume
 * schedule takes; a nearer reset is one deferral.
 */
const DAILY_PAUSE_MIN_WINDOWS = 1;

/** A group's denial reserves beside the group's other writes only when that costs it at most this share of a window (`joinGroup`). */
const JOIN_MAX_WINDOW_SHARE = 0.01;

/** The largest call whose start horizon smaller calls share (`tokensHeadroom`), as a share of the booking window. */
const HEADROOM_WINDOW_SHARE = 0.25;

/**
 * A denial passes over at most this many owners whose stored retry timeline stands more than a window past the
 * next owner's known slot (`TakeOptions.reserveBy`) before it reserves wherever it stands: a write each.
 */
const RESERVE_PASSES = 3;

/** The longest an SQS message can be delayed (ms): a slot further away than this cannot be waited for with one delay. */
const MAX_DELAY_MS = AWS_LIMITS.maxDelaySeconds * 1000;

/** One call to admit: its estimated input tokens, how far ahead it may be booked (ms), and its flow. */
export interface CallRequest {
  estimatedTokens: number;
  bookWithinMs?: number | undefined;
  /** The flow it belongs to (`bucket/flows.ts`); absent: the buckets' one shared timeline. */
  flow?: Flow | undefined;
  /**
   * The call's group (`group-take.ts`): the bucket items it already writes, and its size. A denial reserves
   * on one of those items when its slot there is at most the group's calls later than the earliest (and at
   * most a hundredth of a window), so a group's denials cost one write, not one per owner.
   */
  beside?: { items: { has(id: string): boolean }; calls: number } | undefined;
}

/** The call may go ahead with `key` (at `index` in the config's keys); `cost` is what was taken. */
interface CoreGrant<K extends KeyRef> {
  admitted: true;
  key: K;
  index: number;
  cost: BucketCost;
  /** When the call may start (epoch ms): the decision's clock, or a booked slot a little later (see {@link acquireOps}). */
  startAt: number;
  /** Some owners are out for a long reset (this call may have spent the last day's quota: share 0); absent while all are usable. */
  capacity?: LaneCapacity | undefined;
}

/** No key can take the call now. */
interface CoreDenial {
  admitted: false;
  /** When to come back (epoch ms, not before the decision's clock). */
  retryAt: number;
  /** For logs: why (cooling, no budget, contention). */
  detail: string;
  /** Every key is out for a long reset (daily quota, billing): until the earliest; else `null`. */
  laneOut: LaneOut | null;
  /** As {@link CoreGrant.capacity} (share 0 with {@link laneOut}). */
  capacity?: LaneCapacity | undefined;
  /** Set when some owner was passed over only because its first call is in flight: waiting for that answer may admit. */
  probing?: true;
}

/** Every key of the lane is out for a long reset, until `until` (epoch ms). */
export interface LaneOut {
  until: number;
  reason: LaneOutReason;
}

/** The lane out when `capacity` says none of its owners is usable. */
export function laneOutOf(capacity: LaneCapacity | null | undefined): LaneOut | null {
  return capacity?.share === 0 && capacity.reason !== 'booked_ahead' ? { until: capacity.until, reason: capacity.reason } : null;
}

/**
 * A denial's capacity (`capacity`: as known otherwise) when its slot (`retryAt`) lies more than a window
 * ahead while the lane is not out — more than a provider minute of the quota is already promised: if the
 * mapping holds more records (`AdmissionSettings.mappingRecords`) than the quota keeps busy — at the
 * lane's call rate (the rates its owners' buckets admit, for the tokens this instance's calls use, learned
 * from their answers, where tokens bind), those it starts within their booking window (at least
 * `mappingWindowMs`) and those in their calls, as long as this instance's calls last — the others are
 * received only to be re-sent: deferred to their slots, and every 900 s while a slot is further. The lane
 * is then `booked_ahead`: limited to that share (of the owners usable) for 900 s, no longer than the owners
 * out it was worked out without stay out, so a share worked out from calls that have since grown slower
 * holds the lane back no longer than that (the next far denial limits it again, with what its instance has
 * learned). Nothing before the instance has seen a call answer.
 */
function bookedAhead(
  config: PoolConfig,
  state: PoolState,
  capacity: LaneCapacity | undefined,
  { retryAt, now, bookWithinMs, cost }: { retryAt: number; now: number; bookWithinMs: number; cost: BucketCost },
): LaneCapacity | undefined {
  const held = config.settings.mappingRecords;
  const callMs = state.callMsEstimate;
  const { limits } = config;
  if (!(held > 0) || callMs === undefined || retryAt - now <= limits.windowMs || capacity?.share === 0) return capacity;
  // A call's tokens as this instance's calls used them: one large document's denial does not shrink the share.
  const tokens = state.callTokensEstimate ?? cost.tokens;
  // At the rates each owner's bucket admits as this instance last saw it (a rate cut, limits the provider stated).
  let callsPerWindow = 0;
  for (const owner of ownersOf(config.keys)) {
    const rated = ratedLimits(limits, state.buckets.get(bucketIdOf(config, owner)), now);
    callsPerWindow += Math.min(rated.requestsPerWindow, tokens > 0 ? rated.tokensPerWindow / tokens : Infinity);
  }
  // Every bucket item of every owner: a shard's limits are its share of the owner's.
  const callsPerMs = (config.settings.bucketShards * callsPerWindow) / limits.windowMs;
  // Records fresh from the mapping have the whole booking window: a record denied late in its invocation less.
  const windowMs = Math.max(bookWithinMs, config.settings.mappingWindowMs);
  const share = Math.min(1, (callsPerMs * (windowMs + callMs)) / held) * (capacity?.share ?? 1);
  if (share >= 1) return capacity;
  // For 900 s (the slot near or far: a limit that ended at a near slot would let the mapping pull a burst of
  // records to re-send again), but no longer than the owners out it was worked out without.
  const until = Math.min(now + MAX_DELAY_MS, capacity && capacity.share < 1 ? capacity.until : Infinity);
  return { share, until, reason: 'booked_ahead' };
}

/** An acquire's answer. */
export type CoreAdmission<K extends KeyRef> = CoreGrant<K> | CoreDenial;

/** Raised when an owner's bucket stayed contended while a cooldown was being recorded in it. */
class BucketContendedError extends RatelaneError {
  override name = 'BucketContendedError';
  readonly kind = 'conflict';
  readonly retryable = true;
}

/**
 * Takes `cost` from the owner's bucket, or says when it is next free (reserving that slot with
 * `reserve`). `since`: the decision's number (see `refreshContended`).
 */
function* take(config: PoolConfig, state: PoolState, owner: string, arg: TakeArg, since: number): PoolOps<TakeVerdict | 'contended'> {
  const id = bucketIdOf(config, owner);
  const verdict = yield* takeWithCarry(config, state, id, arg, since);
  if (verdict === 'contended' || verdict.admitted || (verdict.limitedBy !== 'cooldown' && verdict.limitedBy !== 'probing')) return verdict;
  // A cooldown may have been lifted (a person resumed the lane), a probe answered, since this bucket was cached: read it.
  if (learnedSince(state, id, since)) return verdict;
  learnBucket(state, id, (yield { kind: 'readBucket', owner: id }) as BucketState | undefined);
  return yield* takeWithCarry(config, state, id, arg, since);
}

/**
 * One take of bucket item `id`, writing the corrections the instance owes it, and what is left of its
 * lease of it, when the take writes; a lease the take granted is the instance's.
 */
function* takeWithCarry(config: PoolConfig, state: PoolState, id: string, arg: TakeArg, since: number): PoolOps<TakeVerdict | 'contended'> {
  const carried = state.carried.get(id);
  const held = state.leases.get(id);
  // An expired lease is dropped, not given back (`givenBackWhileValid`).
  const rest = givenBackWhileValid(held, config.now());
  if (held && !rest) state.leases.delete(id);
  // `arg` has every field (`takeArg`): the copy keeps its shape.
  const owed = carried || rest ? { ...arg, carried, givenBack: rest } : arg;
  const verdict = yield* update(config, state, id, config.limits, takeChange, owed, since);
  // Written (a grant, a booking or a reservation): the corrections went in with it (or, on a bucket
  // no longer stored, there was nothing left to correct).
  const wrote = verdict !== 'contended' && takeWrites(verdict, arg.reserve);
  if (carried && wrote) state.carried.delete(id);
  if (rest && wrote) state.leases.delete(id);
  if (verdict !== 'contended' && verdict.admitted && verdict.lease) state.leases.set(id, verdict.lease);
  return verdict;
}

/**
 * A take's argument, every field present in one order: a decision makes millions of them in the simulator,
 * and takes of one shape keep the property reads that decide them fast.
 */
function takeArg(
  cost: BucketCost,
  reserve: boolean,
  bookWithinMs: number | undefined,
  bookIfStoredMs: number | undefined,
  probeLeaseMs: number | undefined,
  lease: TakeArg['lease'],
  flow: Flow | undefined,
  tokensHeadroomMs: number | undefined,
  reserveBy: number | undefined,
): TakeArg {
  // The instance's corrections and a lease's rest are set on a copy by `takeWithCarry`.
  return { cost, reserve, bookWithinMs, bookIfStoredMs, probeLeaseMs, lease, flow, tokensHeadroomMs, reserveBy, carried: undefined, givenBack: undefined };
}

/** An owner with budget later, and when its next free slot comes. */
interface Candidate {
  owner: string;
  slotAt: number;
}

/**
 * A key for one call of `estimatedTokens` input tokens (plus the learned output estimate): round
 * robin over the keys that are not cooling, granting the call from this instance's lease of the
 * first owner it holds one of (no write: {@link leasedKey}), else taking it from the first owner's
 * bucket that has budget (with `leasing`, a take on an owner with ample headroom leases a few more
 * calls). When none has, the owner whose slot comes first **books** the call when that slot is at
 * most `bookWithinMs` away (the grant's `startAt`: the caller waits for it in-process), else
 * reserves its next free slot (so callers denied together come back spread over every key's
 * refill), and the denial says when to come back; an owner found cooling at that write (another
 * consumer cooled it) hands over to the next owner. A contended bucket is busy, not out (come back
 * after one request slot). A key out of credit never holds the others' jobs back: its billing
 * re-check bounds a denial's return only while no owner with credit offers a slot. When every key
 * is out for a long reset — cooling for a daily quota or billing, or with its daily quota spent
 * until a reset at least {@link DAILY_PAUSE_MIN_WINDOWS} windows away — the lane is out. An owner
 * not yet proven takes one call at a time (`bucket/first-calls.ts`): while another call probes it,
 * it is passed over, and a denial for that alone says `probing` (its driver may wait for the answer).
 * An instance's first decision runs beside its first cooldown read (`cooldown-cache.ts`): a grant
 * whose key the read shows cooling is given back (its probe; the request it took stays taken, once
 * per instance) and the call decided again, as is a denial made while some key was cooling.
 * `since` (default: a new one): the number of the decision, or of the group it is part of
 * (`beginDecision`); a bucket learned from the table since it began is not read again. `leasing`
 * (default true): false where the take's write is held back (a group's round, `group-take.ts`).
 */
export function* acquireOps<K extends KeyRef>(
  config: PoolConfig<K>,
  state: PoolState,
  request: CallRequest,
  since?: number,
  leasing = true,
): PoolOps<CoreAdmission<K>> {
  const asked = config.now();
  const answer = yield* acquireDecision(config, state, request, since, leasing);
  // A group notes its calls' asks itself.
  if (since === undefined) noteAsks(state, asked, 1, config.settings.leaseCalls);
  // A denial carries the capacity its decision worked out.
  if (!answer.admitted) return answer;
  const capacity = capacityKnown(config, state, config.now());
  return capacity ? { ...answer, capacity } : answer;
}

/**
 * The lane's capacity as this instance knows it at `now` (the cached cooldowns, else `snapshot`, and the
 * buckets its takes found with the day spent: {@link noteDaily}); `undefined` while every owner is usable.
 */
function capacityKnown(config: PoolConfig, state: PoolState, now: number, snapshot: CooldownSnapshot = EMPTY_SNAPSHOT): LaneCapacity | undefined {
  for (const [id, reset] of state.dailySpent) if (reset <= now) state.dailySpent.delete(id);
  return laneCapacity(config.keys, state.cooldowns ?? snapshot, now, dailyOutOf(config, state)) ?? undefined;
}

/**
 * Per quota owner some of whose buckets (its shards, {@link PoolConfig.shardSuffixes}) this instance's takes
 * found with the day spent: the share of them, and the earliest reset. `undefined` when none was.
 */
function dailyOutOf(config: PoolConfig, state: PoolState): Map<string, DailyOut> | undefined {
  if (state.dailySpent.size === 0) return undefined;
  const suffixes = config.shardSuffixes ?? [config.bucketSuffix ?? ''];
  const out = new Map<string, DailyOut>();
  for (const owner of ownersOf(config.keys)) {
    let spent = 0;
    let until = Infinity;
    for (const suffix of suffixes) {
      const reset = state.dailySpent.get(owner + suffix);
      if (reset === undefined) continue;
      spent += 1;
      until = Math.min(until, reset);
    }
    if (spent > 0) out.set(owner, { share: spent / suffixes.length, until });
  }
  return out;
}

/**
 * What a take on `owner` says of its day: spent (until the reset, when at least `pauseMinMs` after
 * `at`) when it refused for the daily level or its grant left less than a call of `need`; not spent
 * when it refused for the minute's levels (the daily one held) or granted with a call left.
 */
function noteDaily(config: PoolConfig, state: PoolState, owner: string, verdict: TakeVerdict, need: BucketCost, at: number, pauseMinMs: number): void {
  let spentUntil: number | undefined;
  if (verdict.admitted) {
    const reset = verdict.next.dayResetAt ?? 0;
    if (isFixedDay(config.limits) && levelsAt(verdict.next, config.limits, at).daily < need.requests && reset > at) spentUntil = reset;
  } else if (verdict.limitedBy === 'daily') spentUntil = verdict.dueAt;
  else if (verdict.limitedBy !== 'requests' && verdict.limitedBy !== 'tokens') return;
  const id = bucketIdOf(config, owner);
  if (spentUntil !== undefined && spentUntil - at >= pauseMinMs) state.dailySpent.set(id, spentUntil);
  else state.dailySpent.delete(id);
}

/**
 * What a take at `now` may lease for this instance: as many calls as the instance asked admission for in
 * a lease's validity before it (`PoolState.asks`), at most `leaseCalls`. A lease that ends unused drops its
 * calls (`givenBackWhileValid`): the bucket holds them as made, where the provider never saw them, and a
 * lane draining a backlog never gets them back. So an instance whose calls come further apart than a lease
 * lasts (calls of seconds, one record per invocation) leases nothing, and one that calls often leases about
 * what it will use.
 */
function leaseTermsFor(config: PoolConfig, state: PoolState, now: number): LeaseTerms | undefined {
  const validityMs = leaseValidityMs(config.limits, config.settings);
  let calls = 0;
  for (const at of state.asks) if (at > now - validityMs) calls += 1;
  calls = Math.min(config.settings.leaseCalls, calls);
  return calls >= 1 ? { calls, validityMs } : undefined;
}

/** {@link acquireOps} without the capacity. */
function* acquireDecision<K extends KeyRef>(
  config: PoolConfig<K>,
  state: PoolState,
  request: CallRequest,
  since: number | undefined,
  leasing: boolean,
): PoolOps<CoreAdmission<K>> {
  const begun = config.now();
  const known = yield* cooldownsOrBeside(config, state);
  const decision = since ?? beginDecision(state);
  const answer = yield* decide(config, state, known ?? EMPTY_SNAPSHOT, request, decision, leasing);
  if (known !== undefined) return answer;
  // Decided beside the instance's first cooldown read (`cooldown-cache.ts`): it stands unless the read
  // shows its key cooling (its take's probe is given back) or, for a denial, any key cooling.
  let snapshot: CooldownSnapshot;
  try {
    snapshot = yield* firstCooldowns(state, begun);
  } catch (error) {
    // The read failed (the table unavailable): no call goes; a probe the take wrote is given back if it can be.
    if (answer.admitted) yield* releaseQuietly(config, state, answer.key.quotaOwner);
    throw error;
  }
  const now = config.now();
  if (answer.admitted) {
    const blocker = blockerOf(answer.key, snapshot, now);
    if (blocker === undefined) return answer;
    yield* releaseOps(config, state, answer.key.quotaOwner);
    if (blocker.scope === 'quota_owner') state.leases.delete(bucketIdOf(config, answer.key.quotaOwner));
  } else if (chooseKeys(config.keys, 0, snapshot, now).cooling.length === 0) return answer;
  return yield* decide(config, state, snapshot, request, decision, leasing);
}

/** {@link releaseOps}, whose own failure gives way to the error being thrown. */
function* releaseQuietly(config: PoolConfig, state: PoolState, owner: string): PoolOps<void> {
  try {
    yield* releaseOps(config, state, owner);
  } catch {
    // The probe frees itself when its lease ends (`bucket/first-calls.ts`).
  }
}

/**
 * The first of `free` (in round-robin order) whose owner's bucket item (`bucketIdOf`) this instance
 * holds a lease of with one call of `need` left at `now`, that call spent from it; else `undefined`.
 * A loop, not a callback: a decision creates no function objects (the simulator runs millions).
 */
function leasedKey<T extends { key: KeyRef }>(
  config: Pick<PoolConfig, 'bucketSuffix'>,
  leases: ReadonlyMap<string, Lease>,
  free: readonly T[],
  need: BucketCost,
  now: number,
): T | undefined {
  if (leases.size === 0) return undefined;
  for (const candidate of free) {
    if (spendLease(leases.get(bucketIdOf(config, candidate.key.quotaOwner)), need, now)) return candidate;
  }
  return undefined;
}

/**
 * When jobs denied for cooling owners come back: at the first rate or quota cooldown's end, and — only
 * while no owner with credit has a slot to offer — at the billing re-check.
 */
class CoolingRetry {
  private ends = Infinity;
  private recheck = Infinity;

  /** `recheckAt`: the billing re-check (epoch ms) that bounds a return while no owner with credit offers a slot. */
  constructor(private readonly recheckAt: number) {}

  /** Notes one cooling owner. */
  note(until: number, reason: string): void {
    if (RECHECKED.has(reason)) this.recheck = Math.min(this.recheck, until, this.recheckAt);
    else this.ends = Math.min(this.ends, until);
  }

  /** The earliest return; `working`: an owner with credit has a slot, so a dead key's re-check does not cap it. */
  at(working: boolean): number {
    return working ? this.ends : Math.min(this.ends, this.recheck);
  }
}

/**
 * Moves first, among `candidates` sorted by slot, the earliest whose bucket item the call's group already
 * writes ({@link CallRequest.beside}) if its slot is at most the group's calls of `need` after the first's, and
 * at most a hundredth of a window: where a lane's slots are coarse the group's denials spread over the owners.
 */
function joinGroup(config: PoolConfig, candidates: Candidate[], beside: NonNullable<CallRequest['beside']>, need: BucketCost): void {
  const first = candidates[0];
  if (first === undefined || candidates.length === 1 || beside.items.has(bucketIdOf(config, first.owner))) return;
  const spacing = costMs(need, config.limits);
  const withinMs = Math.min(beside.calls * Math.max(spacing.requests, spacing.tokens), config.limits.windowMs * JOIN_MAX_WINDOW_SHARE);
  for (let at = 1; at < candidates.length && candidates[at]!.slotAt - first.slotAt <= withinMs; at++) {
    if (!beside.items.has(bucketIdOf(config, candidates[at]!.owner))) continue;
    candidates.unshift(...candidates.splice(at, 1));
    return;
  }
}

/**
 * Moves the free keys whose owner this instance knows proven before the others, keeping the round robin's
 * order within each (nothing moves unless it knows both kinds). While an owner is not known proven, another
 * consumer's first call is likely probing it (the lane's start, a return from billing): a take from a cache
 * learned before that probe's take races it and fails, one on an owner known proven lands.
 */
function provenFirst(config: PoolConfig, state: PoolState, free: { key: KeyRef }[]): void {
  const isProven = (f: { key: KeyRef }): boolean => state.buckets.get(bucketIdOf(config, f.key.quotaOwner))?.proven === true;
  const known = free.filter(isProven);
  if (known.length === 0 || known.length === free.length) return;
  free.splice(0, free.length, ...known, ...free.filter((f) => !isProven(f)));
}

/**
 * The start horizon a call of `need` (its cost as the bucket can hold it) shares with larger calls
 * (`TakeOptions.tokensHeadroomMs`): the tokens' refill of the largest call this instance asked for within the
 * last window, among those of at most {@link HEADROOM_WINDOW_SHARE} of a booking window (a record's window
 * fresh from the mapping, or this call's) — the calls it can share a horizon with without taking much of the
 * others' window. Where tokens bind and a backlog's smaller calls keep each bucket booked to the window's
 * edge, a larger call would otherwise be denied at every take, as long as they last (`docs/admission.md`).
 * Notes this call's own size first.
 */
function tokensHeadroom(config: PoolConfig, state: PoolState, need: BucketCost, bookWithinMs: number, now: number): number {
  const own = costMs(need, config.limits).tokens;
  const cap = HEADROOM_WINDOW_SHARE * Math.max(bookWithinMs, config.settings.mappingWindowMs);
  if (own <= cap && (own >= state.headroomMs || now - state.headroomAt > config.limits.windowMs)) {
    state.headroomMs = own;
    state.headroomAt = now;
  }
  return now - state.headroomAt > config.limits.windowMs ? 0 : Math.min(state.headroomMs, cap);
}

/** {@link acquireOps}'s decision on `snapshot`, the cooldowns as known. */
function* decide<K extends KeyRef>(
  config: PoolConfig<K>,
  state: PoolState,
  snapshot: CooldownSnapshot,
  { estimatedTokens, bookWithinMs = 0, flow, beside }: CallRequest,
  decision: number,
  leasing: boolean,
): PoolOps<CoreAdmission<K>> {
  const { keys, limits, settings } = config;
  const started = config.now();
  const choice = chooseKeys(keys, state.cursor, snapshot, started);
  const cost: BucketCost = { requests: 1, tokens: Math.max(0, estimatedTokens) + Math.round(state.outputEstimate) };
  const need = clampCost(cost, limits);
  const headroom = tokensHeadroom(config, state, need, bookWithinMs, started);
  const leased = leasedKey(config, state.leases, choice.free, need, started);
  if (leased) {
    state.cursor = leased.index + 1;
    return { admitted: true, key: leased.key, index: leased.index, cost, startAt: started };
  }
  if (settings.probeFirstCalls && state.notProven.size > 0) provenFirst(config, state, choice.free);
  const cooling = new CoolingRetry(started + settings.billingRecheckMs);
  for (const c of choice.cooling) cooling.note(c.blocker.until, c.blocker.reason);
  const learnCooling = (owner: string, cooldown: NonNullable<BucketState['cooldown']>): void => {
    // Another consumer cooled this owner after our cooldowns were read: learn it.
    learn(config, state, { scope: 'quota_owner', id: owner, reason: cooldown.reason, until: cooldown.until });
    cooling.note(cooldown.until, cooldown.reason);
  };
  const candidates: Candidate[] = [];
  let contendedRetry = Infinity;
  // Owners already looked at (a shared owner's second key is passed over); none to keep when each key has its own.
  const tried = ownersOf(keys).length < keys.length ? new Set<string>() : undefined;
  // An owner whose daily quota is spent until a reset at least this far away is out (`noteDaily`).
  const pauseMinMs = DAILY_PAUSE_MIN_WINDOWS * limits.windowMs;
  // Owners passed over while another call probes them (`bucket/first-calls.ts`): when the earliest lease ends.
  const probeLeaseMs = settings.probeFirstCalls ? limits.windowMs : undefined;
  let probeUntil = Infinity;
  // Owners whose day is spent until a reset too far away to reserve a slot at: the earliest reset.
  let daySpentUntil = Infinity;
  const lease = leasing ? leaseTermsFor(config, state, started) : undefined;
  // What fits now on the cached bucket; booked on the stored one when others' takes came first.
  const look = takeArg(cost, false, undefined, bookWithinMs, probeLeaseMs, lease, flow, headroom, undefined);
  for (const { key, index } of choice.free) {
    if (tried?.has(key.quotaOwner)) continue;
    tried?.add(key.quotaOwner);
    // Another owner's first call is out (the lane's start, or its return from billing), or has answered since this
    // one was cached: this one, not known proven, is likely being probed or taken from too. Read it before racing
    // for its probe or setting a clock it shows at rest (a read is not a failed write, and costs a fifth of one).
    const id = bucketIdOf(config, key.quotaOwner);
    if ((Number.isFinite(probeUntil) || staleSinceProof(state, id)) && state.buckets.get(id)?.proven !== true && !learnedSince(state, id, decision)) {
      learnBucket(state, id, (yield { kind: 'readBucket', owner: id }) as BucketState | undefined);
    }
    const verdict = yield* take(config, state, key.quotaOwner, look, decision);
    if (verdict !== 'contended') noteDaily(config, state, key.quotaOwner, verdict, cost, started, pauseMinMs);
    if (verdict === 'contended') {
      // Other consumers are writing this bucket right now: it is busy, not out. Come back after one
      // request slot rather than at some cooling key's (possibly far) reset.
      contendedRetry = started + limits.windowMs / Math.max(1, limits.requestsPerWindow);
      continue;
    }
    if (verdict.admitted) {
      state.cursor = index + 1;
      noteProbe(config, state, key.quotaOwner);
      return { admitted: true, key, index, cost, startAt: verdict.startAt };
    }
    if (verdict.limitedBy === 'cooldown' && verdict.next.cooldown) {
      learnCooling(key.quotaOwner, verdict.next.cooldown);
      continue;
    }
    if (verdict.limitedBy === 'probing') {
      probeUntil = Math.min(probeUntil, verdict.retryAt);
      continue;
    }
    // When the owner's next slot comes: for a call it would book, when its levels hold the call (the
    // booked calls are in them); else counting the slots already reserved on it — a spent day is never
    // booked, and its reset is every such owner's `dueAt`: by it alone one owner would take every reservation.
    const bookable = verdict.limitedBy !== 'daily' && verdict.dueAt - started <= bookWithinMs;
    // A day spent until a reset further than a message can be delayed: no slot is reserved there (a write per
    // denied record, all at once when a fleet finds the days spent): the record comes back before the reset
    // anyway, and the lane limits or pauses itself meanwhile (`noteDaily`).
    if (verdict.limitedBy === 'daily' && verdict.dueAt - started > MAX_DELAY_MS) {
      daySpentUntil = Math.min(daySpentUntil, verdict.dueAt);
      continue;
    }
    candidates.push({ owner: key.quotaOwner, slotAt: bookable ? verdict.dueAt : verdict.retryAt });
  }
  candidates.sort((a, b) => a.slotAt - b.slotAt);
  if (beside) joinGroup(config, candidates, beside, need);
  let slot: { at: number; detail: string } | undefined;
  const reservation = takeArg(cost, true, bookWithinMs, undefined, probeLeaseMs, undefined, flow, headroom, undefined);
  for (const [i, { owner, slotAt }] of candidates.entries()) {
    // Book or reserve the first slot, so callers denied together come back spread out over every key: on an
    // owner whose stored timeline stands more than a window past the next owner's slot as known, only when
    // nothing better is left (`reserveBy`: stale caches would otherwise pile every reservation on it).
    const next = i < RESERVE_PASSES && candidates[i + 1];
    const arg = next ? { ...reservation, reserveBy: next.slotAt + limits.windowMs } : reservation;
    const verdict = yield* take(config, state, owner, arg, decision);
    if (verdict !== 'contended') noteDaily(config, state, owner, verdict, cost, started, pauseMinMs);
    if (verdict === 'contended') {
      slot = { at: slotAt, detail: 'bucket contended' };
      break;
    }
    if (verdict.admitted) {
      // The owner's first free key, in round-robin order.
      const granted = choice.free.find((f) => f.key.quotaOwner === owner) ?? choice.free[0]!;
      state.cursor = granted.index + 1;
      noteProbe(config, state, owner);
      return { admitted: true, key: granted.key, index: granted.index, cost, startAt: verdict.startAt };
    }
    // The write read the stored bucket: what it says is fresher than the cached one.
    if (verdict.limitedBy === 'cooldown' && verdict.next.cooldown) {
      learnCooling(owner, verdict.next.cooldown);
      continue;
    }
    if (verdict.limitedBy === 'probing') {
      probeUntil = Math.min(probeUntil, verdict.retryAt);
      continue;
    }
    if (verdict.passedOver) continue;
    slot = { at: verdict.retryAt, detail: `no budget (${verdict.limitedBy})` };
    break;
  }
  if (candidates.length === 0 && Number.isFinite(daySpentUntil)) slot = { at: daySpentUntil, detail: 'no budget (daily)' };
  let retryAt = Math.min(cooling.at(slot !== undefined), contendedRetry);
  let detail = candidates.length > 0 ? 'no budget' : contendedRetry < cooling.at(false) ? 'bucket contended' : `all ${keys.length} key(s) cooling`;
  if (slot && slot.at < retryAt) {
    retryAt = slot.at;
    detail = slot.detail;
  }
  const now = config.now();
  const oneSlot = now + limits.windowMs / Math.max(1, limits.requestsPerWindow);
  // A first call out on some owner: come back once it has answered (about one request slot), or wait for it in-process.
  if (Number.isFinite(probeUntil) && Math.min(probeUntil, oneSlot) < retryAt) {
    retryAt = Math.min(probeUntil, oneSlot);
    detail = 'first call of a key in flight';
  }
  if (!Number.isFinite(retryAt)) retryAt = oneSlot;
  // Waiting for the probe is worth it only when no slot was reserved elsewhere (a second wait would reserve another).
  const probing = Number.isFinite(probeUntil) && slot === undefined ? ({ probing: true } as const) : {};
  const known = capacityKnown(config, state, now, snapshot);
  const capacity = bookedAhead(config, state, known, { retryAt, now, bookWithinMs, cost });
  return { admitted: false, retryAt: Math.max(now, retryAt), detail, laneOut: laneOutOf(known), ...(capacity ? { capacity } : {}), ...probing };
}

/** `known` moved `weight` of the way to `value` (an exponentially weighted average); `value` when nothing is known yet. */
const movedToward = (known: number | undefined, value: number, weight: number): number => (known === undefined ? value : known + weight * (value - known));

/**
 * After a granted call answered: learns the output-token estimate from `outputTokens` (and how long calls
 * last from `callMs`, the call's time from its slot to its answer) and corrects the owner's token level by
 * the real usage minus the `takenTokens` the grant took.
 */
export function* settleOps(
  config: PoolConfig,
  state: PoolState,
  owner: string,
  takenTokens: number,
  usage: { inputTokens: number; outputTokens: number; providerLimits?: ProviderLimits | undefined },
  callMs?: number,
): PoolOps<void> {
  const id = bucketIdOf(config, owner);
  state.probes.delete(id);
  state.outputEstimate = learnOutputEstimate(state.outputEstimate, usage.outputTokens, config.settings);
  const weight = config.settings.outputTokenEstimateWeight;
  if (callMs !== undefined && Number.isFinite(callMs) && callMs >= 0) state.callMsEstimate = movedToward(state.callMsEstimate, callMs, weight);
  const used = usage.inputTokens + usage.outputTokens;
  // A grant given back unused (a cancelled job's: no tokens) says nothing of a call's size.
  if (Number.isFinite(used) && used > 0) state.callTokensEstimate = movedToward(state.callTokensEstimate, used, weight);
  const delta = used - takenTokens;
  // An owner not known proven is proven now, at once (other consumers' calls wait on its probe).
  const prove = config.settings.probeFirstCalls && state.buckets.get(id)?.proven !== true;
  const owed = (state.carried.get(id) ?? 0) + delta;
  // Limits the provider stated that the bucket does not hold yet are written at once (`statedLimitsUpdate`).
  const stated = usage.providerLimits;
  const newsOfLimits = stated !== undefined && statedLimitsUpdate(state.buckets.get(id), config.limits, stated) !== undefined;
  // Owed until the next take of the bucket writes it, unless it grew too large to wait.
  if (!prove && !newsOfLimits && (Math.abs(delta) < 1 || Math.abs(owed) < config.limits.tokensPerWindow * SETTLE_CARRY_SHARE)) {
    if (Math.abs(delta) >= 1) state.carried.set(id, owed);
    return;
  }
  state.carried.delete(id);
  if ((yield* update(config, state, id, config.limits, settleChange, { delta: owed, prove, stated })) === 'contended') state.carried.set(id, owed);
}

/** After a grant on `owner`: when its take wrote the owner's probe, this instance holds it (see {@link releaseOps}). */
function noteProbe(config: PoolConfig, state: PoolState, owner: string): void {
  const id = bucketIdOf(config, owner);
  if (isProbe(state.buckets.get(id))) state.probes.add(id);
}

/** A granted call ended without an answer (it failed, or never went): the owner's probe, if this was it, is given back. */
export function* releaseOps(config: PoolConfig, state: PoolState, owner: string): PoolOps<void> {
  const id = bucketIdOf(config, owner);
  if (!state.probes.delete(id)) return;
  yield* update(config, state, id, config.limits, releaseChange, null);
}

/**
 * How many keys stay usable (not out for a long reset) once `key` (or its owner) cools as `target`
 * says. Only after a 429: worth a fresh read, so a cooldown another consumer recorded within the
 * cache's lifetime still counts (otherwise the last key out may not see the others and the lane not pause).
 */
export function* keysLeftOps(config: PoolConfig, state: PoolState, key: KeyRef, target: Pick<Cooldown, 'scope' | 'reason'>): PoolOps<number> {
  const snapshot = yield* cooldowns(config, state, true);
  return keysLeftAfter(config.keys, snapshot, cooldownRecordOf(key, { ...target, until: Number.MAX_SAFE_INTEGER }), config.now());
}

/**
 * Records the policy's cooldown of `key`: in this instance's cache, in the table, and for an owner's
 * cooldown also in its bucket and its {@link PoolConfig.otherBuckets} (so a consumer of either side
 * with stale cooldowns learns it at its next take). A rate limit also leaves each of the owner's buckets
 * with one call when the cooldown ends, and one met again cuts the owner's rates (`rateLimitedUpdate`):
 * the provider's count, not the pool's, said the requests were spent (the outcome says so). Throws
 * {@link BucketContendedError} when a bucket stayed contended (after trying the others).
 */
export function* coolOps(config: PoolConfig, state: PoolState, key: KeyRef, cooldown: Cooldown, fingerprint?: string): PoolOps<CoolOutcome> {
  const until = Date.parse(cooldown.until);
  if (!Number.isFinite(until)) return {};
  const record = { ...cooldownRecordOf(key, { scope: cooldown.scope, reason: cooldown.reason, until }), ...(fingerprint ? { fingerprint } : {}) };
  learn(config, state, record);
  // Each bucket the owner has: the one this pool takes from, and its other sides.
  const buckets = [
    [bucketIdOf(config, key.quotaOwner), config.limits] as const,
    ...(config.otherBuckets ?? []).map((b) => [key.quotaOwner + b.suffix, b.limits] as const),
  ];
  const rateLimited = cooldown.reason === 'rate_limit';
  const outcome: CoolOutcome = {};
  for (const [id] of buckets) {
    // An owner's cooldown's write ends the probe of each of its buckets; after it or a rate limit, what is
    // left of a lease is not called (on the owner's other keys either).
    if (record.scope === 'quota_owner') state.probes.delete(id);
    if (record.scope === 'quota_owner' || rateLimited) state.leases.delete(id);
  }
  yield { kind: 'putCooldown', record, now: config.now() };
  if (rateLimited) {
    // The provider's requests are spent until the cooldown ends, whoever spent them (another client of the
    // owner's quota, a limit lower than configured): each of the owner's buckets holds one call then, not the
    // burst its own count would allow, and a rate limit met again cuts the owner's rates (`rateLimitedUpdate`).
    // Best effort: the cooldown above is what keeps the key's calls back.
    try {
      for (const [id, limits] of buckets) {
        const cut = yield* update(config, state, id, limits, rateLimitedChange, until);
        if (typeof cut === 'number' && outcome.rateCut === undefined) outcome.rateCut = cut;
      }
    } catch {
      // The table unavailable: the owner's next takes run on its own count, as before the answer.
    }
  }
  if (record.scope !== 'quota_owner') return outcome;
  const arg = { until, reason: cooldown.reason };
  let contended = false;
  for (const [id, limits] of buckets) if ((yield* update(config, state, id, limits, coolChange, arg)) === 'contended') contended = true;
  if (contended) throw new BucketContendedError(`bucket of ${key.quotaOwner} stayed contended while recording its cooldown`);
  return outcome;
}

/**
 * The lane's capacity (share 0: every key is out for a long reset, until the earliest reset). Asked
 * only after a quota, billing or auth error: reads what every consumer recorded, not the cache.
 */
export function* laneCapacityOps(config: PoolConfig, state: PoolState): PoolOps<LaneCapacity | null> {
  const snapshot = yield* cooldowns(config, state, true);
  return laneCapacity(config.keys, snapshot, config.now(), dailyOutOf(config, state));
}
