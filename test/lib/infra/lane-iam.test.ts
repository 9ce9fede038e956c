/**
 * The lane stacks' IAM: the consumer role has exactly what the consumer calls, on its own resources
 * (a missing document answers 404, nothing unused), EventBridge Scheduler may only re-enable the
 * lane's mapping, no wildcard action or "*" resource, and every ARN carries the stack's partition.
 * Provider grants per kind are in providers.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Match } from 'aws-cdk-lib/assertions';
import {
  CONSUMER_BUCKET_ACTIONS,
  CONSUMER_BUCKET_LIST_ACTIONS,
  CONSUMER_DLQ_ACTIONS,
  CONSUMER_LEDGER_ACTIONS,
  CONSUMER_LOG_ACTIONS,
  CONSUMER_QUEUE_ACTIONS,
  CONSUMER_RATE_STATE_ACTIONS,
  CONSUMER_RESULTS_ACTIONS,
  CONSUMER_SECRET_ACTIONS,
} from '../../../lib/infra/consumer.js';
import { DOCUMENT_PREFIX } from '../../../lib/platform/resources.js';
import {
  ACCOUNT,
  actionsByResource,
  actionsOf,
  getAtt,
  LANES,
  logicalId,
  ref,
  roleStatements,
  type Statement,
  sorted,
  synthDefaultLanes,
  TRACING_GRANT,
} from './support.js';

// Prepare (shared): one app, both stacks, one synth.
const of = synthDefaultLanes();

for (const lane of LANES) {
  describe(`lane stack ${lane.name} (${lane.region}) IAM`, () => {
    it('grants the consumer exactly what it calls, on its own resources only', () => {
      // Prepare
      const { stack, json } = of(lane);
      const roleId = logicalId(stack, stack.consumer.role);
      const id = (c: { node: { defaultChild?: unknown } } | undefined) => logicalId(stack, c);
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
        [getAtt(id(stack.storage.bucket)), CONSUMER_BUCKET_LIST_ACTIONS],
        [getAtt(id(stack.storage.resultsTable)), CONSUMER_RESULTS_ACTIONS],
        [getAtt(id(stack.storage.ledgerTable)), CONSUMER_LEDGER_ACTIONS],
        [getAtt(id(stack.storage.rateStateTable)), CONSUMER_RATE_STATE_ACTIONS],
        [ref(id(stack.storage.providerSecret)), CONSUMER_SECRET_ACTIONS],
        [parameterArn, ['ssm:GetParameter']],
        [mappingArn, ['lambda:UpdateEventSourceMapping']],
        [scheduleArn, ['scheduler:CreateSchedule']],
        [getAtt(id(stack.consumer.schedulerRole)), ['iam:PassRole']],
        TRACING_GRANT,
      ]);
      assert.deepEqual(sorted(byResource.keys()), sorted(expected.keys()), 'the consumer role reaches exactly these resources');
      for (const [resource, actions] of expected) assert.deepEqual(sorted(byResource.get(resource) ?? []), sorted(actions), resource);
      // the DLQ only receives, the bucket is only read (and listed below documents/, see below)
      assert.deepEqual(CONSUMER_DLQ_ACTIONS, ['sqs:SendMessage']);
      assert.deepEqual(CONSUMER_BUCKET_ACTIONS, ['s3:GetObject', 's3:DeleteObject']);
      // no provider grant for an OpenAI-compatible lane: its keys are in the secret
      assert.ok(!statements.some((s) => actionsOf(s).some((a) => a.startsWith('bedrock:'))));
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

    it('lets EventBridge Scheduler (this account, this lane’s pause group only) do one thing: update this lane’s one mapping', () => {
      // Prepare
      const { stack, json, template } = of(lane);
      const roleId = logicalId(stack, stack.consumer.schedulerRole);
      const groupId = logicalId(stack, stack.consumer.pauseScheduleGroup);
      // Act
      const role = json.Resources[roleId].Properties;
      const statements = roleStatements(json, roleId);
      // Assess: the confused-deputy condition AWS documents for schedule execution roles (the schedule group's ARN)
      assert.deepEqual(role.AssumeRolePolicyDocument.Statement, [
        {
          Action: 'sts:AssumeRole',
          Effect: 'Allow',
          Principal: { Service: 'scheduler.amazonaws.com' },
          Condition: { StringEquals: { 'aws:SourceAccount': ACCOUNT, 'aws:SourceArn': { 'Fn::GetAtt': [groupId, 'Arn'] } } },
        },
      ]);
      assert.equal(json.Resources[groupId].Type, 'AWS::Scheduler::ScheduleGroup');
      assert.equal(json.Resources[groupId].Properties.Name, `ratelane-${lane.name}-pause`, 'the group the consumer creates its resume schedules in');
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

    it('uses no wildcard action and no "*" resource in any IAM policy but the X-Ray trace writes', () => {
      // Prepare
      const { template } = of(lane);
      // Act
      const statements = Object.values<any>(template.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
      // Assess
      assert.ok(statements.length > 0);
      for (const s of statements) {
        for (const a of actionsOf(s)) assert.doesNotMatch(a, /\*/, `action ${a}`);
        const resources = Array.isArray(s.Resource) ? s.Resource : [s.Resource];
        if (resources.includes('*')) assert.deepEqual([resources, sorted(actionsOf(s))], [['*'], sorted(TRACING_GRANT[1])], 'only X-Ray takes "*"');
      }
    });

    it('lets a missing document answer 404 NoSuchKey: s3:ListBucket on the lane bucket, only for keys under documents/', () => {
      // Prepare
      const { stack, json } = of(lane);
      const bucketArn = { 'Fn::GetAtt': [logicalId(stack, stack.storage.bucket), 'Arn'] };
      // Act
      const listing = roleStatements(json, logicalId(stack, stack.consumer.role)).filter((s) => actionsOf(s).includes('s3:ListBucket'));
      // Assess
      assert.equal(listing.length, 1);
      assert.deepEqual(listing[0]?.Resource, bucketArn, 'the bucket itself (ListBucket is a bucket action), no other bucket');
      assert.deepEqual(actionsOf(listing[0] as Statement), ['s3:ListBucket']);
      assert.deepEqual(listing[0]?.Condition, { StringLike: { 's3:prefix': `${DOCUMENT_PREFIX}*` } });
    });

    it("grants nothing the consumer does not call: no ledger Scan, no Query of the ledger's indexes, no DescribeSecret", () => {
      // Prepare
      const { stack, json } = of(lane);
      // Act
      const actions = new Set(roleStatements(json, logicalId(stack, stack.consumer.role)).flatMap(actionsOf));
      // Assess
      // It queries one job's own ledger partition (a job of an erased source), never an index of the ledger.
      const ledgerQuery = roleStatements(json, logicalId(stack, stack.consumer.role)).filter((st) => actionsOf(st).includes('dynamodb:Query'));
      assert.deepEqual(
        ledgerQuery.map((st) => st.Resource),
        [{ 'Fn::GetAtt': [logicalId(stack, stack.storage.ledgerTable), 'Arn'] }],
      );
      assert.ok(!actions.has('dynamodb:Scan'));
      assert.ok(!actions.has('secretsmanager:DescribeSecret'), 'GetSecretValue is all Powertools getSecret calls');
      assert.deepEqual(CONSUMER_LEDGER_ACTIONS, [
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:GetItem',
        'dynamodb:BatchGetItem',
        'dynamodb:Query',
        'dynamodb:BatchWriteItem',
        'dynamodb:ConditionCheckItem',
      ]);
      assert.deepEqual(CONSUMER_SECRET_ACTIONS, ['secretsmanager:GetSecretValue']);
    });

    it('writes every ARN with the stack partition, the Scheduler role policy included', () => {
      // Prepare
      const { stack, json } = of(lane);
      const text = JSON.stringify(json);
      // Act
      const literal = text.match(/arn:aws[a-z-]*:/g) ?? [];
      const scheduler = roleStatements(json, logicalId(stack, stack.consumer.schedulerRole));
      // Assess
      assert.deepEqual(literal, [], 'no ARN names a partition literally');
      assert.match(JSON.stringify(scheduler[0]?.Resource), /"Ref":"AWS::Partition"/);
    });
  });
}
