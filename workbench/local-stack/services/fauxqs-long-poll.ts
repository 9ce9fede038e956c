/**
 * SQS's long poll, in fauxqs: a receive that waits is answered when a message is there for it, or
 * empty when its wait time ends (AWS: "an empty response only if the polling wait time expires").
 * fauxqs 1.9 wakes every waiting receive of a queue when one message arrives; all but one find nothing
 * and answer empty at once, and each poller sends its receive again. With Lambda's five pollers per
 * queue, every message so costs four empty receives and four new ones: CPU that AWS never spends, on
 * the one thread the local stack's consumers share with fauxqs. Here a message wakes one waiting
 * receive, and a receive that leaves messages behind wakes the next.
 *
 * The patch reaches into fauxqs's queue class (not part of its public API), so it checks the shape it
 * relies on and fails loudly when a new fauxqs version changed it.
 */
import { RatelaneError } from '../../../lib/platform/errors.js';

/** fauxqs's queue internals the patch relies on. */
interface FauxqsQueue {
  messages: unknown[];
  pollWaiters: Array<{ resolve: () => void; timer: ReturnType<typeof setTimeout> }>;
  isFifo(): boolean;
  hasAvailableFifoMessages(): boolean;
  notifyWaiters(): void;
  dequeue(...args: unknown[]): unknown;
}

/** fauxqs's queue class no longer has the shape the long-poll patch relies on. */
class FauxqsPatchError extends RatelaneError {
  override name = 'FauxqsPatchError';
  readonly kind = 'internal' as const;
  readonly retryable = false;
}

const PATCHED = Symbol.for('ratelane.fauxqsLongPoll');

/** Makes fauxqs's long polls wake one waiting receive per arrival, as SQS's do (once per process). */
export async function patchFauxqsLongPoll(): Promise<void> {
  const url = new URL('./sqs/sqsStore.js', import.meta.resolve('fauxqs')).href;
  const module = (await import(url)) as { SqsQueue?: { prototype: FauxqsQueue & { [PATCHED]?: true } } };
  const proto = module.SqsQueue?.prototype;
  if (!proto || typeof proto.notifyWaiters !== 'function' || typeof proto.dequeue !== 'function' || typeof proto.isFifo !== 'function') {
    throw new FauxqsPatchError(`fauxqs's SqsQueue (${url}) lacks notifyWaiters/dequeue/isFifo: the long-poll patch needs updating`);
  }
  if (proto[PATCHED]) return;
  proto[PATCHED] = true;
  const dequeue = proto.dequeue;
  // A receive's dequeue first moves due messages (fauxqs's `processTimers`), which would wake another
  // waiter for the very message this receive is about to take: wakes wait until the dequeue is done.
  const dequeuing = new WeakSet<FauxqsQueue>();
  proto.notifyWaiters = function (this: FauxqsQueue): void {
    if (!dequeuing.has(this)) wakeOne(this);
  };
  proto.dequeue = function (this: FauxqsQueue, ...args: unknown[]): unknown {
    dequeuing.add(this);
    try {
      return dequeue.apply(this, args);
    } finally {
      dequeuing.delete(this);
      wakeOne(this);
    }
  };
}

/** Wakes the longest-waiting receive when a message is ready for it. */
function wakeOne(queue: FauxqsQueue): void {
  const ready = queue.isFifo() ? queue.hasAvailableFifoMessages() : queue.messages.length > 0;
  if (!ready) return;
  const waiter = queue.pollWaiters.shift();
  if (!waiter) return;
  clearTimeout(waiter.timer);
  waiter.resolve();
}
