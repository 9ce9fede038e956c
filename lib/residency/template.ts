/**
 * Reading a synthesized CloudFormation template as plain JSON: its resources, values that CloudFormation
 * resolves at deploy time rendered as text (`${AWS::AccountId}`), the region a value names, and the lane
 * config the stack hands its functions (`RATELANE_LANE_CONFIG`). No aws-cdk-lib: a template is data.
 */
import { type LaneConfig, LaneConfigSchema } from '../config/schema.js';

/** One resource of a template. */
interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
}

/** A CloudFormation template (only what the map reads). */
export interface CfnTemplate {
  Resources?: Record<string, CfnResource>;
}

/** A lane stack's synthesized template, with the stack's name, the lane it deploys and its region. */
export interface StackTemplate {
  stackName: string;
  /** The lane the stack deploys (its `ratelane:lane` tag), when known. */
  lane: string | undefined;
  /** The stack's region; undefined for an environment-agnostic stack. */
  region: string | undefined;
  template: CfnTemplate;
}

/** A plain object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A template value as text: a string as is; `Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub` as the text
 * CloudFormation will put there (`${AWS::AccountId}`, `${Logical.Arn}`); `AWS::Region` as the stack's
 * region when known.
 */
export function renderValue(value: unknown, region?: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (isRecord(value)) {
    const ref = value.Ref;
    if (typeof ref === 'string') return ref === 'AWS::Region' && region ? region : `\${${ref}}`;
    const getAtt = value['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return `\${${getAtt.map((part) => renderValue(part, region)).join('.')}}`;
    const join = value['Fn::Join'];
    if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) return join[1].map((part) => renderValue(part, region)).join(join[0]);
    const sub = value['Fn::Sub'];
    if (typeof sub === 'string') return sub;
    if (Array.isArray(sub) && typeof sub[0] === 'string') return sub[0];
  }
  return JSON.stringify(value) ?? '';
}

/** The region a value names: a literal region, or `Ref: AWS::Region` (the stack's); undefined for anything else. */
export function regionOf(value: unknown, stackRegion: string | undefined): string | undefined {
  if (typeof value === 'string') return /^[a-z]{2}(?:-[a-z]+)+-\d+$/.test(value) ? value : undefined;
  if (isRecord(value) && value.Ref === 'AWS::Region') return stackRegion;
  return undefined;
}

/** The logical id a `Ref` or `Fn::GetAtt` points at, else undefined. */
export function referencedId(value: unknown): string | undefined {
  if (!isRecord(value)) return undefined;
  if (typeof value.Ref === 'string') return value.Ref;
  const getAtt = value['Fn::GetAtt'];
  return Array.isArray(getAtt) && typeof getAtt[0] === 'string' ? getAtt[0] : undefined;
}

/** The resources of a template of one type, as `[logicalId, properties]`, in template order. */
export function resourcesOfType(template: CfnTemplate, type: string): [string, Record<string, unknown>][] {
  return Object.entries(template.Resources ?? {})
    .filter(([, resource]) => resource.Type === type)
    .map(([id, resource]) => [id, resource.Properties ?? {}]);
}

/** The environment variables of every Lambda function of a template. */
export function functionEnvironments(template: CfnTemplate): Record<string, unknown>[] {
  return resourcesOfType(template, 'AWS::Lambda::Function').flatMap(([, props]) => {
    const environment = props.Environment;
    return isRecord(environment) && isRecord(environment.Variables) ? [environment.Variables] : [];
  });
}

/**
 * The lane config a stack hands its functions (`RATELANE_LANE_CONFIG`), checked with the lane schema;
 * undefined when no function carries one that validates. Values CloudFormation resolves at deploy time
 * (the account in the bucket name) read as `token`: the names the map shows come from the resources.
 */
export function deployedLaneConfig(template: CfnTemplate): LaneConfig | undefined {
  for (const variables of functionEnvironments(template)) {
    const raw = variables.RATELANE_LANE_CONFIG;
    if (raw === undefined) continue;
    const join = isRecord(raw) ? raw['Fn::Join'] : undefined;
    const text =
      typeof raw === 'string'
        ? raw
        : Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])
          ? join[1].map((part) => (typeof part === 'string' ? part : 'token')).join(join[0])
          : undefined;
    if (text === undefined) continue;
    try {
      const parsed = LaneConfigSchema.safeParse(JSON.parse(text));
      if (parsed.success) return parsed.data;
    } catch {
      // not JSON: try the next function
    }
  }
  return undefined;
}
