/**
 * Re-scheduling on SQS: a deferral is a new message with `DelaySeconds`, sent before the original is
 * acknowledged; a real failure changes the original's visibility so SQS redelivers it later. Both hold
 * AWS's limits themselves, because the local emulator is looser than SQS.
 */
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { JobSchema, jobFlowId, jobMessageAttributes, type Job } from '../../contract/job.js';
import { traceSystemAttributes } from '../../platform/tracing.js';
import { AWS_LIMITS } from '../../config/lanes.js';
import { errorName } from '../../platform/errors.js';
import { DeleteFailedError, ResendFailedError, VisibilityChangeFailedError } from '../../platform/sqs-errors.js';

/**
 * A delay SQS accepts: rounded up to whole seconds (a job is never re-sent earlier than asked), then
 * clamped to 0..900. Longer waits are the caller's business: they ride on the job's `eligibleAt` and hop
 * until due. `Infinity` clamps to 900, negatives to 0.
 *
 * @throws {RangeError} when `seconds` is NaN.
 */
export function clampDelaySeconds(seconds: number): number {
  if (Number.isNaN(seconds)) throw new RangeError('delaySeconds is NaN');
  return Math.min(AWS_LIMITS.maxDelaySeconds, Math.max(0, Math.ceil(seconds)));
}

/**
 * A visibility timeout SQS accepts: rounded up to whole seconds, clamped to 0..43200 (12 h).
 *
 * @throws {RangeError} when `seconds` is NaN.
 */
export function clampVisibilityTimeoutSeconds(seconds: number): number {
  if (Number.isNaN(seconds)) throw new RangeError('visibilityTimeoutSeconds is NaN');
  return Math.min(AWS_LIMITS.maxVisibilityTimeoutSeconds, Math.max(0, Math.ceil(seconds)));
}

/**
 * Size SQS counts against its message limit: the body plus each attribute's name, data type and value.
 */
function messageSizeBytes(body: string, attributes: Record<string, { DataType: string; StringValue: string }>): number {
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, value] of Object.entries(attributes)) {
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value.DataType, 'utf8') + Buffer.byteLength(value.StringValue, 'utf8');
  }
  return size;
}

/** Input of {@link resendDeferred}. */
export interface ResendDeferredInput {
  sqs: SQSClient;
  queueUrl: string;
  /** The job as it should be read next time: `deferrals` already +1, `eligibleAt` already moved, `attempt` unchanged. */
  job: Job;
  /** Wanted delay; applied as {@link clampDelaySeconds} of it. */
  delaySeconds: number;
  /** The job's X-Ray trace header, carried to the new message (`lib/platform/tracing.ts`). */
  traceHeader?: string | undefined;
}

/** What {@link resendDeferred} sent. */
export interface ResendResult {
  /** SQS id of the new message. */
  messageId: string;
  /** The `DelaySeconds` actually sent (after clamping), for logs and metrics. */
  delaySeconds: number;
  /** Body plus attributes, as SQS counts them. */
  sizeBytes: number;
}

/**
 * Sends `job` again as a new message (JSON body, {@link jobMessageAttributes} as message attributes)
 * hidden for `delaySeconds`, clamped to SQS's 0..900 whole seconds. The new message starts again at
 * receive count 1. The caller acknowledges the original only after this returned.
 *
 * @throws {@link ResendFailedError} when the job is not a valid job, the delay is NaN, the message would
 *   exceed 256 KiB, or `SendMessage` failed: the new message may not exist, so the original must come back.
 */
export async function resendDeferred(input: ResendDeferredInput): Promise<ResendResult> {
  const { sqs, queueUrl } = input;
  const parsed = JobSchema.safeParse(input.job);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => i.path.join('.') || '(root)');
    throw new ResendFailedError(`refusing to re-send an invalid job (fields: ${fields.slice(0, 5).join(', ')})`, 'invalid_job', queueUrl, {
      cause: parsed.error,
    });
  }
  const job = parsed.data;
  if (Number.isNaN(input.delaySeconds)) {
    throw new ResendFailedError(`refusing to re-send job ${job.jobId}: delaySeconds is NaN`, 'invalid_delay', queueUrl);
  }
  const delaySeconds = clampDelaySeconds(input.delaySeconds);
  const body = JSON.stringify(job);
  const attributes = jobMessageAttributes(job);
  const sizeBytes = messageSizeBytes(body, attributes);
  if (sizeBytes > AWS_LIMITS.maxMessageBytes) {
    throw new ResendFailedError(`job ${job.jobId} is ${sizeBytes} bytes as a message, over SQS's ${AWS_LIMITS.maxMessageBytes}`, 'too_large', queueUrl);
  }
  let messageId: string | undefined;
  try {
    const out = await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body,
        MessageAttributes: attributes,
        DelaySeconds: delaySeconds,
        // The job's flow: SQS fair queues deliver a quiet flow's messages before a backlogged one's.
        MessageGroupId: jobFlowId(job),
        ...traceSystemAttributes(input.traceHeader),
      }),
    );
    messageId = out.MessageId;
  } catch (error) {
    throw new ResendFailedError(`SendMessage of job ${job.jobId} failed: ${errorName(error) ?? 'Error'}`, 'send_failed', queueUrl, {
      cause: error,
    });
  }
  if (!messageId) {
    throw new ResendFailedError(`SendMessage of job ${job.jobId} returned no MessageId`, 'send_failed', queueUrl);
  }
  return { messageId, delaySeconds, sizeBytes };
}

/** Input of {@link extendVisibility}. */
export interface ExtendVisibilityInput {
  sqs: SQSClient;
  queueUrl: string;
  /** Receipt handle of the delivery being handled. */
  receiptHandle: string;
  /** Seconds from now until the message may be received again; applied as {@link clampVisibilityTimeoutSeconds} of it. */
  visibilityTimeoutSeconds: number;
}

/**
 * Sets when a received message becomes visible again (`ChangeMessageVisibility`, counted from now,
 * clamped to 0..43200 whole seconds). Used for a real failure's backoff; it can shorten as well as
 * lengthen the current timeout. Returns the timeout actually sent.
 *
 * @throws {@link VisibilityChangeFailedError} when the call fails (or the timeout is NaN); the message
 *   then keeps the visibility timeout it had.
 */
export async function extendVisibility(input: ExtendVisibilityInput): Promise<{ visibilityTimeoutSeconds: number }> {
  const { sqs, queueUrl, receiptHandle } = input;
  let visibilityTimeoutSeconds: number;
  try {
    visibilityTimeoutSeconds = clampVisibilityTimeoutSeconds(input.visibilityTimeoutSeconds);
  } catch (error) {
    throw new VisibilityChangeFailedError('visibility timeout is not a number', queueUrl, { cause: error });
  }
  try {
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: visibilityTimeoutSeconds }));
  } catch (error) {
    throw new VisibilityChangeFailedError(`ChangeMessageVisibility failed: ${errorName(error) ?? 'Error'}`, queueUrl, { cause: error });
  }
  return { visibilityTimeoutSeconds };
}

/**
 * Deletes a received message now, by its receipt handle. For a record whose fate was just written
 * elsewhere (re-sent as a new message, moved to the DLQ): from then on the original must not come
 * back, even when the invocation dies before its batch response is read — Lambda fails the whole batch
 * on a timeout or a crash, and the event source mapping's own delete never happens, so the original
 * would come back beside its re-sent copy. SQS answers success for a message already deleted, so the
 * mapping's later delete of an acknowledged record does no harm.
 *
 * @throws {@link DeleteFailedError} when the call fails; the caller still acknowledges the record.
 */
export async function deleteReceived(input: { sqs: SQSClient; queueUrl: string; receiptHandle: string }): Promise<void> {
  try {
    await input.sqs.send(new DeleteMessageCommand({ QueueUrl: input.queueUrl, ReceiptHandle: input.receiptHandle }));
  } catch (error) {
    throw new DeleteFailedError(`DeleteMessage failed: ${errorName(error) ?? 'Error'}`, input.queueUrl, { cause: error });
  }
}

/** An SQS record's message attributes as Lambda delivers them. */
export type LambdaMessageAttributes = Record<string, { stringValue?: string | undefined; binaryValue?: string | undefined; dataType: string }>;

/**
 * Sends a received message again as it is — the same body and attributes — hidden for `delaySeconds`
 * (clamped to SQS's 0..900). For a record the consumer cannot look at now (its lane's configuration
 * is unusable): the new message starts again at receive count 1, so waiting costs no retry.
 *
 * @throws {@link ResendFailedError} when `SendMessage` failed: the original must come back.
 */
export async function resendUnchanged(input: {
  sqs: SQSClient;
  queueUrl: string;
  body: string;
  attributes?: LambdaMessageAttributes | undefined;
  delaySeconds: number;
}): Promise<ResendResult> {
  const { sqs, queueUrl, body } = input;
  const delaySeconds = clampDelaySeconds(input.delaySeconds);
  const attributes = Object.fromEntries(
    Object.entries(input.attributes ?? {}).map(([name, a]) => [
      name,
      {
        DataType: a.dataType,
        ...(a.stringValue !== undefined ? { StringValue: a.stringValue } : {}),
        ...(a.binaryValue !== undefined ? { BinaryValue: Buffer.from(a.binaryValue, 'base64') } : {}),
      },
    ]),
  );
  let messageId: string | undefined;
  try {
    const out = await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body,
        DelaySeconds: delaySeconds,
        ...(Object.keys(attributes).length ? { MessageAttributes: attributes } : {}),
      }),
    );
    messageId = out.MessageId;
  } catch (error) {
    throw new ResendFailedError(`SendMessage of an unchanged message failed: ${errorName(error) ?? 'Error'}`, 'send_failed', queueUrl, { cause: error });
  }
  if (!messageId) throw new ResendFailedError('SendMessage of an unchanged message returned no MessageId', 'send_failed', queueUrl);
  return { messageId, delaySeconds, sizeBytes: Buffer.byteLength(body, 'utf8') };
}
