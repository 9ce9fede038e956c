/**
 * The takes of one group of calls made together: one conditional write per quota owner per group.
 * `SharedKeyPool` groups the acquires that meet in one consumer instance (the records of a batch
 * reach admission at about the same time); the simulator groups the records of a batch.
 *
 * Each call is decided by the pool's own {@link acquireOps}, one after the other, on the instance's
 * cached buckets, with its bucket writes held back: a later call of the group sees the earlier ones'
 * takes (they are in the cache), and every bucket the group changed is written once at the end: one
 * update doing what its changes do, under all their conditions (`composeUpdates`). When the bucket it
 * lands on is not the one cached, other consumers' takes moved its clocks on: the group's calls start
 * (or come back) that much later. All calls of a group start their round
 * robin at the same key, so they fill one owner's budget before the next and the group touches as few
 * buckets as it can. A bucket whose write fails (another instance wrote it first) answers with its
 * current state; the calls that changed it are decided again on that, up to `maxBucketAttempts`
 * rounds, then one at a time by {@link acquireOps} itself.
 */
import { applyUpdate, composeUpdates, IncompatibleUpdatesError } from '../bucket/item-update.js';
import { holdMs } from '../bucket/token-bucket.js';
import type { BucketLimits, BucketState, BucketUpdate } from '../model/bucket.js';
import type { KeyRef } from '../model/cooldowns.js';
import type { BucketWrite } from '../model/store.js';
import { acquireOps, type CallRequest, type CoreAdmission } from './pool-core.js';
import { beginDecision, forgetBucket, learnBucket, noteAsks, type PoolConfig, type PoolOps, type PoolState, type StoreOp } from './pool-state.js';

/** One call of a group. */
export type GroupRequest = CallRequest;

/** A bucket the group changed: the cached state its first change started from, the update of all its changes, and the state they leave. */
interface HeldWrite {
  base: BucketState | undefined;
  update: BucketUpdate;
  next: BucketState;
}

/**
 * Admits the calls of `requests` together; the answers are in the requests' order. Without a group
 * (one request) this is {@link acquireOps}.
 */
export function* acquireGroupOps<K extends KeyRef>(config: PoolConfig<K>, state: PoolState, requests: readonly GroupRequest[]): PoolOps<CoreAdmission<K>[]> {
  const answers: CoreAdmission<K>[] = new Array(requests.length);
  let pending = requests.map((_, i) => i);
  // Buckets whose write failed: the next decisions read them first (`PoolState.conflictAt`); this
  // group's next round already has their state from the failed write.
  const conflicted = new Set<string>();
  // A bucket learned from the table since the group began (read, or a write's outcome) is not read again.
  const since = beginDecision(state);
  const asked = config.now();
  for (let round = 0; pending.length > 1 && round < config.settings.maxBucketAttempts; round++) {
    pending = yield* groupRound(config, state, requests, pending, answers, conflicted, since);
  }
  for (const owner of conflicted) state.conflictAt.set(owner, config.now());
  for (const i of pending) answers[i] = yield* acquireOps(config, state, requests[i]!, since);
  noteAsks(state, asked, requests.length, config.settings.leaseCalls);
  return answers;
}

/** One round: decides `indices` with their writes held, writes each changed bucket once; returns the calls to decide again. */
function* groupRound<K extends KeyRef>(
  config: PoolConfig<K>,
  state: PoolState,
  requests: readonly GroupRequest[],
  indices: readonly number[],
  answers: CoreAdmission<K>[],
  conflicted: Set<string>,
  since: number,
): PoolOps<number[]> {
  const held = new Map<string, HeldWrite>();
  const wrote = new Map<number, string>();
  const carriedBefore = new Map(state.carried);
  const leasesBefore = new Map(state.leases);
  const probesBefore = new Set(state.probes);
  const cursor = state.cursor;
  // Per call that wrote: the bucket as its change left it (cached).
  const predicted = new Map<number, BucketState>();
  let nextCursor: number | undefined;
  // A denial may reserve its slot on a bucket the group writes anyway, a little later than the earliest (`joinGroup`).
  const beside = { items: held, calls: requests.length };
  for (const i of indices) {
    state.cursor = cursor;
    // No lease in a round: a later call of the group would be granted from a write that may fail.
    const ops = acquireOps(config, state, { ...requests[i]!, beside }, since, false);
    let step = ops.next();
    while (!step.done) {
      const op: StoreOp = step.value;
      let answer: unknown;
      if (op.kind === 'lock' || op.kind === 'unlock') {
        answer = undefined; // the group writes under the lock below
      } else if (op.kind === 'writeBucket') {
        // A decision writes one bucket at most (its grant, booking or reservation).
        answer = hold(held, op.owner, state.buckets.get(op.owner), op.update);
        if (answer === undefined) {
          answer = { ok: false, current: state.buckets.get(op.owner) } satisfies BucketWrite; // decided again alone
        } else wrote.set(i, op.owner);
      } else if (op.kind === 'readBucket' && held.has(op.owner)) {
        answer = held.get(op.owner)!.next; // the bucket as the group will leave it
      } else {
        answer = yield op;
      }
      step = ops.next(answer);
    }
    answers[i] = step.value;
    const owner = wrote.get(i);
    if (owner !== undefined) predicted.set(i, held.get(owner)!.next);
    if (nextCursor === undefined && step.value.admitted) nextCursor = state.cursor;
  }
  state.cursor = nextCursor ?? cursor;
  const failed = new Set<string>();
  // Not written (yet): what the group took on them is undone in the instance when their write fails.
  const unwritten = new Set(held.keys());
  const undo = (owner: string): void => {
    // The corrections the write carried are owed again; the probes its calls took are not held.
    const carried = carriedBefore.get(owner);
    if (carried !== undefined) state.carried.set(owner, (state.carried.get(owner) ?? 0) + carried);
    // So is the rest of a lease the write gave back.
    const lease = leasesBefore.get(owner);
    if (lease !== undefined && !state.leases.has(owner)) state.leases.set(owner, lease);
    for (const i of indices) {
      const answer = answers[i]!;
      if (wrote.get(i) === owner && answer.admitted && !probesBefore.has(owner)) state.probes.delete(owner);
    }
  };
  try {
    for (const [owner, { base, update, next }] of held) {
      if (config.serial !== true) yield { kind: 'lock', owner };
      const outcome = (yield { kind: 'writeBucket', owner, update, now: config.now() }) as BucketWrite;
      if (config.serial !== true) yield { kind: 'unlock', owner };
      unwritten.delete(owner);
      if (outcome.ok) {
        const actual = applyUpdate(outcome.before, update);
        learnBucket(state, owner, actual);
        if (outcome.before?.version !== base?.version) {
          for (const i of indices) {
            if (wrote.get(i) === owner) answers[i] = shiftedByOthers(config.limits, answers[i]!, requests[i]!, predicted.get(i)!, next, actual);
          }
        }
        continue;
      }
      failed.add(owner);
      conflicted.add(owner);
      learnBucket(state, owner, outcome.current);
      undo(owner);
    }
  } catch (error) {
    // A write that threw (the table unavailable) may or may not have landed: forget the cached state.
    for (const owner of unwritten) {
      forgetBucket(state, owner);
      undo(owner);
    }
    throw error;
  }
  return indices.filter((i) => failed.has(wrote.get(i) ?? ''));
}

/**
 * Holds a change of `owner` (decided on `cached`) in the group's write: `{ ok: true, before }` as a
 * landed write would answer; `undefined` when it cannot join the changes held (the call is decided again alone).
 */
function hold(held: Map<string, HeldWrite>, owner: string, cached: BucketState | undefined, update: BucketUpdate): BucketWrite | undefined {
  const write = held.get(owner);
  if (write === undefined) {
    held.set(owner, { base: cached, update, next: applyUpdate(cached, update) });
    return { ok: true, before: cached };
  }
  try {
    write.update = composeUpdates(write.update, update)!;
  } catch (error) {
    if (error instanceof IncompatibleUpdatesError) return undefined;
    throw error;
  }
  write.next = applyUpdate(cached, update);
  return { ok: true, before: cached };
}

/**
 * A group's answer after its write landed on `actual` where the group expected `expected` (its changes
 * on the cached buckets): the clocks other consumers moved on since the cache was learned move its time
 * as much — a grant starts when its levels, as it left them in `after`, hold it (not before the group
 * began, `started`); a reservation's slot moves on with its timeline. (A single take is decided again on
 * the stored bucket instead, `retimed` in `bucket/changes.ts`; a group's composed write cannot be.)
 */
function shiftedByOthers<K extends KeyRef>(
  limits: BucketLimits,
  answer: CoreAdmission<K>,
  request: GroupRequest,
  after: BucketState,
  expected: BucketState,
  actual: BucketState,
): CoreAdmission<K> {
  if (answer.admitted) {
    const late =
      Math.max(after.requestsFullAt + actual.requestsFullAt - expected.requestsFullAt, after.tokensFullAt + actual.tokensFullAt - expected.tokensFullAt) -
      holdMs(limits);
    return late > answer.startAt ? { ...answer, startAt: late } : answer;
  }
  const id = request.flow?.id;
  const own = id !== undefined && after.flows?.[id] !== undefined;
  const moved = own ? (actual.flows?.[id]?.until ?? 0) - (expected.flows?.[id]?.until ?? 0) : actual.reservedUntil - expected.reservedUntil;
  return moved > 0 ? { ...answer, retryAt: answer.retryAt + moved } : answer;
}
