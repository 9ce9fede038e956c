/**
 * SQS's clock in the unit and contract tier: a message's delay and a visibility timeout are not waited
 * out. A test asserts what the code under test asked of them — the `DelaySeconds` it sent, the visibility
 * it set, or fauxqs's own record of the message ({@link inspectQueue}) — and then lets the time pass at
 * once: {@link skipDelays} sends the delayed messages without their delay, {@link expireVisibility} ends
 * the visibility timeout of messages in flight. The consumer's clock (`virtual-clock.ts`) is moved by
 * the same time, so a job's `eligibleAt` is due when its message comes back.
 */
import {
  ChangeMessageVisibilityCommand,
  type ChangeMessageVisibilityCommandInput,
  type Message,
  type SendMessageCommandInput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { testEndpoints } from './endpoints.js';

/** What a client asked of SQS's clock, in the order it was sent. */
export interface QueueWaits {
  /** `DelaySeconds` of every `SendMessage` (0 when none was given), with its queue, and whether it was skipped. */
  readonly delays: { queueUrl: string; delaySeconds: number; skipped: boolean }[];
  /** `VisibilityTimeout` of every `ChangeMessageVisibility`. */
  readonly visibilities: number[];
  /**
   * Moves `clock` by the longest delay skipped since the last call (ms; 0 when none was): the time those
   * messages would have waited, so that their jobs' `eligibleAt` is due when they are received.
   */
  letDelaysPass(clock: { advance(ms: number): void }): number;
}

/**
 * Records the `DelaySeconds` of every `SendMessage` that `sqs` sends and sends it without the delay (the
 * time passes at once) — unless it is longer than `upToSeconds` (default: no limit): such a message is
 * sent as asked and stays delayed (a test never waits it out) — and the `VisibilityTimeout` of every
 * `ChangeMessageVisibility` (sent as asked). Only requests that are really sent are recorded: a fault
 * injected earlier in the client's middleware (`failSqsCommands` with `when: 'before'`) keeps its request off the list.
 */
export function skipDelays(sqs: SQSClient, options: { upToSeconds?: number } = {}): QueueWaits {
  const upTo = options.upToSeconds ?? Number.POSITIVE_INFINITY;
  let passed = 0;
  const waits: QueueWaits = {
    delays: [],
    visibilities: [],
    letDelaysPass: (clock) => {
      const ms = Math.max(0, ...waits.delays.slice(passed).flatMap((d) => (d.skipped ? [d.delaySeconds * 1000] : [])));
      passed = waits.delays.length;
      clock.advance(ms);
      return ms;
    },
  };
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'SendMessageCommand') {
        const input = args.input as SendMessageCommandInput;
        const delaySeconds = input.DelaySeconds ?? 0;
        const skipped = delaySeconds <= upTo;
        waits.delays.push({ queueUrl: input.QueueUrl ?? '', delaySeconds, skipped });
        if (skipped) return next({ ...args, input: { ...input, DelaySeconds: 0 } });
      }
      if (context.commandName === 'ChangeMessageVisibilityCommand')
        waits.visibilities.push((args.input as ChangeMessageVisibilityCommandInput).VisibilityTimeout ?? 0);
      return next(args);
    },
    // Before the request is serialized, after every `initialize` middleware (where faults are injected).
    { step: 'serialize', priority: 'high', name: 'skipDelays' },
  );
  return waits;
}

/**
 * The visibility timeout of `messages` (received from `t`'s queue) runs out now: SQS may deliver them
 * again. Messages no longer in flight (deleted, or already visible again) are left as they are.
 */
export async function expireVisibility(t: { clients: { sqs: SQSClient }; queueUrl: string }, messages: readonly Message[]): Promise<void> {
  const inflight = new Set((await inspectQueue(t.queueUrl)).inflight.map((m) => m.receiptHandle));
  for (const message of messages.filter((m) => inflight.has(m.ReceiptHandle!))) {
    await t.clients.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: t.queueUrl, ReceiptHandle: message.ReceiptHandle!, VisibilityTimeout: 0 }));
  }
}

/** How long fauxqs still hides `message` (ms from now; negative once its visibility timeout ended): from its in-flight record. */
export async function visibilityLeft(t: { queueUrl: string }, message: Message): Promise<number> {
  const held = (await inspectQueue(t.queueUrl)).inflight.find((m) => m.message.messageId === message.MessageId);
  if (!held) throw new Error(`message ${message.MessageId} is not in flight`);
  return held.visibilityDeadline - Date.now();
}

/** One message as fauxqs holds it (`GET /_fauxqs/queues/<name>`). */
interface HeldMessage {
  messageId: string;
  body: string;
  messageAttributes: Record<string, { DataType: string; StringValue?: string }>;
  /** Epoch ms it was sent. */
  sentTimestamp: number;
  approximateReceiveCount: number;
  /** Epoch ms its delay ends (a delayed message). */
  delayUntil?: number;
}

/** A queue's messages as fauxqs holds them: ready, delayed, and in flight with the end of their visibility timeout. */
export interface QueueInspection {
  ready: HeldMessage[];
  delayed: HeldMessage[];
  inflight: { message: HeldMessage; receiptHandle: string; visibilityDeadline: number }[];
}

/** What fauxqs holds in the queue at `queueUrl`, without receiving anything (its inspection endpoint). */
export async function inspectQueue(queueUrl: string): Promise<QueueInspection> {
  const name = queueUrl.split('/').pop()!;
  const response = await fetch(`${testEndpoints().sqs}/_fauxqs/queues/${encodeURIComponent(name)}`);
  if (!response.ok) throw new Error(`fauxqs inspection of ${name}: HTTP ${response.status}`);
  return ((await response.json()) as { messages: QueueInspection }).messages;
}
