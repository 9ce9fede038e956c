/**
 * A bucket item in DynamoDB: a {@link BucketUpdate} compiled into one `UpdateItem`'s expressions, and
 * an item read back as a {@link BucketState}. Every field of the bucket is a top-level attribute of the
 * same name (a flow's clocks `flow:<id>:until|vt|weight`, named through placeholders), so a take's
 * `ADD`s of many consumers add up in any order.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { CooldownReason } from '../../policy/index.js';
import { completeFlow, parseFlowField } from '../bucket/item-update.js';
import type { BucketCondition, BucketField, BucketState, BucketUpdate, BucketValue, FlowTimeline } from '../model/bucket.js';

/** One `UpdateItem`'s expressions. */
export interface CompiledUpdate {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, AttributeValue>;
}

/** Compiles `update`, also setting `sets` (plain attributes: the TTL, the owner) and adding one to `version`. */
export function compileUpdate(update: BucketUpdate, sets: Record<string, BucketValue>): CompiledUpdate {
  const names: Record<string, string> = {};
  const values: Record<string, BucketValue> = {};
  const nameOf = (attribute: string): string => {
    const placeholder = `#a${Object.keys(names).length}`;
    names[placeholder] = attribute;
    return placeholder;
  };
  const named = new Map<string, string>();
  const name = (attribute: string): string => {
    let placeholder = named.get(attribute);
    if (placeholder === undefined) {
      placeholder = nameOf(attribute);
      named.set(attribute, placeholder);
    }
    return placeholder;
  };
  const value = (v: BucketValue): string => {
    const placeholder = `:v${Object.keys(values).length}`;
    values[placeholder] = v;
    return placeholder;
  };
  const set: string[] = [];
  const add: string[] = [`${name('version')} ${value(1)}`];
  const remove: string[] = [];
  for (const [field, change] of update.changes) {
    if ('remove' in change) remove.push(name(field));
    else if ('set' in change) set.push(`${name(field)} = ${value(change.set)}`);
    else add.push(`${name(field)} ${value(change.add)}`);
  }
  for (const [attribute, v] of Object.entries(sets)) set.push(`${name(attribute)} = ${value(v)}`);
  const condition = (c: BucketCondition): string => {
    if ('any' in c) return `(${c.any.map(condition).join(' OR ')})`;
    if ('all' in c) return `(${c.all.map(condition).join(' AND ')})`;
    if ('missing' in c) return `attribute_not_exists(${name(c.field)})`;
    return `${name(c.field)} ${c.cmp} ${value(c.value)}`;
  };
  const clauses = [set.length ? `SET ${set.join(', ')}` : '', `ADD ${add.join(', ')}`, remove.length ? `REMOVE ${remove.join(', ')}` : ''];
  return {
    UpdateExpression: clauses.filter(Boolean).join(' '),
    ...(update.condition ? { ConditionExpression: condition(update.condition) } : {}),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: marshall(values),
  };
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The bucket an item holds (`undefined`: no item); what is missing or malformed counts as absent. */
export function bucketOfItem(item: Record<string, unknown> | undefined): BucketState | undefined {
  if (!item) return undefined;
  const n = (v: unknown): number => (finite(v) ? v : 0);
  const optional = (field: BucketField): Record<string, number> => (finite(item[field]) ? { [field]: item[field] } : {});
  const flows: Record<string, Partial<FlowTimeline>> = {};
  for (const [attribute, v] of Object.entries(item)) {
    const flow = parseFlowField(attribute);
    if (flow && finite(v)) flows[flow.id] = { ...flows[flow.id], [flow.clock]: v };
  }
  const complete: Record<string, FlowTimeline> = {};
  for (const [id, t] of Object.entries(flows)) {
    const flow = completeFlow(t);
    if (flow.weight > 0) complete[id] = flow;
  }
  return {
    requestsFullAt: n(item.requestsFullAt),
    tokensFullAt: n(item.tokensFullAt),
    reservedUntil: n(item.reservedUntil),
    version: n(item.version),
    ...optional('dailyFullAt'),
    ...optional('dayResetAt'),
    ...optional('dailyUsed'),
    ...optional('reservedDaily'),
    ...optional('reservedDayEnd'),
    ...optional('probeUntil'),
    ...optional('rateLimitedAt'),
    ...optional('rateCut'),
    ...optional('rateCutAt'),
    ...optional('statedRequests'),
    ...optional('statedTokens'),
    ...(typeof item.proven === 'boolean' ? { proven: item.proven } : {}),
    ...(Object.keys(complete).length > 0 ? { flows: complete } : {}),
    ...(finite(item.coolUntil) && typeof item.coolReason === 'string'
      ? { cooldown: { until: item.coolUntil, reason: item.coolReason as CooldownReason } }
      : {}),
  };
}
