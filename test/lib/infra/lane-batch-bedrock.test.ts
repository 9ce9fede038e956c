/**
 * The batch lane of a Bedrock lane (the batch inference service role: trust conditions as AWS documents
 * them, S3 on the lane bucket's batch prefix only, the lane's model only; the reconciler's grants on
 * Bedrock's jobs in the lane's region and its PassRole to Bedrock only), a cross-region inference
 * profile, a lane with batches off (none of it), a one-minute interval, and the refusal of batches on
 * a provider ratelane has no batch client for.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AwsSolutionsChecks } from 'cdk-nag';
import { LaneConfigError } from '../../../lib/config/lanes.js';
import { assertBatchDeployable, reconcileRate, reconcilerTimeoutSeconds } from '../../../lib/infra/batch/batch-lane.js';
import { BATCH_DASHBOARD_WIDGET_TITLES } from '../../../lib/infra/batch/dashboard.js';
import { manifestTableName } from '../../../lib/store/manifest-model.js';
import {
  ACCOUNT,
  actionsOf,
  alarmsByName,
  dashboardBody,
  logicalId,
  partitionArn,
  regionsNamed,
  roleStatements,
  type Statement,
  synthLane,
} from './support.js';

// Prepare (shared): a Bedrock lane with a foundation model, an eu lane with an eu. profile, a lane without batches.
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const PROFILE_MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const bedrock = synthLane('us', { provider: { kind: 'bedrock', model: MODEL } });
const profile = synthLane('eu', { provider: { kind: 'bedrock', model: `eu.${PROFILE_MODEL}` }, batch: { reconcileEveryMinutes: 1 } });
const off = synthLane('eu', { batch: { enabled: false } });

const jobsArn = (region: string) => partitionArn(`:bedrock:${region}:${ACCOUNT}:model-invocation-job/*`);
const objects = (bucketId: string, suffix: string) => ({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, suffix]] });

describe('batch lane of a Bedrock lane', () => {
  it('has a batch inference service role Bedrock may assume only for this account’s jobs in the lane’s region', () => {
    // Prepare
    const { stack, json } = bedrock;
    assert.ok(stack.batch?.serviceRole);
    // Act
    const role = json.Resources[logicalId(stack, stack.batch.serviceRole)].Properties;
    // Assess
    assert.deepEqual(role.AssumeRolePolicyDocument.Statement, [
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'bedrock.amazonaws.com' },
        Condition: { StringEquals: { 'aws:SourceAccount': ACCOUNT }, ArnEquals: { 'aws:SourceArn': jobsArn('us-east-1') } },
      },
    ]);
    assert.equal(role.ManagedPolicyArns, undefined);
  });

  it('lets the service role read job input, write job output, list below batch/ of the lane bucket, and invoke the lane’s model only', () => {
    // Prepare
    const { stack, json } = bedrock;
    assert.ok(stack.batch?.serviceRole);
    const bucketId = logicalId(stack, stack.storage.bucket);
    const inAccount = { StringEquals: { 'aws:ResourceAccount': ACCOUNT } };
    // Act
    const statements = roleStatements(json, logicalId(stack, stack.batch.serviceRole));
    // Assess
    assert.deepEqual(statements, [
      { Sid: 'ReadJobInput', Effect: 'Allow', Action: 's3:GetObject', Resource: objects(bucketId, '/batch/*/input/*'), Condition: inAccount },
      { Sid: 'WriteJobOutput', Effect: 'Allow', Action: 's3:PutObject', Resource: objects(bucketId, '/batch/*/output/*'), Condition: inAccount },
      {
        Sid: 'ListBatchFiles',
        Effect: 'Allow',
        Action: 's3:ListBucket',
        Resource: { 'Fn::GetAtt': [bucketId, 'Arn'] },
        Condition: { ...inAccount, StringLike: { 's3:prefix': 'batch/*' } },
      },
      { Sid: 'InvokeModel', Effect: 'Allow', Action: 'bedrock:InvokeModel', Resource: partitionArn(`:bedrock:us-east-1::foundation-model/${MODEL}`) },
    ] satisfies Statement[]);
  });

  it('lets the reconciler create, watch and stop jobs in the lane’s region, pass only the service role only to Bedrock, and use batch/ as the client does', () => {
    // Prepare
    const { stack, json } = bedrock;
    const batch = stack.batch;
    assert.ok(batch?.serviceRole);
    const bucketId = logicalId(stack, stack.storage.bucket);
    // Act
    const statements = roleStatements(json, logicalId(stack, batch.role));
    const bedrockSide = statements.filter((s) =>
      ['CreateBatchJobs', 'WatchBatchJobs', 'PassBatchServiceRole', 'WriteJobInput', 'ReadAndEraseJobOutput', 'ListJobOutput'].includes(s.Sid ?? ''),
    );
    const env = json.Resources[logicalId(stack, batch.function)].Properties.Environment.Variables;
    // Assess
    assert.deepEqual(bedrockSide, [
      {
        Sid: 'CreateBatchJobs',
        Effect: 'Allow',
        Action: 'bedrock:CreateModelInvocationJob',
        Resource: [jobsArn('us-east-1'), partitionArn(`:bedrock:us-east-1::foundation-model/${MODEL}`)],
      },
      { Sid: 'WatchBatchJobs', Effect: 'Allow', Action: ['bedrock:GetModelInvocationJob', 'bedrock:StopModelInvocationJob'], Resource: jobsArn('us-east-1') },
      {
        Sid: 'PassBatchServiceRole',
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: { 'Fn::GetAtt': [logicalId(stack, batch.serviceRole), 'Arn'] },
        Condition: { StringEquals: { 'iam:PassedToService': 'bedrock.amazonaws.com' } },
      },
      { Sid: 'WriteJobInput', Effect: 'Allow', Action: 's3:PutObject', Resource: objects(bucketId, '/batch/*/input/*') },
      { Sid: 'ReadAndEraseJobOutput', Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: objects(bucketId, '/batch/*/output/*') },
      {
        Sid: 'ListJobOutput',
        Effect: 'Allow',
        Action: 's3:ListBucket',
        Resource: { 'Fn::GetAtt': [bucketId, 'Arn'] },
        Condition: { StringLike: { 's3:prefix': 'batch/*/output/*' } },
      },
    ] satisfies Statement[]);
    assert.equal(
      statements.length,
      bedrockSide.length + 7,
      'plus logs, manifest, results, ledger, queue, documents and X-Ray trace writes; no secret (IAM auth)',
    );
    assert.ok(!statements.flatMap(actionsOf).some((a) => a.startsWith('secretsmanager:')));
    assert.deepEqual(env.RATELANE_BATCH_SERVICE_ROLE_ARN, { 'Fn::GetAtt': [logicalId(stack, batch.serviceRole), 'Arn'] });
    assert.equal(env.RATELANE_PROVIDER_SECRET_ARN, undefined);
    assert.deepEqual(json.Outputs.BatchServiceRoleArn.Value, { 'Fn::GetAtt': [logicalId(stack, batch.serviceRole), 'Arn'] }, 'what submitting a batch passes');
    assert.deepEqual(JSON.stringify(json).match(/arn:aws[a-z-]*:/g) ?? [], [], 'every ARN with the stack partition');
  });

  it('with an inference profile of the lane’s geography: jobs and the profile in the lane’s region, the model only in its geography; a one-minute rate', () => {
    // Prepare
    const { stack, json, app } = profile;
    const batch = stack.batch;
    assert.ok(batch?.serviceRole);
    const profileArn = partitionArn(`:bedrock:eu-central-1:${ACCOUNT}:inference-profile/eu.${PROFILE_MODEL}`);
    // Act
    const create = roleStatements(json, logicalId(stack, batch.role)).find((s) => s.Sid === 'CreateBatchJobs');
    const invoke = roleStatements(json, logicalId(stack, batch.serviceRole)).filter((s) => actionsOf(s).includes('bedrock:InvokeModel'));
    const schedule = Object.values<any>(json.Resources).find((r) => r.Type === 'AWS::Scheduler::Schedule').Properties;
    const fn = json.Resources[logicalId(stack, batch.function)].Properties;
    const report = new AwsSolutionsChecks(app).validateScope(app);
    // Assess
    assert.deepEqual(create?.Resource, [jobsArn('eu-central-1'), profileArn, partitionArn(`:bedrock:*::foundation-model/${PROFILE_MODEL}`)]);
    assert.deepEqual(invoke, [
      { Sid: 'InvokeInferenceProfile', Effect: 'Allow', Action: 'bedrock:InvokeModel', Resource: profileArn },
      {
        Sid: 'InvokeModelThroughProfile',
        Effect: 'Allow',
        Action: 'bedrock:InvokeModel',
        Resource: partitionArn(`:bedrock:*::foundation-model/${PROFILE_MODEL}`),
        Condition: { StringEquals: { 'bedrock:InferenceProfileArn': profileArn } },
      },
    ] satisfies Statement[]);
    assert.deepEqual([...regionsNamed(JSON.stringify(json))], ['eu-central-1']);
    assert.deepEqual([schedule.ScheduleExpression, schedule.Target.RetryPolicy.MaximumEventAgeInSeconds, fn.Timeout], ['rate(1 minute)', 60, 60]);
    assert.deepEqual(
      report.violations.map((v) => v.ruleName),
      [],
      'cdk-nag passes, with its acknowledgements',
    );
  });

  it('passes cdk-nag with a foundation model', () => {
    // Act
    const report = new AwsSolutionsChecks(bedrock.app).validateScope(bedrock.app);
    // Assess
    assert.deepEqual(
      report.violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join()}`),
      [],
    );
  });
});

describe('a lane with batch.enabled false', () => {
  it('deploys none of the batch lane: no manifest table, reconciler, schedule, roles, alarms or dashboard row', () => {
    // Act
    const { stack, json, template } = off;
    const text = JSON.stringify(json);
    // Assess
    assert.equal(stack.batch, undefined);
    assert.equal(stack.batchAlarms, undefined);
    assert.deepEqual([json.Outputs.BatchReconcilerLogGroup, json.Outputs.BatchServiceRoleArn], [undefined, undefined]);
    template.resourceCountIs('AWS::Scheduler::Schedule', 0);
    template.resourceCountIs('AWS::Lambda::EventInvokeConfig', 0);
    template.resourceCountIs('AWS::DynamoDB::GlobalTable', 3);
    assert.ok(!text.includes(manifestTableName(stack.lane)));
    assert.doesNotMatch(text, /batch-reconcile|ratelane-batch-|"BatchItems|"BatchOldest|"BatchSweep/);
    assert.deepEqual(
      Object.keys(json.Resources).filter((id) => id.startsWith('Batch')),
      [],
    );
    assert.deepEqual(
      [...alarmsByName(json).keys()].filter((name) => name.includes('-batch-')),
      [],
    );
    const titles = dashboardBody(template).widgets.map((w) => w.properties.title);
    for (const title of BATCH_DASHBOARD_WIDGET_TITLES) assert.ok(!titles.includes(title), title);
    assert.deepEqual(
      Object.values<any>(json.Resources)
        .filter((r) => r.Type === 'AWS::Lambda::Function')
        .map((r) => r.Properties.FunctionName)
        .sort(),
      ['ratelane-eu-consumer', 'ratelane-eu-live'],
    );
  });
});

describe('batch lane settings at synth', () => {
  it('writes the schedule rate in Scheduler’s singular and plural, and times a sweep within its interval (at most 900 s)', () => {
    // Act / Assess
    assert.deepEqual([reconcileRate(1), reconcileRate(5), reconcileRate(60)], ['rate(1 minute)', 'rate(5 minutes)', 'rate(60 minutes)']);
    assert.deepEqual(
      [1, 5, 15, 60].map((m) => reconcilerTimeoutSeconds({ batch: { reconcileEveryMinutes: m } as never })),
      [60, 300, 900, 900],
    );
  });

  it('takes batches through OpenAI or Bedrock, and refuses them on a provider ratelane has no batch client for, saying what to set', () => {
    // Prepare
    const { stack } = off;
    const lane = stack.lane;
    // Act / Assess
    assert.equal(assertBatchDeployable(lane), 'openai');
    assert.equal(assertBatchDeployable({ ...lane, provider: { ...lane.provider, kind: 'bedrock', model: MODEL } }), 'bedrock');
    for (const provider of [
      { ...lane.provider, kind: 'gemini' as const, model: 'gemini-2.5-flash' },
      { ...lane.provider, dialect: 'groq' as const },
    ]) {
      assert.throws(
        () => assertBatchDeployable({ ...lane, provider }),
        (error: unknown) => error instanceof LaneConfigError && /set batch\.enabled to false for this lane/.test(error.message),
      );
    }
  });
});
