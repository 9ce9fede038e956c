/**
 * The places of one lane stack's template that hold a job's bytes or what is derived from them: its
 * buckets, queues (the dead-letter queue told apart), DynamoDB tables (one place per replica) with their
 * point-in-time backups, its log groups (a function without one of its own logs to Lambda's default
 * group), and the CloudWatch metrics its functions emit. Each with its region (the stack's, or a
 * replica's own), encryption and retention as the template sets them.
 */
import { geographyOfRegion } from '../config/endpoints.js';
import type { LaneConfig } from '../config/schema.js';
import {
  afterStackDeletion,
  backupRetention,
  bucketEncryption,
  bucketRetention,
  logEncryption,
  logRetention,
  queueEncryption,
  queueRetention,
  tableEncryption,
  tableRetention,
} from './describe.js';
import type { ResidencyPlace } from './model.js';
import { type CfnTemplate, functionEnvironments, isRecord, referencedId, regionOf, renderValue, resourcesOfType, type StackTemplate } from './template.js';

/** Where a place is: its region, the geography of that region, and whether that is the lane's. */
export function located(region: string | undefined, laneGeography: string): Pick<ResidencyPlace, 'region' | 'geography' | 'inLaneGeography'> {
  const geography = region === undefined ? null : geographyOfRegion(region);
  return { region: region ?? null, geography, inLaneGeography: geography === laneGeography };
}

/** The lane's document bucket as the template has it (the batch files of a Bedrock lane live under its `batch/`). */
interface SourceBucket {
  name: string;
  logicalId: string;
  region: string | undefined;
  encryption: string;
  /** The bucket's properties, for the retention of a prefix. */
  properties: Record<string, unknown>;
  deletionPolicy: string | undefined;
}

/** The places of a lane's template, and the parts other places are drawn from. */
export interface TemplatePlaces {
  places: ResidencyPlace[];
  sourceBucket: SourceBucket | undefined;
  /** The ledger table's place (its first replica), where needs_review entries are written. */
  ledger: ResidencyPlace | undefined;
}

/** A template's resource's deletion policy. */
function deletionPolicyOf(template: CfnTemplate, id: string): string | undefined {
  return template.Resources?.[id]?.DeletionPolicy;
}

/** What a table of the lane holds, by its name in the lane config. */
function tableHolds(name: string, lane: LaneConfig | undefined): string {
  const r = lane?.resources;
  if (name === r?.resultsTable) return "each job's extracted JSON (derived from the document's text)";
  if (name === r?.ledgerTable) return "every attempt's entry: outcome, reasons, validation problems, needs_review";
  if (name === r?.rateStateTable) return 'rate-limit counters and admission slots: no document text';
  if (name.endsWith('-batch-manifest')) return "batch items: each document's reference, state and provider job";
  return 'items the lane writes';
}

/** How long the lane's config keeps a table's items (its `retention`, which the stores write as the TTL attribute). */
function ttlDays(name: string, lane: LaneConfig | undefined): string {
  if (!lane) return '';
  const r = lane.resources;
  const days =
    name === r.resultsTable
      ? `${lane.retention.resultsDays} d after the commit (retention.resultsDays)`
      : name === r.ledgerTable
        ? `${lane.retention.ledgerDays} d after each entry (retention.ledgerDays)`
        : name.endsWith('-batch-manifest')
          ? `${lane.retention.batchArtifactsDays} d after the batch's creation (retention.batchArtifactsDays)`
          : undefined;
  return days === undefined ? '' : `, ${days}`;
}

/** The bucket places, and which one is the document bucket. */
function bucketPlaces(
  stack: StackTemplate,
  laneGeography: string,
  lane: LaneConfig | undefined,
): { places: ResidencyPlace[]; source: SourceBucket | undefined } {
  const { template, region } = stack;
  const buckets = resourcesOfType(template, 'AWS::S3::Bucket');
  const nameOf = (id: string, props: Record<string, unknown>) =>
    props.BucketName !== undefined ? renderValue(props.BucketName, region) : `(generated name of ${id})`;
  const logTargets = new Map<string, string>();
  for (const [id, props] of buckets) {
    const target = isRecord(props.LoggingConfiguration) ? referencedId(props.LoggingConfiguration.DestinationBucketName) : undefined;
    if (target !== undefined) logTargets.set(target, nameOf(id, props));
  }
  let source: SourceBucket | undefined;
  const places = buckets.map(([id, props]): ResidencyPlace => {
    const name = nameOf(id, props);
    const loggedFor = logTargets.get(id);
    const encryption = bucketEncryption(props);
    if (loggedFor === undefined && source === undefined) {
      source = { name, logicalId: id, region, encryption, properties: props, deletionPolicy: deletionPolicyOf(template, id) };
    }
    const batchFiles = lane?.batch.enabled && lane.provider.kind === 'bedrock' ? ' and the Bedrock batch input and output files (batch/)' : '';
    return {
      kind: 'bucket',
      name,
      logicalId: id,
      holds:
        loggedFor !== undefined
          ? `S3 server access logs of ${loggedFor}: requests and object keys (document hashes), no text`
          : `the documents' text (documents/<sha256>.txt)${batchFiles}`,
      ...located(region, laneGeography),
      encryption,
      retention: bucketRetention(props) + afterStackDeletion(deletionPolicyOf(template, id)),
    };
  });
  return { places, source };
}

/** The queue places: the dead-letter queues are those another queue's redrive policy names. */
function queuePlaces(stack: StackTemplate, laneGeography: string): ResidencyPlace[] {
  const { template, region } = stack;
  const queues = resourcesOfType(template, 'AWS::SQS::Queue');
  const deadLetter = new Set<string>();
  for (const [, props] of queues) {
    let redrive: unknown = props.RedrivePolicy;
    if (typeof redrive === 'string') {
      try {
        redrive = JSON.parse(redrive);
      } catch {
        redrive = undefined;
      }
    }
    const target = isRecord(redrive) ? referencedId(redrive.deadLetterTargetArn) : undefined;
    if (target !== undefined) deadLetter.add(target);
  }
  return queues.map(([id, props]) => {
    const dlq = deadLetter.has(id);
    return {
      kind: dlq ? 'dead-letter-queue' : 'queue',
      name: props.QueueName !== undefined ? renderValue(props.QueueName, region) : `(generated name of ${id})`,
      logicalId: id,
      holds: dlq
        ? 'job messages that failed every delivery: a reference to the document, its hash and size; no text'
        : 'job messages: a reference to the document in the bucket, its hash and size; no text',
      ...located(region, laneGeography),
      encryption: queueEncryption(props),
      retention: queueRetention(props) + afterStackDeletion(deletionPolicyOf(template, id)),
    };
  });
}

/** The tables (one place per replica of a global table) and their point-in-time backups. */
function tablePlaces(stack: StackTemplate, laneGeography: string, lane: LaneConfig | undefined): ResidencyPlace[] {
  const { template, region } = stack;
  const places: ResidencyPlace[] = [];
  const add = (id: string, props: Record<string, unknown>, replicaRegion: string | undefined, replica: Record<string, unknown>, several: boolean) => {
    const tableName = props.TableName !== undefined ? renderValue(props.TableName, region) : `(generated name of ${id})`;
    const name = several ? `${tableName} (replica in ${replicaRegion ?? 'an unknown region'})` : tableName;
    const sse = isRecord(replica.SSESpecification) ? replica.SSESpecification.KMSMasterKeyId : undefined;
    const encryption = tableEncryption(props.SSESpecification, sse);
    const where = located(replicaRegion, laneGeography);
    const deletion = afterStackDeletion(deletionPolicyOf(template, id));
    places.push({
      kind: 'table',
      name,
      logicalId: id,
      holds: tableHolds(tableName, lane),
      ...where,
      encryption,
      retention: tableRetention(props.TimeToLiveSpecification) + (props.TimeToLiveSpecification ? ttlDays(tableName, lane) : '') + deletion,
    });
    const backups = backupRetention(replica.PointInTimeRecoverySpecification ?? props.PointInTimeRecoverySpecification);
    if (backups !== undefined) {
      places.push({
        kind: 'table-backups',
        name: `${name}: point-in-time backups`,
        logicalId: id,
        holds: `a continuous backup of every item of ${tableName}, restorable to any second of its period`,
        ...where,
        encryption,
        retention: backups,
      });
    }
  };
  for (const [id, props] of resourcesOfType(template, 'AWS::DynamoDB::GlobalTable')) {
    const replicas = Array.isArray(props.Replicas) ? props.Replicas.filter(isRecord) : [];
    for (const replica of replicas) add(id, props, regionOf(replica.Region, region), replica, replicas.length > 1);
  }
  for (const [id, props] of resourcesOfType(template, 'AWS::DynamoDB::Table')) add(id, props, region, {}, false);
  return places;
}

/** The log groups: the template's own (named by who writes them), and Lambda's default group of a function without one. */
function logPlaces(stack: StackTemplate, laneGeography: string): ResidencyPlace[] {
  const { template, region } = stack;
  const writers = new Map<string, { who: string; holds: string }>();
  const functions = resourcesOfType(template, 'AWS::Lambda::Function');
  const functionName = (id: string, props: Record<string, unknown>) => (props.FunctionName !== undefined ? renderValue(props.FunctionName, region) : id);
  const functionHolds = (name: string) => `log lines of function ${name}: job ids, outcomes, error codes (ratelane logs no document text)`;
  for (const [id, props] of functions) {
    const group = isRecord(props.LoggingConfig) ? referencedId(props.LoggingConfig.LogGroup) : undefined;
    if (group !== undefined) writers.set(group, { who: `logs of ${functionName(id, props)}`, holds: functionHolds(functionName(id, props)) });
  }
  for (const type of ['AWS::ApiGatewayV2::Stage', 'AWS::ApiGateway::Stage']) {
    for (const [, props] of resourcesOfType(template, type)) {
      const settings = props.AccessLogSettings ?? props.AccessLogSetting;
      const group = isRecord(settings) ? referencedId(settings.DestinationArn) : undefined;
      if (group !== undefined)
        writers.set(group, { who: 'access logs of the HTTP API', holds: 'API access logs: caller, route, status, latency; no request bodies' });
    }
  }
  const places: ResidencyPlace[] = resourcesOfType(template, 'AWS::Logs::LogGroup').map(([id, props]) => {
    const writer = writers.get(id);
    return {
      kind: 'log-group',
      name: props.LogGroupName !== undefined ? renderValue(props.LogGroupName, region) : (writer?.who ?? `(generated name of ${id})`),
      logicalId: id,
      holds: writer?.holds ?? 'log events',
      ...located(region, laneGeography),
      encryption: logEncryption(props),
      retention: logRetention(props.RetentionInDays) + afterStackDeletion(deletionPolicyOf(template, id)),
    };
  });
  const customRetention = new Map(
    resourcesOfType(template, 'Custom::LogRetention').map(([, props]) => [renderValue(props.LogGroupName, region), props.RetentionInDays] as const),
  );
  for (const [id, props] of functions) {
    if (isRecord(props.LoggingConfig) && props.LoggingConfig.LogGroup !== undefined) continue;
    const name = `/aws/lambda/${functionName(id, props)}`;
    const days = customRetention.get(name);
    places.push({
      kind: 'log-group',
      name,
      logicalId: id,
      holds: functionHolds(functionName(id, props)),
      ...located(region, laneGeography),
      encryption: logEncryption({}),
      retention: days !== undefined ? logRetention(days) : "never expire (Lambda's default log group, created at the first invocation)",
    });
  }
  return places;
}

/** The CloudWatch metrics the stack's functions emit (none when it has no function). */
function metricsPlaces(stack: StackTemplate, laneGeography: string): ResidencyPlace[] {
  if (resourcesOfType(stack.template, 'AWS::Lambda::Function').length === 0) return [];
  const namespaces = [
    ...new Set(
      functionEnvironments(stack.template).flatMap((v) => (v.POWERTOOLS_METRICS_NAMESPACE !== undefined ? [renderValue(v.POWERTOOLS_METRICS_NAMESPACE)] : [])),
    ),
  ];
  return [
    {
      kind: 'metrics',
      name: `CloudWatch metrics${namespaces.length ? ` (namespace ${namespaces.join(', ')})` : ''}`,
      logicalId: null,
      holds: 'counts, durations and token numbers by lane, region and service: no document text',
      ...located(stack.region, laneGeography),
      encryption: 'not applicable: numbers, no text',
      retention: "15 months (CloudWatch's fixed retention); the alarms and the dashboard read them",
    },
  ];
}

/** Every place of a lane stack's template, and its document bucket and ledger table. */
export function templatePlaces(stack: StackTemplate, laneGeography: string, lane: LaneConfig | undefined): TemplatePlaces {
  const buckets = bucketPlaces(stack, laneGeography, lane);
  const tables = tablePlaces(stack, laneGeography, lane);
  const ledgerName = lane?.resources.ledgerTable;
  return {
    places: [...buckets.places, ...queuePlaces(stack, laneGeography), ...tables, ...logPlaces(stack, laneGeography), ...metricsPlaces(stack, laneGeography)],
    sourceBucket: buckets.source,
    ledger: tables.find((p) => p.kind === 'table' && ledgerName !== undefined && p.name.startsWith(ledgerName)),
  };
}
