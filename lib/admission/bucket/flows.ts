/**
 * Fair shares of a binding quota between flows (a tenant's calls of one priority class), kept in the
 * owner's bucket beside its levels. Pure: no clock, no SDK.
 *
 * The rule, while the quota binds (docs/admission.md, "Sharing a binding quota"):
 * - **Each flow has its own timeline of promised retry slots.** A denied call of flow `f` is told to
 *   come back at `f`'s next slot, and `f`'s timeline moves on by one call's refill divided by `f`'s
 *   share: its weight over the weights of every flow with slots promised past that slot (itself included). A
 *   flow alone moves on at the full refill rate, as one timeline for all did; two flows of equal weight
 *   at half of it each, so their calls come back interleaved, not one flow's backlog after the other's.
 * - **The flow whose promised slots end first books first.** A flow with a later timeline than some
 *   other flow's does not book a call ahead (no in-process wait on a slot in debt): it takes only what
 *   the levels hold now, else comes back at its own next slot. So a small tenant's calls, or urgent
 *   ones, take the slots that come free before a backlog's calls already promised them, and the
 *   backlog's calls step aside (once each) instead of the newcomers waiting behind all of it. A backlog
 *   is never starved: its calls take what the levels hold whenever the others leave it, and the others
 *   come back only at their weighted share.
 *
 * A bucket keeps at most {@link MAX_FLOWS} timelines (its item is written with every take): a flow
 * beyond them uses the bucket's one shared timeline (`reservedUntil`), behind every flow's slots.
 */
import type { BucketState, Flow, FlowTimeline } from '../model/bucket.js';

/** The most flow timelines one bucket item keeps (each about 30 bytes of a write of at most 1 KB per write unit). */
export const MAX_FLOWS = 24;

/** How a take of one flow stands against the other flows with promised slots, at `at`. */
export interface FlowStanding {
  /** The end of the flow's own timeline (its next slot), or the shared one's for a flow not kept. */
  until: number;
  /** Another flow's timeline ends before this one's: this flow books nothing ahead. */
  yields: boolean;
  /** Whether the flow has (or gets) a timeline of its own in the bucket. */
  kept: boolean;
}

/** The timelines of `state` still running at `at`. */
function running(state: Pick<BucketState, 'flows'>, at: number): [string, FlowTimeline][] {
  return state.flows ? Object.entries(state.flows).filter(([, t]) => t.until > at) : [];
}

/** Where `flow` stands at `at` in `state` (see the module's rule). */
export function flowStanding(state: Pick<BucketState, 'flows' | 'reservedUntil'>, flow: Flow, at: number): FlowStanding {
  const others = running(state, at).filter(([id]) => id !== flow.id);
  const own = state.flows?.[flow.id];
  const kept = own !== undefined || others.length < MAX_FLOWS;
  const until = kept ? (own && own.until > at ? own.until : 0) : state.reservedUntil;
  const mine = Math.max(until, at);
  return { until, yields: others.some(([, t]) => t.until < mine), kept };
}

/**
 * `flow`'s share of the refill at `slot`: its weight over its own and those of the other flows with
 * slots promised past `slot` (0..1]. A slot beyond every other flow's timeline is the flow's alone.
 */
export function flowShare(state: Pick<BucketState, 'flows'>, flow: Flow, slot: number): number {
  const weight = Math.max(Number.MIN_VALUE, flow.weight);
  let others = 0;
  for (const [id, t] of running(state, slot)) if (id !== flow.id) others += t.weight;
  return weight / (weight + others);
}

/**
 * `state`'s flows with `flow`'s timeline ending no sooner than `until` (a flow not kept is not added),
 * and the timelines that ended by `at` dropped.
 */
export function withFlowUntil(
  state: Pick<BucketState, 'flows'>,
  flow: Flow,
  kept: boolean,
  until: number,
  at: number,
): Record<string, FlowTimeline> | undefined {
  const flows: Record<string, FlowTimeline> = Object.fromEntries(running(state, at));
  const end = Math.max(until, flows[flow.id]?.until ?? 0);
  if (kept && end > at) flows[flow.id] = { until: end, weight: flow.weight };
  return Object.keys(flows).length > 0 ? flows : undefined;
}
