/**
 * The two lane stacks as CloudFormation: everything a lane stack must hold (README.md, "Deploying to AWS"), read off the
 * synthesized templates. The app is built once (as bin/app.ts builds it, cdk-nag included) with
 * bundling skipped, and both templates are shared by every test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { App, type CfnElement, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { DEFAULT_LANES, type LaneConfig } from '../../lib/config/lanes.js';
import { buildLaneApp } from '../../lib/infra/app.js';
import {
  CONSUMER_BUCKET_ACTIONS,
  CONSUMER_DLQ_ACTIONS,
  CONSUMER_LEDGER_ACTIONS,
  CONSUMER_LOG_ACTIONS,
  CONSUMER_QUEUE_ACTIONS,
  CONSUMER_RATE_STATE_ACTIONS,
  CONSUMER_RESULTS_ACTIONS,
  CONSUMER_SECRET_ACTIONS,
} from '../../lib/infra/consumer.js';
import { DASHBOARD_WIDGET_TITLES } from '../../lib/infra/dashboard.js';
import type { LaneStack } from '../../lib/infra/lane-stack.js';
import { ConsumerEnvironmentSchema } from '../../lib/shared/environment.js';
import { LEDGER_TABLE, RATE_STATE_TABLE, RESULTS_TABLE, type TableShape } from '../../lib/store/tables.js';

// Prepare (shared): one app, both stacks, one synth.
const ACCOUNT = '123456789012';
const app = new App({ context: { 'aws:cdk:bundling-stacks': [], account: ACCOUNT } });
const stacks = buildLaneApp(app);
const lanes = Object.values(DEFAULT_LANES);
const synthesized = new Map<string, { stack: LaneStack; template: Template; json: Record<string, any> }>();
for (const lane of lanes) {
  const stack = stacks[lane.name];
  assert.ok(stack, `stack of lane ${lane.name}`);
  const template = Template.fromStack(stack);
  synthesized.set(lane.name, { stack, template, json: template.toJSON() });
}

function of(lane: LaneConfig) {
  const s = synthesized.get(lane.name);
  assert.ok(s);
  return s;
}

/** The logical id of an L2 construct's CloudFormation resource. */
function logicalId(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.resolve(stack.getLogicalId(construct.node.defaultChild as CfnElement)) as string;
}

type Statement = { Sid?: string; Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown; Principal?: unknown };

/** Every statement of every AWS::IAM::Policy attached to the role with this logical id. */
function roleStatements(json: Record<string, any>, roleId: string): Statement[] {
  return Object.values<any>(json.Resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: unknown) => JSON.stringify(x) === JSON.stringify({ Ref: roleId })))
    .flatMap((r) => r.Properties.PolicyDocument.Statement as Statement[]);
}

const actionsOf = (s: Statement): string[] => (Array.isArray(s.Action) ? s.Action : [s.Action]);

/** The union of allowed actions per resource (resource rendered as JSON). */
function actionsByResource(statements: Statement[]): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>();
  for (const s of statements) {
    assert.equal(s.Effect, 'Allow');
    for (const resource of Array.isArray(s.Resource) ? s.Resource : [s.Resource]) {
      const key = JSON.stringify(resource);
      const set = map.get(key) ?? new Set<string>();
      for (const a of actionsOf(s)) set.add(a);
      map.set(key, set);
    }
  }
  return map;
}

const getAtt = (id: string, attr = 'Arn') => JSON.stringify({ 'Fn::GetAtt': [id, attr] });
const ref = (id: string) => JSON.stringify({ Ref: id });
const sorted = (xs: Iterable<string>) => [...xs].sort();

/** Renders an `Fn::Join` of strings and tokens as one string (tokens as `<token>`). */
function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  assert.ok(join, `expected a string or Fn::Join, got ${JSON.stringify(value)}`);
  return join[1].map((part) => (typeof part === 'string' ? part : '<token>')).join(join[0]);
}

for (const lane of lanes) {
  const other = lanes.find((l) => l.name !== lane.name);
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
      assert.equal(bucket.Properties.BucketName, lane.resources.bucketName);
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
      assert.deepEqual(JSON.parse(env.RATELANE_LANE_CONFIG), lane);
      assert.deepEqual(env.RATELANE_QUEUE_URL, { Ref: logicalId(stack, stack.queues.queue) });
      assert.deepEqual(env.RATELANE_DLQ_URL, { Ref: logicalId(stack, stack.queues.deadLetterQueue) });
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
      // the log group is the function's own, with a retention
      assert.deepEqual(json.Resources[logicalId(stack, stack.consumer.logGroup)].Properties, {
        LogGroupName: `/aws/lambda/ratelane-${lane.name}-consumer`,
        RetentionInDays: 30,
      });
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
        assert.deepEqual(
          table.AttributeDefinitions,
          [shape.partitionKey, ...(shape.sortKey ? [shape.sortKey] : [])].map((a) => ({ AttributeName: a, AttributeType: 'S' })),
        );
        assert.equal(table.BillingMode, 'PAY_PER_REQUEST');
        assert.deepEqual(table.SSESpecification, { SSEEnabled: true, SSEType: 'KMS' });
        assert.deepEqual(table.TimeToLiveSpecification, shape.ttlAttribute ? { AttributeName: shape.ttlAttribute, Enabled: true } : undefined);
        assert.deepEqual(table.Replicas, [
          { Region: lane.region, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true },
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

    it('grants the consumer exactly what it calls, on its own resources only', () => {
      // Prepare
      const { stack, json } = of(lane);
      const roleId = logicalId(stack, stack.consumer.role);
      const id = (c: { node: { defaultChild?: unknown } }) => logicalId(stack, c);
      const mappingArn = JSON.stringify({
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            `:lambda:${lane.region}:${ACCOUNT}:event-source-mapping:`,
            { Ref: Object.keys(json.Resources).find((k) => json.Resources[k].Type === 'AWS::Lambda::EventSourceMapping') },
          ],
        ],
      });
      const scheduleArn = JSON.stringify({
        'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:scheduler:${lane.region}:${ACCOUNT}:schedule/ratelane-${lane.name}-pause/*`]],
      });
      const parameterArn = JSON.stringify({
        'Fn::Join': [
          '',
          ['arn:', { Ref: 'AWS::Partition' }, `:ssm:${lane.region}:${ACCOUNT}:parameter/ratelane/${lane.name}/consumer/event-source-mapping-id`],
        ],
      });
      const objectsArn = JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [id(stack.storage.bucket), 'Arn'] }, '/documents/*']] });
      // Act
      const statements = roleStatements(json, roleId);
      const byResource = actionsByResource(statements);
      // Assess
      const expected = new Map<string, readonly string[]>([
        [getAtt(id(stack.consumer.logGroup)), CONSUMER_LOG_ACTIONS],
        [getAtt(id(stack.queues.queue)), CONSUMER_QUEUE_ACTIONS],
        [getAtt(id(stack.queues.deadLetterQueue)), CONSUMER_DLQ_ACTIONS],
        [objectsArn, CONSUMER_BUCKET_ACTIONS],
        [getAtt(id(stack.storage.resultsTable)), CONSUMER_RESULTS_ACTIONS],
        [getAtt(id(stack.storage.ledgerTable)), CONSUMER_LEDGER_ACTIONS],
        [getAtt(id(stack.storage.rateStateTable)), CONSUMER_RATE_STATE_ACTIONS],
        [ref(id(stack.storage.providerSecret)), CONSUMER_SECRET_ACTIONS],
        [parameterArn, ['ssm:GetParameter']],
        [mappingArn, ['lambda:UpdateEventSourceMapping']],
        [scheduleArn, ['scheduler:CreateSchedule']],
        [getAtt(id(stack.consumer.schedulerRole)), ['iam:PassRole']],
      ]);
      assert.deepEqual(sorted(byResource.keys()), sorted(expected.keys()), 'the consumer role reaches exactly these resources');
      for (const [resource, actions] of expected) assert.deepEqual(sorted(byResource.get(resource) ?? []), sorted(actions), resource);
      // the DLQ only receives, the bucket is only read
      assert.deepEqual(CONSUMER_DLQ_ACTIONS, ['sqs:SendMessage']);
      assert.deepEqual(CONSUMER_BUCKET_ACTIONS, ['s3:GetObject']);
      // PassRole only to EventBridge Scheduler
      const passRole = statements.find((s) => actionsOf(s).includes('iam:PassRole'));
      assert.deepEqual(passRole?.Condition, { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
      // the role itself trusts only Lambda and has no managed policies
      const role = json.Resources[roleId].Properties;
      assert.deepEqual(role.AssumeRolePolicyDocument.Statement, [
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
      assert.equal(role.ManagedPolicyArns, undefined);
    });

    it('lets EventBridge Scheduler (this account only) do one thing: update this lane’s one mapping, from its schedule group', () => {
      // Prepare
      const { stack, json, template } = of(lane);
      const roleId = logicalId(stack, stack.consumer.schedulerRole);
      // Act
      const role = json.Resources[roleId].Properties;
      const statements = roleStatements(json, roleId);
      // Assess
      assert.deepEqual(role.AssumeRolePolicyDocument.Statement, [
        {
          Action: 'sts:AssumeRole',
          Effect: 'Allow',
          Principal: { Service: 'scheduler.amazonaws.com' },
          Condition: { StringEquals: { 'aws:SourceAccount': ACCOUNT } },
        },
      ]);
      assert.equal(role.ManagedPolicyArns, undefined);
      assert.equal(statements.length, 1);
      assert.deepEqual(actionsOf(statements[0] as Statement), ['lambda:UpdateEventSourceMapping']);
      assert.match(JSON.stringify(statements[0]?.Resource), /event-source-mapping:/);
      template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: `ratelane-${lane.name}-pause` });
      template.hasResourceProperties('AWS::SSM::Parameter', {
        Name: `/ratelane/${lane.name}/consumer/event-source-mapping-id`,
        Type: 'String',
        Value: { Ref: Match.stringLikeRegexp('SqsEventSource') },
      });
      const env = json.Resources[logicalId(stack, stack.consumer.function)].Properties.Environment.Variables;
      assert.equal(env.RATELANE_PAUSE_SCHEDULE_GROUP, `ratelane-${lane.name}-pause`);
      assert.deepEqual(env.RATELANE_PAUSE_SCHEDULER_ROLE_ARN, { 'Fn::GetAtt': [roleId, 'Arn'] });
      assert.equal(env.RATELANE_MAPPING_ID_PARAMETER, `/ratelane/${lane.name}/consumer/event-source-mapping-id`);
    });

    it('uses no wildcard action and no "*" resource in any IAM policy', () => {
      // Prepare
      const { template } = of(lane);
      // Act
      const statements = Object.values<any>(template.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
      // Assess
      assert.ok(statements.length > 0);
      for (const s of statements) {
        for (const a of actionsOf(s)) assert.doesNotMatch(a, /\*/, `action ${a}`);
        for (const r of Array.isArray(s.Resource) ? s.Resource : [s.Resource]) assert.notEqual(r, '*');
      }
    });

    it('sends alarms to an encrypted, TLS-only topic CloudWatch may publish to', () => {
      // Prepare
      const { stack, template, json } = of(lane);
      const topicId = logicalId(stack, stack.alarms.topic);
      const keyId = logicalId(stack, stack.alarms.topicKey);
      // Act
      const topic = json.Resources[topicId].Properties;
      const key = json.Resources[keyId].Properties;
      // Assess
      assert.deepEqual(topic.KmsMasterKeyId, { 'Fn::GetAtt': [keyId, 'Arn'] });
      assert.equal(topic.TopicName, `ratelane-${lane.name}-alarms`);
      assert.equal(key.EnableKeyRotation, true);
      const alarmSource = {
        ArnLike: {
          'aws:SourceArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:cloudwatch:${lane.region}:${ACCOUNT}:alarm:ratelane-${lane.name}-*`]] },
        },
      };
      assert.ok(
        key.KeyPolicy.Statement.some(
          (s: Statement) =>
            JSON.stringify(s.Principal) === JSON.stringify({ Service: 'cloudwatch.amazonaws.com' }) &&
            sorted(actionsOf(s)).join() === 'kms:Decrypt,kms:GenerateDataKey*' &&
            JSON.stringify(s.Condition) === JSON.stringify({ StringEquals: { 'aws:SourceAccount': ACCOUNT }, ...alarmSource }),
        ),
        'the key lets CloudWatch (this lane’s alarms) encrypt for the topic',
      );
      template.hasResourceProperties('AWS::SNS::TopicPolicy', {
        Topics: [{ Ref: topicId }],
        PolicyDocument: {
          Statement: [
            Match.objectLike({ Effect: 'Deny', Action: 'sns:Publish', Principal: '*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            Match.objectLike({
              Effect: 'Allow',
              Action: 'sns:Publish',
              Principal: { Service: 'cloudwatch.amazonaws.com' },
              Condition: { StringEquals: { 'aws:SourceAccount': ACCOUNT }, ...alarmSource },
            }),
          ],
        },
      });
    });

    it('alarms on oldest message age, DLQ depth, region mismatch, 429 share and billing pauses with config thresholds', () => {
      // Prepare
      const { stack, template } = of(lane);
      const topic = { Ref: logicalId(stack, stack.alarms.topic) };
      const dims = [
        { Name: 'lane', Value: lane.name },
        { Name: 'region', Value: lane.region },
        { Name: 'service', Value: `ratelane-consumer-${lane.name}` },
      ];
      const common = { ComparisonOperator: 'GreaterThanThreshold', AlarmActions: [topic], OKActions: [topic], TreatMissingData: 'notBreaching' };
      // Act / Assess
      template.resourceCountIs('AWS::CloudWatch::Alarm', 5);
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        ...common,
        AlarmName: `ratelane-${lane.name}-oldest-message-age`,
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack, stack.queues.queue), 'QueueName'] } }],
        Statistic: 'Maximum',
        Threshold: lane.alarms.oldestMessageAgeSeconds,
      });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        ...common,
        AlarmName: `ratelane-${lane.name}-dlq-messages`,
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack, stack.queues.deadLetterQueue), 'QueueName'] } }],
        Threshold: 0,
        EvaluationPeriods: 1,
      });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        ...common,
        AlarmName: `ratelane-${lane.name}-region-mismatch`,
        Namespace: 'ratelane',
        MetricName: 'RegionMismatch',
        Dimensions: dims,
        Statistic: 'Sum',
        Threshold: 0,
        EvaluationPeriods: 1,
      });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        ...common,
        AlarmName: `ratelane-${lane.name}-billing-pause`,
        Namespace: 'ratelane',
        MetricName: 'BillingAlarm',
        Dimensions: dims,
        Statistic: 'Sum',
        Threshold: 0,
        EvaluationPeriods: 1,
      });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        ...common,
        AlarmName: `ratelane-${lane.name}-429-share`,
        Threshold: lane.alarms.throttleSharePercent,
        Metrics: [
          { Id: 'expr_1', Expression: '100 * FILL(rateLimited, 0) / modelCalls', ReturnData: true, Label: Match.anyValue() },
          {
            Id: 'rateLimited',
            ReturnData: false,
            MetricStat: { Metric: { Namespace: 'ratelane', MetricName: 'RateLimited', Dimensions: dims }, Period: 300, Stat: 'Sum' },
          },
          {
            Id: 'modelCalls',
            ReturnData: false,
            MetricStat: { Metric: { Namespace: 'ratelane', MetricName: 'ModelCalls', Dimensions: dims }, Period: 300, Stat: 'Sum' },
          },
        ],
      });
    });

    it('has a dashboard with queue age and depth, completions, 429 share, deferrals, attempts, duplicates and validation failures', () => {
      // Prepare
      const { template } = of(lane);
      const dashboards = Object.values<any>(template.findResources('AWS::CloudWatch::Dashboard'));
      assert.equal(dashboards.length, 1);
      // Act
      const body = JSON.parse(joined(dashboards[0].Properties.DashboardBody)) as { widgets: Array<{ type: string; properties: any }> };
      const titles = body.widgets.map((w) => w.properties.title);
      const metricsOf = (title: string) => JSON.stringify(body.widgets.find((w) => w.properties.title === title)?.properties.metrics);
      // Assess
      assert.equal(dashboards[0].Properties.DashboardName, `ratelane-${lane.name}`);
      assert.deepEqual(titles, [...DASHBOARD_WIDGET_TITLES]);
      assert.equal(body.widgets[0]?.type, 'alarm');
      assert.equal(body.widgets[0]?.properties.alarms.length, 5);
      assert.match(metricsOf('Queue age (oldest message, s)'), /ApproximateAgeOfOldestMessage/);
      assert.match(metricsOf('Queue depth'), /ApproximateNumberOfMessagesVisible.*ApproximateNumberOfMessagesNotVisible.*ApproximateNumberOfMessagesDelayed/);
      assert.match(metricsOf('Completions'), /"Completed"/);
      assert.match(metricsOf('429 share (%)'), /100 \* FILL\(rateLimited, 0\) \/ modelCalls/);
      assert.match(metricsOf('Deferrals'), /"Deferred".*"EligibilityHops"/);
      assert.match(metricsOf('Attempts per completion'), /"AttemptsPerCompletion"/);
      assert.match(metricsOf('Duplicates suppressed'), /"DuplicateSuppressed"/);
      assert.match(metricsOf('Validation failures'), /"ValidationFailed"/);
      for (const w of body.widgets.filter((x) => x.properties.region)) assert.equal(w.properties.region, lane.region);
    });

    it(`names nothing of the ${other.name} lane: no region, resource, ARN, environment variable or policy`, () => {
      // Prepare
      const { json } = of(lane);
      const text = JSON.stringify(json);
      const foreign = [other.region, `ratelane-${other.name}`, `ratelane/${other.name}/`, `"lane":"${other.name}"`, ...Object.values(other.resources)];
      // Act
      const found = foreign.filter((needle) => text.includes(needle));
      const regionsNamed = new Set(text.match(/\b(?:us|eu|ap|sa|ca|me|af|il|mx)(?:-gov)?-[a-z]+-\d\b/g) ?? []);
      // Assess
      assert.deepEqual(found, []);
      assert.deepEqual([...regionsNamed], [lane.region], 'the only region the template names is its own');
      for (const own of Object.values(lane.resources)) assert.ok(text.includes(own), `own resource ${own} is in the template`);
    });
  });
}
