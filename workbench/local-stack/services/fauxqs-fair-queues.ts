/**
 * SQS fair queues, in fauxqs. In AWS a standard queue whose messages carry a `MessageGroupId` is a fair
 * queue ("How Amazon SQS fair queues work", SQS Developer Guide): the group is the message's tenant (a
 * message without one is a tenant of its own); a tenant is a **noisy neighbour** while it holds more than
 * 10 % of the queue's in-flight messages and at least 30 of them, or more than 10 % of the consumers'
 * recent processing time; while one is, a receive gets a quiet tenant's message whenever one is waiting,
 * and among noisy tenants first the one with the fewest messages in flight. fauxqs 1.9 keeps the group id
 * of a standard queue's message but delivers in the order sent, so a tenant's backlog would hold every
 * later tenant back locally where AWS would not (fauxqs 1.9.2 even drops the group id of a standard
 * queue's message). Here a standard queue's messages keep the group id they were sent with, and each
 * receive picks its messages by those rules (ratelane sends every job with its flow as the group: `jobFlowId`).
 *
 * "Recent" is not stated by AWS: processing time counts over the last {@link RECENT_MS}. The choice of
 * messages is {@link fairPicks} (pure); the patch reaches into fauxqs's queue class as the long-poll
 * patch does, and fails loudly when a new fauxqs version changed what it relies on.
 */
import { RatelaneError } from '../../../lib/platform/errors.js';

/** A tenant is noisy above this share of in-flight messages (with {@link NOISY_MIN_IN_FLIGHT} of its own) or of recent processing time. */
const NOISY_SHARE = 0.1;
/** A tenant is noisy by concurrency only with at least this many messages in flight. */
const NOISY_MIN_IN_FLIGHT = 30;
/** How far back processing time counts (ms). */
const RECENT_MS = 60_000;

/** What a queue's tenants hold: messages in flight, and processing time over the recent window (ms). */
export interface TenantLoad {
  inFlight: ReadonlyMap<string, number>;
  processingMs: ReadonlyMap<string, number>;
}

/** `load`'s totals: messages in flight and processing time. */
function totalsOf(load: TenantLoad): { inFlight: number; processing: number } {
  let inFlight = 0;
  for (const n of load.inFlight.values()) inFlight += n;
  let processing = 0;
  for (const ms of load.processingMs.values()) processing += ms;
  return { inFlight, processing };
}

/** Whether `tenant` is a noisy neighbour by `load` (whose totals are `totals`, when known). */
export function isNoisy(tenant: string, load: TenantLoad, totals = totalsOf(load)): boolean {
  const { inFlight, processing } = totals;
  const mine = load.inFlight.get(tenant) ?? 0;
  const byConcurrency = mine >= NOISY_MIN_IN_FLIGHT && mine > NOISY_SHARE * inFlight;
  return byConcurrency || (processing > 0 && (load.processingMs.get(tenant) ?? 0) > NOISY_SHARE * processing);
}

/**
 * The positions in `waiting` (tenants of the visible messages, oldest first) a receive of `max` takes, in
 * order: while no waiting tenant is noisy, the oldest; else a quiet tenant's oldest message whenever one is
 * waiting, and then the oldest of the noisy tenant with the fewest in flight (counting this receive's picks);
 * between noisy tenants with as many in flight, the one with less recent processing time. AWS states the
 * fewest in flight and what it is for ("helps balance processing time across noisy tenants"), not how it
 * breaks a tie; the oldest message would give a backlog's tenant every tie, and with the few records a lane's
 * mapping holds (four in the bench) ties come at about every other receive.
 */
export function fairPicks(waiting: readonly string[], load: TenantLoad, max: number): number[] {
  const noisy = new Map<string, boolean>();
  const totals = totalsOf(load);
  const noisyOf = (tenant: string): boolean => {
    let known = noisy.get(tenant);
    if (known === undefined) noisy.set(tenant, (known = isNoisy(tenant, load, totals)));
    return known;
  };
  const count = Math.min(max, waiting.length);
  if (!waiting.some(noisyOf)) return Array.from({ length: count }, (_, i) => i);
  const picked = new Set<number>();
  const inFlight = new Map(load.inFlight);
  while (picked.size < count) {
    let pick = -1;
    let fewest = Infinity;
    let leastProcessed = Infinity;
    for (let i = 0; i < waiting.length; i++) {
      if (picked.has(i)) continue;
      const tenant = waiting[i]!;
      if (!noisyOf(tenant)) {
        pick = i;
        break;
      }
      const held = inFlight.get(tenant) ?? 0;
      const processed = load.processingMs.get(tenant) ?? 0;
      if (held < fewest || (held === fewest && processed < leastProcessed)) {
        fewest = held;
        leastProcessed = processed;
        pick = i;
      }
    }
    picked.add(pick);
    inFlight.set(waiting[pick]!, (inFlight.get(waiting[pick]!) ?? 0) + 1);
  }
  return [...picked];
}

/** fauxqs's message and queue internals the patch relies on. */
interface FauxqsMessage {
  messageId: string;
  messageGroupId?: string;
}
interface FauxqsQueue {
  messages: FauxqsMessage[];
  enqueue(message: FauxqsMessage & { body?: string }): unknown;
  inflightMessages: Map<string, { message: FauxqsMessage }>;
  isFifo(): boolean;
  processTimers(): void;
  dequeue(...args: unknown[]): unknown;
  deleteMessage(receiptHandle: string): unknown;
}

/** fauxqs's queue class no longer has the shape the fair-queue patch relies on. */
class FauxqsFairQueuePatchError extends RatelaneError {
  override name = 'FauxqsFairQueuePatchError';
  readonly kind = 'internal' as const;
  readonly retryable = false;
}

const PATCHED = Symbol.for('ratelane.fauxqsFairQueues');
/** The long-poll patch's mark (`fauxqs-long-poll.ts`): it must wrap this one, not the other way round. */
const LONG_POLL_PATCHED = Symbol.for('ratelane.fauxqsLongPoll');

const tenantOf = (message: FauxqsMessage): string => message.messageGroupId ?? `message:${message.messageId}`;

/** One queue's processing record: messages in flight since when, and the processing that ended recently. */
interface Processing {
  started: Map<string, { tenant: string; at: number }>;
  ended: { tenant: string; from: number; to: number }[];
}

/** The tenants' load of `queue` at `now` (processing that ended is let go once older than the window). */
function loadOf(queue: FauxqsQueue, processing: Processing, now: number): TenantLoad {
  const since = now - RECENT_MS;
  const inFlight = new Map<string, number>();
  const processingMs = new Map<string, number>();
  const add = (tenant: string, from: number, to: number): void => {
    if (to > since) processingMs.set(tenant, (processingMs.get(tenant) ?? 0) + to - Math.max(from, since));
  };
  for (const [handle, s] of processing.started) {
    // A message whose visibility ran out is no longer in flight: its processing ended then, as far as SQS knows.
    if (!queue.inflightMessages.has(handle)) {
      processing.started.delete(handle);
      processing.ended.push({ tenant: s.tenant, from: s.at, to: now });
      continue;
    }
    inFlight.set(s.tenant, (inFlight.get(s.tenant) ?? 0) + 1);
    add(s.tenant, s.at, now);
  }
  processing.ended = processing.ended.filter((e) => e.to > since);
  for (const e of processing.ended) add(e.tenant, e.from, e.to);
  return { inFlight, processingMs };
}

/** A send request's entries as fauxqs's handlers get them. */
type SendBody = { MessageBody?: string; MessageGroupId?: string; Entries?: { MessageBody?: string; MessageGroupId?: string }[] };
type Handler = (body: SendBody, ...rest: unknown[]) => unknown;

/** Makes every fauxqs standard queue deliver as an SQS fair queue (once per process). */
export async function patchFauxqsFairQueues(): Promise<void> {
  const base = import.meta.resolve('fauxqs');
  const url = new URL('./sqs/sqsStore.js', base).href;
  const routerUrl = new URL('./sqs/sqsRouter.js', base).href;
  const module = (await import(url)) as { SqsQueue?: { prototype: FauxqsQueue & { [PATCHED]?: true } } };
  const router = (await import(routerUrl)) as { SqsRouter?: { prototype: { register(action: string, handler: Handler): void } } };
  const proto = module.SqsQueue?.prototype as (FauxqsQueue & { [PATCHED]?: true; [LONG_POLL_PATCHED]?: true }) | undefined;
  const routerProto = router.SqsRouter?.prototype;
  if (
    !proto ||
    !routerProto ||
    typeof routerProto.register !== 'function' ||
    typeof proto.enqueue !== 'function' ||
    typeof proto.processTimers !== 'function' ||
    typeof proto.dequeue !== 'function' ||
    typeof proto.deleteMessage !== 'function'
  ) {
    throw new FauxqsFairQueuePatchError(`fauxqs's SqsQueue or SqsRouter (${url}) lacks what the fair-queue patch needs: it needs updating`);
  }
  if (proto[PATCHED]) return;
  if (proto[LONG_POLL_PATCHED]) {
    // This dequeue moves due messages before taking; inside the long poll's dequeue that wakes no other receive.
    throw new FauxqsFairQueuePatchError('the fair-queue patch goes on before the long-poll patch (patchFauxqsFairQueues first)');
  }
  proto[PATCHED] = true;
  // The group ids of the send being handled (fauxqs's send handlers run without awaiting): each message
  // a standard queue enqueues meanwhile takes the group of the entry with its body.
  let sending: { body: string | undefined; group: string }[] | undefined;
  const register = routerProto.register;
  routerProto.register = function (this: unknown, action: string, handler: Handler): void {
    if (action !== 'SendMessage' && action !== 'SendMessageBatch') {
      register.call(this, action, handler);
      return;
    }
    const withGroups: Handler = (body, ...rest) => {
      const entries = action === 'SendMessage' ? [body] : (body.Entries ?? []);
      sending = entries.flatMap((e) => (e.MessageGroupId ? [{ body: e.MessageBody, group: e.MessageGroupId }] : []));
      try {
        return handler(body, ...rest);
      } finally {
        sending = undefined;
      }
    };
    register.call(this, action, withGroups);
  };
  const enqueue = proto.enqueue;
  proto.enqueue = function (this: FauxqsQueue, message: FauxqsMessage & { body?: string }): unknown {
    if (sending && message.messageGroupId === undefined && !this.isFifo()) {
      const i = sending.findIndex((e) => e.body === message.body);
      if (i >= 0) message.messageGroupId = sending.splice(i, 1)[0]!.group;
    }
    return enqueue.call(this, message);
  };
  const records = new WeakMap<FauxqsQueue, Processing>();
  const recordOf = (queue: FauxqsQueue): Processing => {
    let record = records.get(queue);
    if (!record) records.set(queue, (record = { started: new Map(), ended: [] }));
    return record;
  };
  const dequeue = proto.dequeue;
  proto.dequeue = function (this: FauxqsQueue, ...args: unknown[]): unknown {
    if (this.isFifo()) return dequeue.apply(this, args);
    const processing = recordOf(this);
    this.processTimers();
    const now = Date.now();
    const picks = fairPicks(this.messages.map(tenantOf), loadOf(this, processing, now), Number(args[0] ?? 1));
    if (picks.some((p, i) => p !== i)) {
      const chosen = new Set(picks);
      this.messages = [...picks.map((p) => this.messages[p]!), ...this.messages.filter((_, i) => !chosen.has(i))];
    }
    const received = dequeue.apply(this, args) as { ReceiptHandle: string }[];
    for (const r of received) {
      const entry = this.inflightMessages.get(r.ReceiptHandle);
      if (entry) processing.started.set(r.ReceiptHandle, { tenant: tenantOf(entry.message), at: now });
    }
    return received;
  };
  const deleteMessage = proto.deleteMessage;
  proto.deleteMessage = function (this: FauxqsQueue, receiptHandle: string): unknown {
    const processing = records.get(this);
    const started = processing?.started.get(receiptHandle);
    if (processing && started) {
      processing.started.delete(receiptHandle);
      processing.ended.push({ tenant: started.tenant, from: started.at, to: Date.now() });
    }
    return deleteMessage.call(this, receiptHandle);
  };
}
