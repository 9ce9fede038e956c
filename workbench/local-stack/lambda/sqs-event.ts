/**
 * Builds what Lambda hands an SQS-triggered function: the `SQSEvent` made from `ReceiveMessage`
 * output (its `Context` is `invocation.ts`'s). Shapes follow AWS's documented SQS event (camelCase record
 * fields, `attributes` as strings, `messageAttributes` as `{ stringValue | binaryValue,
 * stringListValues, binaryListValues, dataType }` with binaries in base64).
 */
import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSMessageAttribute, SQSRecord, SQSRecordAttributes } from 'aws-lambda';
import { RatelaneError } from '../../../lib/platform/errors.js';

/** A received message that cannot become a Lambda record (a field SQS always sends is missing). */
class SqsEventError extends RatelaneError {
  override name = 'SqsEventError';
  readonly kind = 'input' as const;
  readonly retryable = false;
}

/** Where the records come from: the mapping's queue ARN and region. */
export interface EventSource {
  queueArn: string;
  awsRegion: string;
}

/** System attributes Lambda always puts on a record. */
const REQUIRED_ATTRIBUTES = ['ApproximateReceiveCount', 'SentTimestamp', 'SenderId', 'ApproximateFirstReceiveTimestamp'] as const;
/** System attributes Lambda adds when SQS returns them. */
const OPTIONAL_ATTRIBUTES = ['AWSTraceHeader', 'SequenceNumber', 'MessageGroupId', 'MessageDeduplicationId', 'DeadLetterQueueSourceArn'] as const;

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

/** One SQS message attribute in Lambda's event shape (lists always present, binaries in base64). */
function toLambdaMessageAttribute(value: MessageAttributeValue): SQSMessageAttribute {
  return {
    ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
    ...(value.BinaryValue !== undefined ? { binaryValue: base64(value.BinaryValue) } : {}),
    stringListValues: [...(value.StringListValues ?? [])],
    binaryListValues: (value.BinaryListValues ?? []).map(base64),
    dataType: value.DataType ?? 'String',
  };
}

/**
 * One received message as a Lambda `SQSRecord`.
 *
 * @throws SqsEventError when the message lacks an id, receipt handle, body MD5 or a system attribute
 *   Lambda always sets (receive with `MessageSystemAttributeNames: ['All']`).
 */
function toSqsRecord(message: Message, source: EventSource): SQSRecord {
  const { MessageId, ReceiptHandle, Body, MD5OfBody, MD5OfMessageAttributes } = message;
  if (!MessageId || !ReceiptHandle || Body === undefined || !MD5OfBody) {
    throw new SqsEventError(`message ${MessageId ?? '(no id)'} lacks MessageId, ReceiptHandle, Body or MD5OfBody`);
  }
  const received = message.Attributes ?? {};
  const attributes: Record<string, string> = {};
  for (const name of REQUIRED_ATTRIBUTES) {
    const value = received[name];
    if (value === undefined) throw new SqsEventError(`message ${MessageId} lacks system attribute ${name}`);
    attributes[name] = value;
  }
  for (const name of OPTIONAL_ATTRIBUTES) {
    const value = received[name];
    if (value !== undefined) attributes[name] = value;
  }
  const messageAttributes: SQSRecord['messageAttributes'] = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = toLambdaMessageAttribute(value);
  }
  return {
    messageId: MessageId,
    receiptHandle: ReceiptHandle,
    body: Body,
    attributes: attributes as unknown as SQSRecordAttributes,
    messageAttributes,
    md5OfBody: MD5OfBody,
    ...(MD5OfMessageAttributes ? { md5OfMessageAttributes: MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN: source.queueArn,
    awsRegion: source.awsRegion,
  };
}

/** The event of one invocation: one record per message, in receive order. */
export function buildSqsEvent(messages: readonly Message[], source: EventSource): SQSEvent {
  return { Records: messages.map((message) => toSqsRecord(message, source)) };
}

/** The parts of an ARN (`arn:partition:service:region:account:resource`). */
export interface ArnParts {
  partition: string;
  service: string;
  region: string;
  accountId: string;
  resource: string;
}

/** Splits an ARN; `undefined` when it is not one. */
export function parseArn(arn: string): ArnParts | undefined {
  const match = /^arn:([^:]+):([^:]+):([^:]*):(\d{12}):(.+)$/.exec(arn);
  if (!match) return undefined;
  const [, partition = '', service = '', region = '', accountId = '', resource = ''] = match;
  return { partition, service, region, accountId, resource };
}
