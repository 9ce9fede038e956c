/**
 * Conditional updates of a bucket item ({@link BucketUpdate}), pure: how one applies to a bucket, whether
 * its condition holds, how two made one after the other become one, and the building block of every
 * take — a clock moved on atomically ({@link advanceClock}). The DynamoDB adapter compiles the same
 * updates into an `UpdateItem` (`dynamodb/rate-state.ts`); the in-memory tables apply them with
 * {@link applyUpdate}, so both follow one set of rules: DynamoDB's.
 *
 * Why takes never race: a level's "full again" time moves on by `ADD` (other consumers' takes add
 * theirs in any order), under a condition that is the quota itself (no later than the call still
 * fits). A consumer whose cached bucket is stale still succeeds while the quota allows; its write
 * fails only when the quota does not (or a clock it saw behind the present has moved past it).
 */
import type { BucketCondition, BucketField, BucketState, BucketUpdate, BucketValue, FieldChange, FlowTimeline } from '../model/bucket.js';

/** Raised when two updates cannot be made one (the second was decided on a state the first cannot leave). */
export class IncompatibleUpdatesError extends Error {
  override name = 'IncompatibleUpdatesError';
}

/** A flow's field name (`flow:<id>:<clock>`). */
export const flowField = (id: string, clock: keyof FlowTimeline): BucketField => `flow:${id}:${clock}`;

/** The flow id and clock of a flow field, or `undefined` for another field. */
export function parseFlowField(field: string): { id: string; clock: keyof FlowTimeline } | undefined {
  if (!field.startsWith('flow:')) return undefined;
  const cut = field.lastIndexOf(':');
  const clock = field.slice(cut + 1);
  if (cut <= 5 || (clock !== 'until' && clock !== 'vt' && clock !== 'weight')) return undefined;
  return { id: field.slice(5, cut), clock };
}

/** `field`'s value in `state` (`undefined`: missing). */
function fieldOf(state: BucketState | undefined, field: BucketField): BucketValue | undefined {
  if (state === undefined) return undefined;
  const flow = parseFlowField(field);
  if (flow) return state.flows?.[flow.id]?.[flow.clock];
  switch (field) {
    case 'coolUntil':
      return state.cooldown?.until;
    case 'coolReason':
      return state.cooldown?.reason;
    default:
      return state[field as Exclude<keyof BucketState, 'cooldown' | 'flows'>];
  }
}

/** A missing bucket item as the decisions see it: every level full, the day unknown (whole), nothing written yet. */
export const EMPTY_BUCKET: BucketState = Object.freeze({ requestsFullAt: 0, tokensFullAt: 0, reservedUntil: 0, version: 0 });

/**
 * A flow as an item holds it, its missing clocks at their defaults: 0 (weight 1). `bucketOfItem` reads
 * an item's flows so and {@link applyUpdate} leaves them so. (The updates made here remove a flow's three
 * clocks together and test none, so the defaults never make the memory table answer otherwise than DynamoDB.)
 */
export function completeFlow(t: Partial<FlowTimeline>): FlowTimeline {
  return { until: t.until ?? 0, vt: t.vt ?? 0, weight: t.weight ?? 1 };
}

/** A bucket being changed: its own copy, whose `flows` and `cooldown` are copied before their first change. */
interface Draft {
  state: BucketState;
  ownFlows: boolean;
  ownCooldown: boolean;
}

/** Sets `field` of the draft to `value` (`undefined`: removed), as an item read back has it. */
function setField(draft: Draft, field: BucketField, value: BucketValue | undefined): void {
  const state = draft.state as unknown as Record<string, unknown>;
  const flow = parseFlowField(field);
  if (flow) {
    if (!draft.ownFlows) draft.state.flows = { ...draft.state.flows };
    draft.ownFlows = true;
    const flows = draft.state.flows as Record<string, Partial<FlowTimeline>>;
    const rest: Partial<FlowTimeline> = { ...flows[flow.id] };
    if (value === undefined) delete rest[flow.clock];
    else rest[flow.clock] = value as number;
    if (Object.keys(rest).length === 0) delete flows[flow.id];
    else flows[flow.id] = rest;
    return;
  }
  if (field === 'coolUntil' || field === 'coolReason') {
    if (!draft.ownCooldown) draft.state.cooldown = { ...draft.state.cooldown } as BucketState['cooldown'];
    draft.ownCooldown = true;
    const cooldown = draft.state.cooldown as unknown as Record<string, unknown>;
    const key = field === 'coolUntil' ? 'until' : 'reason';
    if (value === undefined) delete cooldown[key];
    else cooldown[key] = value;
    return;
  }
  if (value === undefined) delete state[field];
  else state[field] = value;
}

/** Whether `condition` holds on `state` (a missing item: `undefined`), as DynamoDB decides it. */
export function conditionHolds(state: BucketState | undefined, condition: BucketCondition | undefined): boolean {
  if (condition === undefined) return true;
  if ('any' in condition) return condition.any.some((c) => conditionHolds(state, c));
  if ('all' in condition) return condition.all.every((c) => conditionHolds(state, c));
  const value = fieldOf(state, condition.field);
  if ('missing' in condition) return value === undefined;
  return value !== undefined && compare(value, condition.cmp, condition.value);
}

function compare(a: BucketValue, cmp: '<=' | '<' | '>=' | '>' | '=' | '<>', b: BucketValue): boolean {
  switch (cmp) {
    case '=':
      return a === b;
    case '<>':
      return a !== b;
    case '<=':
      return a <= b;
    case '<':
      return a < b;
    case '>=':
      return a >= b;
    case '>':
      return a > b;
  }
}

/** `state` (a missing item: `undefined`) with `update`'s changes applied and its version moved on (the condition not checked). */
export function applyUpdate(state: BucketState | undefined, update: BucketUpdate): BucketState {
  const base = state ?? EMPTY_BUCKET;
  const draft: Draft = { state: { ...base, version: base.version + 1 }, ownFlows: false, ownCooldown: false };
  for (const [field, change] of update.changes) {
    if ('remove' in change) setField(draft, field, undefined);
    else if ('set' in change) setField(draft, field, change.set);
    else {
      const old = fieldOf(draft.state, field);
      setField(draft, field, (typeof old === 'number' ? old : 0) + change.add);
    }
  }
  const next = draft.state;
  if (draft.ownCooldown && Object.keys(next.cooldown ?? {}).length === 0) delete next.cooldown;
  if (next.flows) {
    const incomplete = Object.values(next.flows).some((t) => t.until === undefined || t.vt === undefined || t.weight === undefined);
    if (incomplete || draft.ownFlows) next.flows = Object.fromEntries(Object.entries(next.flows).map(([id, t]) => [id, completeFlow(t)]));
    if (Object.keys(next.flows).length === 0) delete next.flows;
  }
  return next;
}

/** `second`'s condition said of the state `first` leaves: true, false, or a condition on the state before `first`. */
function shifted(condition: BucketCondition, changes: ReadonlyMap<BucketField, FieldChange>): BucketCondition | boolean {
  if ('any' in condition || 'all' in condition) {
    const any = 'any' in condition;
    const parts: BucketCondition[] = [];
    for (const part of any ? condition.any : condition.all) {
      const s = shifted(part, changes);
      if (s === any) return any; // a true part of an `any`, a false part of an `all`
      if (s !== !any) parts.push(s as BucketCondition);
    }
    if (parts.length === 0) return !any;
    return parts.length === 1 ? parts[0]! : any ? { any: parts } : { all: parts };
  }
  const change = changes.get(condition.field);
  if (change === undefined) return condition;
  if ('missing' in condition) return 'remove' in change;
  if ('remove' in change) return false;
  if ('set' in change) return compare(change.set, condition.cmp, condition.value);
  // After adding `d` (a missing field becomes `d`): `f + d cmp v` ⇔ `f cmp v − d`, or, missing, `d cmp v`.
  const moved: BucketCondition = { field: condition.field, cmp: condition.cmp, value: (condition.value as number) - change.add };
  return compare(change.add, condition.cmp, condition.value) ? { any: [moved, { field: condition.field, missing: true }] } : moved;
}

/** Two changes of one field, `first` then `second`, as one. */
function merged(first: FieldChange | undefined, second: FieldChange): FieldChange {
  if (first === undefined || 'set' in second || 'remove' in second) return second;
  if ('remove' in first) return { set: second.add };
  if ('set' in first) return { set: (typeof first.set === 'number' ? first.set : 0) + second.add };
  return { add: first.add + second.add };
}

/**
 * One update doing what `first` and then `second` do, with both conditions (the second's on the state
 * the first leaves). Throws {@link IncompatibleUpdatesError} when the second's condition cannot hold
 * after the first.
 */
export function composeUpdates(first: BucketUpdate | undefined, second: BucketUpdate | undefined): BucketUpdate | undefined {
  if (first === undefined) return second;
  if (second === undefined) return first;
  const after = second.condition === undefined ? true : shifted(second.condition, first.changes);
  if (after === false) throw new IncompatibleUpdatesError('the second update was decided on a state the first cannot leave');
  const changes = new Map(first.changes);
  for (const [field, change] of second.changes) changes.set(field, merged(changes.get(field), change));
  const conditions = [first.condition, after === true ? undefined : after].filter((c): c is BucketCondition => c !== undefined);
  return { changes, condition: conditions.length === 0 ? undefined : conditions.length === 1 ? conditions[0] : { all: conditions } };
}

/** Collects the changes and conditions of one update. */
export class UpdateBuilder {
  readonly changes = new Map<BucketField, FieldChange>();
  private readonly conditions: BucketCondition[] = [];

  set(field: BucketField, value: BucketValue): this {
    this.changes.set(field, { set: value });
    return this;
  }

  add(field: BucketField, amount: number): this {
    const before = this.changes.get(field);
    this.changes.set(field, merged(before, { add: amount }));
    return this;
  }

  remove(field: BucketField): this {
    this.changes.set(field, { remove: true });
    return this;
  }

  require(condition: BucketCondition): this {
    this.conditions.push(condition);
    return this;
  }

  /** The update (`undefined` when it changes nothing). */
  build(): BucketUpdate | undefined {
    if (this.changes.size === 0) return undefined;
    const n = this.conditions.length;
    return { changes: this.changes, condition: n === 0 ? undefined : n === 1 ? this.conditions[0] : { all: [...this.conditions] } };
  }
}

/**
 * Tolerance (ms) of the conditions on clocks built from a decision's own arithmetic: above a double's
 * resolution at epoch-ms magnitudes (about 2.4e-4 ms), far below any clock's step. A clock within it of a
 * limit satisfies both the grant's condition and the refusal's, so a decision made either way lands.
 */
export const CLOCK_SLACK_MS = 1e-3;
const SLACK = CLOCK_SLACK_MS;

/**
 * Moves clock `field` (cached value `cached`) to `max(value − back, floor) + inc` — a level's "full
 * again" time after a give-back of `back` ms and a take of `inc` ms, or a retry timeline after a
 * reservation — as the cache says: by `ADD` while the clock, less `back`, is at or past `floor`
 * (concurrent moves then add up, in any order), else by `SET` from `floor`. The condition checks that
 * the stored clock is on the same side of `floor`, and with `limit`, that it is no later than `limit`
 * (the quota: before the change). With `near`, a clock cached at most `near` ms behind `floor` moves by
 * `ADD` too, as far further as it was behind, on condition that it is at least where cached — never less
 * than `SET` would have, at most that gap more — so takes of consumers that meet a clock just run out (a
 * first call's answer, a burst's end) do not race to set it.
 * Returns whether it moves by `ADD`.
 */
export function advanceClock(
  update: UpdateBuilder,
  field: BucketField,
  cached: number | undefined,
  floor: number,
  inc: number,
  back = 0,
  limit?: number,
  near = 0,
): boolean {
  const behind = cached === undefined ? Infinity : floor - (cached - back);
  if (behind <= near) {
    const extra = Math.max(0, behind);
    if (inc - back + extra !== 0) update.add(field, inc - back + extra);
    update.require({ field, cmp: '>=', value: (extra > 0 ? cached! : floor + back) - SLACK });
    if (limit !== undefined) update.require({ field, cmp: '<=', value: limit - extra + SLACK });
    return true;
  }
  update.set(field, floor + inc);
  update.require({
    any: [
      { field, missing: true },
      { field, cmp: '<', value: floor + back },
    ],
  });
  return false;
}

/**
 * `update` on the stored bucket `stored` as a table in memory makes it (the simulator's, the tests'):
 * applied if its condition holds (`after`: what to store), else refused with the bucket as it is.
 */
export function updateInMemory(
  stored: BucketState | undefined,
  update: BucketUpdate,
): { ok: true; before: BucketState | undefined; after: BucketState } | { ok: false; current: BucketState | undefined } {
  if (!conditionHolds(stored, update.condition)) return { ok: false, current: stored };
  return { ok: true, before: stored, after: applyUpdate(stored, update) };
}
