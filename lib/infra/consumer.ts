/**
 * A lane's queue consumer: the `lambdas/consumer.ts` function bundled by the local esbuild (no
 * Docker), its SQS event source (ReportBatchItemFailures, MaximumConcurrency), a role with only what
 * the consumer calls (the provider's own grant included: `bedrock:InvokeModel` for a Bedrock lane
 * with IAM auth, the secret for providers with API keys), and what a lane pause needs: permission to
 * disable/enable this one mapping now, and an EventBridge Scheduler role that may only re-enable it
 * later, assumable only by schedules of the lane's own pause group. Every ARN is built with the stack's partition.
 */
import { ArnFormat, Duration, Fn, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import { Effect, Policy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { ParameterTier, StringParameter } from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import type { BedrockModelTarget, LaneConfig } from '../config/lanes.js';
import type { LaneQueues } from './queues.js';
import { CONSUMER_ENV } from '../platform/environment.js';
import {
  consumerFunctionName,
  DOCUMENT_PREFIX,
  mappingIdParameterName as mappingIdParameterOf,
  pauseScheduleGroupName as pauseScheduleGroupOf,
} from '../platform/resources.js';
import { consumerServiceName, METRICS_NAMESPACE } from '../platform/telemetry.js';
import { acknowledgeDocumentPrefixGrant, grantBedrockInvoke, laneBedrockTarget, laneFunction } from './lane-function.js';
import type { LaneStorage } from './storage.js';

/**
 * Actions the consumer role has on its own ingress queue: receive/delete/visibility for the event
 * source mapping (granted by the mapping itself), plus SendMessage for deferrals (re-sends with
 * DelaySeconds) and ChangeMessageVisibility for the failure backoff.
 */
export const CONSUMER_QUEUE_ACTIONS = [
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
  'sqs:SendMessage',
] as const;
/** What the consumer itself adds on the queue; the rest of {@link CONSUMER_QUEUE_ACTIONS} comes with the mapping. */
const CONSUMER_QUEUE_EXTRA_ACTIONS = ['sqs:SendMessage'] as const;
export const CONSUMER_DLQ_ACTIONS = ['sqs:SendMessage'] as const;
export const CONSUMER_RESULTS_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem'] as const;
/**
 * Ledger entries (`PutItem`) and the job claim (`claimJob`: a conditional `UpdateItem`, `claimOf`:
 * `GetItem`); at a job's receive its source's tombstone and its cancel marker (one `BatchGetItem`:
 * `Cancellations.atReceive`), the marker again before a call (`GetItem`); erasure (lib/store/erasure.ts):
 * the tombstone's and the marker's absence as `ConditionCheckItem`s in the commit's transaction, and the
 * records of a job of an erased source removed (`Query` of its own partition, `BatchWriteItem` deletes)
 * with its marker left (`PutItem`).
 */
export const CONSUMER_LEDGER_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
] as const;
export const CONSUMER_RATE_STATE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
] as const;
export const CONSUMER_SECRET_ACTIONS = ['secretsmanager:GetSecretValue'] as const;
/** Documents: read a job's; delete the document of a job of an erased source (lib/extraction/erased.ts). */
export const CONSUMER_BUCKET_ACTIONS = ['s3:GetObject', 's3:DeleteObject'] as const;
/**
 * On the bucket itself, limited by `s3:prefix` to the documents prefix: without `s3:ListBucket`, S3
 * answers a GetObject of a missing key with 403 AccessDenied (it will not say whether a key exists to
 * someone who may not list), which the consumer must treat as a failure and retry into the DLQ; with
 * it, 404 NoSuchKey, which the consumer rejects as `input_missing`. S3 evaluates that permission with
 * the requested key as `s3:prefix`, so the condition keeps listing to `documents/`.
 */
export const CONSUMER_BUCKET_LIST_ACTIONS = ['s3:ListBucket'] as const;
export const CONSUMER_LOG_ACTIONS = ['logs:CreateLogStream', 'logs:PutLogEvents'] as const;

export interface LaneConsumerProps {
  readonly lane: LaneConfig;
  readonly queues: LaneQueues;
  readonly storage: LaneStorage;
  /** Retention of the function's log group. */
  readonly logRetention: RetentionDays;
}

export class LaneConsumer extends Construct {
  readonly function: LambdaFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  readonly eventSource: SqsEventSource;
  /** Holds the pause permissions; separate from the role's default policy so the function does not depend on its own mapping. */
  readonly pausePolicy: Policy;
  /** Role EventBridge Scheduler assumes to resume the lane (UpdateEventSourceMapping on this mapping only). */
  readonly schedulerRole: Role;
  readonly pauseScheduleGroup: ScheduleGroup;
  /** SSM parameter holding the mapping's UUID (the function cannot get it in its environment without a cycle). */
  readonly mappingIdParameter: StringParameter;
  /** What the role may invoke on Bedrock (a Bedrock lane with IAM auth), else undefined. */
  readonly bedrockTarget: BedrockModelTarget | undefined;

  constructor(scope: Construct, id: string, props: LaneConsumerProps) {
    super(scope, id);
    const { lane, queues, storage } = props;
    const stack = Stack.of(this);

    // No fixed name: the group is retained when the stack is deleted, and a fixed name would make
    // the next deploy of the lane fail on it. The function is pointed at it (LoggingConfig).
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `ratelane ${lane.name} lane consumer: its own queue, DLQ, bucket, tables and secret only`,
    });

    const pauseScheduleGroupName = pauseScheduleGroupOf(lane.name);
    const mappingIdParameterName = mappingIdParameterOf(lane.name);

    // Deleted with the stack (its pending resume schedules with it: the mapping they would enable
    // goes too); retained under its fixed name it would block the next deploy of the lane.
    this.pauseScheduleGroup = new ScheduleGroup(this, 'PauseSchedules', { scheduleGroupName: pauseScheduleGroupName, removalPolicy: RemovalPolicy.DESTROY });

    // The scheduler role is created before the function (the function's environment names it);
    // its policy comes later, once the mapping exists. EventBridge Scheduler may assume it only for
    // schedules of this lane's pause group in this account: the confused-deputy condition AWS documents
    // for schedule execution roles ("Confused deputy prevention", EventBridge Scheduler User Guide:
    // aws:SourceArn is the schedule group's ARN, never a schedule's), with aws:SourceAccount.
    this.schedulerRole = new Role(this, 'PauseSchedulerRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account, 'aws:SourceArn': this.pauseScheduleGroup.scheduleGroupArn } },
      }),
      description: `EventBridge Scheduler resumes the ratelane ${lane.name} lane: UpdateEventSourceMapping on its one mapping`,
    });

    this.function = laneFunction(this, 'Function', 'consumer', {
      functionName: consumerFunctionName(lane.name),
      description: `ratelane ${lane.name} lane queue consumer (${lane.region})`,
      memorySize: lane.consumer.memoryMb,
      timeout: Duration.seconds(lane.consumer.timeoutSeconds),
      // The mapping's MaximumConcurrency caps invocations; reserving is opt-in (see the lane config).
      ...(lane.consumer.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: lane.consumer.reservedConcurrency }),
      role: this.role,
      logGroup: this.logGroup,
      environment: {
        [CONSUMER_ENV.laneConfig]: JSON.stringify(lane),
        [CONSUMER_ENV.queueUrl]: queues.queue.queueUrl,
        [CONSUMER_ENV.dlqUrl]: queues.deadLetterQueue.queueUrl,
        [CONSUMER_ENV.laneSenders]: this.role.roleId,
        ...(storage.providerSecret ? { [CONSUMER_ENV.providerSecretArn]: storage.providerSecret.secretArn } : {}),
        [CONSUMER_ENV.pauseScheduleGroup]: pauseScheduleGroupName,
        [CONSUMER_ENV.pauseSchedulerRoleArn]: this.schedulerRole.roleArn,
        [CONSUMER_ENV.mappingIdParameter]: mappingIdParameterName,
        [CONSUMER_ENV.serviceName]: consumerServiceName(lane),
        [CONSUMER_ENV.metricsNamespace]: METRICS_NAMESPACE,
        [CONSUMER_ENV.logLevel]: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
      },
    });

    // Grants, one statement per resource, exact actions.
    this.role.addToPrincipalPolicy(new PolicyStatement({ sid: 'WriteOwnLogs', actions: [...CONSUMER_LOG_ACTIONS], resources: [this.logGroup.logGroupArn] }));
    this.role.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'ResendToOwnQueue', actions: [...CONSUMER_QUEUE_EXTRA_ACTIONS], resources: [queues.queue.queueArn] }),
    );
    this.role.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'DeadLetterToOwnDlq', actions: [...CONSUMER_DLQ_ACTIONS], resources: [queues.deadLetterQueue.queueArn] }),
    );
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadSourceDocuments',
        actions: [...CONSUMER_BUCKET_ACTIONS],
        resources: [storage.bucket.arnForObjects(`${DOCUMENT_PREFIX}*`)],
      }),
    );
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'MissingDocumentsAnswer404',
        actions: [...CONSUMER_BUCKET_LIST_ACTIONS],
        resources: [storage.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': `${DOCUMENT_PREFIX}*` } },
      }),
    );
    this.role.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'CommitResults', actions: [...CONSUMER_RESULTS_ACTIONS], resources: [storage.resultsTable.tableArn] }),
    );
    this.role.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'WriteLedger', actions: [...CONSUMER_LEDGER_ACTIONS], resources: [storage.ledgerTable.tableArn] }),
    );
    this.role.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'ReadWriteRateState', actions: [...CONSUMER_RATE_STATE_ACTIONS], resources: [storage.rateStateTable.tableArn] }),
    );
    if (storage.providerSecret) {
      this.role.addToPrincipalPolicy(
        new PolicyStatement({ sid: 'ReadProviderKeys', actions: [...CONSUMER_SECRET_ACTIONS], resources: [storage.providerSecret.secretArn] }),
      );
    }
    this.bedrockTarget = laneBedrockTarget(lane);
    if (this.bedrockTarget) grantBedrockInvoke(this.role, this.bedrockTarget);
    const mappingIdParameterArn = stack.formatArn({
      service: 'ssm',
      resource: 'parameter',
      resourceName: mappingIdParameterName.slice(1),
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    this.role.addToPrincipalPolicy(new PolicyStatement({ sid: 'ReadMappingId', actions: ['ssm:GetParameter'], resources: [mappingIdParameterArn] }));

    this.eventSource = new SqsEventSource(queues.queue, {
      batchSize: lane.queue.batchSize,
      maxBatchingWindow: lane.queue.maxBatchingWindowSeconds > 0 ? Duration.seconds(lane.queue.maxBatchingWindowSeconds) : undefined,
      maxConcurrency: lane.consumer.maximumConcurrency,
      reportBatchItemFailures: true,
      enabled: true,
    });
    this.function.addEventSource(this.eventSource);
    const mappingArn = this.eventSource.eventSourceMappingArn;

    this.mappingIdParameter = new StringParameter(this, 'MappingId', {
      parameterName: mappingIdParameterName,
      stringValue: this.eventSource.eventSourceMappingId,
      tier: ParameterTier.STANDARD,
      description: `UUID of the ratelane ${lane.name} consumer's SQS event source mapping (lane pause)`,
    });

    const scheduleArnPattern = stack.formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${pauseScheduleGroupName}/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });

    this.schedulerRole.attachInlinePolicy(
      new Policy(this, 'PauseSchedulerPolicy', {
        statements: [new PolicyStatement({ sid: 'ResumeOwnMapping', actions: ['lambda:UpdateEventSourceMapping'], resources: [mappingArn] })],
      }),
    );

    this.pausePolicy = new Policy(this, 'PausePolicy', {
      statements: [
        new PolicyStatement({ sid: 'PauseOwnMapping', actions: ['lambda:UpdateEventSourceMapping'], resources: [mappingArn] }),
        new PolicyStatement({ sid: 'ScheduleResume', actions: ['scheduler:CreateSchedule'], resources: [scheduleArnPattern] }),
        new PolicyStatement({
          sid: 'PassSchedulerRole',
          effect: Effect.ALLOW,
          actions: ['iam:PassRole'],
          resources: [this.schedulerRole.roleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
        }),
      ],
    });
    this.role.attachInlinePolicy(this.pausePolicy);

    // cdk-nag acknowledgements, each for exactly one finding.
    const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
    acknowledgeDocumentPrefixGrant(
      this.role,
      storage,
      'Documents are content-addressed (documents/<sha256>.txt) and written by producers at run time, so their keys cannot be listed at deploy time; the grant is s3:GetObject only, on the documents/ prefix of this lane’s own bucket.',
    );
    Validations.of(this.pausePolicy).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:${stack.region}:${account}:schedule/${pauseScheduleGroupName}/*]`,
      reason:
        'A lane pause creates one resume schedule named after its resume time, unknown at deploy time; scheduler:CreateSchedule is limited to this lane’s own schedule group, and the only role it may pass can only update this lane’s mapping.',
    });
  }

  /**
   * The lane's other functions that send to its queue (the live function's hand-over, the batch
   * reconciler's repairs): with the consumer's own role (its re-sends), the senders that may state a
   * job's tenant (`RATELANE_LANE_SENDERS`: SQS names a role's sender by the role's unique id).
   */
  trustLaneSenders(roles: readonly Role[]): void {
    this.function.addEnvironment(CONSUMER_ENV.laneSenders, Fn.join(',', [this.role.roleId, ...roles.map((role) => role.roleId)]));
  }
}
