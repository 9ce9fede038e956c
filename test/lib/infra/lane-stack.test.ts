/**
 * The two lane stacks as CloudFormation, their resources: everything a lane stack must hold (docs/deploying.md, "What a lane stack
 * holds"), read off the synthesized templates, with the names a deploy needs (account-safe, and which
 * are retained under a fixed name). Grants are in lane-iam.test.ts, alarms and dashboard in
 * lane-alarms.test.ts, provider kinds in providers.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Match } from 'aws-cdk-lib/assertions';
import { ConsumerEnvironmentSchema } from '../../../lib/platform/environment.js';
import { batchReconcileScheduleName, batchReconcilerFunctionName, batchServiceName } from '../../../lib/config/names.js';
import { manifestTableName } from '../../../lib/store/manifest-model.js';
import { LEDGER_TABLE, MANIFEST_TABLE, RATE_STATE_TABLE, RESULTS_TABLE, type TableShape } from '../../../lib/store/tables.js';
import { ACCOUNT, LANES, logicalId, regionsNamed, synthDefaultLanes } from './support.js';

// Prepare (shared): one app, both stacks, one synth.
const of = synthDefaultLanes();

for (const lane of LANES) {
  const other = LANES.find((l) => l.name !== lane.name);
  assert.ok(other);

  describe(`lane stack ${lane.name} (${lane.region})`, () => {
    it('is its own stack in its own region and account', () => {
      // Prepare
      const { stack } = of(lane);
      // Act
      const env = { name: stack.stackName, region: stack.region, account: stack.account };
      // Assess
      assert.deepEqual(env, { name: `ratelane-${lane.name}`, region: lane.region, account: ACCOUNT });
    });

    it('has a source bucket with encryption, TLS-only policy, public access blocked, lifecycle and access logs', () => {
      // Prepare
      const { stack, template } = of(lane);
      const bucketId = logicalId(stack, stack.storage.bucket);
      const logsId = logicalId(stack, stack.storage.accessLogsBucket);
      // Act
      const bucket = template.toJSON().Resources[bucketId];
      // Assess
      assert.equal(bucket.Properties.BucketName, `ratelane-${lane.name}-source-${ACCOUNT}-${lane.region}`, 'account-safe: lane, account and region');
      assert.equal(bucket.Properties.BucketName, stack.lane.resources.bucketName);
      assert.deepEqual(bucket.Properties.BucketEncryption, {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      });
      assert.deepEqual(bucket.Properties.PublicAccessBlockConfiguration, {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      assert.deepEqual(bucket.Properties.OwnershipControls, { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
      assert.deepEqual(bucket.Properties.LifecycleConfiguration.Rules, [
        { Id: 'expire-documents', Prefix: 'documents/', ExpirationInDays: 90, Status: 'Enabled' },
        { Id: 'expire-batch-artifacts', Prefix: 'batch/', ExpirationInDays: 90, Status: 'Enabled' },
        { Id: 'abort-incomplete-uploads', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' },
      ]);
      assert.deepEqual(bucket.Properties.LoggingConfiguration, { DestinationBucketName: { Ref: logsId }, LogFilePrefix: 'source/' });
      assert.equal(bucket.DeletionPolicy, 'Retain');
      for (const id of [bucketId, logsId]) {
        template.hasResourceProperties('AWS::S3::BucketPolicy', {
          Bucket: { Ref: id },
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({ Effect: 'Deny', Action: 's3:*', Principal: { AWS: '*' }, Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            ]),
          },
        });
      }
      // the access-log bucket is locked down too, and takes logs only from this bucket, by bucket policy
      template.hasResource('AWS::S3::Bucket', {
        Properties: Match.objectLike({
          BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
          PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
          OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
          LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 365, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } })] },
        }),
      });
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: logsId },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Allow',
              Principal: { Service: 'logging.s3.amazonaws.com' },
              Action: 's3:PutObject',
              Condition: { ArnLike: { 'aws:SourceArn': { 'Fn::GetAtt': [bucketId, 'Arn'] } }, StringEquals: { 'aws:SourceAccount': ACCOUNT } },
            }),
          ]),
        },
      });
      template.resourceCountIs('AWS::S3::Bucket', 2);
    });

    it('has an ingress queue and DLQ with encryption, TLS-only policies, redrive and a visibility timeout >= 6x the function timeout', () => {
      // Prepare
      const { stack, template, json } = of(lane);
      const queueId = logicalId(stack, stack.queues.queue);
      const dlqId = logicalId(stack, stack.queues.deadLetterQueue);
      // Act
      const queue = json.Resources[queueId].Properties;
      const dlq = json.Resources[dlqId].Properties;
      // Assess
      assert.deepEqual(queue, {
        QueueName: lane.resources.queueName,
        SqsManagedSseEnabled: true,
        VisibilityTimeout: lane.queue.visibilityTimeoutSeconds,
        ReceiveMessageWaitTimeSeconds: lane.queue.receiveWaitTimeSeconds,
        MessageRetentionPeriod: lane.queue.retentionSeconds,
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: lane.queue.maxReceiveCount },
      });
      assert.ok(queue.VisibilityTimeout >= 6 * lane.consumer.timeoutSeconds);
      assert.deepEqual(dlq, { QueueName: lane.resources.dlqName, SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
      for (const id of [queueId, dlqId]) {
        template.hasResourceProperties('AWS::SQS::QueuePolicy', {
          Queues: [{ Ref: id }],
          PolicyDocument: {
            Statement: [
              Match.objectLike({ Effect: 'Deny', Action: 'sqs:*', Principal: { AWS: '*' }, Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            ],
          },
        });
      }
    });

    it('has the consumer function: local bundle entry, latest Node.js runtime, arm64, config sizing, Powertools and lane environment', () => {
      // Prepare
      const { stack, json } = of(lane);
      const fnId = logicalId(stack, stack.consumer.function);
      // Act
      const fn = json.Resources[fnId].Properties;
      // Assess
      assert.equal(fn.Runtime, 'nodejs24.x');
      assert.deepEqual(fn.Architectures, ['arm64']);
      assert.equal(fn.Handler, 'index.handler');
      assert.equal(fn.MemorySize, lane.consumer.memoryMb);
      assert.equal(fn.Timeout, lane.consumer.timeoutSeconds);
      assert.equal(fn.ReservedConcurrentExecutions, undefined, 'reserved concurrency is opt-in');
      assert.equal(fn.FunctionName, `ratelane-${lane.name}-consumer`);
      assert.deepEqual(fn.LoggingConfig, { LogGroup: { Ref: logicalId(stack, stack.consumer.logGroup) } });
      const env = fn.Environment.Variables;
      assert.deepEqual(JSON.parse(env.RATELANE_LANE_CONFIG), stack.lane, 'the lane as deployed (account-qualified bucket)');
      assert.deepEqual(env.RATELANE_QUEUE_URL, { Ref: logicalId(stack, stack.queues.queue) });
      assert.deepEqual(env.RATELANE_DLQ_URL, { Ref: logicalId(stack, stack.queues.deadLetterQueue) });
      // the lane's own senders (they may state a job's tenant): the consumer, live and batch reconciler roles, by unique id
      const senderRoles = [stack.consumer.role, ...(stack.live ? [stack.live.role] : []), ...(stack.batch ? [stack.batch.role] : [])];
      assert.equal(senderRoles.length, 3, 'the default lanes have a live API and batches');
      assert.deepEqual(env.RATELANE_LANE_SENDERS, { 'Fn::Join': [',', senderRoles.map((role) => ({ 'Fn::GetAtt': [logicalId(stack, role), 'RoleId'] }))] });
      assert.deepEqual(env.RATELANE_PROVIDER_SECRET_ARN, { Ref: logicalId(stack, stack.storage.providerSecret) });
      assert.equal(env.POWERTOOLS_SERVICE_NAME, `ratelane-consumer-${lane.name}`);
      assert.equal(env.POWERTOOLS_METRICS_NAMESPACE, 'ratelane');
      assert.equal(env.POWERTOOLS_LOG_LEVEL, 'INFO');
      // every variable the entry point's environment schema requires is set
      const required = Object.entries(ConsumerEnvironmentSchema.shape)
        .filter(([, schema]) => !schema.safeParse(undefined).success)
        .map(([name]) => name);
      assert.ok(required.length >= 3);
      for (const name of required) assert.ok(name in env, `${name} is set`);
      // the log group is the function's own, with a retention, and a generated name (it is retained: a fixed name would block a redeploy)
      assert.deepEqual(json.Resources[logicalId(stack, stack.consumer.logGroup)].Properties, { RetentionInDays: 30 });
      assert.equal(json.Resources[logicalId(stack, stack.consumer.logGroup)].DeletionPolicy, 'Retain');
    });

    it('maps the queue to the function with ReportBatchItemFailures, MaximumConcurrency, batch size and window from config', () => {
      // Prepare
      const { stack, template } = of(lane);
      // Act / Assess
      template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: { 'Fn::GetAtt': [logicalId(stack, stack.queues.queue), 'Arn'] },
        FunctionName: { Ref: logicalId(stack, stack.consumer.function) },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: lane.consumer.maximumConcurrency },
        BatchSize: lane.queue.batchSize,
        MaximumBatchingWindowInSeconds: lane.queue.maxBatchingWindowSeconds > 0 ? lane.queue.maxBatchingWindowSeconds : Match.absent(),
        Enabled: true,
      });
    });

    for (const [label, shape, name] of [
      ['results', RESULTS_TABLE, lane.resources.resultsTable],
      ['ledger', LEDGER_TABLE, lane.resources.ledgerTable],
      ['rate-state', RATE_STATE_TABLE, lane.resources.rateStateTable],
      ['batch manifest', MANIFEST_TABLE, manifestTableName(lane)],
    ] as Array<[string, TableShape, string]>) {
      it(`has the ${label} table: key schema and TTL of tables.ts, on demand, PITR, encrypted, protected`, () => {
        // Prepare
        const { template } = of(lane);
        // Act
        const tables = Object.values<any>(template.findResources('AWS::DynamoDB::GlobalTable')).filter((t) => t.Properties.TableName === name);
        // Assess
        assert.equal(tables.length, 1);
        const table = tables[0].Properties;
        assert.deepEqual(table.KeySchema, [
          { AttributeName: shape.partitionKey, KeyType: 'HASH' },
          ...(shape.sortKey ? [{ AttributeName: shape.sortKey, KeyType: 'RANGE' }] : []),
        ]);
        const keys = [shape.partitionKey, ...(shape.sortKey ? [shape.sortKey] : [])];
        const indexKeys = (shape.indexes ?? []).flatMap((i) => [i.partitionKey, ...(i.sortKey ? [i.sortKey] : [])]);
        assert.deepEqual(
          table.AttributeDefinitions,
          [...new Set([...keys, ...indexKeys])].map((a) => ({ AttributeName: a, AttributeType: 'S' })),
        );
        assert.deepEqual(
          (table.GlobalSecondaryIndexes ?? []).map((i: { IndexName: string; KeySchema: unknown; Projection: unknown }) => [
            i.IndexName,
            i.KeySchema,
            i.Projection,
          ]),
          (shape.indexes ?? []).map((i) => [
            i.name,
            [{ AttributeName: i.partitionKey, KeyType: 'HASH' }, ...(i.sortKey ? [{ AttributeName: i.sortKey, KeyType: 'RANGE' }] : [])],
            { ProjectionType: 'ALL' },
          ]),
        );
        assert.equal(table.BillingMode, 'PAY_PER_REQUEST');
        assert.deepEqual(table.SSESpecification, { SSEEnabled: true, SSEType: 'KMS' });
        assert.deepEqual(table.TimeToLiveSpecification, shape.ttlAttribute ? { AttributeName: shape.ttlAttribute, Enabled: true } : undefined);
        assert.deepEqual(table.Replicas, [
          {
            Region: lane.region,
            PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
            DeletionProtectionEnabled: true,
            ...(shape.indexes ? { GlobalSecondaryIndexes: shape.indexes.map((i) => ({ IndexName: i.name })) } : {}),
          },
        ]);
        assert.equal(tables[0].DeletionPolicy, 'Retain');
      });
    }

    it('has the provider-keys secret, named from config, retained, without its value in the template', () => {
      // Prepare
      const { stack, json } = of(lane);
      // Act
      const secret = json.Resources[logicalId(stack, stack.storage.providerSecret)];
      // Assess
      assert.equal(secret.Type, 'AWS::SecretsManager::Secret');
      assert.equal(secret.Properties.Name, lane.resources.providerSecretName);
      assert.equal(secret.Properties.SecretString, undefined);
      assert.match(secret.Properties.Description, new RegExp(lane.provider.keys.map((k) => k.id).join('|')));
      assert.equal(secret.DeletionPolicy, 'Retain');
    });

    it('retains under a fixed name only the documented data stores, and outputs what an operator needs', () => {
      // Prepare
      const { stack, json, template } = of(lane);
      const nameOf: Record<string, string> = {
        'AWS::S3::Bucket': 'BucketName',
        'AWS::SQS::Queue': 'QueueName',
        'AWS::DynamoDB::GlobalTable': 'TableName',
        'AWS::SecretsManager::Secret': 'Name',
        'AWS::Logs::LogGroup': 'LogGroupName',
        'AWS::KMS::Key': '-',
      };
      // Act
      const retained = Object.values<any>(json.Resources).filter((r) => r.DeletionPolicy === 'Retain' || r.UpdateReplacePolicy === 'Retain');
      const retainedNamed = retained.map((r) => r.Properties?.[nameOf[r.Type] ?? 'Name']).filter((n): n is string => typeof n === 'string');
      // Assess
      assert.ok(
        retained.every((r) => r.Type in nameOf && r.Type !== 'AWS::KMS::Key'),
        `retained types: ${retained.map((r) => r.Type)}`,
      );
      assert.deepEqual(
        retainedNamed.sort(),
        [
          stack.lane.resources.bucketName,
          lane.resources.queueName,
          lane.resources.dlqName,
          lane.resources.resultsTable,
          lane.resources.ledgerTable,
          lane.resources.rateStateTable,
          lane.resources.providerSecretName,
          manifestTableName(lane),
        ].sort(),
        'docs/deploying.md lists exactly these as what stays after cdk destroy (the batch manifest with the other tables)',
      );
      assert.deepEqual(
        Object.values<any>(json.Resources).find((r) => r.Type === 'AWS::KMS::Key')?.DeletionPolicy,
        'Delete',
        'the alarm-topic key goes with the stack',
      );
      template.hasResource('AWS::Scheduler::ScheduleGroup', { DeletionPolicy: 'Delete', Properties: { Name: `ratelane-${lane.name}-pause` } });
      assert.deepEqual(Object.keys(json.Outputs).sort(), [
        'AlarmTopicArn',
        'BatchReconcilerLogGroup',
        'ConsumerLogGroup',
        'LiveApiUrl',
        'ProviderSecretName',
        'QueueUrl',
        'SourceBucketName',
      ]);
      assert.deepEqual(json.Outputs.SourceBucketName.Value, { Ref: logicalId(stack, stack.storage.bucket) });
    });

    it(`names nothing of the ${other.name} lane: no region, resource, ARN, environment variable or policy`, () => {
      // Prepare
      const { json, stack } = of(lane);
      const text = JSON.stringify(json);
      const foreign = [
        other.region,
        `ratelane-${other.name}`,
        `ratelane/${other.name}/`,
        `"lane":"${other.name}"`,
        `ratelane-live-${other.name}`,
        ...Object.values(other.resources),
        // the batch lane's: its manifest table, reconciler, schedule and metric service
        manifestTableName(other),
        batchReconcilerFunctionName(other.name),
        batchReconcileScheduleName(other.name),
        batchServiceName(other),
      ];
      // Act
      const found = foreign.filter((needle) => text.includes(needle));
      // Assess
      assert.deepEqual(found, []);
      assert.deepEqual([...regionsNamed(text)], [lane.region], 'the only region the template names is its own');
      for (const own of Object.values(stack.lane.resources)) assert.ok(text.includes(own), `own resource ${own} is in the template`);
      for (const own of [manifestTableName(lane), batchReconcilerFunctionName(lane.name), batchReconcileScheduleName(lane.name)]) {
        assert.ok(text.includes(own), `own batch resource ${own} is in the template`);
      }
    });
  });
}
