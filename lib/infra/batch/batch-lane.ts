/**
 * A lane's batch lane in AWS (when `lane.batch.enabled`): the manifest table, the reconciler function
 * (`lambdas/batch-reconciler.ts`, bundled like the consumer) and the EventBridge Scheduler schedule that
 * runs it every `lane.batch.reconcileEveryMinutes`, and for a Bedrock lane the batch inference service
 * role (`batch-bedrock.ts`). All in the lane's region, named from the lane config.
 *
 * - The manifest table is one of the lane's tables: on demand, AWS-managed encryption, point-in-time
 *   recovery, deletion protection, retained under its fixed name (`manifestTableName(lane)`), TTL on
 *   `expiresAt` (a batch expires whole `lane.retention.batchArtifactsDays` after its creation).
 * - The reconciler's role has only what a sweep calls: the manifest (`GetItem`, `Query`, `Scan`,
 *   `UpdateItem`: it never creates a batch), the results table (the commit-once `PutItem` and its
 *   `GetItem`), the ledger (`PutItem`), `sqs:SendMessage` on the lane queue (a repair goes to the queue
 *   lane), `s3:GetObject` under `documents/` (a part submitted again is rebuilt from its documents), and
 *   per provider the secret (OpenAI) or Bedrock's jobs, the service role and `batch/` (Bedrock).
 * - One sweep per tick: a timeout of at most the schedule's interval, and Lambda does not retry a
 *   failed or throttled tick beyond the interval (the next tick is the retry). Reserved concurrency 1
 *   (at most one sweep at a time, even for a tick delivered late) is opt-in, `lane.batch.reservedConcurrency`:
 *   AWS refuses any reservation in an account whose concurrency quota is 10 (see the lane config).
 * - The schedule has its own group and role: EventBridge Scheduler, for this account and this group
 *   only, may invoke this one function. It retries a failed delivery within the interval and has no
 *   DLQ: a dropped tick is replaced by the next one, and a reconciler that stops running raises the
 *   `batch-reconciler-stalled` alarm (`batch-alarms.ts`) rather than filling a queue nobody reads.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AttributeType, Billing, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnSchedule, ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import { type LaneConfig, LaneConfigError } from '../../config/lanes.js';
import {
  BATCH_RECONCILER_ENV,
  type BatchApi,
  batchApiOf,
  batchReconcileScheduleName,
  batchReconcilerFunctionName,
  batchServiceName,
} from '../../config/names.js';
import { DOCUMENT_PREFIX } from '../../platform/resources.js';
import { METRICS_NAMESPACE } from '../../platform/telemetry.js';
import { manifestTableName } from '../../store/manifest-model.js';
import { MANIFEST_TABLE } from '../../store/tables.js';
import { createBatchServiceRole, grantBedrockBatchJobs } from './bedrock.js';
import { CONSUMER_LOG_ACTIONS, CONSUMER_SECRET_ACTIONS } from '../consumer.js';
import { acknowledgeDocumentPrefixGrant, laneFunction } from '../lane-function.js';
import type { LaneQueues } from '../queues.js';
import type { LaneStorage } from '../storage.js';

/** The manifest: read headers and items (`GetItem`, `Query`), list a lane's batches (`Scan`), move items and parts (`UpdateItem`). */
export const BATCH_MANIFEST_ACTIONS = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:UpdateItem'] as const;
/** Results: commit once (a conditional `PutItem`) and read the existing result of a duplicate (`GetItem`). */
export const BATCH_RESULTS_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem'] as const;
/**
 * Ledger: the validation failure of an output sent for its repair; a commit's check that its source is not
 * erased and its job not cancelled (`ConditionCheckItem`); a part submitted again reads its jobs' cancel
 * markers (`GetItem`).
 */
export const BATCH_LEDGER_ACTIONS = ['dynamodb:PutItem', 'dynamodb:ConditionCheckItem', 'dynamodb:GetItem'] as const;
/** The lane queue: an invalid output's job goes there for its repair (send only; never the DLQ). */
export const BATCH_QUEUE_ACTIONS = ['sqs:SendMessage'] as const;
/** Documents: a part submitted again after a throttle is rebuilt from its stored documents. */
export const BATCH_DOCUMENT_ACTIONS = ['s3:GetObject'] as const;
export const BATCH_SECRET_ACTIONS = CONSUMER_SECRET_ACTIONS;
export const BATCH_LOG_ACTIONS = CONSUMER_LOG_ACTIONS;
/** The reconciler's memory (MB): it streams result files line by line. */
const BATCH_RECONCILER_MEMORY_MB = 512;
/** How many times EventBridge Scheduler retries delivering one tick (within the interval). */
const BATCH_SCHEDULE_RETRY_ATTEMPTS = 2;

/** The schedule expression of an interval in whole minutes (`rate(1 minute)`, `rate(5 minutes)`). */
export function reconcileRate(minutes: number): string {
  return `rate(${minutes} ${minutes === 1 ? 'minute' : 'minutes'})`;
}

/** The reconciler's timeout: the schedule's interval, at most Lambda's 900 s (one sweep per tick). */
export function reconcilerTimeoutSeconds(lane: Pick<LaneConfig, 'batch'>): number {
  return Math.min(900, lane.batch.reconcileEveryMinutes * 60);
}

/**
 * The batch API of a lane that takes batches; throws {@link LaneConfigError} for a provider ratelane
 * has no batch client for (Anthropic, Gemini, Azure OpenAI, another vendor's OpenAI-compatible API).
 */
export function assertBatchDeployable(lane: LaneConfig): BatchApi {
  const api = batchApiOf(lane.provider);
  if (api) return api;
  const what = lane.provider.azure
    ? 'openai-compatible (Azure OpenAI)'
    : `${lane.provider.kind}${lane.provider.dialect ? ` (dialect ${lane.provider.dialect})` : ''}`;
  throw new LaneConfigError(
    `lane ${lane.name}: batch.enabled is true, but ratelane has no batch client for provider ${what}; batches run through the OpenAI Batch API (openai-compatible, dialect openai) or Bedrock batch inference: set batch.enabled to false for this lane`,
  );
}

export interface LaneBatchProps {
  readonly lane: LaneConfig;
  readonly queues: LaneQueues;
  readonly storage: LaneStorage;
  /** Retention of the reconciler's log group. */
  readonly logRetention: RetentionDays;
}

/** A lane's batch lane: manifest table, reconciler, its schedule and, for Bedrock, the service role. */
export class LaneBatch extends Construct {
  /** Which batch API the lane's jobs run through. */
  readonly api: BatchApi;
  readonly manifestTable: TableV2;
  readonly function: LambdaFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  readonly scheduleGroup: ScheduleGroup;
  readonly schedule: CfnSchedule;
  /** The role EventBridge Scheduler invokes the reconciler with. */
  readonly schedulerRole: Role;
  /** The batch inference service role (Bedrock lanes), else undefined. */
  readonly serviceRole: Role | undefined;

  constructor(scope: Construct, id: string, props: LaneBatchProps) {
    super(scope, id);
    const { lane, queues, storage } = props;
    this.api = assertBatchDeployable(lane);
    const stack = Stack.of(this);

    this.manifestTable = new TableV2(this, 'Manifest', {
      tableName: manifestTableName(lane),
      partitionKey: { name: MANIFEST_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: MANIFEST_TABLE.sortKey as string, type: AttributeType.STRING },
      timeToLiveAttribute: MANIFEST_TABLE.ttlAttribute as string,
      billing: Billing.onDemand(),
      encryption: TableEncryptionV2.awsManagedKey(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // A generated name, retained, like the other functions' log groups.
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: RemovalPolicy.RETAIN });
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `ratelane ${lane.name} lane batch reconciler: its manifest, tables, queue (send only), documents and ${this.api === 'bedrock' ? 'Bedrock batch jobs' : 'provider secret'}`,
    });
    this.serviceRole = this.api === 'bedrock' ? createBatchServiceRole(this, 'ServiceRole', lane, storage) : undefined;

    const interval = Duration.minutes(lane.batch.reconcileEveryMinutes);
    this.function = laneFunction(this, 'Function', 'batch-reconciler', {
      functionName: batchReconcilerFunctionName(lane.name),
      description: `ratelane ${lane.name} lane batch reconciler (${lane.region}), every ${lane.batch.reconcileEveryMinutes} min`,
      memorySize: BATCH_RECONCILER_MEMORY_MB,
      timeout: Duration.seconds(reconcilerTimeoutSeconds(lane)),
      // Opt-in (lane.batch.reservedConcurrency): an account whose concurrency quota is 10 cannot reserve any.
      ...(lane.batch.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: lane.batch.reservedConcurrency }),
      retryAttempts: 0,
      maxEventAge: Duration.seconds(Math.max(60, interval.toSeconds())),
      role: this.role,
      logGroup: this.logGroup,
      environment: {
        [BATCH_RECONCILER_ENV.laneConfig]: JSON.stringify(lane),
        [BATCH_RECONCILER_ENV.queueUrl]: queues.queue.queueUrl,
        ...(this.api === 'openai' && storage.providerSecret ? { [BATCH_RECONCILER_ENV.providerSecretArn]: storage.providerSecret.secretArn } : {}),
        ...(this.serviceRole ? { [BATCH_RECONCILER_ENV.bedrockServiceRoleArn]: this.serviceRole.roleArn } : {}),
        [BATCH_RECONCILER_ENV.serviceName]: batchServiceName(lane),
        [BATCH_RECONCILER_ENV.metricsNamespace]: METRICS_NAMESPACE,
        [BATCH_RECONCILER_ENV.logLevel]: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
      },
    });

    // Grants, one statement per resource, exact actions.
    const grant = (sid: string, actions: readonly string[], resource: string) =>
      this.role.addToPrincipalPolicy(new PolicyStatement({ sid, actions: [...actions], resources: [resource] }));
    grant('WriteOwnLogs', BATCH_LOG_ACTIONS, this.logGroup.logGroupArn);
    grant('ReconcileManifest', BATCH_MANIFEST_ACTIONS, this.manifestTable.tableArn);
    grant('CommitResults', BATCH_RESULTS_ACTIONS, storage.resultsTable.tableArn);
    grant('WriteLedger', BATCH_LEDGER_ACTIONS, storage.ledgerTable.tableArn);
    grant('RepairThroughOwnQueue', BATCH_QUEUE_ACTIONS, queues.queue.queueArn);
    grant('ReadSourceDocuments', BATCH_DOCUMENT_ACTIONS, storage.bucket.arnForObjects(`${DOCUMENT_PREFIX}*`));
    if (this.api === 'openai' && storage.providerSecret) grant('ReadProviderKeys', BATCH_SECRET_ACTIONS, storage.providerSecret.secretArn);
    if (this.serviceRole) grantBedrockBatchJobs(this.role, lane, storage, this.serviceRole);
    acknowledgeDocumentPrefixGrant(
      this.role,
      storage,
      'Documents are content-addressed (documents/<sha256>.txt) and stored at submission, so their keys cannot be listed at deploy time; the reconciler rebuilds a part submitted again from them, with s3:GetObject only, on the documents/ prefix of this lane’s own bucket.',
    );

    // Deleted with the stack (it holds only this schedule, which goes with the function it invokes).
    this.scheduleGroup = new ScheduleGroup(this, 'Schedules', {
      scheduleGroupName: batchReconcileScheduleName(lane.name),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.schedulerRole = new Role(this, 'SchedulerRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account, 'aws:SourceArn': this.scheduleGroup.scheduleGroupArn } },
      }),
      description: `EventBridge Scheduler runs the ratelane ${lane.name} lane batch reconciler: lambda:InvokeFunction on that one function`,
    });
    this.schedulerRole.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'InvokeReconciler', actions: ['lambda:InvokeFunction'], resources: [this.function.functionArn] }),
    );
    this.schedule = new CfnSchedule(this, 'Schedule', {
      name: batchReconcileScheduleName(lane.name),
      groupName: this.scheduleGroup.scheduleGroupName,
      description: `Sweeps the ratelane ${lane.name} lane's open batches (${lane.region})`,
      scheduleExpression: reconcileRate(lane.batch.reconcileEveryMinutes),
      flexibleTimeWindow: { mode: 'OFF' },
      state: 'ENABLED',
      target: {
        arn: this.function.functionArn,
        roleArn: this.schedulerRole.roleArn,
        retryPolicy: { maximumEventAgeInSeconds: Math.max(60, interval.toSeconds()), maximumRetryAttempts: BATCH_SCHEDULE_RETRY_ATTEMPTS },
      },
    });
    // The role's policy must exist before the schedule first runs.
    this.schedule.node.addDependency(this.schedulerRole);
  }
}
