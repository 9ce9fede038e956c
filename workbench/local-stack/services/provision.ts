/**
 * Creates a lane's resources on the local stand-ins, as the CDK stack does in AWS: the source bucket,
 * the ingress queue with its DLQ (redrive at `maxReceiveCount`), and the results, ledger, rate-state
 * and batch-manifest tables. Everything is created in the lane's own region.
 */
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { LaneConfig } from '../../../lib/config/lanes.js';
import { ensureTable } from '../../../lib/store/ensure-table.js';
import { manifestTableName } from '../../../lib/store/manifest-model.js';
import { LEDGER_TABLE, MANIFEST_TABLE, RATE_STATE_TABLE, RESULTS_TABLE } from '../../../lib/store/tables.js';
import type { AwsClients } from '../../../lib/platform/clients.js';
import { LocalServiceError } from './services.js';

/** What a provisioned lane's consumers and producers need to address it. */
export interface ProvisionedLane {
  lane: LaneConfig;
  queueUrl: string;
  queueArn: string;
  dlqUrl: string;
  dlqArn: string;
}

async function createQueue(sqs: SQSClient, name: string, attributes: Record<string, string>): Promise<{ url: string; arn: string }> {
  const created = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  const url = created.QueueUrl;
  if (!url) throw new LocalServiceError(`CreateQueue returned no URL for ${name}`);
  const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  const arn = attrs.Attributes?.QueueArn;
  if (!arn) throw new LocalServiceError(`queue ${name} has no ARN`);
  return { url, arn };
}

async function createBucket(s3: S3Client, name: string, region: string): Promise<void> {
  try {
    await s3.send(
      new CreateBucketCommand({
        Bucket: name,
        ...(region === 'us-east-1' ? {} : { CreateBucketConfiguration: { LocationConstraint: region as never } }),
      }),
    );
  } catch (error) {
    const code = (error as { name?: string }).name;
    if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw error;
  }
}

/**
 * Creates (idempotently) every resource of one lane with the lane's clients.
 *
 * @param clients clients in the lane's region (see `createAwsClients`)
 */
export async function provisionLane(lane: LaneConfig, clients: Pick<AwsClients, 'sqs' | 's3' | 'dynamodb'>): Promise<ProvisionedLane> {
  const { resources, queue } = lane;
  const dlq = await createQueue(clients.sqs, resources.dlqName, {
    MessageRetentionPeriod: String(queue.retentionSeconds),
  });
  const main = await createQueue(clients.sqs, resources.queueName, {
    VisibilityTimeout: String(queue.visibilityTimeoutSeconds),
    ReceiveMessageWaitTimeSeconds: String(queue.receiveWaitTimeSeconds),
    MessageRetentionPeriod: String(queue.retentionSeconds),
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: queue.maxReceiveCount }),
  });
  await Promise.all([
    createBucket(clients.s3, resources.bucketName, lane.region),
    ensureTable(clients.dynamodb, resources.resultsTable, RESULTS_TABLE),
    ensureTable(clients.dynamodb, resources.ledgerTable, LEDGER_TABLE),
    ensureTable(clients.dynamodb, resources.rateStateTable, RATE_STATE_TABLE),
    ensureTable(clients.dynamodb, manifestTableName(lane), MANIFEST_TABLE),
  ]);
  return { lane, queueUrl: main.url, queueArn: main.arn, dlqUrl: dlq.url, dlqArn: dlq.arn };
}
