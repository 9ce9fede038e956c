/**
 * The Bedrock side of a lane's batch lane: the batch inference service role Bedrock assumes to run a
 * lane's jobs, and what the reconciler may do on Bedrock. As AWS documents for batch inference ("Create
 * a custom service role for batch inference", Bedrock User Guide): the role trusts
 * `bedrock.amazonaws.com` only for this account's model invocation jobs in the lane's region
 * (`aws:SourceAccount`, `aws:SourceArn`); it reads the jobs' input under `batch/<batchId>/input/`, writes
 * their output under `batch/<batchId>/output/` of the lane's own bucket (listing only below `batch/`,
 * all only in this account's bucket: `aws:ResourceAccount`), and invokes exactly the lane's model. The
 * reconciler creates, watches and stops jobs in the lane's region and may pass only this role, only to
 * Bedrock. Every ARN carries the stack's partition.
 */
import { ArnFormat, Stack, Token, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { type BedrockModelTarget, bedrockModelTarget, type LaneConfig } from '../../config/lanes.js';
import { BATCH_PREFIX } from '../../config/names.js';
import { acknowledgeBucketPrefixGrant, foundationModelArnOf, grantBedrockInvoke } from '../lane-function.js';
import type { LaneStorage } from '../storage.js';

/** Object keys of the jobs' input files in the lane bucket (`batch/<batchId>/input/<n>.jsonl`). */
const BATCH_INPUT_KEYS = `${BATCH_PREFIX}*/input/*`;
/** Object keys of the jobs' output files in the lane bucket (`batch/<batchId>/output/<jobId>/...`). */
const BATCH_OUTPUT_KEYS = `${BATCH_PREFIX}*/output/*`;

/** The service role: read a job's input. */
const SERVICE_ROLE_INPUT_ACTIONS = ['s3:GetObject'] as const;
/** The service role: write a job's output. */
const SERVICE_ROLE_OUTPUT_ACTIONS = ['s3:PutObject'] as const;
/** The service role: list the lane bucket below `batch/` only. */
const SERVICE_ROLE_LIST_ACTIONS = ['s3:ListBucket'] as const;
/** The reconciler: create a job (on the job and the lane's model). */
const RECONCILER_BEDROCK_CREATE_ACTIONS = ['bedrock:CreateModelInvocationJob'] as const;
/** The reconciler: watch and stop its jobs. */
const RECONCILER_BEDROCK_JOB_ACTIONS = ['bedrock:GetModelInvocationJob', 'bedrock:StopModelInvocationJob'] as const;
/** The reconciler: write a job's input file (a part submitted again after a throttle). */
const RECONCILER_BATCH_INPUT_ACTIONS = ['s3:PutObject'] as const;
/** The reconciler: read a job's output files, and write them back without erased records (`erased-records.ts`). */
const RECONCILER_BATCH_OUTPUT_ACTIONS = ['s3:GetObject', 's3:PutObject'] as const;
/** The reconciler: list a job's output folder. */
const RECONCILER_BATCH_LIST_ACTIONS = ['s3:ListBucket'] as const;

/** The ARN of every model invocation job of this account in the stack's (the lane's) region. */
function modelInvocationJobsArn(scope: Construct): string {
  return Stack.of(scope).formatArn({ service: 'bedrock', resource: 'model-invocation-job', resourceName: '*', arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
}

/** The lane's Bedrock model as the stack grants it (the lane config refuses what it cannot grant in the lane's geography). */
function laneBatchModelTarget(lane: LaneConfig): BedrockModelTarget {
  return bedrockModelTarget(lane, lane.provider.model);
}

/** The batch inference service role of a Bedrock lane. */
export function createBatchServiceRole(scope: Construct, id: string, lane: LaneConfig, storage: LaneStorage): Role {
  const stack = Stack.of(scope);
  const role = new Role(scope, id, {
    assumedBy: new ServicePrincipal('bedrock.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': stack.account }, ArnEquals: { 'aws:SourceArn': modelInvocationJobsArn(scope) } },
    }),
    description: `Bedrock batch inference of the ratelane ${lane.name} lane (${lane.region}): its jobs' input and output in the lane bucket, its one model`,
  });
  const inAccount = { StringEquals: { 'aws:ResourceAccount': stack.account } };
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'ReadJobInput',
      actions: [...SERVICE_ROLE_INPUT_ACTIONS],
      resources: [storage.bucket.arnForObjects(BATCH_INPUT_KEYS)],
      conditions: inAccount,
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'WriteJobOutput',
      actions: [...SERVICE_ROLE_OUTPUT_ACTIONS],
      resources: [storage.bucket.arnForObjects(BATCH_OUTPUT_KEYS)],
      conditions: inAccount,
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'ListBatchFiles',
      actions: [...SERVICE_ROLE_LIST_ACTIONS],
      resources: [storage.bucket.bucketArn],
      conditions: { ...inAccount, StringLike: { 's3:prefix': `${BATCH_PREFIX}*` } },
    }),
  );
  grantBedrockInvoke(role, laneBatchModelTarget(lane));
  const jobKeys = 'A job’s files are named by its batch id (batch/<batchId>/...), made at submission, so they cannot be listed at deploy time';
  acknowledgeBucketPrefixGrant(
    role,
    storage,
    BATCH_INPUT_KEYS,
    `${jobKeys}; Bedrock may only read (s3:GetObject) the input files under batch/*/input/ of this lane’s own bucket.`,
  );
  acknowledgeBucketPrefixGrant(
    role,
    storage,
    BATCH_OUTPUT_KEYS,
    `${jobKeys}; Bedrock may only write (s3:PutObject) output under batch/*/output/ of this lane’s own bucket.`,
  );
  return role;
}

/**
 * What a Bedrock lane's reconciler may do on Bedrock: create jobs (on the job ARN and the lane's model:
 * the foundation model in the lane's region, or the lane's inference profile and the model it routes
 * to within the profile's geography), get and stop them, all in the lane's region and account, and
 * pass the service role to Bedrock only; on the lane bucket, write a job's input and read and list its output.
 */
export function grantBedrockBatchJobs(role: Role, lane: LaneConfig, storage: LaneStorage, serviceRole: Role): void {
  const stack = Stack.of(role);
  const jobs = modelInvocationJobsArn(role);
  const target = laneBatchModelTarget(lane);
  const foundationModel = (region: string) => foundationModelArnOf(stack, region, target.modelId);
  const models =
    target.kind === 'foundation-model'
      ? [foundationModel(stack.region)]
      : [
          stack.formatArn({ service: 'bedrock', resource: 'inference-profile', resourceName: target.profileId, arnFormat: ArnFormat.SLASH_RESOURCE_NAME }),
          foundationModel('*'),
        ];
  const grant = (sid: string, actions: readonly string[], resources: string[], conditions?: Record<string, unknown>) =>
    role.addToPrincipalPolicy(new PolicyStatement({ sid, actions: [...actions], resources, ...(conditions ? { conditions } : {}) }));
  grant('CreateBatchJobs', RECONCILER_BEDROCK_CREATE_ACTIONS, [jobs, ...models]);
  grant('WatchBatchJobs', RECONCILER_BEDROCK_JOB_ACTIONS, [jobs]);
  grant('PassBatchServiceRole', ['iam:PassRole'], [serviceRole.roleArn], { StringEquals: { 'iam:PassedToService': 'bedrock.amazonaws.com' } });
  grant('WriteJobInput', RECONCILER_BATCH_INPUT_ACTIONS, [storage.bucket.arnForObjects(BATCH_INPUT_KEYS)]);
  grant('ReadAndEraseJobOutput', RECONCILER_BATCH_OUTPUT_ACTIONS, [storage.bucket.arnForObjects(BATCH_OUTPUT_KEYS)]);
  grant('ListJobOutput', RECONCILER_BATCH_LIST_ACTIONS, [storage.bucket.bucketArn], { StringLike: { 's3:prefix': BATCH_OUTPUT_KEYS } });

  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:${stack.region}:${account}:model-invocation-job/*]`,
    reason:
      'Bedrock names a batch inference job (its ARN’s last part) when it creates it, so no job ARN exists at deploy time; the grant is creating, getting and stopping model invocation jobs in this lane’s region and account only, and the only role they may run with is this lane’s batch service role.',
  });
  if (target.kind === 'inference-profile') {
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${target.modelId}]`,
      reason: `A batch job through the ${target.geography}. inference profile runs ${target.modelId} in a region of the profile’s geography that AWS picks; the grant is creating jobs on this one model, and the lane config refuses a profile of another geography.`,
    });
  }
  const jobKeys = 'A job’s files are named by its batch id (batch/<batchId>/...), made at submission, so they cannot be listed at deploy time';
  acknowledgeBucketPrefixGrant(
    role,
    storage,
    BATCH_INPUT_KEYS,
    `${jobKeys}; the reconciler may only write (s3:PutObject) input under batch/*/input/ of this lane’s own bucket.`,
  );
  acknowledgeBucketPrefixGrant(
    role,
    storage,
    BATCH_OUTPUT_KEYS,
    `${jobKeys}; the reconciler may only read output under batch/*/output/ of this lane’s own bucket (s3:GetObject), and write it back without an erased source’s records (s3:PutObject).`,
  );
}
