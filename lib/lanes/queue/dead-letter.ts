/**
 * Moves a job to its lane's DLQ by hand. SQS's redrive dead-letters a message once its own receive
 * count reaches `maxReceiveCount`; a job that was re-sent (a deferral) starts again at receive count 1
 * but carries its earlier real failures in `attempt`, so when those exhaust the budget the consumer
 * sends it to the DLQ itself, with the reason as a message attribute.
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { jobFlowId, jobMessageAttributes, type Job } from '../../contract/job.js';
import { ResendFailedError } from '../../platform/sqs-errors.js';
import { traceSystemAttributes } from '../../platform/tracing.js';

/**
 * Sends `job` to the DLQ with a `deadLetterReason` attribute.
 *
 * @throws {ResendFailedError} when the send fails (the caller then reports the record failed: it comes back)
 */
export async function sendToDeadLetterQueue(input: {
  sqs: SQSClient;
  dlqUrl: string;
  job: Job;
  reason: string;
  traceHeader?: string | undefined;
}): Promise<string> {
  const { sqs, dlqUrl, job, reason } = input;
  try {
    const out = await sqs.send(
      new SendMessageCommand({
        QueueUrl: dlqUrl,
        MessageBody: JSON.stringify(job),
        MessageAttributes: {
          ...jobMessageAttributes(job),
          deadLetterReason: { DataType: 'String', StringValue: reason.slice(0, 256) },
        },
        MessageGroupId: jobFlowId(job),
        ...traceSystemAttributes(input.traceHeader),
      }),
    );
    if (!out.MessageId) throw new Error('SendMessage returned no MessageId');
    return out.MessageId;
  } catch (error) {
    throw new ResendFailedError(`dead-lettering job ${job.jobId} failed`, 'send_failed', dlqUrl, { cause: error });
  }
}
