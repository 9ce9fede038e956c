/**
 * The producer tests' fixtures on the run's fauxqs: fresh lanes with their own queue and bucket,
 * clients per region (destroyed after the file's tests), reading a queue and a bucket back, producer
 * deps that do not sleep, and an interceptor that fails chosen SendMessageBatch entries.
 */
import { after } from 'node:test';
import { CreateBucketCommand, ListObjectsV2Command, type BucketLocationConstraint } from '@aws-sdk/client-s3';
import { CreateQueueCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import { createAwsClients, type AwsClients } from '../../lib/platform/clients.js';
import { resolveLanes, type LaneSet } from '../../lib/config/lanes.js';
import type { SubmitDeps } from '../../lib/intake/producer.js';
import { testEndpoints, uniqueName } from './endpoints.js';

/** The run's fauxqs endpoints. */
export const endpoints = testEndpoints();
const created: AwsClients[] = [];
const shared = new Map<string, AwsClients>();

export /** New clients in a region (destroyed after the file's tests). */
function newClients(region: string): AwsClients {
  const c = createAwsClients(region, endpoints);
  created.push(c);
  return c;
}
/** The file's shared clients of a region. */
export function clientsIn(region: string): AwsClients {
  let c = shared.get(region);
  if (!c) {
    c = newClients(region);
    shared.set(region, c);
  }
  return c;
}

after(() => {
  for (const c of created) c.destroy();
});

/** Two fresh lanes and their queue URLs and buckets. */
export interface TestLanes {
  lanes: LaneSet;
  queueUrl: Record<'us' | 'eu', string>;
  bucket: Record<'us' | 'eu', string>;
}

/** Fresh lanes with their own queue and bucket in each lane's region. */
export async function setupLanes(): Promise<TestLanes> {
  const lanes = resolveLanes({
    us: { resources: { queueName: uniqueName('rl-us-jobs'), bucketName: uniqueName('rl-us-docs') } },
    eu: { resources: { queueName: uniqueName('rl-eu-jobs'), bucketName: uniqueName('rl-eu-docs') } },
  });
  const queueUrl = {} as Record<'us' | 'eu', string>;
  const bucket = {} as Record<'us' | 'eu', string>;
  for (const name of ['us', 'eu'] as const) {
    const lane = lanes[name]!;
    const { sqs, s3 } = clientsIn(lane.region);
    const out = await sqs.send(new CreateQueueCommand({ QueueName: lane.resources.queueName }));
    queueUrl[name] = out.QueueUrl!;
    await s3.send(
      new CreateBucketCommand({
        Bucket: lane.resources.bucketName,
        ...(lane.region === 'us-east-1' ? {} : { CreateBucketConfiguration: { LocationConstraint: lane.region as BucketLocationConstraint } }),
      }),
    );
    bucket[name] = lane.resources.bucketName;
  }
  return { lanes, queueUrl, bucket };
}

/** Receives every visible message of a queue (hidden for 5 minutes after). */
export async function drain(sqs: SQSClient, queueUrl: string): Promise<Message[]> {
  const all: Message[] = [];
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 300, MessageAttributeNames: ['All'] }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) return all;
    all.push(...messages);
  }
}

/** The keys in a bucket, sorted. */
export async function objectKeys(region: string, bucket: string): Promise<string[]> {
  const out = await clientsIn(region).s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (out.Contents ?? []).map((o) => o.Key!).sort();
}

/** Producer deps on the shared clients that record the regions asked for and the sleeps (without sleeping). */
export function baseDeps(lanes: LaneSet, extra: Partial<SubmitDeps> = {}): SubmitDeps & { regionsAsked: string[]; sleeps: number[] } {
  const regionsAsked: string[] = [];
  const sleeps: number[] = [];
  return {
    lanes,
    clientsFor: (region) => {
      regionsAsked.push(region);
      return clientsIn(region);
    },
    now: () => new Date(),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    regionsAsked,
    sleeps,
    ...extra,
  };
}

type BatchInput = { Entries?: { Id?: string }[] };
type BatchOutput = { Successful?: unknown[]; Failed?: { Id: string; SenderFault: boolean; Code: string; Message?: string }[] };

/**
 * A thin interceptor on one SQS client's SendMessageBatch calls (an SDK middleware): `plan` may
 * remove entries from the request (so they are really not sent) and report them as failed, or throw.
 */
export function interceptBatches(
  sqs: SQSClient,
  plan: (call: number, ids: string[]) => { fail?: Record<string, { senderFault: boolean; code: string }>; throw?: Error },
): { calls: number[] } {
  const calls: number[] = [];
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'SendMessageBatchCommand') return next(args);
      const input = args.input as BatchInput;
      const ids = (input.Entries ?? []).map((e) => e.Id!);
      calls.push(ids.length);
      const decision = plan(calls.length, ids);
      if (decision.throw) throw decision.throw;
      const fail = decision.fail ?? {};
      input.Entries = (input.Entries ?? []).filter((e) => !(e.Id! in fail));
      const result = await next(args);
      const output = result.output as BatchOutput;
      output.Failed = [
        ...(output.Failed ?? []),
        ...Object.entries(fail).map(([Id, f]) => ({ Id, SenderFault: f.senderFault, Code: f.code, Message: 'injected by test' })),
      ];
      return result;
    },
    { step: 'initialize', name: 'testBatchInterceptor' },
  );
  return { calls };
}
