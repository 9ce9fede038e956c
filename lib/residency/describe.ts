/**
 * Encryption and retention as a template sets them, in words: S3 default encryption and lifecycle rules,
 * SQS server-side encryption and message retention, DynamoDB encryption, TTL and point-in-time
 * recovery, CloudWatch Logs KMS keys and retention, and what a deletion policy keeps after the stack.
 * Where the template sets nothing, the service's default is named as such.
 */
import { isRecord, renderValue } from './template.js';

/** `90 d`, `6 h`, `45 s`. */
function duration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  return `${seconds} s`;
}

/** S3 default encryption (`BucketEncryption`). */
export function bucketEncryption(props: Record<string, unknown>): string {
  const config = isRecord(props.BucketEncryption) ? props.BucketEncryption.ServerSideEncryptionConfiguration : undefined;
  const rule = Array.isArray(config) && isRecord(config[0]) ? config[0] : undefined;
  const byDefault = rule && isRecord(rule.ServerSideEncryptionByDefault) ? rule.ServerSideEncryptionByDefault : undefined;
  const key = byDefault?.KMSMasterKeyID !== undefined ? `key ${renderValue(byDefault.KMSMasterKeyID)}` : 'AWS managed key aws/s3';
  switch (byDefault?.SSEAlgorithm) {
    case 'AES256':
      return 'SSE-S3 (AES-256, S3-managed keys)';
    case 'aws:kms':
      return `SSE-KMS (${key})`;
    case 'aws:kms:dsse':
      return `DSSE-KMS (${key})`;
    default:
      return 'not set in the template (S3 encrypts new objects with SSE-S3 by default)';
  }
}

/** One enabled S3 lifecycle rule, as the map reads it. */
interface LifecycleRule {
  /** The key prefix it applies to ('' for every object). */
  prefix: string;
  /** Whether it applies to only some objects under the prefix (tags, sizes). */
  filtered: boolean;
  expirationDays: number | undefined;
  expirationDate: string | undefined;
  noncurrentDays: number | undefined;
  abortDays: number | undefined;
  transitions: string[];
}

/** The enabled lifecycle rules of a bucket. */
function lifecycleRules(props: Record<string, unknown>): LifecycleRule[] {
  const rules = isRecord(props.LifecycleConfiguration) ? props.LifecycleConfiguration.Rules : undefined;
  if (!Array.isArray(rules)) return [];
  const number = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
  return rules.filter(isRecord).flatMap((rule): LifecycleRule[] => {
    if (rule.Status !== 'Enabled') return [];
    const noncurrent = isRecord(rule.NoncurrentVersionExpiration) ? rule.NoncurrentVersionExpiration.NoncurrentDays : undefined;
    const abort = isRecord(rule.AbortIncompleteMultipartUpload) ? rule.AbortIncompleteMultipartUpload.DaysAfterInitiation : undefined;
    const transitions = Array.isArray(rule.Transitions) ? rule.Transitions.filter(isRecord) : [];
    return [
      {
        prefix: typeof rule.Prefix === 'string' ? rule.Prefix : '',
        filtered: rule.TagFilters !== undefined || rule.ObjectSizeGreaterThan !== undefined || rule.ObjectSizeLessThan !== undefined,
        expirationDays: number(rule.ExpirationInDays),
        expirationDate: typeof rule.ExpirationDate === 'string' ? rule.ExpirationDate : undefined,
        noncurrentDays: number(noncurrent) ?? number(rule.NoncurrentVersionExpirationInDays),
        abortDays: number(abort),
        transitions: transitions.map((t) => `to ${renderValue(t.StorageClass)} after ${renderValue(t.TransitionInDays ?? t.TransitionDate)} d`),
      },
    ];
  });
}

/**
 * What a bucket's lifecycle rules keep, for the objects under `scope` ('' for the whole bucket): each
 * rule that reaches them, and what no expiration rule reaches (kept until deleted).
 */
export function bucketRetention(props: Record<string, unknown>, scope = ''): string {
  const rules = lifecycleRules(props).filter((rule) => scope.startsWith(rule.prefix) || rule.prefix.startsWith(scope));
  const parts: string[] = [];
  for (const rule of rules) {
    const where = `${rule.prefix || (scope ? scope : 'every object')}${rule.filtered ? ' (filtered)' : ''}`;
    if (rule.expirationDays !== undefined) parts.push(`${where}: expire after ${rule.expirationDays} d`);
    if (rule.expirationDate !== undefined) parts.push(`${where}: expire on ${rule.expirationDate}`);
    if (rule.noncurrentDays !== undefined) parts.push(`${where}: old versions expire after ${rule.noncurrentDays} d`);
    for (const transition of rule.transitions) parts.push(`${where}: ${transition}`);
    if (rule.abortDays !== undefined) parts.push(`${rule.prefix ? `${rule.prefix}: ` : ''}incomplete uploads aborted after ${rule.abortDays} d`);
  }
  const expiring = rules.filter((rule) => rule.expirationDays !== undefined || rule.expirationDate !== undefined);
  const whole = expiring.some((rule) => scope.startsWith(rule.prefix) && !rule.filtered);
  if (expiring.length === 0) parts.unshift(`no expiration rule${scope ? ` for ${scope}` : ''}: kept until deleted`);
  else if (!whole) parts.push(`other ${scope ? `${scope} ` : ''}objects: kept until deleted`);
  const versioning = isRecord(props.VersioningConfiguration) ? props.VersioningConfiguration.Status : undefined;
  if (versioning === 'Enabled' && !rules.some((rule) => rule.noncurrentDays !== undefined)) parts.push('versioned: old versions kept until deleted');
  return parts.join('; ');
}

/** SQS server-side encryption. */
export function queueEncryption(props: Record<string, unknown>): string {
  if (props.KmsMasterKeyId !== undefined) return `SSE-KMS (key ${renderValue(props.KmsMasterKeyId)})`;
  if (props.SqsManagedSseEnabled === true) return 'SSE-SQS (SQS-managed keys)';
  if (props.SqsManagedSseEnabled === false) return 'none (SqsManagedSseEnabled: false)';
  return 'not set in the template (SQS applies SSE-SQS to new queues by default)';
}

/** SQS message retention. */
export function queueRetention(props: Record<string, unknown>): string {
  const seconds = props.MessageRetentionPeriod;
  if (typeof seconds === 'number') return `messages kept up to ${duration(seconds)} (MessageRetentionPeriod ${seconds} s)`;
  return 'messages kept up to 4 d (SQS default: no MessageRetentionPeriod)';
}

/** DynamoDB encryption at rest: the table's `SSESpecification`, with a replica's own key when it has one. */
export function tableEncryption(sse: unknown, replicaKey?: unknown): string {
  const spec = isRecord(sse) ? sse : {};
  const key = replicaKey ?? spec.KMSMasterKeyId;
  if (spec.SSEEnabled === true) return key !== undefined ? `SSE-KMS (key ${renderValue(key)})` : 'SSE-KMS (AWS managed key aws/dynamodb)';
  return 'AWS owned key (DynamoDB default)';
}

/** DynamoDB TTL. */
export function tableRetention(ttl: unknown): string {
  if (isRecord(ttl) && ttl.Enabled === true) return `items expire by TTL on ${renderValue(ttl.AttributeName)}`;
  return 'no TTL: items kept until deleted';
}

/** How long point-in-time backups can be restored, when PITR is on; undefined when it is off. */
export function backupRetention(pitr: unknown): string | undefined {
  if (!isRecord(pitr) || pitr.PointInTimeRecoveryEnabled !== true) return undefined;
  const days = pitr.RecoveryPeriodInDays;
  return typeof days === 'number' ? `restorable for ${days} d (PITR RecoveryPeriodInDays)` : 'restorable for 35 d (PITR default period)';
}

/** CloudWatch Logs encryption. */
export function logEncryption(props: Record<string, unknown>): string {
  if (props.KmsKeyId !== undefined) return `KMS (key ${renderValue(props.KmsKeyId)})`;
  return 'CloudWatch Logs service-managed encryption (no KMS key in the template)';
}

/** CloudWatch Logs retention (`RetentionInDays`). */
export function logRetention(days: unknown): string {
  return typeof days === 'number' ? `${days} d (RetentionInDays)` : 'never expire (no RetentionInDays)';
}

/** What the stack's deletion leaves behind, to append to a retention ('' when the resource goes with the stack). */
export function afterStackDeletion(deletionPolicy: string | undefined): string {
  if (deletionPolicy === 'Retain' || deletionPolicy === 'RetainExceptOnCreate') return '; kept when the stack is deleted (DeletionPolicy Retain)';
  if (deletionPolicy === 'Snapshot') return '; a snapshot is kept when the stack is deleted';
  return '';
}
