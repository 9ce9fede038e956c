/**
 * Redriving a lane's dead-letter queue (`ratelane redrive`): what is in it, grouped by why it is there, then
 * moved back to the lane's queue — never a job that is already settled.
 *
 * 1. **Survey**: every message of the DLQ is received and held (its visibility timeout) while it is read: its
 *    body as a job, the job's state as the live API reads it, and its reason — the `deadLetterReason` the
 *    consumer gave it, else the job's last ledger reason (SQS's own redrive gives none), else `unknown`.
 * 2. **Settled ones leave**: a job already committed (by itself or a duplicate), cancelled or erased would only
 *    cost a model call or be stopped again: its message is deleted from the DLQ and counted, never moved.
 * 3. **The rest moves back**: the held messages are released, then SQS moves them with `StartMessageMoveTask`
 *    (source: the DLQ, destination: the lane's queue; bodies and attributes as they are, so a job keeps its
 *    tenant and the budget it carries: one the consumer dead-lettered itself after carried failures gets one
 *    more receive, one SQS dead-lettered gets the lane's receive budget again). Where the service has no
 *    such action (the local emulator answers `InvalidAction`), ratelane moves them itself — each held message
 *    sent to the queue with its body and attributes, then deleted from the DLQ, ten at a time. A message that
 *    is no job moves too (the consumer rejects it under its message id, recorded in the ledger). Whether the
 *    service has move tasks is asked first (`ListMessageMoveTasks`), so the messages are surveyed once.
 *
 * `dryRun` surveys and releases: nothing is deleted or moved. Only one move task runs per queue at a time
 * (SQS): a second redrive while one runs is told so. Ids, reasons and counts only, never document text.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListMessageMoveTasksCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { AWS_LIMITS } from '../../config/lanes.js';
import { JobSchema } from '../../contract/job.js';
import { errorName } from '../../platform/errors.js';
import { jobStatus, type JobStatusStores } from '../../store/job-status.js';

/** How long a surveyed message stays held (s): the survey of a large DLQ must finish within it. */
const SURVEY_HOLD_SECONDS = 900;
/** Job ids kept per group in the report. */
const IDS_PER_GROUP = 20;

/** What a redrive reads and writes. */
export interface DlqRedriveDeps {
  sqs: SQSClient;
  queueName: string;
  dlqName: string;
  /** The lane's stores a job's state needs (with its erasure records and cancel markers). */
  stores: JobStatusStores & { ledger: JobStatusStores['ledger'] };
  /** Told of progress (counts only). */
  onProgress?: (line: string) => void;
  /**
   * Long poll of each survey receive (s; default 1): SQS spreads a queue over servers, and only a long poll
   * asks them all. 0 against one that keeps a queue in one place (the local emulator).
   */
  receiveWaitSeconds?: number;
}

/** Messages of one reason. */
interface DlqGroup {
  reason: string;
  count: number;
  /** Up to 20 of their job ids (`msg:<id>` for a message that is no job). */
  jobIds: string[];
}

/** What a redrive found and did. */
export interface DlqRedriveReport {
  dryRun: boolean;
  /** Messages found in the DLQ. */
  found: number;
  /** The messages to move, by reason. */
  groups: DlqGroup[];
  /** Messages deleted instead of moved: their jobs are committed, cancelled or erased. */
  settled: { committed: number; cancelled: number; erased: number };
  /** Messages moved back (0 for a dry run; for a move task, those it was started for). */
  moved: number;
  /** How they moved: SQS's move task (its handle), ratelane's own send and delete, or not at all. */
  method: { kind: 'move_task'; taskHandle: string } | { kind: 'send_delete' } | { kind: 'none'; reason?: string };
}

/** A surveyed message: what it is, and what is done with it. */
interface Surveyed {
  message: Message;
  jobId: string;
  reason: string;
  settledAs?: 'committed' | 'cancelled' | 'erased';
}

/** The queue's URL and ARN. */
async function queueOf(sqs: SQSClient, name: string): Promise<{ url: string; arn: string }> {
  const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  if (!url) throw new Error(`GetQueueUrl of ${name} returned no URL`);
  const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn;
  if (!arn) throw new Error(`GetQueueAttributes of ${name} returned no QueueArn`);
  return { url, arn };
}

/** Every message of the queue, each held for {@link SURVEY_HOLD_SECONDS}. */
async function holdAll(sqs: SQSClient, url: string, waitSeconds: number, onProgress?: (line: string) => void): Promise<Message[]> {
  const held: Message[] = [];
  for (let empty = 0; empty < 2; ) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: AWS_LIMITS.maxBatchEntries,
        VisibilityTimeout: SURVEY_HOLD_SECONDS,
        WaitTimeSeconds: waitSeconds,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const messages = out.Messages ?? [];
    // An empty receive can miss messages on a few of SQS's servers: a second one confirms the queue is drained.
    empty = messages.length === 0 ? empty + 1 : 0;
    held.push(...messages);
    if (messages.length > 0 && held.length % 100 < AWS_LIMITS.maxBatchEntries) onProgress?.(`surveyed ${held.length} message(s)`);
  }
  return held;
}

/** A held message's job, state and reason. */
async function survey(message: Message, stores: DlqRedriveDeps['stores']): Promise<Surveyed> {
  let parsed: ReturnType<typeof JobSchema.safeParse> | undefined;
  try {
    parsed = JobSchema.safeParse(JSON.parse(message.Body ?? ''));
  } catch {
    parsed = undefined;
  }
  if (!parsed?.success) return { message, jobId: `msg:${message.MessageId}`, reason: 'not_a_job' };
  const jobId = parsed.data.jobId;
  const view = await jobStatus(jobId, stores);
  const given = message.MessageAttributes?.deadLetterReason?.StringValue;
  const reason = given ?? (view.state === 'dead_lettered' ? view.reason : 'unknown');
  if (view.state === 'committed' || view.state === 'cancelled' || view.state === 'erased') return { message, jobId, reason, settledAs: view.state };
  return { message, jobId, reason };
}

async function inBatches(messages: readonly Message[], send: (batch: Message[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < messages.length; i += AWS_LIMITS.maxBatchEntries) await send(messages.slice(i, i + AWS_LIMITS.maxBatchEntries));
}

const entriesOf = (batch: readonly Message[]) => batch.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' }));

/**
 * Surveys the DLQ and, unless `dryRun`, moves what is not settled back to the queue (see the module's description).
 *
 * @throws what SQS and the stores throw: a message still held comes back by itself when its hold ends
 */
export async function redriveDeadLetters(deps: DlqRedriveDeps, options: { dryRun: boolean }): Promise<DlqRedriveReport> {
  const { sqs } = deps;
  const [queue, dlq] = await Promise.all([queueOf(sqs, deps.queueName), queueOf(sqs, deps.dlqName)]);
  const waitSeconds = deps.receiveWaitSeconds ?? 1;
  const held = await holdAll(sqs, dlq.url, waitSeconds, deps.onProgress);
  const surveyed: Surveyed[] = [];
  for (const message of held) surveyed.push(await survey(message, deps.stores));
  const settledOnes = surveyed.filter((s) => s.settledAs);
  const toMove = surveyed.filter((s) => !s.settledAs);
  const report: DlqRedriveReport = {
    dryRun: options.dryRun,
    found: held.length,
    groups: groupsOf(toMove),
    settled: {
      committed: settledOnes.filter((s) => s.settledAs === 'committed').length,
      cancelled: settledOnes.filter((s) => s.settledAs === 'cancelled').length,
      erased: settledOnes.filter((s) => s.settledAs === 'erased').length,
    },
    moved: 0,
    method: { kind: 'none' },
  };
  const release = (messages: readonly Message[]) =>
    inBatches(messages, (batch) =>
      sqs.send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: dlq.url, Entries: entriesOf(batch).map((e) => ({ ...e, VisibilityTimeout: 0 })) })),
    );
  if (options.dryRun) {
    await release(held);
    return report;
  }
  await inBatches(
    settledOnes.map((s) => s.message),
    (batch) => sqs.send(new DeleteMessageBatchCommand({ QueueUrl: dlq.url, Entries: entriesOf(batch) })),
  );
  const moving = toMove.map((s) => s.message);
  if (moving.length === 0) return report;
  if (!(await hasMoveTasks(sqs, dlq.arn))) {
    // No move task here: the held messages are sent to the queue and deleted from the DLQ by hand.
    report.moved = await moveByHand(sqs, moving, { queueUrl: queue.url, dlqUrl: dlq.url });
    report.method = { kind: 'send_delete' };
    return report;
  }
  await release(moving);
  try {
    const task = await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlq.arn, DestinationArn: queue.arn }));
    report.method = { kind: 'move_task', taskHandle: task.TaskHandle ?? '' };
    report.moved = moving.length;
  } catch (error) {
    report.method = { kind: 'none', reason: `StartMessageMoveTask failed (${errorName(error) ?? 'Error'}): a move task may already be running; nothing moved` };
  }
  return report;
}

/** Whether the service runs message move tasks (the local emulator answers `InvalidAction` to them). */
async function hasMoveTasks(sqs: SQSClient, sourceArn: string): Promise<boolean> {
  try {
    await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: sourceArn, MaxResults: 1 }));
    return true;
  } catch (error) {
    if (errorName(error) === 'InvalidAction') return false;
    throw error;
  }
}

/** Sends each held message to the queue with its body and attributes, then deletes it from the DLQ; returns how many moved. */
async function moveByHand(sqs: SQSClient, messages: readonly Message[], urls: { queueUrl: string; dlqUrl: string }): Promise<number> {
  let moved = 0;
  await inBatches(messages, async (batch) => {
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: urls.queueUrl,
        // Each keeps its flow (`jobFlowId`: the group SQS fair queues deliver by).
        Entries: batch.map((m, i) => {
          const group = m.Attributes?.MessageGroupId;
          return { Id: String(i), MessageBody: m.Body ?? '', MessageAttributes: attributesOf(m), ...(group ? { MessageGroupId: group } : {}) };
        }),
      }),
    );
    const ok = new Set((sent.Successful ?? []).map((s) => s.Id));
    const done = batch.filter((_, i) => ok.has(String(i)));
    if (done.length > 0) await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: urls.dlqUrl, Entries: entriesOf(done) }));
    moved += done.length;
  });
  return moved;
}

/** A received message's attributes as a send takes them (type and value; no empty list fields). */
function attributesOf(message: Message): Record<string, MessageAttributeValue> {
  return Object.fromEntries(
    Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
      name,
      {
        DataType: value.DataType ?? 'String',
        ...(value.StringValue !== undefined ? { StringValue: value.StringValue } : {}),
        ...(value.BinaryValue !== undefined ? { BinaryValue: value.BinaryValue } : {}),
      },
    ]),
  );
}

function groupsOf(messages: readonly Surveyed[]): DlqGroup[] {
  const groups = new Map<string, DlqGroup>();
  for (const s of messages) {
    const group = groups.get(s.reason) ?? { reason: s.reason, count: 0, jobIds: [] };
    group.count += 1;
    if (group.jobIds.length < IDS_PER_GROUP) group.jobIds.push(s.jobId);
    groups.set(s.reason, group);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
}
