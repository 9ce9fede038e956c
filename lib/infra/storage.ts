/**
 * A lane's data stores: the source-document bucket (with its access-log bucket), the results,
 * ledger and rate-state tables, and, for providers that take API keys, the Secrets Manager secret
 * holding them. Every name comes from the lane config as deployed (`laneInAccount`: the bucket name
 * carries the account id), so the consumer, which gets the same config, addresses exactly these.
 *
 * Retained with fixed names (they hold data, and producers and the consumer find them by name): the
 * source bucket, the three tables and the secret. After `cdk destroy` they stay; docs/deploying.md
 * ("Names, `cdk destroy` and redeploying") says how to redeploy over them. The access-log bucket is retained under a
 * generated name, so it never blocks a redeploy.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AttributeType, Billing, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { type LaneConfig, providerNeedsKeySecrets } from '../config/lanes.js';
import { LEDGER_TABLE, RATE_STATE_TABLE, RESULTS_TABLE, type TableShape } from '../store/tables.js';

import { BATCH_PREFIX } from '../config/names.js';
import { DOCUMENT_PREFIX } from '../platform/resources.js';

export interface LaneStorageProps {
  /** The lane: its `retention` sets the buckets' lifecycle rules and the tables' TTL use. */
  readonly lane: LaneConfig;
}

/** The lane's bucket, tables and (when its provider takes API keys) provider secret. */
export class LaneStorage extends Construct {
  readonly bucket: Bucket;
  readonly accessLogsBucket: Bucket;
  readonly resultsTable: TableV2;
  readonly ledgerTable: TableV2;
  readonly rateStateTable: TableV2;
  /** The provider-keys secret; absent when the provider reads no key (Bedrock with IAM auth). */
  readonly providerSecret: Secret | undefined;

  constructor(scope: Construct, id: string, props: LaneStorageProps) {
    super(scope, id);
    const { lane } = props;

    this.accessLogsBucket = new Bucket(this, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: false,
      lifecycleRules: [
        { id: 'expire-access-logs', expiration: Duration.days(lane.retention.accessLogsDays), abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.accessLogsBucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'This is the server access log target of the lane source bucket; logging the log bucket into itself would loop and into another bucket would only move the finding.',
    });

    this.bucket = new Bucket(this, 'Source', {
      bucketName: lane.resources.bucketName,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'source/',
      lifecycleRules: [
        {
          id: 'expire-documents',
          prefix: DOCUMENT_PREFIX,
          expiration: Duration.days(lane.retention.documentsDays),
        },
        {
          id: 'expire-batch-artifacts',
          prefix: BATCH_PREFIX,
          expiration: Duration.days(lane.retention.batchArtifactsDays),
        },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.resultsTable = laneTable(this, 'Results', lane.resources.resultsTable, RESULTS_TABLE);
    this.ledgerTable = laneTable(this, 'Ledger', lane.resources.ledgerTable, LEDGER_TABLE);
    this.rateStateTable = laneTable(this, 'RateState', lane.resources.rateStateTable, RATE_STATE_TABLE);

    this.providerSecret = providerNeedsKeySecrets(lane.provider) ? providerKeysSecret(this, lane) : undefined;
  }
}

/** The secret `{"<key id>": "<api key>"}` of the lane's provider keys, created empty (set it after the deploy). */
function providerKeysSecret(scope: Construct, lane: LaneConfig): Secret {
  const keyIds = lane.provider.keys.map((k) => k.id);
  const secret = new Secret(scope, 'ProviderKeys', {
    secretName: lane.resources.providerSecretName,
    description: `ratelane ${lane.name} lane: ${lane.provider.kind} API keys as JSON {"<key id>": "<api key>"} for key ids ${keyIds.join(', ')}. Set it with put-secret-value after the first deploy.`,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  Validations.of(secret).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason:
      'The secret holds third-party model provider API keys that only a person can mint, in the provider console; no rotation Lambda can create them. Rotation is a runbook step (put-secret-value) and the consumer re-reads the secret within a minute.',
  });
  return secret;
}

/** An on-demand, encrypted, point-in-time-recoverable table with the key schema and TTL of `shape`. */
function laneTable(scope: Construct, id: string, tableName: string, shape: TableShape): TableV2 {
  return new TableV2(scope, id, {
    tableName,
    partitionKey: { name: shape.partitionKey, type: AttributeType.STRING },
    ...(shape.sortKey ? { sortKey: { name: shape.sortKey, type: AttributeType.STRING } } : {}),
    ...(shape.ttlAttribute ? { timeToLiveAttribute: shape.ttlAttribute } : {}),
    ...(shape.indexes?.length
      ? {
          globalSecondaryIndexes: shape.indexes.map((index) => ({
            indexName: index.name,
            partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
            ...(index.sortKey ? { sortKey: { name: index.sortKey, type: AttributeType.STRING } } : {}),
          })),
        }
      : {}),
    billing: Billing.onDemand(),
    encryption: TableEncryptionV2.awsManagedKey(),
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
}
