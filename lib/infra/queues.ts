/**
 * A lane's ingress queue and its dead-letter queue, with the settings of the lane config: visibility
 * timeout (at least 6x the consumer timeout, as AWS advises for SQS event sources), long polling,
 * retention, and a redrive to the DLQ after `maxReceiveCount` receives.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { LaneConfig } from '../config/lanes.js';
import { RatelaneError } from '../platform/errors.js';

/** The longest retention SQS allows (14 days): the DLQ keeps failed jobs as long as possible. */
const MAX_RETENTION = Duration.days(14);

export interface LaneQueuesProps {
  readonly lane: LaneConfig;
}

/** Raised when queue settings would break the event source contract. */
export class LaneQueueSettingsError extends RatelaneError {
  override name = 'LaneQueueSettingsError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

export class LaneQueues extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: LaneQueuesProps) {
    super(scope, id);
    const { lane } = props;
    if (lane.queue.visibilityTimeoutSeconds < 6 * lane.consumer.timeoutSeconds) {
      throw new LaneQueueSettingsError(
        `lane ${lane.name}: queue visibility timeout ${lane.queue.visibilityTimeoutSeconds}s is below 6x the consumer timeout (${6 * lane.consumer.timeoutSeconds}s)`,
      );
    }

    this.deadLetterQueue = new Queue(this, 'DeadLetter', {
      queueName: lane.resources.dlqName,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: MAX_RETENTION,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.queue = new Queue(this, 'Jobs', {
      queueName: lane.resources.queueName,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(lane.queue.visibilityTimeoutSeconds),
      receiveMessageWaitTime: Duration.seconds(lane.queue.receiveWaitTimeSeconds),
      retentionPeriod: Duration.seconds(lane.queue.retentionSeconds),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: lane.queue.maxReceiveCount },
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
