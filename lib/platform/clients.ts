/**
 * AWS SDK clients for one region, optionally pointed at local endpoints. They retry in the SDK's
 * standard mode within the time of the scope a call is made in (`retry.ts`), and every request honours
 * that scope's abort signal (`abort-scope.ts`).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { ScopedAbortHttpHandler } from './abort-scope.js';
import { ScopedRetryStrategy } from './retry.js';

/** Dummy credentials for the local stand-ins (they check the signature's shape, not its secret). */
export const LOCAL_CREDENTIALS = { accessKeyId: 'ratelanelocal', secretAccessKey: 'ratelanelocal' } as const;

/** Where each service lives; omit for real AWS. */
export interface ServiceEndpoints {
  sqs: string;
  s3: string;
  dynamodb: string;
}

/** The SDK clients a lane needs, all in the lane's region. */
export interface AwsClients {
  region: string;
  sqs: SQSClient;
  s3: S3Client;
  dynamodb: DynamoDBClient;
  /** Document client over `dynamodb` (plain JS values, undefined removed). */
  doc: DynamoDBDocumentClient;
  destroy(): void;
}

/**
 * Builds the clients for one region.
 *
 * @param endpoints local endpoints; when given, static dummy credentials are used and the SQS client
 *   sends to `endpoints.sqs` instead of the queue URL's host (fauxqs queue URLs do not resolve).
 * @param credentials for AWS (default: the SDK's default chain).
 */
export function createAwsClients(
  region: string,
  endpoints?: ServiceEndpoints,
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider,
): AwsClients {
  const local = endpoints !== undefined;
  // Each client its own handler (its own sockets), all honouring the scope's abort signal (`abort-scope.ts`).
  const common = () => ({
    region,
    retryStrategy: new ScopedRetryStrategy(),
    requestHandler: new ScopedAbortHttpHandler(),
    ...(local ? { credentials: LOCAL_CREDENTIALS } : credentials ? { credentials } : {}),
  });
  const sqs = new SQSClient({ ...common(), ...(local ? { endpoint: endpoints.sqs, useQueueUrlAsEndpoint: false } : {}) });
  const s3 = new S3Client({ ...common(), ...(local ? { endpoint: endpoints.s3, forcePathStyle: true } : {}) });
  const dynamodb = new DynamoDBClient({ ...common(), ...(local ? { endpoint: endpoints.dynamodb } : {}) });
  const doc = DynamoDBDocumentClient.from(dynamodb, { marshallOptions: { removeUndefinedValues: true } });
  return {
    region,
    sqs,
    s3,
    dynamodb,
    doc,
    destroy: () => {
      sqs.destroy();
      s3.destroy();
      dynamodb.destroy();
    },
  };
}
