/**
 * A whole ratelane lane as one construct, for any stack in the lane's region: the document bucket, the
 * ingress queue and its DLQ, the results, ledger and rate-state tables, the provider secret, the queue
 * consumer, the live API (when `lane.live.enabled`), the batch lane (when `lane.batch.enabled`), the
 * alarms, the dashboard and the cdk-nag acknowledgements of what it grants on purpose; every function
 * with only what it calls. Named from the lane config it is given, as deployed in the stack's account
 * (`laneInAccount`: the bucket name carries the account id).
 *
 * What a lane cannot run is refused at synth, naming the field and what to change: a lane outside the
 * stack's region (or a stack with no region), a function timeout too short for its provider, Vertex AI,
 * a Bedrock model outside the lane's geography, batches on a provider ratelane has no batch client for,
 * and no alarm destination (an e-mail, an existing topic of the lane's region, or `none` said
 * explicitly: `alarm-destination.ts`). An event source mapping that holds more records than the lane's
 * quota can keep busy is deployed with a synth warning (`ratelane:mapping-oversized`, see
 * `lib/extraction/mapping-size.ts`).
 */
import { Annotations, CfnOutput, Stack, Token } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { assertDeployable, type LaneConfig, type LaneInput, laneInAccount, resolveLane } from '../config/lanes.js';
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

/** What an {@link ExtractionLane} is made from. */
export interface ExtractionLaneProps {
  /**
   * The lane: its name and region and whatever differs from the defaults (`LaneInput`, validated with the
   * lane schema: a wrong field is named at synth), or a complete lane config. The region must be the stack's.
   */
  readonly lane: LaneInput;
  /**
   * Where the lane's alarms go: e-mail addresses subscribed to the lane's topic, an existing SNS topic
   * in the lane's region, or `{ kind: 'none' }` said explicitly. Required: a lane without one is
   * refused at synth (`AlarmDestinationError`), since a lane paused for a person would wait for nobody.
   */
  readonly alarmDestination: AlarmDestination;
  /** Whether to add stack outputs (bucket, queue URL, alarm topic, log groups, live API URL, secret name). @default true */
  readonly outputs?: boolean;
}

/** Raised when a lane would be deployed outside its region. */
export class LaneRegionError extends RatelaneError {
  override name = 'LaneRegionError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/** One ratelane lane in a stack of the lane's region (see the module's description). */
export class ExtractionLane extends Construct {
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

  constructor(scope: Construct, id: string, props: ExtractionLaneProps) {
    super(scope, id);
    const configured = resolveLane(props.lane);
    const stack = Stack.of(this);
    if (Token.isUnresolved(stack.region)) {
      throw new LaneRegionError(
        `lane ${configured.name} needs a stack with an explicit region: give stack ${stack.stackName} env: { region: '${configured.region}' } (every resource of a lane lives in its region)`,
      );
    }
    if (stack.region !== configured.region) {
      throw new LaneRegionError(`stack ${stack.stackName} targets ${stack.region} but lane ${configured.name} lives in ${configured.region}`);
    }
    assertDeployable(configured);
    const alarmDestination = checkAlarmDestination(configured, props.alarmDestination);
    const lane = laneInAccount(configured, stack.account);
    this.lane = lane;
    // S3 server access logs are delivered through a bucket policy, not the legacy ACL (ACLs are
    // disabled on new buckets).
    this.node.setContext(cxapi.S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);

    // What the lane keeps, and for how long, is the lane's `retention` policy.
    this.storage = new LaneStorage(this, 'Storage', { lane });
    this.queues = new LaneQueues(this, 'Queues', { lane });
    const logRetention = lane.retention.logsDays as RetentionDays;
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
    if (props.outputs === false) return;
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
