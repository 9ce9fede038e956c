/**
 * One regional lane as one stack: storage, queues, consumer, the live API (when `lane.live.enabled`),
 * the batch lane (when `lane.batch.enabled`), alarms and dashboard, all in the lane's
 * region and named from the lane config it is given (the stack never reads the config itself), as
 * deployed in the stack's account (`laneInAccount`: the bucket name carries the account id). A lane
 * the stack cannot run (function timeout too short for its provider, Vertex AI, a Bedrock model
 * outside the lane's geography, batches on a provider ratelane has no batch client for) is refused at
 * synth with the lane config's error, and so is a stack without an alarm destination (an e-mail, an
 * existing topic of the lane's region, or `none` said explicitly: `alarm-destination.ts`), with what to
 * add. An event source mapping that holds more records than the lane's
 * quota can keep busy is deployed with a synth warning (`ratelane:mapping-oversized`, see
 * `lib/extraction/mapping-size.ts`).
 */
import { Annotations, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import * as cxapi from 'aws-cdk-lib/cx-api';
import type { Construct } from 'constructs';
import { assertDeployable, type LaneConfig, laneInAccount } from '../config/lanes.js';
import { type AlarmDestination, checkAlarmDestination } from './alarm-destination.js';
import { LaneAlarms } from './alarms.js';
import { LaneBatch } from './batch/batch-lane.js';
import { LaneBatchAlarms } from './batch/alarms.js';
import { LaneConsumer } from './consumer.js';
import { LaneDashboard } from './dashboard.js';
import { LaneLive } from './live/live-api.js';
import { LaneLiveAlarms } from './live/alarms.js';
import { LaneQueues } from './queues.js';
import { LaneStorage } from './storage.js';
import { RatelaneError } from '../platform/errors.js';
import { mappingSizeWarning } from '../extraction/mapping-size.js';

export interface LaneStackProps extends StackProps {
  /** The lane this stack deploys (as configured; the stack applies the account); the stack's region must be the lane's region. */
  readonly lane: LaneConfig;
  /** Days a source document is kept. @default 90 */
  readonly documentRetentionDays?: number;
  /** Days S3 server access logs are kept. @default 365 */
  readonly accessLogRetentionDays?: number;
  /** Retention of the consumer's and the live API's logs. @default one month */
  readonly logRetention?: RetentionDays;
  /**
   * Where the lane's alarms go: e-mail addresses subscribed to the lane's topic, an existing SNS topic
   * in the lane's region, or `{ kind: 'none' }` said explicitly. Required: a stack without one is
   * refused at synth (`AlarmDestinationError`), since a lane paused for a person would wait for nobody.
   */
  readonly alarmDestination: AlarmDestination;
}

/** Raised when a lane stack would be deployed outside its lane's region. */
export class LaneRegionError extends RatelaneError {
  override name = 'LaneRegionError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/** The stack name of a lane (`ratelane-us`, `ratelane-eu`, ...). */
export function laneStackName(lane: Pick<LaneConfig, 'name'>): string {
  return `ratelane-${lane.name}`;
}

export class LaneStack extends Stack {
  /** The lane as deployed: the config given, with the account-qualified bucket name. */
  readonly lane: LaneConfig;
  readonly storage: LaneStorage;
  readonly queues: LaneQueues;
  readonly consumer: LaneConsumer;
  /** The live API and its function; undefined when `lane.live.enabled` is false. */
  readonly live: LaneLive | undefined;
  readonly alarms: LaneAlarms;
  /** The live API's alarms (on the lane's alarm topic); undefined without the live API. */
  readonly liveAlarms: LaneLiveAlarms | undefined;
  /** The batch lane (manifest, reconciler, schedule); undefined when `lane.batch.enabled` is false. */
  readonly batch: LaneBatch | undefined;
  /** The batch lane's alarms (on the lane's alarm topic); undefined without the batch lane. */
  readonly batchAlarms: LaneBatchAlarms | undefined;
  readonly dashboard: LaneDashboard;

  constructor(scope: Construct, id: string, props: LaneStackProps) {
    const configured = props.lane;
    if (props.env?.region !== undefined && props.env.region !== configured.region) {
      throw new LaneRegionError(`stack ${id} targets ${props.env.region} but lane ${configured.name} lives in ${configured.region}`);
    }
    assertDeployable(configured);
    const alarmDestination = checkAlarmDestination(configured, props.alarmDestination);
    super(scope, id, {
      stackName: laneStackName(configured),
      description: `ratelane ${configured.name} lane (${configured.region}): bucket, queues, consumer, tables, secret, alarms, dashboard`,
      ...props,
      env: { ...props.env, region: configured.region },
      tags: { 'ratelane:lane': configured.name, ...props.tags },
    });
    const lane = laneInAccount(configured, this.account);
    this.lane = lane;
    // S3 server access logs are delivered through a bucket policy, not the legacy ACL (ACLs are
    // disabled on new buckets).
    this.node.setContext(cxapi.S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);

    this.storage = new LaneStorage(this, 'Storage', {
      lane,
      documentRetentionDays: props.documentRetentionDays ?? 90,
      accessLogRetentionDays: props.accessLogRetentionDays ?? 365,
    });
    this.queues = new LaneQueues(this, 'Queues', { lane });
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;
    this.consumer = new LaneConsumer(this, 'Consumer', { lane, queues: this.queues, storage: this.storage, logRetention });
    const oversized = mappingSizeWarning(lane);
    if (oversized !== undefined) Annotations.of(this.consumer).addWarningV2('ratelane:mapping-oversized', oversized);
    this.live = lane.live.enabled ? new LaneLive(this, 'Live', { lane, queues: this.queues, storage: this.storage, logRetention }) : undefined;
    this.batch = lane.batch.enabled ? new LaneBatch(this, 'Batch', { lane, queues: this.queues, storage: this.storage, logRetention }) : undefined;
    this.consumer.trustLaneSenders([...(this.live ? [this.live.role] : []), ...(this.batch ? [this.batch.role] : [])]);
    const consumerFunction = this.consumer.function;
    this.alarms = new LaneAlarms(this, 'Alarms', {
      lane,
      queues: this.queues,
      consumerFunction,
      destination: alarmDestination,
    });
    this.liveAlarms = this.live ? new LaneLiveAlarms(this, 'LiveAlarms', { lane, live: this.live, topic: this.alarms.topic }) : undefined;
    this.batchAlarms = this.batch ? new LaneBatchAlarms(this, 'BatchAlarms', { lane, batch: this.batch, topic: this.alarms.topic }) : undefined;
    this.dashboard = new LaneDashboard(this, 'Dashboard', {
      lane,
      queues: this.queues,
      alarms: this.alarms,
      consumerFunction,
      ...(this.live && this.liveAlarms ? { live: { api: this.live, alarms: this.liveAlarms } } : {}),
      ...(this.batch && this.batchAlarms ? { batch: { lane: this.batch, alarms: this.batchAlarms } } : {}),
    });

    // What an operator and a producer need after a deploy.
    new CfnOutput(this, 'SourceBucketName', {
      value: this.storage.bucket.bucketName,
      description: 'Bucket the producer writes documents to (documents/ prefix)',
    });
    new CfnOutput(this, 'QueueUrl', { value: this.queues.queue.queueUrl, description: 'Ingress queue of the lane' });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.alarms.topic.topicArn,
      description: `Topic every alarm of the lane notifies (${alarmDestination.kind === 'topic' ? 'the existing topic given' : alarmDestination.kind === 'email' ? 'the lane topic, e-mail subscribed' : 'the lane topic, no subscriber: subscribe to it'})`,
    });
    new CfnOutput(this, 'ConsumerLogGroup', { value: this.consumer.logGroup.logGroupName, description: 'Log group of the consumer function' });
    if (this.live) {
      new CfnOutput(this, 'LiveApiUrl', { value: this.live.url, description: 'Live API base URL (IAM auth: sign requests with SigV4, service execute-api)' });
    }
    if (this.batch) {
      new CfnOutput(this, 'BatchReconcilerLogGroup', { value: this.batch.logGroup.logGroupName, description: 'Log group of the batch reconciler function' });
    }
    if (this.batch?.serviceRole) {
      new CfnOutput(this, 'BatchServiceRoleArn', {
        value: this.batch.serviceRole.roleArn,
        description: 'Bedrock batch inference service role: what submitting a batch passes to CreateModelInvocationJob (RATELANE_BATCH_SERVICE_ROLE_ARN)',
      });
    }
    if (this.storage.providerSecret) {
      new CfnOutput(this, 'ProviderSecretName', {
        value: lane.resources.providerSecretName,
        description: 'Secret to put the provider keys in: {"<key id>": "<api key>"}',
      });
    }
  }
}
