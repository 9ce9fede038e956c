/**
 * Fair shares of a binding quota between flows (a tenant's calls of one priority class), kept in the
 * owner's bucket beside its levels. Pure: no clock, no SDK.
 *
 * The rule, while the quota binds (docs/admission.md, "Sharing a binding quota"), weighted fair queuing
 * on two clocks per flow:
 * - **Service: a virtual time.** Every call a flow is granted (at once or booked) moves the flow's virtual
 *   time on by one call's refill divided by its share — its weight over the weights of the flows active
 *   then (itself included). A flow alone moves at the refill rate, in step with the clock; of two flows
 *   of equal weight, each moves twice as fast while both are served.
 * - **The flow served least books first.** A flow whose virtual time is ahead of another active flow's
 *   does not book a call ahead (no in-process wait on a slot in debt): it takes only what the levels hold
 *   now, else comes back at its next retry slot. So a small tenant's calls, or urgent ones (weight 9
 *   against bulk's 1), take the slots that come free before a backlog's, and the backlog's calls step
 *   aside once each. Nothing is starved: a flow that stepped aside falls behind in virtual time and
 *   books first again; and the levels' calls are taken by whoever comes, so no slot goes unused.
 * - **Retries: a timeline of promised slots.** A denied call of a flow is told to come back at its
 *   flow's next slot, and that timeline moves on by one call's refill over the flow's share of the flows
 *   active at that slot. A flow alone moves at the full refill rate, as one timeline for all did.
 * A flow is active while either clock is ahead of now.
 *
 * A bucket keeps at most {@link MAX_FLOWS} flows (its item is written with every take): a flow beyond
 * them uses the bucket's one shared retry timeline (`reservedUntil`) and never yields.
 */
import type { BucketState, Flow, FlowTimeline } from '../model/bucket.js';
import { flowField, type UpdateBuilder } from './item-update.js';

/** The most flows one bucket item keeps (each about 40 bytes; a write unit is 1 KB of the item). */
export const MAX_FLOWS = 24;

/** How a take of one flow stands against the other active flows, at `at`. */
export interface FlowStanding {
  /** The end of the flow's own retry timeline (its next slot), or the shared one's for a flow not kept. */
  until: number;
  /** Another active flow's virtual time is behind this one's: this flow books nothing ahead. */
  yields: boolean;
  /** Whether the flow has (or gets) a place of its own in the bucket. */
  kept: boolean;
}

/** The latest of a flow's clocks: it is active until then. */
const activeUntil = (t: FlowTimeline): number => Math.max(t.until, t.vt);

/** The flows of `state` active at `at`. */
function active(state: Pick<BucketState, 'flows'>, at: number): [string, FlowTimeline][] {
  return state.flows ? Object.entries(state.flows).filter(([, t]) => activeUntil(t) > at) : [];
}

/** Where `flow` stands at `at` in `state` (see the module's rule). */
export function flowStanding(state: Pick<BucketState, 'flows' | 'reservedUntil'>, flow: Flow, at: number): FlowStanding {
  const others = active(state, at).filter(([id]) => id !== flow.id);
  const own = state.flows?.[flow.id];
  const kept = own !== undefined || others.length < MAX_FLOWS;
  if (!kept) return { until: state.reservedUntil, yields: false, kept };
  const served = Math.max(own?.vt ?? 0, at);
  return { until: own && own.until > at ? own.until : 0, yields: others.some(([, t]) => t.vt < served), kept };
}

/**
 * `flow`'s share at `t`: its weight over its own and those of the other flows active past `t` (0..1].
 * A time beyond every other flow's clocks is the flow's alone.
 */
export function flowShare(state: Pick<BucketState, 'flows'>, flow: Flow, t: number): number {
  const weight = Math.max(Number.MIN_VALUE, flow.weight);
  let others = 0;
  for (const [id, timeline] of active(state, t)) if (id !== flow.id) others += timeline.weight;
  return weight / (weight + others);
}

/**
 * Adds to `update` what a take of `flow` at `at` does to the flows of `state` (as cached): the inactive
 * ones removed, and `flow`'s virtual time moved on by `served` ms (a granted call's refill over its
 * share) — by `ADD` while it is ahead of `at`, so concurrent grants of one flow add up — with its weight.
 * A flow not kept is not added. No condition: the flows order takes, the levels bound them.
 */
export function flowChanges(
  update: UpdateBuilder,
  state: Pick<BucketState, 'flows'>,
  flow: Flow,
  kept: boolean,
  change: { served?: number },
  at: number,
): void {
  for (const [id, timeline] of Object.entries(state.flows ?? {})) {
    if (id === flow.id || activeUntil(timeline) > at) continue;
    update.remove(flowField(id, 'until')).remove(flowField(id, 'vt')).remove(flowField(id, 'weight'));
  }
  if (!kept) return;
  const own = state.flows?.[flow.id];
  if (change.served !== undefined) {
    if (own && own.vt >= at) update.add(flowField(flow.id, 'vt'), change.served);
    else update.set(flowField(flow.id, 'vt'), at + change.served);
  }
  if (own?.weight !== flow.weight) update.set(flowField(flow.id, 'weight'), flow.weight);
}
