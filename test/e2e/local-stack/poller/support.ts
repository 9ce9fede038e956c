/**
 * Shared by the poller tests (`*.test.ts` here): an SQS client on the run's fauxqs (opened and closed
 * by {@link usePollerQueues}), test queues (with a DLQ redrive when asked), sending, queue depths,
 * waiting, starting an `EventSourcePoller` on a queue, and a tracker of each body's receive counts.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createAwsClients, type AwsClients } from '../../../../lib/platform/clients.js';
import { EventSourcePoller } from '../../../../workbench/local-stack/poller/poller.js';
import type { EventSourcePollerOptions } from '../../../../workbench/local-stack/poller/options.js';
import type { PollerEvent } from '../../../../workbench/local-stack/poller/events.js';
import { testEndpoints, uniqueName } from '../../../helpers/endpoints.js';

export const REGION = 'us-east-1';
let clients: AwsClients;
/** The SQS client of the file's tests (set by {@link usePollerQueues}'s `before`). */
export let sqs: SQSClient;
const queues: string[] = [];
const pollers: EventSourcePoller[] = [];

/**
 * Opens the SQS client before the tests of the enclosing `describe`; after them, stops every poller
 * they started and deletes every queue they created.
 */
export function usePollerQueues(): void {
  before(() => {
    clients = createAwsClients(REGION, testEndpoints());
    sqs = clients.sqs;
  });

  after(async () => {
    await Promise.all(pollers.map((p) => p.stop()));
    await Promise.allSettled(queues.map((url) => sqs.send(new DeleteQueueCommand({ QueueUrl: url }))));
    clients.destroy();
  });
}

export interface TestQueue {
  url: string;
  arn: string;
}

export interface QueueOptions {
  visibilityTimeout?: number;
  deadLetter?: { arn: string; maxReceiveCount: number };
}

/** A queue (visibility timeout 1 s unless given), deleted after the file's tests; with a DLQ redrive when asked. */
export async function createQueue(options: QueueOptions = {}): Promise<TestQueue> {
  const attributes: Record<string, string> = { VisibilityTimeout: String(options.visibilityTimeout ?? 1) };
  if (options.deadLetter) {
    const { arn, maxReceiveCount } = options.deadLetter;
    attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount });
  }
  const created = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('poller'), Attributes: attributes }));
  const url = created.QueueUrl!;
  queues.push(url);
  const got = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return { url, arn: got.Attributes!.QueueArn! };
}

/** Sends the bodies in batches of 10, each with the given message attributes. */
export async function send(queue: TestQueue, bodies: string[], attributes?: Record<string, MessageAttributeValue>): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    const out = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: bodies.slice(i, i + 10).map((body, j) => ({ Id: `m${i + j}`, MessageBody: body, MessageAttributes: attributes })),
      }),
    );
    assert.equal(out.Failed?.length ?? 0, 0);
  }
}

/** The queue's approximate depths. */
export async function counts(url: string): Promise<{ visible: number; notVisible: number; delayed: number }> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  const a = out.Attributes ?? {};
  return {
    visible: Number(a.ApproximateNumberOfMessages),
    notVisible: Number(a.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed),
  };
}

/** Polls the predicate every 20 ms until it holds; fails the test after `timeoutMs`. */
export async function waitFor(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 6000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A Lambda SQS handler. */
export type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void | null>;

/**
 * Starts a poller on the queue (1 s long polls, concurrency 2, 1 s timeout unless given; held until
 * `when` when given), stopped after the file's tests.
 */
export function startPoller(queue: TestQueue, handler: Handler, options: Partial<EventSourcePollerOptions> = {}, when?: Promise<void>) {
  const events: PollerEvent[] = [];
  const poller = new EventSourcePoller({
    sqs,
    queueUrl: queue.url,
    queueArn: queue.arn,
    awsRegion: REGION,
    handler,
    waitTimeSeconds: 1,
    maximumConcurrency: 2,
    functionTimeoutMs: 1000,
    onEvent: (e) => events.push(e),
    ...options,
  });
  pollers.push(poller);
  return { poller, events, started: poller.start(when) };
}

/** Every receive count each body was handed over with, in order. */
export function tracker() {
  const seen = new Map<string, number[]>();
  return {
    seen,
    record(event: SQSEvent) {
      for (const r of event.Records) seen.set(r.body, [...(seen.get(r.body) ?? []), Number(r.attributes.ApproximateReceiveCount)]);
    },
  };
}
