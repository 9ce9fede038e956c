/**
 * The batch lane's infrastructure in the default (OpenAI-compatible) lane stacks: the manifest table
 * (key schema and TTL of tables.ts, on demand, PITR, encrypted, retained), the reconciler function
 * (one sweep at a time, no Lambda retries, its environment), its role (exact actions on the lane's own
 * resources), the EventBridge Scheduler schedule (rate, target, retry policy, its own least-privilege
 * role), the alarms on the lane topic, the dashboard row, and region integrity. Bedrock lanes, a lane
 * without batches and refused configs are in lane-batch-bedrock.test.ts; cdk-nag in nag.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchReconcilerEnvironmentSchema } from '../../../lib/lanes/batch/reconciler-deps.js';
import { LaneConfigError, resolveLanes } from '../../../lib/config/lanes.js';
import { batchReconcileScheduleName, batchReconcilerFunctionName, batchServiceName } from '../../../lib/config/names.js';
import {
  BATCH_DOCUMENT_ACTIONS,
  BATCH_LEDGER_ACTIONS,
  BATCH_LOG_ACTIONS,
  BATCH_MANIFEST_ACTIONS,
  BATCH_QUEUE_ACTIONS,
  BATCH_RESULTS_ACTIONS,
  BATCH_SECRET_ACTIONS,
} from '../../../lib/infra/batch/batch-lane.js';
import { BATCH_DASHBOARD_WIDGET_TITLES } from '../../../lib/infra/batch/dashboard.js';
import { manifestTableName } from '../../../lib/store/manifest-model.js';
import { MANIFEST_TABLE } from '../../../lib/store/tables.js';
import {
  ACCOUNT,
  actionsByResource,
  actionsOf,
  alarmsByName,
  dashboardBody,
  getAtt,
  LANES,
  logicalId,
  ref,
  regionsNamed,
  roleStatements,
  sorted,
  synthDefaultLanes,
  synthLane,
  TRACING_GRANT,
} from './support.js';

// Prepare (shared): one app, both stacks, one synth.
const of = synthDefaultLanes();

const resourcesOfType = (json: Record<string, any>, type: string) => Object.entries<any>(json.Resources).filter(([, r]) => r.Type === type);

for (const lane of LANES) {
  const other = LANES.find((l) => l.name !== lane.name);
  assert.ok(other);
  const batchOf = (s: ReturnType<typeof of>) => {
    assert.ok(s.stack.batch, 'the lane takes batches (the default)');
    return s.stack.batch;
  };
  const dims = [
    { Name: 'lane', Value: lane.name },
    { Name: 'region', Value: lane.region },
    { Name: 'service', Value: batchServiceName(lane) },
  ];

  describe(`lane stack ${lane.name} (${lane.region}) batch lane`, () => {
    it('has the manifest table: key schema and TTL of tables.ts, on demand, PITR, AWS-managed encryption, protected and retained like the other tables', () => {
      // Prepare
      const s = of(lane);
      // Act
      const table = s.json.Resources[logicalId(s.stack, batchOf(s).manifestTable)];
      // Assess
      assert.equal(table.Type, 'AWS::DynamoDB::GlobalTable');
      assert.deepEqual(table.Properties, {
        TableName: manifestTableName(lane),
        KeySchema: [
          { AttributeName: MANIFEST_TABLE.partitionKey, KeyType: 'HASH' },
          { AttributeName: MANIFEST_TABLE.sortKey, KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'batchId', AttributeType: 'S' },
          { AttributeName: 'itemId', AttributeType: 'S' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        SSESpecification: { SSEEnabled: true, SSEType: 'KMS' },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        Replicas: [{ Region: lane.region, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true }],
      });
      assert.equal(MANIFEST_TABLE.ttlAttribute, 'expiresAt');
      assert.deepEqual([table.DeletionPolicy, table.UpdateReplacePolicy], ['Retain', 'Retain']);
      assert.equal(manifestTableName(lane), `ratelane-${lane.name}-batch-manifest`);
    });

    it('has the reconciler function: one sweep per tick within the interval, no Lambda retries, no reserved concurrency, and an environment its schema accepts', () => {
      // Prepare
      const s = of(lane);
      const batch = batchOf(s);
      const fnId = logicalId(s.stack, batch.function);
      // Act
      const fn = s.json.Resources[fnId].Properties;
      const invokeConfigs = resourcesOfType(s.json, 'AWS::Lambda::EventInvokeConfig').map(([, r]) => r.Properties);
      const env = fn.Environment.Variables;
      const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, typeof v === 'string' ? v : 'https://sqs.example.amazonaws.com/1/q']));
      // Assess
      assert.equal(fn.FunctionName, batchReconcilerFunctionName(lane.name));
      assert.deepEqual([fn.Runtime, fn.Architectures, fn.Handler], ['nodejs24.x', ['arm64'], 'index.handler']);
      assert.equal(fn.Timeout, lane.batch.reconcileEveryMinutes * 60, 'a sweep ends before the next tick');
      assert.equal(fn.ReservedConcurrentExecutions, undefined, 'no reservation by default: an account whose concurrency quota is 10 cannot reserve any');
      assert.deepEqual(fn.LoggingConfig, { LogGroup: { Ref: logicalId(s.stack, batch.logGroup) } });
      assert.deepEqual(invokeConfigs, [
        { FunctionName: { Ref: fnId }, Qualifier: '$LATEST', MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: lane.batch.reconcileEveryMinutes * 60 },
      ]);
      assert.deepEqual(JSON.parse(env.RATELANE_LANE_CONFIG), s.stack.lane, 'the lane as deployed (account-qualified bucket)');
      assert.deepEqual(env.RATELANE_QUEUE_URL, { Ref: logicalId(s.stack, s.stack.queues.queue) }, 'the lane queue, never the DLQ');
      assert.deepEqual(env.RATELANE_PROVIDER_SECRET_ARN, { Ref: logicalId(s.stack, s.stack.storage.providerSecret) });
      assert.equal(env.RATELANE_BATCH_SERVICE_ROLE_ARN, undefined, 'no Bedrock service role for an OpenAI lane');
      assert.deepEqual([env.POWERTOOLS_SERVICE_NAME, env.POWERTOOLS_METRICS_NAMESPACE, env.POWERTOOLS_LOG_LEVEL], [batchServiceName(lane), 'ratelane', 'INFO']);
      assert.ok(BatchReconcilerEnvironmentSchema.safeParse(resolved).success);
      const logGroup = s.json.Resources[logicalId(s.stack, batch.logGroup)];
      assert.deepEqual([logGroup.Properties, logGroup.DeletionPolicy], [{ RetentionInDays: 30 }, 'Retain']);
    });

    it('grants the reconciler exactly what a sweep calls, on its own lane’s resources only', () => {
      // Prepare
      const s = of(lane);
      const batch = batchOf(s);
      const id = (c: { node: { defaultChild?: unknown } } | undefined) => logicalId(s.stack, c);
      const roleId = id(batch.role);
      // Act
      const statements = roleStatements(s.json, roleId);
      const byResource = actionsByResource(statements);
      // Assess
      const documents = JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [id(s.stack.storage.bucket), 'Arn'] }, '/documents/*']] });
      const expected = new Map<string, readonly string[]>([
        [getAtt(id(batch.logGroup)), BATCH_LOG_ACTIONS],
        [getAtt(id(batch.manifestTable)), BATCH_MANIFEST_ACTIONS],
        [getAtt(id(s.stack.storage.resultsTable)), BATCH_RESULTS_ACTIONS],
        [getAtt(id(s.stack.storage.ledgerTable)), BATCH_LEDGER_ACTIONS],
        [getAtt(id(s.stack.queues.queue)), BATCH_QUEUE_ACTIONS],
        [documents, BATCH_DOCUMENT_ACTIONS],
        [ref(id(s.stack.storage.providerSecret)), BATCH_SECRET_ACTIONS],
        TRACING_GRANT,
      ]);
      assert.deepEqual(sorted(byResource.keys()), sorted(expected.keys()), 'the reconciler role reaches exactly these resources');
      for (const [resource, actions] of expected) assert.deepEqual(sorted(byResource.get(resource) ?? []), sorted(actions), resource);
      assert.deepEqual(BATCH_MANIFEST_ACTIONS, ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:UpdateItem'], 'it never creates a batch');
      assert.deepEqual(BATCH_RESULTS_ACTIONS, ['dynamodb:GetItem', 'dynamodb:PutItem']);
      assert.deepEqual(BATCH_QUEUE_ACTIONS, ['sqs:SendMessage']);
      assert.ok(!statements.some((st) => st.Condition !== undefined), 'no conditions needed: every resource is exact');
      assert.ok(!statements.flatMap(actionsOf).some((a) => a.startsWith('bedrock:') || a === 'iam:PassRole'), 'nothing on Bedrock for an OpenAI lane');
      const role = s.json.Resources[roleId].Properties;
      assert.deepEqual(role.AssumeRolePolicyDocument.Statement, [
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
      assert.equal(role.ManagedPolicyArns, undefined);
    });

    it('runs the reconciler from an EventBridge Scheduler schedule: rate from the lane config, retry policy, its own group and role', () => {
      // Prepare
      const s = of(lane);
      const batch = batchOf(s);
      const fnArn = { 'Fn::GetAtt': [logicalId(s.stack, batch.function), 'Arn'] };
      const roleId = logicalId(s.stack, batch.schedulerRole);
      const groupId = logicalId(s.stack, batch.scheduleGroup);
      // Act
      const schedules = resourcesOfType(s.json, 'AWS::Scheduler::Schedule').map(([, r]) => r.Properties);
      const role = s.json.Resources[roleId].Properties;
      const statements = roleStatements(s.json, roleId);
      // Assess
      assert.deepEqual(schedules, [
        {
          Name: batchReconcileScheduleName(lane.name),
          GroupName: batchReconcileScheduleName(lane.name),
          Description: `Sweeps the ratelane ${lane.name} lane's open batches (${lane.region})`,
          ScheduleExpression: `rate(${lane.batch.reconcileEveryMinutes} minutes)`,
          FlexibleTimeWindow: { Mode: 'OFF' },
          State: 'ENABLED',
          Target: {
            Arn: fnArn,
            RoleArn: { 'Fn::GetAtt': [roleId, 'Arn'] },
            RetryPolicy: { MaximumEventAgeInSeconds: lane.batch.reconcileEveryMinutes * 60, MaximumRetryAttempts: 2 },
          },
        },
      ]);
      assert.equal(s.json.Resources[groupId].Properties.Name, batchReconcileScheduleName(lane.name));
      assert.equal(s.json.Resources[groupId].DeletionPolicy, 'Delete');
      assert.deepEqual(role.AssumeRolePolicyDocument.Statement, [
        {
          Action: 'sts:AssumeRole',
          Effect: 'Allow',
          Principal: { Service: 'scheduler.amazonaws.com' },
          Condition: { StringEquals: { 'aws:SourceAccount': ACCOUNT, 'aws:SourceArn': { 'Fn::GetAtt': [groupId, 'Arn'] } } },
        },
      ]);
      assert.equal(role.ManagedPolicyArns, undefined);
      assert.deepEqual(
        statements,
        [{ Sid: 'InvokeReconciler', Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: fnArn }],
        'this one function, no version wildcard',
      );
    });

    it('alarms on unresolved items, the oldest open batch, the reconciler’s errors, repeated sweep errors and a stalled reconciler, on the lane topic', () => {
      // Prepare
      const s = of(lane);
      const batch = batchOf(s);
      const topic = [{ Ref: logicalId(s.stack, s.stack.alarms.topic) }];
      const fnDims = [{ Name: 'FunctionName', Value: { Ref: logicalId(s.stack, batch.function) } }];
      const alarms = alarmsByName(s.json);
      const get = (suffix: string) => {
        const alarm = alarms.get(`ratelane-${lane.name}-batch-${suffix}`);
        assert.ok(alarm, suffix);
        return alarm;
      };
      const shape = (a: Record<string, any>) => [
        a.Namespace,
        a.MetricName,
        a.Dimensions,
        a.Statistic,
        a.Period,
        a.ComparisonOperator,
        a.Threshold,
        a.EvaluationPeriods,
        a.DatapointsToAlarm,
        a.TreatMissingData,
      ];
      // Act
      const unresolved = get('unresolved');
      const age = get('age');
      const errors = get('reconciler-errors');
      const sweep = get('sweep-errors');
      const stalled = get('reconciler-stalled');
      // Assess
      const period = Math.max(5, lane.batch.reconcileEveryMinutes) * 60;
      assert.deepEqual(shape(unresolved), ['ratelane', 'BatchItemsUnresolved', dims, 'Maximum', period, 'GreaterThanThreshold', 0, 1, undefined, 'ignore']);
      assert.deepEqual(shape(age), [
        'ratelane',
        'BatchOldestAgeSeconds',
        dims,
        'Maximum',
        period,
        'GreaterThanThreshold',
        lane.batch.maxBatchAgeHours * 3600,
        1,
        undefined,
        'ignore',
      ]);
      assert.deepEqual(shape(errors), ['AWS/Lambda', 'Errors', fnDims, 'Sum', period, 'GreaterThanThreshold', 0, 1, undefined, 'notBreaching']);
      assert.deepEqual(shape(sweep), ['ratelane', 'BatchSweepErrors', dims, 'Sum', period, 'GreaterThanThreshold', 0, 3, 3, 'notBreaching']);
      assert.deepEqual(shape(stalled), ['AWS/Lambda', 'Invocations', fnDims, 'Sum', period, 'LessThanThreshold', 1, 3, 3, 'breaching']);
      for (const alarm of [unresolved, age, errors, sweep, stalled]) {
        assert.deepEqual([alarm.AlarmActions, alarm.OKActions], [topic, topic], `${alarm.AlarmName}: a state, on the lane topic`);
        assert.ok(alarm.AlarmDescription.length > 80, `${alarm.AlarmName} says what happened and what to do`);
      }
      assert.match(age.AlarmDescription, new RegExp(`${lane.batch.maxBatchAgeHours} h`));
    });

    it('shows unresolved items, the oldest open batch against its alarm and the reconciler on the lane dashboard', () => {
      // Prepare
      const s = of(lane);
      // Act
      const body = dashboardBody(s.template);
      const widget = (title: string) => body.widgets.find((w) => w.properties.title === title);
      const metricsOf = (title: string) => JSON.stringify(widget(title)?.properties.metrics);
      // Assess
      const [items, age, reconciler] = BATCH_DASHBOARD_WIDGET_TITLES;
      assert.deepEqual(
        body.widgets.slice(-3).map((w) => w.properties.title),
        [...BATCH_DASHBOARD_WIDGET_TITLES],
        'the batch row last',
      );
      assert.match(
        metricsOf(items),
        new RegExp(`"ratelane","BatchItemsUnresolved","lane","${lane.name}","region","${lane.region}","service","${batchServiceName(lane)}"`),
      );
      assert.match(metricsOf(items), /"BatchItemsSettled".*"BatchItemsSettledCommitted".*"BatchItemsSettledUnresolved"/);
      assert.match(metricsOf(age), /oldestBatchAge \/ 3600.*"BatchOldestAgeSeconds".*"stat":"Maximum"/);
      assert.match(JSON.stringify(widget(age)?.properties.annotations), new RegExp(`"value":${lane.batch.maxBatchAgeHours}`));
      assert.match(metricsOf(reconciler), /"AWS\/Lambda","Invocations".*"AWS\/Lambda","Errors".*"BatchSweepErrors"/);
      const rawBody = JSON.stringify(Object.values<any>(s.json.Resources).find((r) => r.Type === 'AWS::CloudWatch::Dashboard').Properties.DashboardBody);
      const batchAlarms = s.stack.batchAlarms;
      assert.ok(batchAlarms);
      for (const [purpose, alarm] of Object.entries(batchAlarms.alarms)) {
        assert.ok(rawBody.includes(JSON.stringify({ 'Fn::GetAtt': [logicalId(s.stack, alarm), 'Arn'] })), `the alarm status widget shows the ${purpose} alarm`);
      }
      for (const w of body.widgets.slice(-3)) assert.equal(w.properties.region, lane.region);
    });

    it(`names nothing of the ${other.name} lane in its batch resources: table, function, roles, schedule, alarms`, () => {
      // Prepare
      const s = of(lane);
      const batchIds = Object.keys(s.json.Resources).filter((k) => k.startsWith('Batch'));
      // Act
      const text = JSON.stringify(batchIds.map((k) => s.json.Resources[k]));
      // Assess
      assert.ok(batchIds.length >= 10, `found ${batchIds.length} batch resources`);
      assert.deepEqual([...regionsNamed(text)], [lane.region], 'the only region its batch resources name is its own');
      for (const needle of [
        other.region,
        `ratelane-${other.name}`,
        `ratelane-batch-${other.name}`,
        manifestTableName(other),
        ...Object.values(other.resources),
      ]) {
        assert.ok(!text.includes(needle), needle);
      }
      assert.deepEqual(text.match(/arn:aws[a-z-]*:/g) ?? [], [], 'every ARN with the stack partition');
    });
  });
}

describe('batch reconciler reserved concurrency (opt-in)', () => {
  it('reserves 1 (one sweep at a time, even for a late tick) only when the lane config asks for it', () => {
    // Prepare
    const s = synthLane('us', { batch: { reservedConcurrency: 1 } });
    const batch = s.stack.batch;
    assert.ok(batch);
    // Act
    const fn = s.json.Resources[logicalId(s.stack, batch.function)].Properties;
    // Assess
    assert.equal(fn.ReservedConcurrentExecutions, 1);
  });

  it('refuses any other reservation: only 1 keeps one sweep at a time', () => {
    // Act / Assess
    assert.throws(() => resolveLanes({ us: { batch: { reservedConcurrency: 2 as 1 } } }), LaneConfigError);
    assert.throws(() => resolveLanes({ us: { batch: { reservedConcurrency: 0 as 1 } } }), LaneConfigError);
  });
});
